// SPDX-License-Identifier: Apache-2.0
// The Redis module's decoding of untrusted bytes (redis/codec.hpp), without a server: RDB records in
// Redis's own encoding, LOADCHUNK headers, and the hostile records that once made the module allocate
// gigabytes or work for most of a minute. The server-side half of these reproducers is
// tests/redis/test_hostile.py.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "codec.hpp"
#include "counting_codec.hpp"
#include "forge.hpp"

namespace {

namespace rb = blume::redisbloom;
using namespace blume::redis;

std::string unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}
std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

/// The module value inside a DUMP payload: after the type byte and the 9-byte module id, before the EOF
/// opcode, the 2-byte RDB version and the 8-byte checksum.
std::string value_of_dump(const std::string& dump) { return dump.substr(10, dump.size() - 10 - 11); }

// DUMP payloads of a BF and a CF filter, as in tests/redis/test_hostile.py.
const std::string bf_dump = unhex(
    "07813016e5a289bef8040203020102050202021404fca9f1d24d62403f020b042e92f414fca32f400241400200052840082040"
    "400091008210061828a000020005000004000400001040000100000000010000000450000203000a008627a69817d3a6bb");
const std::string cf_dump = unhex(
    "07813016e5a2898214040201020402050200020402140201020405100000000000000000d700000016e13416000a00bddfff5ba2"
    "116c75");

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

rdb_limits default_limits() { return {}; }

TEST(RedisRdbCodec, ByteReaderAndWriterSpeakRedisEncoding) {
  for (const std::string* dump : {&bf_dump, &cf_dump}) {
    const std::string value = value_of_dump(*dump);
    byte_rdb_reader in(bytes_of(value));
    std::string why;
    byte_rdb_writer out;
    if (dump == &bf_dump) {
      const auto v = load_bloom(in, bloom_encoding_version, default_limits(), &why);
      ASSERT_NE(v, nullptr) << why;
      save_bloom(out, *v);
    } else {
      const auto v = load_cuckoo(in, cuckoo_encoding_version, default_limits(), &why);
      ASSERT_NE(v, nullptr) << why;
      save_cuckoo(out, *v);
    }
    EXPECT_EQ(in.remaining(), 0u);
    EXPECT_EQ(out.bytes(), value);  // the bytes the server wrote for the module, field for field
  }
}

TEST(RedisRdbCodec, GrownFiltersRoundTrip) {
  rb::bloom_value b = rb::make_bloom(20, 0.01, 2, true);
  for (int i = 0; i < 200; ++i) b.chain.try_insert(b.chain.hash("k" + std::to_string(i)));
  ASSERT_GT(b.chain.layers().size(), 2u);
  byte_rdb_writer out;
  save_bloom(out, b);
  byte_rdb_reader in(bytes_of(out.bytes()));
  std::string why;
  const auto loaded = load_bloom(in, bloom_encoding_version, default_limits(), &why);
  ASSERT_NE(loaded, nullptr) << why;
  EXPECT_EQ(rb::encode_header(rb::record_of(*loaded)), rb::encode_header(rb::record_of(b)));
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(loaded->chain.contains(loaded->chain.hash("k" + std::to_string(i))));

  rb::cuckoo_value c = rb::make_cuckoo(16, 2, 20, 2);
  for (int i = 0; i < 100; ++i) rb::cuckoo_insert(c, c.filter.hash("k" + std::to_string(i)));
  ASSERT_GT(c.filter.sub_filters(), 1u);
  byte_rdb_writer cout;
  save_cuckoo(cout, c);
  byte_rdb_reader cin(bytes_of(cout.bytes()));
  const auto cl = load_cuckoo(cin, cuckoo_encoding_version, default_limits(), &why);
  ASSERT_NE(cl, nullptr) << why;
  EXPECT_EQ(rb::encode_header(rb::record_of(*cl)), rb::encode_header(rb::record_of(c)));
  EXPECT_EQ(cl->filter, c.filter);
}

// Each layer's set bits as a pass over its array would count them, for checking the kept counts.
std::vector<std::uint64_t> popcounts(const rb::bloom_value& v) {
  std::vector<std::uint64_t> n;
  for (const auto& l : v.chain.layers()) n.push_back(l.set_bits());
  return n;
}

// BF.ESTIMATE reads the kept counts, so they must equal the arrays' popcounts after every path that
// changes bits, and the estimate must be the one a full pass gives.
TEST(RedisBloomSetBits, KeptCountsMatchThePopcountOnEveryPath) {
  rb::bloom_value b = rb::make_bloom(20, 0.01, 2, true);
  for (int i = 0; i < 300; ++i) rb::bloom_insert(b, b.chain.hash("k" + std::to_string(i % 250)));
  ASSERT_GT(b.chain.layers().size(), 2u);
  EXPECT_EQ(b.set_bits, popcounts(b));
  EXPECT_EQ(rb::bloom_estimated_count(b), b.chain.estimated_count());

  byte_rdb_writer out;
  save_bloom(out, b);
  byte_rdb_reader in(bytes_of(out.bytes()));
  std::string why;
  const auto loaded = load_bloom(in, bloom_encoding_version, default_limits(), &why);
  ASSERT_NE(loaded, nullptr) << why;
  EXPECT_EQ(loaded->set_bits, popcounts(b));

  // LOADCHUNK in odd pieces, one of them written twice over different bytes.
  rb::bloom_value c = rb::value_from(rb::decode_header(rb::encode_header(rb::record_of(b))));
  EXPECT_EQ(c.set_bits, std::vector<std::uint64_t>(b.chain.layers().size(), 0));
  for (long long it = 1;;) {
    const rb::chunk k = rb::bloom_chunk(b, it, 7);
    if (k.next == 0) break;
    if (it == 8) {
      const std::vector<std::byte> ones(k.bytes.size(), std::byte{0xff});
      ASSERT_EQ(rb::load_bloom_chunk(c, k.next, ones), rb::chunk_status::ok);
    }
    ASSERT_EQ(rb::load_bloom_chunk(c, k.next, k.bytes), rb::chunk_status::ok);
    it = k.next;
  }
  EXPECT_EQ(c.set_bits, popcounts(b));

  rb::bloom_value d = rb::make_bloom(20, 0.01, 2, true);
  for (int i = 0; i < 300; ++i) rb::bloom_insert(d, d.chain.hash("j" + std::to_string(i)));
  ASSERT_EQ(d.chain.layers().size(), b.chain.layers().size());
  d.chain.merge(b.chain);
  for (std::size_t i = 0; i < d.chain.layers().size(); ++i) rb::recount_bits(d, i);
  EXPECT_EQ(d.set_bits, popcounts(d));
  EXPECT_EQ(rb::bloom_estimated_count(d), d.chain.estimated_count());
}

TEST(RedisRdbCodec, CuckooEncoding3TakesGeometryFromConfiguration) {
  rb::cuckoo_value c = rb::make_cuckoo(64, 4, 30, 2);
  rb::cuckoo_insert(c, c.filter.hash("x"));
  byte_rdb_writer out;
  out.save_unsigned(1);
  out.save_unsigned(c.filter.buckets());
  out.save_unsigned(1);
  out.save_string(c.filter.slot_bytes(0));
  byte_rdb_reader in(bytes_of(out.bytes()));
  std::string why;
  const auto v = load_cuckoo(in, 3, {std::uint64_t{1} << 30, 4, 30, 2}, &why);
  ASSERT_NE(v, nullptr) << why;
  EXPECT_EQ(v->filter.geometry().bucket_size, 4u);
  EXPECT_EQ(v->filter.geometry().expansion, 2u);
  EXPECT_TRUE(v->filter.contains(v->filter.hash("x")));
}

// Reproducer: a 58-byte MBbloomCF record asking for a 2^36-bucket sub-filter (137 GB) was built, empty,
// before any data was read.
TEST(RedisRdbCodec, CuckooRecordAskingFor137GBIsRefusedBeforeAllocating) {
  byte_rdb_writer out;
  for (std::uint64_t v : {std::uint64_t{1}, std::uint64_t{1} << 36, std::uint64_t{0}, std::uint64_t{0},
                          std::uint64_t{2}, std::uint64_t{20}, std::uint64_t{1}, std::uint64_t{1} << 36})
    out.save_unsigned(v);
  byte_rdb_reader in(bytes_of(out.bytes()));
  std::string why;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(load_cuckoo(in, cuckoo_encoding_version, default_limits(), &why), nullptr);
  EXPECT_LT(seconds_since(start), 0.1);
  EXPECT_NE(why.find("137438953528 bytes, more than bf.max-filter-memory (268435456)"), std::string::npos) << why;
}

// Reproducer: 65,536 sub-filters cost one reallocation each (54 s). Now one allocation, and a complete
// record of that many sub-filters loads in well under a second.
TEST(RedisRdbCodec, CuckooRecordWith65536SubFiltersIsBoundedWork) {
  byte_rdb_writer header;
  for (std::uint64_t v : {std::uint64_t{65536}, std::uint64_t{1}, std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{1},
                          std::uint64_t{20}, std::uint64_t{1}})
    header.save_unsigned(v);
  std::string why;
  {  // the header alone: refused as truncated once the data is missing
    byte_rdb_reader in(bytes_of(header.bytes()));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(load_cuckoo(in, cuckoo_encoding_version, default_limits(), &why), nullptr);
    EXPECT_LT(seconds_since(start), 1.0);
  }
  byte_rdb_writer full = header;
  const std::string slot = "\x07";
  for (int j = 0; j < 65536; ++j) {
    full.save_unsigned(1);
    full.save_string(bytes_of(slot));
  }
  byte_rdb_reader in(bytes_of(full.bytes()));
  const auto start = std::chrono::steady_clock::now();
  const auto v = load_cuckoo(in, cuckoo_encoding_version, default_limits(), &why);
  EXPECT_LT(seconds_since(start), 1.0);
  ASSERT_NE(v, nullptr) << why;
  EXPECT_EQ(v->filter.sub_filters(), 65536u);
  EXPECT_EQ(v->filter.inserted(), 65536u);
}

/// An MBbloom-- record of encoding 0 (no bit count: RedisBloom derived it as entries × bpe).
std::string bloom_encoding0(std::uint64_t entries, double bpe) {
  byte_rdb_writer out;
  out.save_unsigned(0);  // size
  out.save_unsigned(1);  // layers
  out.save_unsigned(entries);
  out.save_double(0.01);
  out.save_unsigned(7);
  out.save_double(bpe);
  const std::string bits(8, '\0');
  out.save_string(bytes_of(bits));
  out.save_unsigned(0);
  return out.bytes();
}

// Reproducer: the oldest encoding converted entries × bpe to an integer unchecked (undefined for NaN,
// negatives and values beyond 2^64; UBSan stops there).
TEST(RedisRdbCodec, OldestBloomEncodingRangeChecksTheBitCount) {
  for (double bpe : {std::nan(""), -1.0, 1e300, std::numeric_limits<double>::infinity()}) {
    const std::string record = bloom_encoding0(1000, bpe);
    byte_rdb_reader in(bytes_of(record));
    std::string why;
    EXPECT_EQ(load_bloom(in, 0, default_limits(), &why), nullptr);
    EXPECT_NE(why.find("is not a bit count"), std::string::npos) << bpe << ": " << why;
  }
  const std::string record = bloom_encoding0(1, 64.0);  // in range; refused later: 32-bit hashing
  byte_rdb_reader in(bytes_of(record));
  std::string why;
  EXPECT_EQ(load_bloom(in, 0, default_limits(), &why), nullptr);
  EXPECT_NE(why.find("32-bit hashing"), std::string::npos) << why;
}

// A Bloom record declaring an 8 GB layer is refused at the bit count, before its array is read.
TEST(RedisRdbCodec, BloomLayerOverTheLimitIsRefusedBeforeItsArray) {
  byte_rdb_writer out;
  out.save_unsigned(0);
  out.save_unsigned(1);
  out.save_unsigned(rb::option_noround | rb::option_force64);
  out.save_unsigned(2);
  out.save_unsigned(1000);
  out.save_double(0.001);
  out.save_unsigned(15);
  out.save_double(20.0);
  out.save_unsigned(std::uint64_t{1} << 36);  // bits: 8 GiB
  out.save_unsigned(0);
  const std::size_t before_array = out.bytes().size();
  out.save_string(bytes_of(std::string(16, '\0')));
  byte_rdb_reader in(bytes_of(out.bytes()));
  std::string why;
  EXPECT_EQ(load_bloom(in, bloom_encoding_version, default_limits(), &why), nullptr);
  EXPECT_NE(why.find("more than bf.max-filter-memory"), std::string::npos) << why;
  EXPECT_EQ(in.remaining(), out.bytes().size() - before_array);
}

TEST(RedisRdbCodec, TruncatedRecordsAreRefusedWithAReason) {
  const std::string value = value_of_dump(bf_dump);
  for (std::size_t cut = 0; cut < value.size(); ++cut) {
    const std::string part = value.substr(0, cut);
    byte_rdb_reader in(bytes_of(part));
    std::string why;
    EXPECT_EQ(load_bloom(in, bloom_encoding_version, default_limits(), &why), nullptr) << cut;
    EXPECT_FALSE(why.empty());
  }
}

// Reproducers: a 38-byte CF.LOADCHUNK header asking for 8.6 GB (2^32 buckets of 2), and a BF.LOADCHUNK
// header with one 8 GB layer, were allocated and zeroed (7-22 s of a blocked server).
TEST(RedisLoadchunkHeaders, ForgedHeadersOverTheLimitAreRefused) {
  rb::cuckoo_record c;
  c.items = 1;
  c.buckets = std::uint64_t{1} << 32;
  c.sub_filters = 1;
  c.bucket_size = 2;
  c.max_iterations = 20;
  c.expansion = 1;
  const std::string cf = rb::encode_header(c);
  ASSERT_EQ(cf.size(), 38u);
  try {
    cuckoo_header(cf, std::uint64_t{4} << 30, 32);
    ADD_FAILURE() << "accepted";
  } catch (const over_limit& e) {
    EXPECT_EQ(e.needed(), 40u + 16u + (std::uint64_t{8} << 30));
    EXPECT_STREQ(e.what(), "ERR filter needs 8589934648 bytes, more than bf.max-filter-memory (4294967296)");
  }
  EXPECT_NO_THROW(cuckoo_header(cf, std::uint64_t{16} << 30, 32));

  rb::bloom_chain_record b;
  b.options = rb::option_noround | rb::option_force64;
  b.growth = 2;
  rb::bloom_layer_record l;
  l.bytes = std::uint64_t{8} << 30;
  l.bits = l.bytes * 8;
  l.error = 0.001;
  l.bpe = 20.0;
  l.hashes = 14;
  l.entries = 1000;
  b.layers.push_back(l);
  const std::string bf = rb::encode_header(b);
  EXPECT_THROW(bloom_header(bf, std::uint64_t{4} << 30), over_limit);
  EXPECT_NO_THROW(bloom_header(bf, std::uint64_t{16} << 30));
  EXPECT_THROW(bloom_header(bf.substr(0, 40), std::uint64_t{16} << 30), blume::format_error);
}

TEST(RedisLoadchunkHeaders, FilterMemoryIsRedisBloomsSize) {
  const rb::bloom_value b = rb::make_bloom(100000000, 0.01, 2, true);
  EXPECT_EQ(filter_memory(rb::record_of(b)), 137847016u);  // BF.INFO SIZE of the same filter
  rb::cuckoo_record huge;
  huge.buckets = std::uint64_t{1} << 40;
  huge.sub_filters = 65536;
  huge.bucket_size = 255;
  huge.expansion = 32768;
  EXPECT_EQ(filter_memory(huge), std::numeric_limits<std::uint64_t>::max());  // saturates, never wraps
}

}  // namespace

// ---- blume's own types (native.hpp): CBF -------------------------------------------------------------

namespace {

counting_codec::value_type counting_value(int items) {
  counting_codec::value_type v;
  counting4 f(1000, 0.01);
  for (int i = 0; i < items; ++i) f.insert(f.hash("item" + std::to_string(i)));
  v.filter.emplace(std::in_place_type<counting4>, std::move(f));
  v.design = {1000, 0.01};
  return v;
}

std::string record_of(const counting_codec::value_type& v) {
  byte_rdb_writer out;
  counting_codec::save(out, v);
  return out.bytes();
}

}  // namespace

TEST(RedisNativeCodec, TheStreamIsTheFileFormatsBytes) {
  const auto v = counting_value(300);
  std::string stream = counting_codec::header(v);
  for (long long it = 1;;) {
    const rb::chunk c = counting_codec::chunk(v, it, 1000);
    if (c.next == 0) break;
    stream.append(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
    it = c.next;
  }
  const auto file = blume::to_bytes(std::get<counting4>(*v.filter), v.design);
  EXPECT_EQ(stream, std::string(reinterpret_cast<const char*>(file.data()), file.size()));
}

TEST(RedisNativeCodec, CompleteAndPendingRecordsRoundTrip) {
  const auto v = counting_value(300);
  const std::string record = record_of(v);
  byte_rdb_reader in(bytes_of(record));
  std::string why;
  const auto back = counting_codec::load(in, 1, 1 << 20, &why);
  ASSERT_NE(back, nullptr) << why;
  EXPECT_EQ(in.remaining(), 0u);
  EXPECT_TRUE(back->complete());
  EXPECT_EQ(record_of(*back), record);
  EXPECT_TRUE(std::get<counting4>(*back->filter).contains(std::get<counting4>(*back->filter).hash("item7")));

  // Half-loaded: the header and the first chunk; it saves as it is and completes after loading.
  auto pending = counting_codec::from_header(counting_codec::header(v), 1 << 20);
  const rb::chunk first = counting_codec::chunk(v, 1, 1000);
  ASSERT_EQ(counting_codec::load_chunk(*pending, first.next, first.bytes, &why), counting_codec::chunk_status::ok);
  const std::string half = record_of(*pending);
  byte_rdb_reader half_in(bytes_of(half));
  auto reloaded = counting_codec::load(half_in, 1, 1 << 20, &why);
  ASSERT_NE(reloaded, nullptr) << why;
  EXPECT_FALSE(reloaded->complete());
  const rb::chunk second = counting_codec::chunk(v, first.next, 1 << 20);
  ASSERT_EQ(counting_codec::load_chunk(*reloaded, second.next, second.bytes, &why), counting_codec::chunk_status::ok);
  ASSERT_TRUE(reloaded->complete());
  EXPECT_EQ(record_of(*reloaded), record);
}

TEST(RedisNativeCodec, AHeaderAskingFor32GiBIsRefusedBeforeAllocating) {
  namespace d = blume::detail;
  std::string header = counting_codec::header(counting_value(0));
  auto* p = reinterpret_cast<std::byte*>(header.data());
  d::write_le<std::uint64_t>(p + d::off_bits, std::uint64_t{1} << 36);          // counters
  d::write_le<std::uint64_t>(p + d::off_payload_size, std::uint64_t{1} << 35);  // 4 bits each
  blume_test::fix_checksums(std::span(p, header.size()));
  try {
    counting_codec::from_header(header, std::uint64_t{4} << 30);
    FAIL() << "accepted";
  } catch (const over_limit& e) {
    EXPECT_EQ(e.needed(), (std::uint64_t{1} << 35) + 192);
  }
  // Inconsistent with its geometry: a format error, whatever the limit.
  d::write_le<std::uint64_t>(p + d::off_payload_size, 8);
  blume_test::fix_checksums(std::span(p, header.size()));
  EXPECT_THROW(counting_codec::from_header(header, UINT64_MAX), blume::format_error);
}

TEST(RedisNativeCodec, DamagedRecordsAreRefusedWithAReason) {
  const std::string record = record_of(counting_value(100));
  for (std::size_t cut = 0; cut < record.size(); cut += 7) {
    const std::string part = record.substr(0, cut);
    byte_rdb_reader in(bytes_of(part));
    std::string why;
    EXPECT_EQ(counting_codec::load(in, 1, 1 << 20, &why), nullptr) << cut;
    EXPECT_FALSE(why.empty()) << cut;
  }
  std::string flipped = record;
  flipped[flipped.size() - 3] ^= 1;  // a payload byte: the checksum catches it
  byte_rdb_reader in(bytes_of(flipped));
  std::string why;
  EXPECT_EQ(counting_codec::load(in, 1, 1 << 20, &why), nullptr);
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
}
