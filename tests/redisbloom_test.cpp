// SPDX-License-Identifier: Apache-2.0
// RedisBloom compatibility of the library: the hash, probe positions, layer geometry and chain growth of
// BF filters, held to bytes that RedisBloom 2.8.20 itself produced (SCANDUMP streams), and the codec's
// validation of hostile headers and chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <string>
#include <string_view>
#include <vector>

#include "blume/compat/redisbloom_format.hpp"
#include "test_support.hpp"

namespace {

namespace rb = blume::redisbloom;
using blume_test::mentions;
using blume_test::message_of;

std::string unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}
std::string as_string(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }
std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

/// Every chunk of a SCANDUMP, in iterator order, with the iterator SCANDUMP returns after it.
std::vector<std::pair<long long, std::string>> scandump(const rb::bloom_value& v) {
  std::vector<std::pair<long long, std::string>> out;
  for (long long it = 1;;) {
    const rb::chunk c = rb::bloom_chunk(v, it);
    if (c.next == 0) break;
    out.emplace_back(c.next, as_string(c.bytes));
    it = c.next;
  }
  return out;
}

// BF.RESERVE emails 0.001 20; BF.MADD emails ahmed@example.com mona@example.com omar@example.com
const std::string emails_header = unhex(
    "0300000000000000010000000500000002000000280000000000000040010000000000000300000000000000fca9f1d24d62403f2e92f414fca3"
    "2f400b000000140000000000000000");
const std::string emails_bits =
    unhex("40082040400091008210061828a00002000500000400040000104000010000000001000000045000");

// BF.RESERVE grow 0.02 4 EXPANSION 3; BF.ADD grow item-0 … item-19
const std::string grow_header = unhex(
    "13000000000000000300000005000000030000000800000000000000400000000000000004000000000000007b14ae47e17a843f88168ac58c2b"
    "2340070000000400000000000000001800000000000000c0000000000000000c000000000000007b14ae47e17a743fe9862fb2350e264008000000"
    "0c00000000000000003800000000000000c00100000000000003000000000000007b14ae47e17a643f4af7d49edef02840090000002400000000"
    "00000000");
const std::vector<std::pair<long long, std::string>> grow_chunks = {
    {9, unhex("e831941407628144")},
    {33, unhex("b104062443eb88aec90826a9dd191015890398eae00e8af0")},
    {89,
     unhex(
         "0008100108000000010204091000000488002000204080000004000000024080000000000000001000000000200002000000000000600000")}};

rb::bloom_value grow_filter() {
  rb::bloom_value v = rb::make_bloom(4, 0.02, 3, true);
  for (int i = 0; i < 20; ++i) v.chain.insert("item-" + std::to_string(i));
  return v;
}

// The golden SCANDUMP tests below pin MurmurHash64A down byte for byte (keys of 6, 7, 16 and 17 bytes);
// this one covers the other tail lengths and the identity for empty input with seed 0.
TEST(RedisBloomHash, MurmurHash64AGivesEveryPrefixItsOwnHash) {
  const std::string text = "abcdefghijklmnopq";
  EXPECT_EQ(blume::murmur64a("", 0, 0), 0u);
  std::vector<std::uint64_t> seen;
  for (std::size_t n = 0; n <= text.size(); ++n)
    seen.push_back(blume::murmur64a(text.data(), n, 0xc6a4a7935bd1e995ULL));
  for (std::size_t i = 0; i < seen.size(); ++i)
    for (std::size_t j = i + 1; j < seen.size(); ++j) EXPECT_NE(seen[i], seen[j]) << i << " " << j;
}

TEST(RedisBloomBloom, AReservedFilterHasRedisBloomsGeometry) {
  const rb::bloom_value v = rb::make_bloom(20, 0.001, 2, true);
  const rb::bloom_chain_record r = rb::record_of(v);
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_EQ(r.options, 5u);
  EXPECT_EQ(r.layers[0].bits, 320u);
  EXPECT_EQ(r.layers[0].bytes, 40u);
  EXPECT_EQ(r.layers[0].hashes, 11u);
  EXPECT_EQ(r.layers[0].error, 0.0005);
  // The practitioner's filter: BF.RESERVE f 0.01 100000000 has one layer of 137,846,920 bytes (RedisBloom's
  // BF.INFO Size 137,847,016 adds its 32-byte chain and one 64-byte layer record).
  EXPECT_EQ(rb::record_of(rb::make_bloom(100'000'000, 0.01, 2, true)).layers[0].bytes, 137'846'920u);
}

TEST(RedisBloomBloom, ScandumpOfAFilterEqualsRedisBloomsBytes) {
  rb::bloom_value v = rb::make_bloom(20, 0.001, 2, true);
  for (const char* e : {"ahmed@example.com", "mona@example.com", "omar@example.com"}) EXPECT_TRUE(v.chain.insert(e));
  EXPECT_EQ(rb::encode_header(rb::record_of(v)), emails_header);
  const auto chunks = scandump(v);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].first, 41);
  EXPECT_EQ(chunks[0].second, emails_bits);
  EXPECT_TRUE(v.chain.contains("ahmed@example.com"));
  EXPECT_FALSE(v.chain.contains("nope@example.com"));
}

TEST(RedisBloomBloom, AGrowingChainEqualsRedisBloomsLayersAndBytes) {
  const rb::bloom_value v = grow_filter();
  EXPECT_EQ(v.chain.layers().size(), 3u);
  EXPECT_EQ(v.chain.inserted(), 19u);  // one of the 20 adds was a false positive of the chain
  EXPECT_EQ(rb::encode_header(rb::record_of(v)), grow_header);
  EXPECT_EQ(scandump(v), grow_chunks);
}

TEST(RedisBloomBloom, RedisBloomsStreamLoadsIntoAnIdenticalFilter) {
  rb::bloom_value v = rb::value_from(rb::decode_header(grow_header));
  for (const auto& [next, bytes] : grow_chunks)
    ASSERT_EQ(rb::load_bloom_chunk(v, next, as_bytes(bytes)), rb::chunk_status::ok);
  EXPECT_EQ(rb::encode_header(rb::record_of(v)), grow_header);
  EXPECT_EQ(scandump(v), grow_chunks);
  const rb::bloom_value built = grow_filter();
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(v.chain.contains("item-" + std::to_string(i)));
  for (int i = 0; i < 2000; ++i) {
    const std::string k = "other-" + std::to_string(i);
    ASSERT_EQ(v.chain.contains(k), built.chain.contains(k)) << k;
  }
  // It keeps growing as RedisBloom would: the next layer is 36 × 3 items at half the rate.
  EXPECT_EQ(v.chain.layer_capacity(3), 108u);
  EXPECT_EQ(v.chain.layer_fpr(3), 0.02 / 16);
}

TEST(RedisBloomBloom, ChunksPastTheEndOrBeforeTheStartAreEmpty) {
  const rb::bloom_value v = grow_filter();
  EXPECT_EQ(rb::bloom_chunk(v, 0).next, 0);
  EXPECT_EQ(rb::bloom_chunk(v, -5).next, 0);
  EXPECT_EQ(rb::bloom_chunk(v, 89).next, 0);
  const rb::chunk mid = rb::bloom_chunk(v, 5);  // inside layer 0: the rest of it
  EXPECT_EQ(mid.next, 9);
  EXPECT_EQ(mid.bytes.size(), 4u);
  EXPECT_EQ(rb::bloom_chunk(v, 33, 10).bytes.size(), 10u);  // chunks are capped at the limit
}

TEST(RedisBloomBloom, BadChunksAreRefusedInRedisBloomsOrder) {
  rb::bloom_value v = rb::value_from(rb::decode_header(grow_header));
  const std::string eight(8, 'x');
  EXPECT_EQ(rb::load_bloom_chunk(v, 0, as_bytes(eight)), rb::chunk_status::bad_data);
  EXPECT_EQ(rb::load_bloom_chunk(v, 7, as_bytes(eight)), rb::chunk_status::bad_data);  // iterator < length
  EXPECT_EQ(rb::load_bloom_chunk(v, 8, as_bytes(eight)), rb::chunk_status::no_layer);  // would start at 0
  EXPECT_EQ(rb::load_bloom_chunk(v, 1000, as_bytes(eight)), rb::chunk_status::no_layer);
  EXPECT_EQ(rb::load_bloom_chunk(v, 13, as_bytes(eight)),
            rb::chunk_status::too_big);  // bytes 4 … 11 span layers 0 and 1
  EXPECT_EQ(rb::load_bloom_chunk(v, 9, as_bytes(eight)), rb::chunk_status::ok);
}

rb::bloom_chain_record grow_record() { return rb::decode_header(grow_header); }

TEST(RedisBloomBloom, HostileHeadersAreRefusedNamingTheProblem) {
  const auto refused = [](rb::bloom_chain_record r, std::string_view what) {
    EXPECT_TRUE(mentions(message_of<blume::format_error>([&] { rb::value_from(r); }), what)) << what;
  };
  auto r = grow_record();
  r.options |= 16;
  refused(r, "option");
  r = grow_record();
  r.options &= ~rb::option_force64;
  refused(r, "32-bit");
  r = grow_record();
  r.size += 1;
  refused(r, "add up");
  r = grow_record();
  r.layers[1].bits += 64;
  refused(r, "bits do not match");
  r = grow_record();
  r.layers[2].hashes += 1;
  refused(r, "hash count");
  r = grow_record();
  r.layers[0].error = 0;
  refused(r, "error rate");
  r = grow_record();
  r.layers[0].bytes = r.layers[0].bits = 0;
  refused(r, "bits");
  r = grow_record();
  r.layers[0].bytes = std::uint64_t{1} << 40;  // 2^43 bits: refused before anything is allocated
  r.layers[0].bits = r.layers[0].bytes * 8;
  refused(r, "2^40");
  r = grow_record();
  r.layers[0].n2 = 64;
  refused(r, "power-of-two");
  r = grow_record();
  r.growth = 32769;  // beyond RedisBloom's EXPANSION range: the next layer of a small chain would be huge
  refused(r, "growth");
}

TEST(RedisBloomBloom, HeadersOfTheWrongLengthAreRefused) {
  EXPECT_THROW(rb::decode_header(grow_header.substr(0, 19)), blume::format_error);
  EXPECT_THROW(rb::decode_header(grow_header.substr(0, grow_header.size() - 1)), blume::format_error);
  EXPECT_THROW(rb::decode_header(grow_header + "x"), blume::format_error);
  std::string none = grow_header.substr(0, 20);
  none[8] = 0;  // nfilters = 0
  EXPECT_THROW(rb::decode_header(none), blume::format_error);
}

TEST(RedisBloomBloom, ANonScalingFilterRefusesItemsPastItsCapacity) {
  rb::bloom_value v = rb::make_bloom(10, 0.01, 2, false);
  EXPECT_EQ(v.options, 13u);
  int added = 0;
  blume::insert_result last = blume::insert_result::added;
  for (int i = 0; i < 100 && last != blume::insert_result::full; ++i) {
    last = v.chain.try_insert("k" + std::to_string(i));
    added += last == blume::insert_result::added;
  }
  EXPECT_EQ(last, blume::insert_result::full);
  EXPECT_EQ(added, 10);
  EXPECT_EQ(v.chain.layers().size(), 1u);
  EXPECT_EQ(v.chain.try_insert("k0"), blume::insert_result::present);  // present keys still answer "present"
}

}  // namespace

namespace {

// A host (the Redis module) routes filter memory through its own allocator so the server accounts for it.
int host_allocations = 0;
int host_frees = 0;
void* host_allocate(std::size_t bytes) {
  ++host_allocations;
  return std::aligned_alloc(64, bytes);  // bytes is a multiple of 64
}
void host_free(void* p) noexcept {
  ++host_frees;
  std::free(p);
}

TEST(StorageAllocator, AnInstalledAllocatorGetsEveryOwnedArrayAndFreesIt) {
  blume::set_storage_allocator({host_allocate, host_free});
  {
    rb::bloom_value v = rb::make_bloom(100'000, 0.01, 2, true);  // 117 KiB and 4 MiB arrays alike
    const blume::bloom_filter<> big(5'000'000, 0.01);
    EXPECT_EQ(host_allocations, 2);
    rb::bloom_value copy = v;
    EXPECT_EQ(host_allocations, 3);
    EXPECT_FALSE(big.contains(1));
  }
  EXPECT_EQ(host_frees, 3);
  blume::set_storage_allocator({});
  const blume::bloom_filter<> after(1000, 0.01);
  EXPECT_EQ(host_allocations, 3);
}

}  // namespace

namespace {

// CF.RESERVE ck 16 BUCKETSIZE 4; CF.ADD ck alpha, beta, gamma, delta, alpha
const std::string ck_header = unhex("0500000000000000040000000000000000000000000000000100000000000000040014000100");
const std::string ck_slots = unhex("0000000000000000d700000016e13416");

rb::cuckoo_value ck_filter() {
  rb::cuckoo_value v = rb::make_cuckoo(16, 4, 20, 1);
  for (const char* k : {"alpha", "beta", "gamma", "delta", "alpha"}) {
    const blume::digest d = v.filter.hash(std::string_view(k));
    EXPECT_TRUE(rb::cuckoo_insert(v, d)) << k;
  }
  return v;
}

std::vector<std::pair<long long, std::string>> cuckoo_scandump(const rb::cuckoo_value& v) {
  std::vector<std::pair<long long, std::string>> out;
  for (long long it = 1;;) {
    const rb::chunk c = rb::cuckoo_chunk(v, it);
    if (c.next == 0) break;
    out.emplace_back(c.next, as_string(c.bytes));
    it = c.next;
  }
  return out;
}

TEST(RedisBloomCuckoo, AReservedFilterHasRedisBloomsGeometry) {
  EXPECT_EQ(rb::make_cuckoo(1000, 2, 20, 1).filter.buckets(), 512u);
  EXPECT_EQ(rb::make_cuckoo(100'000'000, 2, 20, 1).filter.buckets(), 67'108'864u);
  EXPECT_EQ(rb::make_cuckoo(16, 4, 20, 3).filter.geometry().expansion, 4u);  // rounded up to a power of two
  EXPECT_EQ(rb::make_cuckoo(1, 4, 20, 0).filter.buckets(), 1u);
}

TEST(RedisBloomCuckoo, ScandumpOfAFilterEqualsRedisBloomsBytes) {
  const rb::cuckoo_value v = ck_filter();
  EXPECT_EQ(v.filter.count(v.filter.hash(std::string_view("alpha"))), 2u);
  EXPECT_EQ(rb::encode_header(rb::record_of(v)), ck_header);
  const auto chunks = cuckoo_scandump(v);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].first, 17);
  EXPECT_EQ(chunks[0].second, ck_slots);
}

TEST(RedisBloomCuckoo, RedisBloomsStreamLoadsIntoAnIdenticalFilter) {
  rb::cuckoo_value v = rb::value_from(rb::decode_cuckoo_header(ck_header));
  ASSERT_TRUE(rb::load_cuckoo_chunk(v, 17, as_bytes(ck_slots)));
  EXPECT_EQ(v.items, 5u);
  EXPECT_EQ(v.filter.inserted(), 5u);
  const rb::cuckoo_value built = ck_filter();
  EXPECT_TRUE(v.filter == built.filter);
  for (const char* k : {"alpha", "beta", "gamma", "delta"}) EXPECT_TRUE(v.filter.contains(std::string_view(k)));
  EXPECT_EQ(rb::encode_header(rb::record_of(v)), ck_header);
}

TEST(RedisBloomCuckoo, DuplicatesForceGrowthAndAFullFilterStaysUnchanged) {
  // A fingerprint has 2·b slots per sub-filter (b when its two buckets coincide: RedisBloom counts that
  // bucket twice). Take a key whose buckets differ in a 2-bucket table: an odd fingerprint, since the
  // pair is i ⊕ (fp·0x5bd1e995 mod 2).
  rb::cuckoo_value v = rb::make_cuckoo(8, 4, 20, 2);
  blume::digest d;
  for (int i = 0;; ++i) {
    d = v.filter.hash("same" + std::to_string(i));
    if (blume::redisbloom_cuckoo_hashing::fingerprint(d, 8) % 2 == 1) break;
  }
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(rb::cuckoo_insert(v, d));
  EXPECT_EQ(v.filter.sub_filters(), 1u);
  ASSERT_TRUE(rb::cuckoo_insert(v, d));  // the 9th copy needs a new sub-filter of twice the buckets
  EXPECT_EQ(v.filter.sub_filters(), 2u);
  EXPECT_EQ(v.filter.sub_filter_buckets(1), 4u);
  EXPECT_EQ(v.items, 9u);
  rb::cuckoo_value fixed = rb::make_cuckoo(8, 4, 20, 0);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(rb::cuckoo_insert(fixed, d));
  const auto before = cuckoo_scandump(fixed);
  EXPECT_FALSE(rb::cuckoo_insert(fixed, d));  // "Filter is full", and every relocation was undone
  EXPECT_EQ(cuckoo_scandump(fixed), before);
  EXPECT_EQ(fixed.items, 8u);
}

std::vector<std::size_t> requested_blocks;
void* recording_allocate(std::size_t bytes) {
  requested_blocks.push_back(bytes);
  void* p = std::aligned_alloc(64, bytes);
  return p == nullptr ? nullptr : std::memset(p, 0, bytes);  // an allocator's blocks must come zeroed
}
void recording_free(void* p) noexcept { std::free(p); }

TEST(RedisBloomCuckoo, TablesAreExactlyTheirSlotsAndTheirLastBucketsWork) {
  // A table of 2^k bytes must be a block of 2^k bytes: the server's allocator puts 2^k + 64 in the
  // 1.25·2^k class. Loads near a table's end then stay within it (as a sanitizer checks).
  requested_blocks.clear();
  blume::set_storage_allocator({recording_allocate, recording_free});
  {
    rb::cuckoo_value v = rb::make_cuckoo(1024, 2, 500, 2);
    EXPECT_EQ(requested_blocks, std::vector<std::size_t>{1024});
    std::vector<blume::digest> keys;
    for (int i = 0; v.filter.sub_filters() == 1; ++i) {
      keys.push_back(v.filter.hash("k" + std::to_string(i)));
      ASSERT_TRUE(rb::cuckoo_insert(v, keys.back()));
    }
    EXPECT_EQ(requested_blocks, (std::vector<std::size_t>{1024, 2048}));
    // The first table filled up, and its last 7 bytes, which no 8-byte load may start at, hold keys.
    const auto first = v.filter.slot_bytes(0);
    EXPECT_TRUE(std::any_of(first.end() - 7, first.end(), [](std::byte b) { return b != std::byte{0}; }));
    for (const auto& d : keys) EXPECT_TRUE(v.filter.contains(d));
    const rb::cuckoo_value reloaded = [&] {
      rb::cuckoo_value r = rb::value_from(rb::record_of(v));
      for (std::size_t j = 0; j < v.filter.sub_filters(); ++j)
        EXPECT_TRUE(r.filter.write_slot_bytes(j, 0, v.filter.slot_bytes(j)));
      return r;
    }();
    EXPECT_EQ(requested_blocks, (std::vector<std::size_t>{1024, 2048, 1024, 2048}));
    EXPECT_TRUE(reloaded.filter == v.filter);
    for (const auto& d : keys) EXPECT_TRUE(reloaded.filter.contains(d));
    for (const auto& d : keys) EXPECT_TRUE(v.filter.erase(d));
    EXPECT_EQ(v.filter.inserted(), 0u);
  }
  blume::set_storage_allocator({});
}

TEST(RedisBloomCuckoo, DeletesCompactAGrownFilterAndKeepEveryOtherKey) {
  rb::cuckoo_value v = rb::make_cuckoo(64, 2, 20, 1);
  std::vector<blume::digest> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(v.filter.hash("k" + std::to_string(i)));
  for (const auto& d : keys) ASSERT_TRUE(rb::cuckoo_insert(v, d));
  const std::size_t grown = v.filter.sub_filters();
  ASSERT_GT(grown, 2u);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i % 10 != 0) {
      ASSERT_TRUE(rb::cuckoo_delete(v, keys[i])) << i;
    }
  }
  EXPECT_LT(v.filter.sub_filters(), grown);  // compacted on the way, as RedisBloom's CF.DEL does
  EXPECT_EQ(v.items, 20u);
  EXPECT_EQ(v.filter.inserted(), 20u);
  for (std::size_t i = 0; i < keys.size(); i += 10) EXPECT_TRUE(v.filter.contains(keys[i])) << i;
  rb::cuckoo_compact(v, true);
  EXPECT_EQ(v.deletes, 0u);
  for (std::size_t i = 0; i < keys.size(); i += 10) EXPECT_TRUE(v.filter.contains(keys[i])) << i;
}

TEST(RedisBloomCuckoo, AGrownBlumeFilterCompactsWithoutLosingKeys) {
  blume::cuckoo_geometry g;
  g.buckets = 16;
  g.bucket_size = 4;
  g.fingerprint_bits = 12;
  g.expansion = 2;
  blume::cuckoo_filter<> f(g);
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(f.insert(i));
  const std::size_t grown = f.sub_filters();
  ASSERT_GT(grown, 2u);
  for (int i = 0; i < 400; ++i) {
    if (i % 20 != 0) {
      ASSERT_TRUE(f.erase(i));
    }
  }
  f.compact();
  EXPECT_LT(f.sub_filters(), grown);
  for (int i = 0; i < 400; i += 20) EXPECT_TRUE(f.contains(i)) << i;
  EXPECT_EQ(f.inserted(), 20u);
}

TEST(RedisBloomCuckoo, HostileHeadersAndChunksAreRefused) {
  const auto refused = [](rb::cuckoo_record r) { EXPECT_THROW(rb::value_from(r), blume::format_error); };
  const rb::cuckoo_record good = rb::decode_cuckoo_header(ck_header);
  auto r = good;
  r.bucket_size = 0;
  refused(r);
  r = good;
  r.buckets = 3;
  refused(r);
  r = good;
  r.expansion = 3;
  refused(r);
  r = good;
  r.max_iterations = 0;
  refused(r);
  r = good;
  r.sub_filters = 0;
  refused(r);
  r = good;
  r.sub_filters = 2;
  r.expansion = 0;
  refused(r);
  r = good;
  r.buckets = std::uint64_t{1} << 40;  // 2^43 bytes: refused before allocating
  refused(r);
  r = good;
  r.sub_filters = 40;
  r.expansion = 2;  // the last sub-filter would be 4·2^39 buckets
  refused(r);
  EXPECT_THROW(rb::value_from(good, 0), blume::format_error);  // beyond the caller's sub-filter limit
  EXPECT_THROW(rb::decode_cuckoo_header(ck_header.substr(1)), blume::format_error);

  rb::cuckoo_value v = rb::value_from(good);
  EXPECT_FALSE(rb::load_cuckoo_chunk(v, 17, {}));
  EXPECT_FALSE(rb::load_cuckoo_chunk(v, 18, as_bytes(ck_slots)));  // runs one byte past the table
  EXPECT_FALSE(rb::load_cuckoo_chunk(v, 16, as_bytes(ck_slots)));  // would start before byte 0
  EXPECT_FALSE(rb::load_cuckoo_chunk(v, 1'000'000, as_bytes(ck_slots)));
  EXPECT_EQ(v.filter.inserted(), 0u);
}

}  // namespace
