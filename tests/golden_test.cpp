// SPDX-License-Identifier: Apache-2.0
// Frozen bytes, as RocksDB's schema tests freeze its filters' bits: for every kind, fixed keys and the
// default seed give exactly these files. A failure here means hashing, probing, layout or the format
// changed: files already on disk would be misread. Change the format on purpose (a new version or a
// kind's own flag, old files still read), never by accident.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/kinds/strata_estimator.hpp"

namespace {

std::vector<std::string> golden_keys(const char* prefix, int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

struct golden {
  std::uint64_t payload_size;
  std::uint64_t payload_xxh64;  // of the payload, without an aging filter's two start times
  std::uint64_t header_xxh64;   // of the 192-byte header (design record {1000, 1%})
};

/// Every kind built from the same 1000 keys (a map and a cascade from their own inputs).
blume::any_filter golden_filter(blume::filter_kind kind) {
  const auto keys = golden_keys("golden-key-", 1000);
  if (blume::input_of(kind) == blume::kind_input::keys_with_values) {
    // Values 1 … 200 (set numbers for a spatial filter); the Bloomier map was pinned with 0 … 199.
    const bool map = kind == blume::bloomier_filter<>::kind;
    std::vector<std::uint64_t> values;
    for (int i = 0; i < 1000; ++i) values.push_back(static_cast<std::uint64_t>(i % 200 + (map ? 0 : 1)));
    return blume::build_map_filter(kind, keys, values, map ? 1.0 / 256 : 0.01);
  }
  if (blume::input_of(kind) == blume::kind_input::included_and_excluded)
    return blume::cascade_filter::build(keys, golden_keys("golden-absent-", 4000));
  if (blume::input_of(kind) == blume::kind_input::integers) {
    // Integer keys i · 1000003 of [0, 2^32), 1000 of them, past a zone of 64.
    blume::any_filter f =
        blume::make_integer_filter(kind, blume::integer_universe::of_size(std::uint64_t{1} << 32), 64);
    std::visit(
        [](auto& typed) {
          if constexpr (requires { typed.in_zone(); })
            for (std::uint64_t i = 0; i < 1000; ++i) typed.insert(i * 1000003);
        },
        f);
    return f;
  }
  if (blume::input_of(kind) == blume::kind_input::vectors) {
    // 1000 vectors of 16 values, value j of vector i being ((31i + 17j) mod 101) / 100, then 250 steps elapsed.
    blume::any_filter f = blume::make_vector_filter(kind, 16);
    std::visit(
        [](auto& typed) {
          if constexpr (requires { typed.elapse(1); }) {
            std::vector<double> x(16);
            for (int i = 0; i < 1000; ++i) {
              for (int j = 0; j < 16; ++j) x[j] = static_cast<double>((31 * i + 17 * j) % 101) / 100;
              typed.observe(x);
            }
            typed.elapse(250);
          }
        },
        f);
    return f;
  }
  if (blume::is_static(kind)) {
    std::vector<std::uint64_t> lows;
    for (const auto& k : keys) lows.push_back(blume::hash_key(blume::xxh3_hasher(), std::string_view(k)).low);
    return blume::build_static_filter(kind, std::move(lows), 0.01);
  }
  if (kind == blume::aging_bloom_filter<>::kind) {
    // A fixed clock: the start times are the only bytes a clock writes, and they are left out below.
    const std::chrono::system_clock::time_point t0{std::chrono::seconds(1'700'000'000)};
    blume::aging_bloom_filter<> f(1000, 0.01, {}, blume::xxh3_hasher::default_seed, t0);
    for (const auto& k : keys) f.insert(std::string_view(k), t0);
    return f;
  }
  blume::any_filter f = blume::make_filter(kind, 1000, 0.01);
  std::visit(
      [&](auto& typed) {
        if constexpr (requires { typed.insert(std::string_view()); })
          for (const auto& k : keys) typed.insert(std::string_view(k));
        if constexpr (requires { typed.absorb(typed); }) {
          // Levels past the first pinned too: a neighbour's 500 keys one hop away.
          auto neighbour = std::get<std::decay_t<decltype(typed)>>(blume::make_filter(kind, 1000, 0.01));
          for (const auto& k : golden_keys("golden-neighbour-", 500)) neighbour.insert(std::string_view(k));
          typed.absorb(neighbour);
        }
      },
      f);
  return f;
}

golden measure(blume::filter_kind kind) {
  const blume::any_filter f = golden_filter(kind);
  std::vector<std::byte> bytes = std::visit([](const auto& typed) { return blume::to_bytes(typed, {1000, 0.01}); }, f);
  const blume::file_header h = blume::decode_header(bytes);
  std::byte* payload = bytes.data() + blume::header_size;
  if (kind == blume::aging_bloom_filter<>::kind) std::fill(payload + 16, payload + 32, std::byte{0});
  return {h.payload_size, XXH64(payload, h.payload_size, 0), XXH64(bytes.data(), blume::header_size, 0)};
}

void expect_golden(blume::filter_kind kind, const golden& expected) {
  const golden now = measure(kind);
  EXPECT_EQ(now.payload_size, expected.payload_size) << blume::kind_name(kind);
  EXPECT_EQ(now.payload_xxh64, expected.payload_xxh64) << blume::kind_name(kind);
  EXPECT_EQ(now.header_xxh64, expected.header_xxh64) << blume::kind_name(kind);
  if (now.payload_xxh64 != expected.payload_xxh64 || now.header_xxh64 != expected.header_xxh64)
    std::printf("    {\"%s\", {%lluu, 0x%016llxull, 0x%016llxull}},\n", std::string(blume::kind_name(kind)).c_str(),
                static_cast<unsigned long long>(now.payload_size), static_cast<unsigned long long>(now.payload_xxh64),
                static_cast<unsigned long long>(now.header_xxh64));
}

TEST(Golden, EveryKindWritesTheseBytes) {
  // By name, so that a kind added to the list without its golden bytes fails here.
  const std::map<std::string, golden, std::less<>> pinned = {
      {"bloom", {1200u, 0xb6ffa2c9a939e067ull, 0x7b3e942b90346c7bull}},
      {"partitioned", {1200u, 0x6a5fdf247d0d591cull, 0x491d75c828146afaull}},
      {"blocked", {1280u, 0x8ed1067e97939bb4ull, 0x081988a1668c2b96ull}},
      // XXH3-64 (hash_id 4, seed 0) after 0.1.0; the XXH3-128 bytes are pinned with the earlier hash types below.
      {"split-block", {1344u, 0xed910160ff4568e9ull, 0xa6e908b7c1ec0ff2ull}},
      {"counting", {4800u, 0x81e631d037b71e64ull, 0x9e4ed5f3366d26caull}},
      {"cuckoo", {1600u, 0x2fb5202c8ac44dcaull, 0xb5085439d5697acaull}},
      // The rank-and-select layout (layout 1); files of the first layout still read (tests/fixtures/v1).
      {"quotient", {1606u, 0xbc6defefbffe0371ull, 0x64d5fad928ad53daull}},
      // Format 2 with the layer table (flag 2) and the aging buffers' geometry in the header: files that lack
      // them (tests/fixtures/v1, and version 2 before them) still read, through the policy's geometry.
      {"scalable", {1424u, 0x1e616cabb5c6bb6full, 0x51aabc2118cba095ull}},
      {"stable", {2400u, 0x488a0ecc697cfcfeull, 0xb01abed41583f7baull}},
      {"aging", {1568u, 0xfd1f3a07635611b6ull, 0x83276af42bc31afcull}},
      {"xor8", {1263u, 0xdc3fc240ba68d0d7ull, 0x3ffe768d743f2926ull}},
      {"xor16", {2526u, 0x7f222eec0adf5b58ull, 0xed3f4117e28317b1ull}},
      {"fuse8", {1408u, 0x55aea2bba1891ff4ull, 0x733465a7575e23bcull}},
      {"fuse16", {2816u, 0xb96b66903fcda262ull, 0x3ab79da0ad424909ull}},
      // The Rice code (extra[3] = 1), 16-bit bucket offsets (extra[2] = s + 1), 128 keys per bucket. The
      // Golomb-coded files written before are pinned below; those of the first layout, 32-bit offsets and 2048
      // keys per bucket, are tests/fixtures/v1/gcs.blume.
      {"gcs", {1112u, 0x4a3d706f18750b84ull, 0x1dfb052b3dada42bull}},
      {"bloomier", {2824u, 0x88e5656363163d71ull, 0x33facbb3dad008fbull}},
      {"cascade", {1568u, 0xbdeff6ce189a5e5full, 0x7c203f0ac596239eull}},
      {"spatial", {11152u, 0xe3ef25bdf543f59dull, 0x359e2a9bfe7d9f23ull}},
      {"layered", {5120u, 0xddb4ea9e94f6519aull, 0xa2aa91c99002ec2cull}},
      // Level 0 from the keys, level 1 from a neighbour's (see golden_filter).
      {"attenuated", {5120u, 0xda3d7b1af2910fe0ull, 0x233b48967e1325e2ull}},
      {"compact", {38344u, 0x1a822c206114fac7ull, 0x9ad9ddfe1545a340ull}},
      {"vi-counting", {2064u, 0x013fd78b5deda668ull, 0x594c021d81401b13ull}},
      // Planned as a membership table (1000 keys at 1%: k = 7); a difference table and a sketch below.
      {"iblt", {153552u, 0x777857c98d7d08e2ull, 0x04da444d28939336ull}},
      {"dleft", {2696u, 0x1677c453d07c622full, 0x86c442a97bf77865ull}},
      // Integer keys i · 1000003 of [0, 2^32), 1000 of them past a zone of 64 (golden_filter).
      {"egh", {20640u, 0x6d90d23e85f27d77ull, 0xb48ed8f6ad5e7600ull}},
      // 1000 keys planned at 1%: b = 8 signatures in 1223 slots.
      {"compaction", {1224u, 0xa934115399e9aed4ull, 0x769a68350a5a9f87ull}},
      // 1000 vectors of 16 values observed, then 250 steps elapsed (golden_filter): weights and recovery steps.
      {"novelty", {32000u, 0x4960a8ffd472d047ull, 0x4a927149718f5fb6ull}},
  };
  EXPECT_EQ(pinned.size(), blume::kind_count) << "a pinned kind is no longer in the list";
  blume::for_each_kind([&](auto type) {
    using F = typename decltype(type)::type;
    const auto expected = pinned.find(F::name);
    if (expected == pinned.end()) {
      ADD_FAILURE() << "no golden bytes for the " << F::name << " kind";
      expect_golden(F::kind, {});
    } else {
      expect_golden(F::kind, expected->second);
    }
  });
}

// Blocked cells (extra[5] = 1) of the spatial filter and the compact approximator, from golden_filter's keys
// and values: the block by reduce(d.high, blocks), the probes by the fields of d.low (format.md).
TEST(Golden, BlockedCellsWriteTheseBytes) {
  const std::map<std::string, golden, std::less<>> pinned = {
      {"spatial", {13696u, 0x6f7c6dc61bfc0743ull, 0x540f5d31e440a685ull}},
      {"compact", {83968u, 0x4387b040e40a1191ull, 0x2bd929a7ef235adaull}},
  };
  const auto keys = golden_keys("golden-key-", 1000);
  std::vector<std::uint64_t> values;
  for (int i = 0; i < 1000; ++i) values.push_back(static_cast<std::uint64_t>(i % 200 + 1));
  for (const auto& [name, expected] : pinned) {
    const blume::filter_kind kind = *blume::parse_kind(name);
    const blume::any_filter f =
        blume::build_map_filter(kind, keys, values, 0.01, std::nullopt, blume::cell_layout::blocked);
    std::vector<std::byte> bytes;
    std::visit([&](const auto& typed) { bytes = blume::to_bytes(typed, {1000, 0.01}); }, f);
    const blume::file_header h = blume::decode_header(bytes);
    EXPECT_EQ(h.extra[5], 1u) << name;
    const golden now{h.payload_size, XXH64(bytes.data() + blume::header_size, h.payload_size, 0),
                     XXH64(bytes.data(), blume::header_size, 0)};
    EXPECT_EQ(now.payload_size, expected.payload_size) << name;
    EXPECT_EQ(now.payload_xxh64, expected.payload_xxh64) << name;
    EXPECT_EQ(now.header_xxh64, expected.header_xxh64) << name;
    const blume::any_filter back = blume::filter_from_bytes(bytes);
    for (const auto& k : keys)
      ASSERT_TRUE(std::visit(
          [&](const auto& t) {
            if constexpr (blume::answers_keys<std::decay_t<decltype(t)>>) {
              return t.contains(std::string_view(k));
            } else {
              return false;  // a blocked-cells file is never a kind of vectors
            }
          },
          back));
  }
}

// The Golomb-coded set as it was written before the Rice code (extra[3] = 0, 96 keys per bucket): still
// written byte for byte by gcs_code::golomb, and read back as it is.
TEST(Golden, GolombCodedSetsOfTheGolombCodeWriteTheseBytes) {
  std::vector<std::uint64_t> lows;
  for (const auto& k : golden_keys("golden-key-", 1000))
    lows.push_back(blume::hash_key(blume::xxh3_hasher(), std::string_view(k)).low);
  using gcs = blume::golomb_coded_set<>;
  const gcs f = gcs::build_from_hashes(lows, gcs::plan(1000, 0.01).hashes, blume::xxh3_hasher::default_seed, 96,
                                       blume::gcs_code::golomb);
  const std::vector<std::byte> bytes = blume::to_bytes(f, {1000, 0.01});
  const blume::file_header h = blume::decode_header(bytes);
  EXPECT_EQ(h.payload_size, 1104u);
  EXPECT_EQ(XXH64(bytes.data() + blume::header_size, h.payload_size, 0), 0xf1d642cd304c1ac8ull);
  EXPECT_EQ(XXH64(bytes.data(), blume::header_size, 0), 0x3f9a76ca3b835c12ull);
  const gcs back = blume::from_bytes<gcs>(bytes);
  EXPECT_EQ(back.code(), blume::gcs_code::golomb);
  for (const auto& k : golden_keys("golden-key-", 1000)) ASSERT_TRUE(back.contains(std::string_view(k))) << k;
}

// Files of a kind's earlier default hasher (split-block with XXH3-128, up to 0.1.0) still write the bytes they
// were pinned with: the same keys as above, built through the type itself.
TEST(Golden, EarlierHashTypesWriteTheseBytes) {
  const std::map<std::string, golden, std::less<>> pinned = {
      {"split-block", {1344u, 0x93e76093483f5a64ull, 0x38631021719822a1ull}},
  };
  std::size_t seen = 0;
  blume::detail::kinds_of<blume::earlier_hash_types>::each([&](auto type) {
    using F = typename decltype(type)::type;
    ++seen;
    F f(1000, 0.01);
    for (const auto& k : golden_keys("golden-key-", 1000)) f.insert(std::string_view(k));
    std::vector<std::byte> bytes = blume::to_bytes(f, {1000, 0.01});
    const blume::file_header h = blume::decode_header(bytes);
    EXPECT_EQ(h.hash, F::hasher_type::id);
    const golden now{h.payload_size, XXH64(bytes.data() + blume::header_size, h.payload_size, 0),
                     XXH64(bytes.data(), blume::header_size, 0)};
    const auto expected = pinned.find(F::name);
    ASSERT_NE(expected, pinned.end()) << "no golden bytes for the earlier-hash " << F::name;
    EXPECT_EQ(now.payload_size, expected->second.payload_size);
    EXPECT_EQ(now.payload_xxh64, expected->second.payload_xxh64);
    EXPECT_EQ(now.header_xxh64, expected->second.header_xxh64);
    // any_filter reads the file back as this type, not as the kind's default.
    EXPECT_TRUE(std::holds_alternative<F>(blume::filter_from_bytes(bytes)));
  });
  EXPECT_EQ(seen, pinned.size());
}

// The exact positions one key sets, in filters of one block or word array: the probe arithmetic itself.
template <class F>
std::vector<std::uint64_t> set_positions(const F& f) {
  std::vector<std::uint64_t> at;
  const std::vector<std::byte> bytes = blume::to_bytes(f);
  for (std::size_t i = blume::header_size; i < bytes.size(); ++i)
    for (int b = 0; b < 8; ++b)
      if ((static_cast<unsigned>(bytes[i]) >> b) & 1u) at.push_back((i - blume::header_size) * 8 + b);
  return at;
}

TEST(Golden, OneKeySetsThesePositions) {
  blume::bloom_filter<> bloom(1000, 0.01);
  bloom.insert(std::string_view("anna@example.com"));
  EXPECT_EQ(set_positions(bloom), (std::vector<std::uint64_t>{346, 770, 1070, 1426, 3248, 4983, 9234}));
  blume::split_block_bloom_filter<blume::xxh3_hasher> split128(1000, 0.01);
  split128.insert(std::string_view("anna@example.com"));
  EXPECT_EQ(set_positions(split128), (std::vector<std::uint64_t>{8706, 8737, 8775, 8808, 8833, 8875, 8920, 8935}));
  // XXH3-64: a string through XXH3 itself, an integer (8 bytes) through its 4-to-8-byte path written out.
  blume::split_block_bloom_filter<> split(1000, 0.01);
  split.insert(std::string_view("anna@example.com"));
  EXPECT_EQ(set_positions(split), (std::vector<std::uint64_t>{538, 554, 582, 627, 645, 692, 735, 758}));
  blume::split_block_bloom_filter<> split_integer(1000, 0.01);
  split_integer.insert(std::uint64_t{42});
  EXPECT_EQ(set_positions(split_integer), (std::vector<std::uint64_t>{8980, 9021, 9051, 9079, 9108, 9145, 9152, 9189}));
  blume::blocked_bloom_filter<> blocked(1000, 0.01);
  blocked.insert(std::string_view("anna@example.com"));
  EXPECT_EQ(set_positions(blocked), (std::vector<std::uint64_t>{8308, 8353, 8456, 8619, 8653}));
  blume::counting_bloom_filter<> counting(1000, 0.01);
  counting.insert(std::uint64_t{42});  // an integer key, hashed by value; each counter's lowest bit is set
  EXPECT_EQ(set_positions(counting), (std::vector<std::uint64_t>{2600, 3488, 9564, 14096, 25740, 31320, 37644}));
  // Three inserts of one key: its blocked positions in layers 1, 2 and 3 (10,240 bits each), none in layer 4.
  blume::layered_bloom_filter<> layered(1000, 0.01);
  for (int i = 0; i < 3; ++i) layered.insert(std::string_view("anna@example.com"));
  EXPECT_EQ(set_positions(layered), (std::vector<std::uint64_t>{8308, 8353, 8456, 8619, 8653, 18548, 18593, 18696,
                                                                18859, 18893, 28788, 28833, 28936, 29099, 29133}));
}

// The iblt shapes the tool writes besides the membership table: a strata estimator (`blume sketch`, 32
// strata) and a table sized for 40 differences (`blume diff-sketch`), from the 1000 golden keys.
TEST(Golden, SketchAndDifferenceTablesWriteTheseBytes) {
  const auto keys = golden_keys("golden-key-", 1000);
  blume::strata_estimator<> sketch;
  auto table = blume::invertible_bloom_filter<>::for_difference(40);
  for (const auto& k : keys) {
    sketch.insert(std::string_view(k));
    table.insert(std::string_view(k));
  }
  const auto pin = [](const auto& f, const golden& expected, const char* what) {
    std::vector<std::byte> bytes = blume::to_bytes(f);
    const golden now{bytes.size() - blume::header_size,
                     XXH64(bytes.data() + blume::header_size, bytes.size() - blume::header_size, 0),
                     XXH64(bytes.data(), blume::header_size, 0)};
    EXPECT_EQ(now.payload_size, expected.payload_size) << what;
    EXPECT_EQ(now.payload_xxh64, expected.payload_xxh64) << what;
    EXPECT_EQ(now.header_xxh64, expected.header_xxh64) << what;
    if (now.payload_xxh64 != expected.payload_xxh64 || now.header_xxh64 != expected.header_xxh64)
      std::printf("    %s: {%lluu, 0x%016llxull, 0x%016llxull}\n", what,
                  static_cast<unsigned long long>(now.payload_size), static_cast<unsigned long long>(now.payload_xxh64),
                  static_cast<unsigned long long>(now.header_xxh64));
  };
  pin(sketch.table(), {40960u, 0xd6b880939ca7669bull, 0xfcac8490e8f2ab13ull}, "sketch");
  pin(table, {1344u, 0x89731f9bbe452a2full, 0x281c8401535acb03ull}, "difference table");
}

// The bits one integer key sets in an EGH filter (kind 25): checked against an implementation written from
// docs/format.md alone (its permutation, the first primes past (2^32 − 1)^64, the segments' residues).
TEST(Golden, OneIntegerKeySetsTheseEghBits) {
  auto f = blume::egh_filter::for_zone(blume::integer_universe::of_size(std::uint64_t{1} << 32), 64);
  f.insert(42);
  const std::vector<std::byte> bytes = blume::to_bytes(f);
  const std::size_t start = blume::header_size + (4 * f.primes().size() + 7) / 8 * 8;  // past the primes
  std::vector<std::uint64_t> at;
  for (std::size_t i = start; i < bytes.size(); ++i)
    for (int b = 0; b < 8; ++b)
      if ((static_cast<unsigned>(bytes[i]) >> b) & 1u) at.push_back((i - start) * 8 + b);
  EXPECT_EQ(f.primes().size(), 234u);
  EXPECT_EQ(f.bits(), 157589u);
  ASSERT_EQ(at.size(), 234u);  // one bit per segment
  EXPECT_EQ(std::vector<std::uint64_t>(at.begin(), at.begin() + 8),
            (std::vector<std::uint64_t>{0, 3, 7, 16, 26, 31, 45, 60}));
  EXPECT_EQ(std::vector<std::uint64_t>(at.end() - 3, at.end()), (std::vector<std::uint64_t>{153692, 155978, 157421}));
  std::uint64_t sum = 0;
  for (const std::uint64_t p : at) sum += p;
  EXPECT_EQ(sum, 11507649u);
}

// docs/format.md's worked example ("Probing", classic kind), bit for bit: m = 1000, k = 4, a chosen digest.
TEST(Golden, TheFormatDocumentsWorkedExampleHolds) {
  const blume::classic_layout layout(1000, 4);
  auto f = blume::bloom_filter<>::from_parts(layout, blume::xxh3_hasher(), blume::byte_storage::allocate(128), 0);
  f.insert(blume::digest{0x0123456789abcdefull, 0xfedcba9876543210ull});
  EXPECT_EQ(set_positions(f), (std::vector<std::uint64_t>{600, 746, 908, 910}));
}

}  // namespace
