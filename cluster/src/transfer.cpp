// SPDX-License-Identifier: Apache-2.0
#include "blume/cluster/transfer.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "blume/compat/redisbloom_format.hpp"
#include "blume/error.hpp"
#include "blume/io/format.hpp"
#include "blume/kinds.hpp"
#include "blume/kinds/counting_bloom_filter.hpp"

namespace blume::cluster {
namespace {

namespace rb = blume::redisbloom;

enum class family { bloom, counting, window };

const char* type_name(family f) { return f == family::bloom ? "BF" : f == family::counting ? "CBF" : "WBF"; }

/// The Redis type that holds a file of this header, or invalid_argument.
family family_of(const file_header& h) {
  if (h.kind == redisbloom_bloom_chain::kind && h.hash == hash_id::murmur64a_pair) return family::bloom;
  if (h.kind == counting_bloom_filter<>::kind && (h.layout == 4 || h.layout == 8)) return family::counting;
  if (h.kind == aging_bloom_filter<>::kind) return family::window;
  throw invalid_argument("a " + std::string(kind_name(h.kind)) +
                         " filter has no Redis type: push a counting or aging filter, or a RedisBloom filter "
                         "(blume build --redisbloom)");
}

std::string text_of(const reply& r) {
  if (r.kind == reply::type::array) return "an array";
  return r.text.empty() ? std::to_string(r.integer) : r.text;
}

void expect_ok(const reply& r, std::string_view what) {
  if (r.is_error() || r.text != "OK") throw io_error(std::string(what) + ": " + text_of(r));
}

/// Sends LOADCHUNK commands a few at a time (one pipeline each), so no more than a few chunks sit in
/// the client's buffers however big the filter.
class chunk_sender {
 public:
  chunk_sender(cluster_client& client, std::string_view key, std::string command)
      : client_(client), key_(key), command_(std::move(command)) {}

  void send(long long iterator, std::string_view bytes, transfer_report& report) {
    iterators_.push_back(std::to_string(iterator));
    pending_.push_back(bytes);
    report.bytes += bytes.size();
    ++report.chunks;
    if (pending_.size() == 4) flush();
  }
  void flush() {
    std::vector<command> commands;
    for (std::size_t i = 0; i < pending_.size(); ++i)
      commands.push_back({key_, {command_, key_, iterators_[i], pending_[i]}});
    const std::vector<reply> replies = client_.run(commands);
    for (const reply& r : replies) expect_ok(r, command_);
    pending_.clear();
    iterators_.clear();
  }

 private:
  cluster_client& client_;
  std::string_view key_;
  std::string command_;
  std::vector<std::string_view> pending_;
  std::vector<std::string> iterators_;
};

std::string_view as_text(std::span<const std::byte> s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

/// The SCANDUMP record of a chain read from a blume file, which stores each layer's capacity and rate but
/// not RedisBloom's bits per entry: that comes from RedisBloom's geometry for the layer, which must give
/// the file's bits and hashes.
rb::bloom_chain_record redisbloom_record(const rb::bloom_value& v) {
  rb::bloom_chain_record r = rb::record_of(v);
  const auto specs = v.chain.layer_specs();
  for (std::size_t i = 0; i < r.layers.size(); ++i) {
    const redisbloom_layout g = redisbloom_layer_geometry(specs[i].capacity, specs[i].fpr);
    if (g.bits() != r.layers[i].bits || g.hashes() != r.layers[i].hashes)
      throw format_error("layer " + std::to_string(i) + " is not RedisBloom's geometry for its capacity and rate");
    r.layers[i].bpe = g.bits_per_entry();
  }
  rb::validate(r);
  return r;
}

}  // namespace

transfer_report push_file(cluster_client& client, const std::filesystem::path& path, std::string_view key,
                          const push_options& options) {
  const file_header h = read_header(path);
  const family f = family_of(h);
  // The whole file is checked (sizes, payload checksum) before anything is sent.
  std::optional<rb::bloom_value> value;
  switch (f) {
    case family::bloom: {
      redisbloom_bloom_chain chain = map_file<redisbloom_bloom_chain>(path, verify::full);
      const std::uint32_t scaling = chain.options().scaling ? 0u : rb::option_no_scaling;
      value.emplace(rb::bloom_value{std::move(chain), rb::option_noround | rb::option_force64 | scaling});
      break;
    }
    case family::counting:
      if (h.layout == 8) {
        (void)map_file<counting_bloom_filter<8>>(path, verify::full);
      } else {
        (void)map_file<counting_bloom_filter<4>>(path, verify::full);
      }
      break;
    case family::window: (void)map_file<aging_bloom_filter<>>(path, verify::full); break;
  }
  transfer_report report;
  report.type = type_name(f);
  if (options.replace) {
    client.run({key, {"DEL", key}});
  } else if (const reply r = client.run({key, {"EXISTS", key}}); r.integer != 0) {
    throw invalid_argument("key '" + std::string(key) + "' exists: delete it, or push with --replace");
  }
  chunk_sender sender(client, key, report.type + ".LOADCHUNK");
  const std::size_t step = std::max<std::size_t>(options.chunk_bytes, 1);
  bool created = false;  // only a key this push created is deleted when a later chunk fails
  try {
    if (value) {
      const std::string header = rb::encode_header(redisbloom_record(*value));
      sender.send(1, header, report);
      sender.flush();
      created = true;
      for (long long it = 1;;) {
        const rb::chunk c = rb::bloom_chunk(*value, it, step);
        if (c.next == 0) break;
        sender.send(c.next, as_text(c.bytes), report);
        it = c.next;
      }
      sender.flush();
    } else {
      // The module's stream is the file's bytes: the header, then the payload from its first byte.
      detail::mapped_file file(path);
      const std::span<const std::byte> bytes = file.bytes();
      sender.send(1, as_text(bytes.first(file.header.size)), report);
      sender.flush();
      created = true;
      for (std::uint64_t at = file.header.size; at < bytes.size(); at += step) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(step, bytes.size() - at));
        sender.send(static_cast<long long>(at - file.header.size + n + 1), as_text(bytes.subspan(at, n)), report);
      }
      sender.flush();
    }
  } catch (const io_error&) {
    // A half-loaded key answers nothing but LOADCHUNK: do not leave one. The first error is the one to report.
    if (created) try {
        client.run({key, {"DEL", key}});
      } catch (const std::exception&) {
      }
    throw;
  }
  return report;
}

transfer_report pull_to_file(cluster_client& client, std::string_view key, const std::filesystem::path& path,
                             const write_options& options) {
  const reply t = client.run({key, {"TYPE", key}});
  family f;
  if (t.text == "MBbloom--") {
    f = family::bloom;
  } else if (t.text == "blume-CBF") {
    f = family::counting;
  } else if (t.text == "blume-WBF") {
    f = family::window;
  } else if (t.text == "none") {
    throw invalid_argument("no key '" + std::string(key) + "'");
  } else {
    throw invalid_argument("key '" + std::string(key) + "' holds a " + t.text +
                           ": pull reads Bloom (BF), counting (CBF) and windowed (WBF) filters");
  }
  transfer_report report;
  report.type = type_name(f);
  const std::string command = report.type + ".SCANDUMP";
  // SCANDUMP answers [next iterator, bytes]; the header comes with 1, and 0 ends the stream.
  const auto scan = [&](long long iterator) {
    const std::string it = std::to_string(iterator);
    reply r = client.run({key, {command, key, it}});
    if (r.is_error()) throw io_error(command + ": " + r.text);
    if (r.kind != reply::type::array || r.elements.size() != 2 || r.elements[0].kind != reply::type::integer)
      throw format_error(command + " answered something other than [iterator, bytes]");
    report.bytes += r.elements[1].text.size();
    ++report.chunks;
    return std::pair<long long, std::string>{r.elements[0].integer, std::move(r.elements[1].text)};
  };
  auto [first, header] = scan(0);
  const std::string changed = "; the key changed while it was read: pull again";
  if (f == family::bloom) {
    // RedisBloom's stream has no checksum: every byte of every layer must arrive, and the header read again
    // at the end must be the one read first, or the file could miss bits (and answer a false "no").
    const rb::bloom_chain_record record = rb::decode_header(header);
    for (const rb::bloom_layer_record& l : record.layers)
      if (l.n2 != 0)
        throw invalid_argument("the filter has a power-of-two layer (RedisBloom before 2.0): no file for it");
    rb::bloom_value v = rb::value_from(record);
    std::uint64_t loaded = 0;
    for (long long it = first;;) {
      auto [next, data] = scan(it);
      if (next == 0) break;
      if (rb::load_bloom_chunk(v, next, std::as_bytes(std::span(data.data(), data.size()))) != rb::chunk_status::ok)
        throw format_error("BF.SCANDUMP gave a chunk that does not fit the filter" + changed);
      loaded += data.size();
      it = next;
    }
    if (loaded != record.total_bytes() || scan(0).second != header)
      throw format_error("BF.SCANDUMP did not give the filter's bits in full" + changed);
    const layer_spec& spec = v.chain.layer_specs()[0];
    save(v.chain, path, filter_design{spec.capacity, v.chain.target_fpr()});
    return report;
  }
  std::string bytes = std::move(header);
  for (long long it = first;;) {
    auto [next, data] = scan(it);
    if (next == 0) break;
    bytes += data;
    it = next;
  }
  const std::span<const std::byte> file = std::as_bytes(std::span(bytes.data(), bytes.size()));
  try {
    const file_header h = decode_header(file);
    if (f == family::counting && h.layout == 8) {
      (void)from_bytes<counting_bloom_filter<8>>(file);
    } else if (f == family::counting) {
      (void)from_bytes<counting_bloom_filter<4>>(file);
    } else {
      (void)from_bytes<aging_bloom_filter<>>(file);
    }
  } catch (const format_error& e) {
    throw format_error(std::string(e.what()) + changed);
  }
  const std::span<const std::byte> parts[] = {file};
  write_file_atomically(path, parts, options);
  return report;
}

}  // namespace blume::cluster
