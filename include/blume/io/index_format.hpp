// SPDX-License-Identifier: Apache-2.0
// The bit-sliced index's file (docs/format.md, "Bit-sliced index files"): a 96-byte header, the term
// table, the shards (descriptors, column maps, rows), the document names, and an XXH64 of everything
// before it. Every count is checked against the bytes that must back it before anything is allocated, so
// a short, damaged or hostile file is a format_error, never a large allocation or a read past the end.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "blume/index/bitsliced_index.hpp"
#include "blume/io/file_io.hpp"
#include "blume/io/format.hpp"

namespace blume {

namespace index_format {

inline constexpr std::array<char, 8> magic = {'B', 'L', 'U', 'M', 'E', 'I', 'D', 'X'};
inline constexpr std::uint32_t version = 1;
inline constexpr std::size_t header_size = 96;
inline constexpr std::size_t term_entry_size = 16;
inline constexpr std::size_t shard_descriptor_size = 24;
inline constexpr std::uint32_t private_flag = 0x80000000U;

/// A term's rows as the table stores them: a private row as 0x80000000 | row, else rank0 | higher << 8.
inline std::uint32_t pack_rows(const term_rows& r) noexcept {
  return r.is_private() ? private_flag | r.private_row : r.rank0 | (r.higher << 8);
}

inline std::size_t padded8(std::size_t n) noexcept { return (n + 7) & ~std::size_t{7}; }

[[noreturn]] inline void fail(const std::string& what) { throw format_error("bit-sliced index: " + what); }

}  // namespace index_format

/// The index's file bytes.
inline std::vector<std::byte> encode_index(const bitsliced_index& x) {
  using detail::write_le;
  namespace f = index_format;
  const bitsliced_options& o = x.options();
  std::size_t size = f::header_size + f::term_entry_size * x.term_table().size();
  size += f::shard_descriptor_size * x.shards().size();
  for (const bitsliced_shard& s : x.shards()) size += f::padded8(4 * s.columns()) + 8 * s.bits.size();
  for (std::uint64_t d = 0; d < x.documents(); ++d) size += 4 + x.document_name(static_cast<std::uint32_t>(d)).size();
  size = f::padded8(size) + 8;
  std::vector<std::byte> out(size);
  std::byte* p = out.data();
  std::memcpy(p, f::magic.data(), 8);
  write_le<std::uint32_t>(p + 8, f::version);
  write_le<std::uint32_t>(p + 12, f::header_size);
  write_le<std::uint64_t>(p + 16, o.seed);
  write_le<std::uint64_t>(p + 24, x.documents());
  write_le<double>(p + 32, o.density);
  write_le<double>(p + 40, o.noise);
  write_le<double>(p + 48, o.shard_ratio);
  write_le<std::uint32_t>(p + 56, o.rank);
  write_le<std::uint32_t>(p + 60, o.frequency_conscious ? 1U : 0U);
  write_le<std::uint32_t>(p + 64, static_cast<std::uint32_t>(hash_id::xxh3_128));
  write_le<std::uint32_t>(p + 68, x.private_rows());
  write_le<std::uint32_t>(p + 72, x.adhoc_rows().rank0);
  write_le<std::uint32_t>(p + 76, x.adhoc_rows().higher);
  write_le<std::uint64_t>(p + 80, x.term_table().size());
  write_le<std::uint64_t>(p + 88, x.shards().size());
  p += f::header_size;
  for (const term_entry& t : x.term_table()) {
    write_le<std::uint64_t>(p, t.id);
    write_le<std::uint32_t>(p + 8, t.documents);
    write_le<std::uint32_t>(p + 12, f::pack_rows(t.rows));
    p += f::term_entry_size;
  }
  for (const bitsliced_shard& s : x.shards()) {
    write_le<std::uint64_t>(p, s.columns());
    write_le<std::uint32_t>(p + 8, s.shared_rows);
    write_le<std::uint32_t>(p + 12, s.higher_rows);
    write_le<std::uint64_t>(p + 16, s.words);
    p += f::shard_descriptor_size;
  }
  for (const bitsliced_shard& s : x.shards()) {
    std::memcpy(p, s.document.data(), 4 * s.columns());
    p += f::padded8(4 * s.columns());
    std::memcpy(p, s.bits.data(), 8 * s.bits.size());
    p += 8 * s.bits.size();
  }
  for (std::uint64_t d = 0; d < x.documents(); ++d) {
    const std::string& name = x.document_name(static_cast<std::uint32_t>(d));
    write_le<std::uint32_t>(p, static_cast<std::uint32_t>(name.size()));
    std::memcpy(p + 4, name.data(), name.size());
    p += 4 + name.size();
  }
  const std::size_t body = out.size() - 8;
  write_le<std::uint64_t>(out.data() + body, detail::checksum(out.data(), body));
  return out;
}

/// The index the bytes describe. Throws format_error naming what is wrong.
inline bitsliced_index decode_index(std::span<const std::byte> bytes) {
  using detail::read_le;
  namespace f = index_format;
  using index_format::fail;
  if (bytes.size() < f::header_size + 8) fail("truncated: " + std::to_string(bytes.size()) + " bytes");
  const std::byte* p = bytes.data();
  if (std::memcmp(p, f::magic.data(), 8) != 0) fail("not a blume index (bad magic)");
  if (read_le<std::uint32_t>(p + 8) != f::version)
    fail("format version " + std::to_string(read_le<std::uint32_t>(p + 8)) + " is not supported (this reader knows " +
         std::to_string(f::version) + ")");
  if (read_le<std::uint32_t>(p + 12) != f::header_size) fail("header size is not " + std::to_string(f::header_size));
  if (bytes.size() % 8 != 0) fail("size " + std::to_string(bytes.size()) + " is not a multiple of 8");
  const std::size_t body = bytes.size() - 8;
  if (detail::checksum(p, body) != read_le<std::uint64_t>(p + body)) fail("checksum mismatch (damaged file)");

  bitsliced_options o;
  o.seed = read_le<std::uint64_t>(p + 16);
  const std::uint64_t documents = read_le<std::uint64_t>(p + 24);
  o.density = read_le<double>(p + 32);
  o.noise = read_le<double>(p + 40);
  o.shard_ratio = read_le<double>(p + 48);
  o.rank = read_le<std::uint32_t>(p + 56);
  const std::uint32_t flags = read_le<std::uint32_t>(p + 60);
  if (flags > 1) fail("unknown flags " + std::to_string(flags));
  o.frequency_conscious = flags == 1;
  try {
    o.validate();
  } catch (const invalid_argument& e) {
    fail(e.what());
  }
  if (read_le<std::uint32_t>(p + 64) != static_cast<std::uint32_t>(hash_id::xxh3_128)) fail("unknown hash id");
  const std::uint32_t private_rows = read_le<std::uint32_t>(p + 68);
  const term_rows adhoc{read_le<std::uint32_t>(p + 72), read_le<std::uint32_t>(p + 76), term_rows::no_private_row};
  const std::uint64_t term_count = read_le<std::uint64_t>(p + 80), shard_count = read_le<std::uint64_t>(p + 88);
  const std::uint64_t max_rows = 24;
  auto check_rows = [&](const term_rows& r, const std::string& whose) {
    if (r.is_private()) {
      if (r.private_row >= private_rows) fail(whose + " names private row " + std::to_string(r.private_row));
      return;
    }
    if (r.rank0 < 1 || r.rank0 + r.higher > max_rows || (o.rank == 0 && r.higher != 0))
      fail(whose + " has " + std::to_string(r.rank0) + " + " + std::to_string(r.higher) + " rows");
  };
  check_rows(adhoc, "the ad hoc term");
  if (documents > bitsliced_builder::max_documents) fail("too many documents: " + std::to_string(documents));

  std::size_t at = f::header_size;
  auto take = [&](std::uint64_t count, std::uint64_t each, const char* what) {
    if (each != 0 && count > (body - at) / each) fail(std::string("truncated ") + what);
    const std::size_t start = at;
    at += static_cast<std::size_t>(count * each);
    return p + start;
  };
  // The format has one encoding of each index, so the padding it writes as zeros must read as zeros.
  auto zeros = [](const std::byte* from, const std::byte* to) {
    return std::all_of(from, to, [](std::byte b) { return b == std::byte{0}; });
  };
  const std::byte* table = take(term_count, f::term_entry_size, "term table");
  std::vector<term_entry> terms(static_cast<std::size_t>(term_count));
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::byte* e = table + i * f::term_entry_size;
    terms[i].id = read_le<std::uint64_t>(e);
    terms[i].documents = read_le<std::uint32_t>(e + 8);
    const std::uint32_t packed = read_le<std::uint32_t>(e + 12);
    if (packed & f::private_flag) {
      terms[i].rows = term_rows{0, 0, packed & ~f::private_flag};
    } else {
      if (packed >> 16) fail("term " + std::to_string(i) + " has unknown row bits");
      terms[i].rows = term_rows{packed & 0xffU, (packed >> 8) & 0xffU, term_rows::no_private_row};
    }
    check_rows(terms[i].rows, "term " + std::to_string(i));
    if (terms[i].documents > documents) fail("term " + std::to_string(i) + " is in more documents than there are");
    if (i > 0 && terms[i].id <= terms[i - 1].id) fail("the term table is not sorted");
  }

  const std::byte* descriptors = take(shard_count, f::shard_descriptor_size, "shard table");
  std::vector<bitsliced_shard> shards(static_cast<std::size_t>(shard_count));
  std::uint64_t columns_total = 0;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const std::byte* d = descriptors + s * f::shard_descriptor_size;
    const std::uint64_t columns = read_le<std::uint64_t>(d);
    bitsliced_shard& shard = shards[s];
    shard.shared_rows = read_le<std::uint32_t>(d + 8);
    shard.higher_rows = read_le<std::uint32_t>(d + 12);
    shard.words = read_le<std::uint64_t>(d + 16);
    const std::string which = "shard " + std::to_string(s);
    if (columns == 0 || columns > documents - columns_total)
      fail(which + " has " + std::to_string(columns) + " columns");
    columns_total += columns;
    if (shard.words != (columns + 63) / 64) fail(which + " has the wrong row length");
    if (shard.shared_rows == 0) fail(which + " has no shared rows");
    if (o.rank == 0 && shard.higher_rows != 0) fail(which + " has higher-rank rows in an index of rank 0");
    // Rows at most the bytes left, in words: the products below cannot overflow past these checks.
    const std::uint64_t left = (body - at) / 8;
    const std::uint64_t rank0_rows = std::uint64_t{shard.shared_rows} + private_rows;
    if (rank0_rows > left / shard.words) fail("truncated " + which);
    const std::uint64_t higher_words = (shard.words + (std::uint64_t{1} << o.rank) - 1) >> o.rank;
    if (shard.higher_rows != 0 && shard.higher_rows > (left - rank0_rows * shard.words) / higher_words)
      fail("truncated " + which);
    const std::uint64_t words = shard.total_words(private_rows, o.rank);
    const std::byte* columns_at = take(1, f::padded8(4 * columns), "column map");
    const std::byte* bits_at = take(words, 8, "rows");
    shard.document.resize(columns);
    std::memcpy(shard.document.data(), columns_at, 4 * columns);
    if (!zeros(columns_at + 4 * columns, columns_at + f::padded8(4 * columns)))
      fail(which + " has nonzero padding after its column map");
    shard.bits.resize(words);
    std::memcpy(shard.bits.data(), bits_at, 8 * words);
    // Bits past the last column (or group) would name columns that do not exist: a query would report them,
    // and the model count them, out of bounds.
    auto padding_clear = [](const std::uint64_t* row, std::uint64_t row_words, std::uint64_t slots) {
      const std::uint64_t used = slots - 64 * (row_words - 1);  // bits of the last word in use, 1 … 64
      return used == 64 || (row[row_words - 1] >> used) == 0;
    };
    for (std::uint64_t j = 0; j < rank0_rows; ++j)
      if (!padding_clear(shard.bits.data() + j * shard.words, shard.words, columns))
        fail(which + " has bits past its last column");
    const std::uint64_t groups = (columns + (std::uint64_t{1} << o.rank) - 1) >> o.rank;
    for (std::uint64_t j = 0; j < shard.higher_rows; ++j)
      if (!padding_clear(shard.bits.data() + rank0_rows * shard.words + j * higher_words, higher_words, groups))
        fail(which + " has bits past its last group");
  }
  if (columns_total != documents)
    fail("the shards hold " + std::to_string(columns_total) + " of " + std::to_string(documents) + " documents");
  std::vector<bool> seen(documents);
  for (const bitsliced_shard& s : shards)
    for (std::uint32_t d : s.document) {
      if (d >= documents || seen[d]) fail("document " + std::to_string(d) + " is out of range or in two columns");
      seen[d] = true;
    }

  std::vector<std::string> names(documents);
  for (std::uint64_t d = 0; d < documents; ++d) {
    const std::uint32_t length = read_le<std::uint32_t>(take(1, 4, "document names"));
    const std::byte* name = take(length, 1, "document names");
    names[d].assign(reinterpret_cast<const char*>(name), length);
  }
  if (index_format::padded8(at) != body) fail("unexpected bytes after the document names");
  if (!zeros(p + at, p + body)) fail("nonzero padding after the document names");
  return bitsliced_index::from_parts(o, adhoc, private_rows, std::move(terms), std::move(shards), std::move(names));
}

/// Writes the index to `path` atomically (file_io.hpp: through symlinks, keeping the mode).
inline void save_index(const bitsliced_index& x, const std::filesystem::path& path, const write_options& options = {}) {
  const std::vector<std::byte> bytes = encode_index(x);
  const std::span<const std::byte> part(bytes);
  write_file_atomically(path, std::span<const std::span<const std::byte>>(&part, 1), options);
}

/// Reads an index file whole and checks it (decode_index).
inline bitsliced_index load_index(const std::filesystem::path& path) {
  detail::fd_guard fd;
  const std::uint64_t size = detail::open_for_reading(fd, path);
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  detail::read_all(fd.fd, bytes.data(), bytes.size(), path);
  try {
    return decode_index(bytes);
  } catch (const format_error& e) {
    throw format_error("'" + path.string() + "': " + e.what());
  }
}

}  // namespace blume
