// SPDX-License-Identifier: Apache-2.0
// The file format (docs/format.md): round trips through bytes, files and mappings; every kind of damage is
// refused with format_error and never crashes; saving is atomic.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "blume/any_filter.hpp"
#include "test_support.hpp"

namespace {

using blume::format_error;
using blume::header_size;
using blume_test::mentions;
using blume_test::mentions_number;
using blume_test::message_of;
using blume_test::present_key;
using blume_test::temp_dir;

using bytes = std::vector<std::byte>;

template <class T>
T read_at(const bytes& b, std::size_t offset) {
  T v;
  std::memcpy(&v, b.data() + offset, sizeof v);
  return v;
}
template <class T>
void write_at(bytes& b, std::size_t offset, T v) {
  std::memcpy(b.data() + offset, &v, sizeof v);
}
/// Recomputes the header checksum after a deliberate edit, so that a later check is the one that fails.
void reseal_header(bytes& b) { write_at<std::uint64_t>(b, 184, XXH64(b.data(), 184, 0)); }

std::span<const std::byte> prefix(const bytes& b, std::size_t length) { return {b.data(), length}; }

/// A small filter with a few hundred keys, a non-default seed and a distinctive inserted count.
template <class F>
F sample_filter() {
  F f(500, 0.01, 0x5eed);
  for (std::uint64_t i = 0; i < 300; ++i) f.insert(present_key(i));
  return f;
}

/// The loaded filter is the original: equal bits and geometry, same seed and inserted count, every
/// inserted key present, and the same answer for absent keys.
template <class F>
void expect_same_filter(const F& loaded, const F& original, std::uint64_t keys = 300) {
  EXPECT_TRUE(loaded == original);
  EXPECT_EQ(loaded.seed(), original.seed());
  EXPECT_EQ(loaded.bits(), original.bits());
  EXPECT_EQ(loaded.hashes(), original.hashes());
  EXPECT_EQ(loaded.inserted(), original.inserted());
  EXPECT_EQ(loaded.count_contained(blume_test::present_keys(keys)), keys);
  for (std::uint64_t i = 0; i < 20'000; ++i)
    ASSERT_EQ(loaded.contains(blume_test::absent_key(i)), original.contains(blume_test::absent_key(i))) << i;
}

template <class F>
class Format : public ::testing::Test {};
TYPED_TEST_SUITE(Format, blume_test::filter_types, blume_test::kind_names);

// ---- round trips ---------------------------------------------------------------------------------------

TYPED_TEST(Format, RoundTripThroughBytesPreservesTheFilter) {
  const auto original = sample_filter<TypeParam>();
  const bytes serialized = blume::to_bytes(original);
  EXPECT_EQ(serialized.size(), header_size + original.storage().size());
  expect_same_filter(blume::from_bytes<TypeParam>(serialized), original);
}

TYPED_TEST(Format, RoundTripThroughAFilePreservesTheFilter) {
  const temp_dir dir;
  const auto original = sample_filter<TypeParam>();
  blume::save(original, dir / "f.blume");
  expect_same_filter(blume::load<TypeParam>(dir / "f.blume"), original);
}

TYPED_TEST(Format, RoundTripThroughAMappedFilePreservesTheFilter) {
  const temp_dir dir;
  const auto original = sample_filter<TypeParam>();
  blume::save(original, dir / "f.blume");
  const auto mapped = blume::map_file<TypeParam>(dir / "f.blume");
  EXPECT_TRUE(mapped.is_mapped());
  expect_same_filter(mapped, original);
}

TYPED_TEST(Format, MappingWithHeaderOnlyVerificationPreservesTheFilter) {
  const temp_dir dir;
  const auto original = sample_filter<TypeParam>();
  blume::save(original, dir / "f.blume");
  expect_same_filter(blume::map_file<TypeParam>(dir / "f.blume", blume::verify::header_only), original);
}

TYPED_TEST(Format, NoFalseNegativesAfterLoadingALargeFilter) {
  // Large enough (several MiB) that memory comes from the huge-page path and the mapping spans many pages.
  const temp_dir dir;
  TypeParam original(2'000'000, 0.01, 17);
  // The slow builds insert a tenth of the keys: the filter keeps its size, so its memory and mapping too.
  const std::uint64_t n = blume_test::scaled(2'000'000);
  original.insert_many(blume_test::present_keys(n));
  blume::save(original, dir / "big.blume");
  const auto loaded = blume::load<TypeParam>(dir / "big.blume");
  const auto mapped = blume::map_file<TypeParam>(dir / "big.blume");
  EXPECT_TRUE(loaded == original);
  EXPECT_TRUE(mapped == original);
  EXPECT_EQ(loaded.count_contained(blume_test::present_keys(n)), n);
  EXPECT_EQ(mapped.count_contained(blume_test::present_keys(n)), n);
}

TYPED_TEST(Format, MappedFilterCanBeModifiedWithoutChangingTheFile) {
  const temp_dir dir;
  const auto original = sample_filter<TypeParam>();
  blume::save(original, dir / "f.blume");
  const bytes before = blume_test::read_file_bytes(dir / "f.blume");
  auto mapped = blume::map_file<TypeParam>(dir / "f.blume");
  mapped.insert_many(blume_test::present_keys(300, 1000));
  EXPECT_EQ(mapped.count_contained(blume_test::present_keys(300, 1000)), 300u);
  EXPECT_FALSE(mapped == original);
  EXPECT_EQ(blume_test::read_file_bytes(dir / "f.blume"), before);
}

TYPED_TEST(Format, LoadedFilterAcceptsNewKeys) {
  auto loaded = blume::from_bytes<TypeParam>(blume::to_bytes(sample_filter<TypeParam>()));
  loaded.insert(std::string("new"));
  EXPECT_TRUE(loaded.contains(std::string("new")));
  EXPECT_EQ(loaded.inserted(), 301u);
}

TYPED_TEST(Format, SavedFileHoldsExactlyTheSerializedBytes) {
  const temp_dir dir;
  const auto f = sample_filter<TypeParam>();
  blume::save(f, dir / "f.blume");
  EXPECT_EQ(blume_test::read_file_bytes(dir / "f.blume"), blume::to_bytes(f));
}

TYPED_TEST(Format, ReadHeaderDescribesTheFilter) {
  const temp_dir dir;
  const auto f = sample_filter<TypeParam>();
  blume::save(f, dir / "f.blume");
  const blume::file_header h = blume::read_header(dir / "f.blume");
  EXPECT_EQ(h.version, blume::format_version);
  EXPECT_EQ(h.kind, TypeParam::kind);
  EXPECT_EQ(h.hash, TypeParam::hasher_type::id);
  EXPECT_EQ(h.layout, TypeParam::layout_type::block_bits);
  EXPECT_EQ(h.seed, f.seed());
  EXPECT_EQ(h.primary, f.bits());
  EXPECT_EQ(h.secondary, f.hashes());
  EXPECT_EQ(h.inserted, f.inserted());
  EXPECT_EQ(h.payload_size, f.storage().size());
}

TYPED_TEST(Format, HeaderFieldsLieAtTheDocumentedOffsets) {
  const auto f = sample_filter<TypeParam>();
  const bytes b = blume::to_bytes(f);
  EXPECT_EQ(std::memcmp(b.data(), "BLUMEFLT", 8), 0);
  EXPECT_EQ(read_at<std::uint32_t>(b, 8), 2u);
  EXPECT_EQ(read_at<std::uint32_t>(b, 12), 192u);
  EXPECT_EQ(read_at<std::uint16_t>(b, 16), static_cast<std::uint16_t>(TypeParam::kind));
  EXPECT_EQ(read_at<std::uint16_t>(b, 18), static_cast<std::uint16_t>(TypeParam::hasher_type::id));
  EXPECT_EQ(read_at<std::uint32_t>(b, 20), TypeParam::layout_type::block_bits);
  EXPECT_EQ(read_at<std::uint64_t>(b, 24), f.seed());
  EXPECT_EQ(read_at<std::uint64_t>(b, 32), f.bits());
  EXPECT_EQ(read_at<std::uint32_t>(b, 40), f.hashes());
  EXPECT_EQ(read_at<std::uint32_t>(b, 44), 0u);
  EXPECT_EQ(read_at<std::uint64_t>(b, 48), f.inserted());
  EXPECT_EQ(read_at<std::uint64_t>(b, 56), f.storage().size());
  EXPECT_EQ(read_at<std::uint64_t>(b, 64), XXH64(f.storage().data(), f.storage().size(), 0));
  for (std::size_t i = 72; i < 184; ++i) EXPECT_EQ(b[i], std::byte{0}) << i;  // no design given: none recorded
  EXPECT_EQ(read_at<std::uint64_t>(b, 184), XXH64(b.data(), 184, 0));
  EXPECT_EQ(std::memcmp(b.data() + 192, f.storage().data(), f.storage().size()), 0);
}

// ---- damage --------------------------------------------------------------------------------------------

TYPED_TEST(Format, EveryHeaderByteFlipIsRejected) {
  const bytes good = blume::to_bytes(sample_filter<TypeParam>());
  for (std::size_t i = 0; i < header_size; ++i) {
    for (unsigned mask : {0x01u, 0x80u, 0xffu}) {
      bytes damaged = good;
      damaged[i] ^= static_cast<std::byte>(mask);
      EXPECT_THROW(blume::from_bytes<TypeParam>(damaged), format_error) << "byte " << i << " mask " << mask;
    }
  }
}

TYPED_TEST(Format, EveryPayloadByteFlipIsRejectedAsAChecksumMismatch) {
  const bytes good = blume::to_bytes(sample_filter<TypeParam>());
  for (std::size_t i = header_size; i < good.size(); ++i) {
    bytes damaged = good;
    damaged[i] ^= std::byte{0x10};
    const std::string message = message_of<format_error>([&] { blume::from_bytes<TypeParam>(damaged); });
    ASSERT_TRUE(mentions(message, "checksum")) << "byte " << i;
  }
}

TYPED_TEST(Format, EveryTruncationIsRejected) {
  const bytes good = blume::to_bytes(sample_filter<TypeParam>());
  for (std::size_t length = 0; length < good.size(); ++length)
    EXPECT_THROW(blume::from_bytes<TypeParam>(prefix(good, length)), format_error) << length;
}

TYPED_TEST(Format, TrailingBytesAreRejected) {
  const bytes good = blume::to_bytes(sample_filter<TypeParam>());
  for (std::size_t extra : {1u, 7u, 64u, 4096u}) {
    bytes longer(good.size() + extra);
    std::memcpy(longer.data(), good.data(), good.size());
    EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::from_bytes<TypeParam>(longer); }), "trailing")) << extra;
  }
}

TYPED_TEST(Format, UnknownVersionIsRejectedNamingTheVersion) {
  const bytes good = blume::to_bytes(sample_filter<TypeParam>());
  for (std::uint32_t version : {0u, 3u, 0xffffffffu}) {
    bytes patched = good;
    write_at<std::uint32_t>(patched, 8, version);  // checksum left stale: the version is checked first
    const std::string message = message_of<format_error>([&] { blume::from_bytes<TypeParam>(patched); });
    EXPECT_TRUE(mentions(message, "version")) << version;
    EXPECT_TRUE(mentions_number(message, version)) << version;
    reseal_header(patched);
    EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::from_bytes<TypeParam>(patched); }), "version"))
        << version;
  }
}

TYPED_TEST(Format, BadMagicIsRejected) {
  bytes patched = blume::to_bytes(sample_filter<TypeParam>());
  std::memcpy(patched.data(), "BLOOMFLT", 8);
  EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::from_bytes<TypeParam>(patched); }), "magic"));
}

TYPED_TEST(Format, CorruptFileIsRejectedByLoadAndMapFile) {
  const temp_dir dir;
  const bytes good = blume::to_bytes(sample_filter<TypeParam>());
  std::vector<bytes> damaged;
  damaged.push_back(good);
  damaged.back()[good.size() - 1] ^= std::byte{1};  // payload
  damaged.push_back(good);
  damaged.back()[33] ^= std::byte{1};                          // header: bits
  damaged.push_back(bytes(good.begin(), good.end() - 1));      // truncated payload
  damaged.push_back(bytes(good.begin(), good.begin() + 100));  // truncated header
  damaged.push_back(bytes());                                  // empty
  damaged.push_back(good);
  damaged.back().push_back(std::byte{0});  // trailing byte
  for (std::size_t i = 0; i < damaged.size(); ++i) {
    const auto path = dir / ("damaged-" + std::to_string(i));
    blume_test::write_file_bytes(path, damaged[i]);
    EXPECT_THROW(blume::load<TypeParam>(path), format_error) << i;
    EXPECT_THROW(blume::map_file<TypeParam>(path), format_error) << i;
  }
}

TYPED_TEST(Format, HeaderOnlyVerificationSkipsThePayloadChecksum) {
  const temp_dir dir;
  const auto original = sample_filter<TypeParam>();
  bytes damaged = blume::to_bytes(original);
  damaged[header_size] ^= std::byte{1};
  blume_test::write_file_bytes(dir / "f.blume", damaged);
  EXPECT_THROW(blume::map_file<TypeParam>(dir / "f.blume", blume::verify::full), format_error);
  const auto mapped = blume::map_file<TypeParam>(dir / "f.blume", blume::verify::header_only);
  EXPECT_FALSE(mapped == original);  // the damaged bits, unchecked
  EXPECT_EQ(mapped.bits(), original.bits());
}

// ---- files of another kind -----------------------------------------------------------------------------

std::string quoted(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out.push_back('\'');
  out.append(name);
  out.push_back('\'');
  return out;
}

template <class Stored, class Wanted>
void expect_refused_naming_both_kinds(const temp_dir& dir) {
  const auto path = dir / (std::string(blume::kind_name(Stored::kind)) + ".blume");
  blume::save(sample_filter<Stored>(), path);
  for (const std::string& message :
       {message_of<format_error>([&] { blume::load<Wanted>(path); }),
        message_of<format_error>([&] { blume::map_file<Wanted>(path); }),
        message_of<format_error>([&] { blume::from_bytes<Wanted>(blume::to_bytes(sample_filter<Stored>())); })}) {
    EXPECT_TRUE(mentions(message, quoted(blume::kind_name(Stored::kind))));
    EXPECT_TRUE(mentions(message, quoted(blume::kind_name(Wanted::kind))));
  }
}

template <class Wanted, class... Stored>
void expect_other_kinds_refused(const temp_dir& dir) {
  (
      [&] {
        if constexpr (Stored::kind != Wanted::kind) expect_refused_naming_both_kinds<Stored, Wanted>(dir);
      }(),
      ...);
}

TYPED_TEST(Format, FileOfAnotherKindIsRejectedNamingBothKinds) {
  const temp_dir dir;
  expect_other_kinds_refused<TypeParam, blume::bloom_filter<>, blume::partitioned_bloom_filter<>,
                             blume::blocked_bloom_filter<>, blume::split_block_bloom_filter<>>(dir);
}

// ---- forged headers: a valid header checksum over invalid contents --------------------------------------

/// Bytes with a header encoded from `h` (checksum correct) and `payload`; the payload checksum is computed
/// unless the header sets one.
bytes forge(blume::file_header h, const bytes& payload) {
  if (h.payload_checksum == 0) h.payload_checksum = XXH64(payload.data(), payload.size(), 0);
  const auto header = blume::encode_header(h);
  bytes out(header.size() + payload.size());
  std::memcpy(out.data(), header.data(), header.size());
  if (!payload.empty()) std::memcpy(out.data() + header.size(), payload.data(), payload.size());
  return out;
}

blume::file_header classic_header(std::uint64_t bits, std::uint32_t hashes) {
  blume::file_header h;
  h.kind = blume::bloom_filter<>::kind;
  h.hash = blume::hash_id::xxh3_128;
  h.layout = 0;
  h.seed = 1;
  h.primary = bits;
  h.secondary = hashes;
  h.payload_size = (bits + 63) / 64 * 8;
  return h;
}

TEST(ForgedHeader, ValidForgeryIsAccepted) {
  // The forging helper itself: a consistent header and payload load, so the refusals below are meaningful.
  const auto f = blume::from_bytes<blume::bloom_filter<>>(forge(classic_header(1000, 3), bytes(128)));
  EXPECT_EQ(f.bits(), 1000u);
  EXPECT_EQ(f.hashes(), 3u);
}

TEST(ForgedHeader, ZeroBitCountIsRejected) {
  EXPECT_THROW(blume::from_bytes<blume::bloom_filter<>>(forge(classic_header(0, 3), bytes())), format_error);
}

TEST(ForgedHeader, HashCountOutOfRangeIsRejected) {
  EXPECT_THROW(blume::from_bytes<blume::bloom_filter<>>(forge(classic_header(1000, 0), bytes(128))), format_error);
  EXPECT_THROW(blume::from_bytes<blume::bloom_filter<>>(forge(classic_header(1000, 65), bytes(128))), format_error);
}

TEST(ForgedHeader, BlockedBitCountNotAMultipleOfTheBlockIsRejected) {
  blume::file_header h = classic_header(1000, 4);
  h.kind = blume::blocked_bloom_filter<>::kind;
  h.layout = 512;
  h.payload_size = 125;
  EXPECT_THROW(blume::from_bytes<blume::blocked_bloom_filter<>>(forge(h, bytes(125))), format_error);
}

TEST(ForgedHeader, SplitBlockHashCountOtherThanEightIsRejected) {
  blume::file_header h = classic_header(2560, 7);
  h.kind = blume::split_block_bloom_filter<>::kind;
  h.layout = 256;
  h.payload_size = 320;
  EXPECT_THROW(blume::from_bytes<blume::split_block_bloom_filter<>>(forge(h, bytes(320))), format_error);
}

TEST(ForgedHeader, UnknownKindIsRejected) {
  blume::file_header h = classic_header(1000, 3);
  h.kind = static_cast<blume::filter_kind>(99);
  EXPECT_TRUE(mentions(
      message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(forge(h, bytes(128))); }), "kind"));
}

TEST(ForgedHeader, UnknownHashFunctionIsRejected) {
  blume::file_header h = classic_header(1000, 3);
  h.hash = static_cast<blume::hash_id>(7);
  EXPECT_TRUE(mentions(
      message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(forge(h, bytes(128))); }), "hash"));
}

TEST(ForgedHeader, AnotherHashFunctionIsRejectedByAnXxh3Filter) {
  blume::file_header h = classic_header(1000, 3);
  h.hash = blume::hash_id::murmur64a_pair;
  EXPECT_TRUE(mentions(message_of<format_error>([&] {
                         blume::from_bytes<blume::bloom_filter<>>(forge(h, bytes(128)));
                       }),
                       "hash function"));
}

TEST(ForgedHeader, AHashNoTypeOfTheKindUsesIsRejectedByAnyFilter) {
  // XXH3-64 is split-block's alone: a classic filter claiming it names both ids.
  blume::file_header h = classic_header(1000, 3);
  h.hash = blume::hash_id::xxh3_64;
  const std::string why = message_of<format_error>([&] { blume::filter_from_bytes(forge(h, bytes(128))); });
  EXPECT_TRUE(mentions(why, "hash function id 4")) << why;
  EXPECT_TRUE(mentions(why, "uses id 1")) << why;
}

TEST(ForgedHeader, BlockSizeNotMatchingTheKindIsRejected) {
  blume::file_header h = classic_header(1024, 3);
  h.layout = 512;
  EXPECT_TRUE(mentions(
      message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(forge(h, bytes(128))); }), "block size"));
}

TEST(ForgedHeader, PayloadSizeNotMatchingTheParametersIsRejected) {
  blume::file_header h = classic_header(1000, 3);
  h.payload_size = 256;
  EXPECT_TRUE(mentions(message_of<format_error>([&] {
                         blume::from_bytes<blume::bloom_filter<>>(forge(h, bytes(256)));
                       }),
                       "payload size"));
}

TEST(ForgedHeader, UnknownFlagsAreRejected) {
  bytes b = forge(classic_header(1000, 3), bytes(128));
  write_at<std::uint32_t>(b, 44, 1);
  reseal_header(b);
  EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(b); }), "flags"));
}

TEST(ForgedHeader, NonZeroReservedBytesAreRejected) {
  for (std::size_t offset : {72u, 100u, 119u, 136u, 160u, 183u}) {
    bytes b = forge(classic_header(1000, 3), bytes(128));
    b[offset] = std::byte{1};
    reseal_header(b);
    EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(b); }), "reserved"))
        << offset;
  }
}

TEST(ForgedHeader, HeaderSizeOtherThanTheVersionsIsRejected) {
  bytes b = forge(classic_header(1000, 3), bytes(128));
  write_at<std::uint32_t>(b, 12, 256);
  reseal_header(b);
  EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(b); }), "header size"));
}

TEST(ForgedHeader, ImplausibleDesignRecordsAreRejected) {
  struct record {
    std::uint64_t items;
    double fpr;
  };
  for (const record r : {record{0, 0.01}, record{100, 0}, record{100, 1.0}, record{100, -0.5}, record{100, 1e300},
                         record{100, std::numeric_limits<double>::quiet_NaN()}}) {
    blume::file_header h = classic_header(1000, 3);
    h.design = {r.items, r.fpr};
    EXPECT_TRUE(mentions(
        message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(forge(h, bytes(128))); }), "design"))
        << r.items << " " << r.fpr;
  }
}

// ---- versions and the design record ----------------------------------------------------------------------

/// The same filter as a version-1 file: a 128-byte header (fields 0–119 as in version 2, checksum at 120).
bytes as_version_1(const bytes& v2) {
  bytes v1(blume::header_size_v1 + (v2.size() - header_size));
  std::memcpy(v1.data(), v2.data(), 120);
  write_at<std::uint32_t>(v1, 8, 1);
  write_at<std::uint32_t>(v1, 12, 128);
  write_at<std::uint64_t>(v1, 120, XXH64(v1.data(), 120, 0));
  std::memcpy(v1.data() + 128, v2.data() + header_size, v2.size() - header_size);
  return v1;
}

TEST(Versions, Version1FilesAreStillReadByEveryReader) {
  const temp_dir dir;
  const auto original = sample_filter<blume::split_block_bloom_filter<>>();
  const bytes v1 = as_version_1(blume::to_bytes(original));
  expect_same_filter(blume::from_bytes<blume::split_block_bloom_filter<>>(v1), original);
  blume_test::write_file_bytes(dir / "v1.blume", v1);
  expect_same_filter(blume::load<blume::split_block_bloom_filter<>>(dir / "v1.blume"), original);
  expect_same_filter(blume::map_file<blume::split_block_bloom_filter<>>(dir / "v1.blume"), original);
  const blume::file_header h = blume::read_header(dir / "v1.blume");
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(h.size, 128u);
  EXPECT_FALSE(h.design.recorded());
}

TEST(Versions, Version1FileIsRewrittenAsVersion2) {
  const temp_dir dir;
  const auto original = sample_filter<blume::bloom_filter<>>();
  blume_test::write_file_bytes(dir / "f.blume", as_version_1(blume::to_bytes(original)));
  blume::save(blume::load<blume::bloom_filter<>>(dir / "f.blume"), dir / "f.blume");
  EXPECT_EQ(blume::read_header(dir / "f.blume").version, 2u);
  EXPECT_EQ(blume_test::read_file_bytes(dir / "f.blume"), blume::to_bytes(original));
}

TEST(Versions, DesignRecordRoundTrips) {
  const temp_dir dir;
  const auto f = sample_filter<blume::blocked_bloom_filter<>>();
  blume::save(f, dir / "f.blume", {500, 0.01});
  const blume::file_header h = blume::read_header(dir / "f.blume");
  EXPECT_EQ(h.design, (blume::filter_design{500, 0.01}));
  const bytes b = blume_test::read_file_bytes(dir / "f.blume");
  EXPECT_EQ(read_at<std::uint64_t>(b, 120), 500u);
  EXPECT_EQ(read_at<double>(b, 128), 0.01);
}

TEST(Versions, WritersRefuseADesignRecordReadersWouldRefuse) {
  const auto f = sample_filter<blume::bloom_filter<>>();
  for (const blume::filter_design d :
       {blume::filter_design{100, 0}, blume::filter_design{0, 0.01}, blume::filter_design{100, 1.0},
        blume::filter_design{100, -0.1}, blume::filter_design{100, std::numeric_limits<double>::quiet_NaN()}})
    EXPECT_THROW(blume::to_bytes(f, d), blume::invalid_argument) << d.items << " " << d.fpr;
}

TEST(Versions, OpenFilterReportsTheHeaderOfTheFileItOpened) {
  const temp_dir dir;
  blume::save(sample_filter<blume::blocked_bloom_filter<>>(), dir / "f.blume", {500, 0.02});
  blume::file_header h;
  const blume::any_filter f = blume::open_filter(dir / "f.blume", blume::verify::full, &h);
  EXPECT_EQ(h.kind, blume::blocked_bloom_filter<>::kind);
  EXPECT_EQ(h.design, (blume::filter_design{500, 0.02}));
  EXPECT_EQ(blume::kind_of(f), blume::blocked_bloom_filter<>::kind);
}

// Frozen bytes: a change here is a format change (bump the version, keep reading the old one).
TEST(Versions, GoldenVersion2File) {
  blume::bloom_filter<> f(100, 0.01, 42);
  for (const char* k : {"anna@example.com", "bob@example.com", "carol@example.com"}) f.insert(std::string_view(k));
  const bytes b = blume::to_bytes(f, {100, 0.01});
  EXPECT_EQ(b.size(), 192u + 120u);  // 959 bits: 15 words
  EXPECT_EQ(XXH64(b.data(), 192, 0), 0x4240d8679b77fcf2ull);
  EXPECT_EQ(XXH64(b.data() + 192, b.size() - 192, 0), 0xd8273b8bf1fe927aull);
}

TEST(ForgedHeader, SetPaddingBitsAreRejected) {
  bytes payload(128);
  payload[1010 / 8] = std::byte{1} << (1010 % 8);  // bit 1010 of a 1000-bit filter
  EXPECT_TRUE(mentions(message_of<format_error>([&] {
                         blume::from_bytes<blume::bloom_filter<>>(forge(classic_header(1000, 3), payload));
                       }),
                       "padding"));
}

TEST(ForgedHeader, HugeDeclaredSizeIsRefusedBeforeAllocating) {
  // A header announcing 2^40 bits (128 GiB of payload) on a file of a few bytes: refused by size, not by an
  // attempt to allocate or read 128 GiB.
  blume::file_header h = classic_header(blume::max_filter_bits, 3);
  h.payload_checksum = 1;
  const bytes b = forge(h, bytes(64));
  EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::from_bytes<blume::bloom_filter<>>(b); }), "truncated"));
  const temp_dir dir;
  blume_test::write_file_bytes(dir / "huge.blume", b);
  EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::load<blume::bloom_filter<>>(dir / "huge.blume"); }),
                       "truncated"));
  EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::map_file<blume::bloom_filter<>>(dir / "huge.blume"); }),
                       "truncated"));
  EXPECT_TRUE(mentions(message_of<format_error>([&] { blume::read_header(dir / "huge.blume"); }), "truncated"));
}

// ---- the file system -----------------------------------------------------------------------------------

TEST(FileAccess, MissingFileThrowsIoError) {
  const temp_dir dir;
  const auto path = dir / "absent.blume";
  EXPECT_TRUE(mentions(message_of<blume::io_error>([&] { blume::load<blume::bloom_filter<>>(path); }), path.string()));
  EXPECT_THROW(blume::map_file<blume::bloom_filter<>>(path), blume::io_error);
  EXPECT_THROW(blume::read_header(path), blume::io_error);
}

TEST(FileAccess, DirectoryIsNotAFilterFile) {
  const temp_dir dir;
  EXPECT_THROW(blume::load<blume::bloom_filter<>>(dir.path()), blume::io_error);
  EXPECT_THROW(blume::map_file<blume::bloom_filter<>>(dir.path()), blume::io_error);
}

TEST(FileAccess, ReadHeaderRefusesDamagedFiles) {
  const temp_dir dir;
  bytes b = blume::to_bytes(sample_filter<blume::bloom_filter<>>());
  b[30] ^= std::byte{4};
  blume_test::write_file_bytes(dir / "f.blume", b);
  EXPECT_THROW(blume::read_header(dir / "f.blume"), format_error);
  blume_test::write_file_bytes(dir / "short.blume", bytes(50));
  EXPECT_THROW(blume::read_header(dir / "short.blume"), format_error);
}

TEST(FileSaving, SaveReplacesAnExistingFile) {
  const temp_dir dir;
  const auto first = sample_filter<blume::bloom_filter<>>();
  blume::bloom_filter<> second(500, 0.01, 0x5eed);
  second.insert(std::string("only key"));
  blume::save(first, dir / "f.blume");
  blume::save(second, dir / "f.blume");
  const auto loaded = blume::load<blume::bloom_filter<>>(dir / "f.blume");
  EXPECT_TRUE(loaded == second);
  EXPECT_EQ(loaded.inserted(), 1u);
}

TEST(FileSaving, SaveLeavesNoTemporaryFiles) {
  const temp_dir dir;
  blume::save(sample_filter<blume::bloom_filter<>>(), dir / "a.blume");
  blume::save(sample_filter<blume::blocked_bloom_filter<>>(), dir / "b.blume");
  blume::save(sample_filter<blume::bloom_filter<>>(), dir / "a.blume");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"a.blume", "b.blume"}));
}

TEST(FileSaving, SaveIntoAMissingDirectoryThrowsIoErrorAndLeavesNothing) {
  const temp_dir dir;
  const auto path = dir / "missing" / "f.blume";
  EXPECT_THROW(blume::save(sample_filter<blume::bloom_filter<>>(), path), blume::io_error);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing"));
  EXPECT_TRUE(dir.entries().empty());
}

TEST(FileSaving, FailedRenameThrowsIoErrorAndRemovesTheTemporaryFile) {
  // The target is a directory, so the final rename fails after the temporary file was written.
  const temp_dir dir;
  std::filesystem::create_directory(dir / "target");
  EXPECT_THROW(blume::save(sample_filter<blume::bloom_filter<>>(), dir / "target"), blume::io_error);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"target"});
  EXPECT_TRUE(std::filesystem::is_directory(dir / "target"));
}

TEST(FileSaving, SaveAcceptsTheLongestValidFileName) {
  // NAME_MAX is 255 on Linux file systems; a name of that length is valid and save must be able to use it.
  const temp_dir dir;
  const std::string name(255, 'f');
  const auto original = sample_filter<blume::bloom_filter<>>();
  ASSERT_NO_THROW(blume::save(original, dir / name));
  EXPECT_TRUE(blume::load<blume::bloom_filter<>>(dir / name) == original);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{name});
}

TEST(FileSaving, SavingAMappedFilterOverItsOwnFileWorks) {
  const temp_dir dir;
  blume::save(sample_filter<blume::bloom_filter<>>(), dir / "f.blume");
  auto mapped = blume::map_file<blume::bloom_filter<>>(dir / "f.blume");
  mapped.insert(std::string("added while mapped"));
  blume::save(mapped, dir / "f.blume");
  const auto reloaded = blume::load<blume::bloom_filter<>>(dir / "f.blume");
  EXPECT_TRUE(reloaded == mapped);
  EXPECT_TRUE(reloaded.contains(std::string("added while mapped")));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"f.blume"});
}

TEST(FileSaving, SavedFileIsReadableByEveryone) {
  const temp_dir dir;
  blume::save(sample_filter<blume::bloom_filter<>>(), dir / "f.blume");
  const auto mode = std::filesystem::status(dir / "f.blume").permissions();
  using std::filesystem::perms;
  EXPECT_NE(mode & perms::owner_read, perms::none);
  EXPECT_NE(mode & perms::owner_write, perms::none);
  EXPECT_NE(mode & perms::group_read, perms::none);
  EXPECT_NE(mode & perms::others_read, perms::none);
}

TEST(FileSaving, SaveInTheCurrentDirectoryWorksWithARelativePath) {
  const temp_dir dir;
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const auto original = sample_filter<blume::bloom_filter<>>();
  blume::save(original, "relative.blume");
  const auto loaded = blume::load<blume::bloom_filter<>>("relative.blume");
  std::filesystem::current_path(previous);
  EXPECT_TRUE(loaded == original);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"relative.blume"});
}

// ---- concurrent writers ---------------------------------------------------------------------------------

TEST(FileLock, SerialisesReadModifyWriteCyclesAcrossProcesses) {
  const temp_dir dir;
  const auto path = dir / "shared.blume";
  blume::save(blume::bloom_filter<>(10'000, 0.01, 7), path);
  constexpr int writers = 4, cycles = 40;
  std::vector<pid_t> children;
  for (int w = 0; w < writers; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        for (int i = 0; i < cycles; ++i) {
          const blume::file_lock lock(path);
          auto f = blume::load<blume::bloom_filter<>>(path);
          f.insert(present_key(static_cast<std::uint64_t>(w * cycles + i)));
          blume::save(f, path);
        }
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto f = blume::load<blume::bloom_filter<>>(path);
  EXPECT_EQ(f.inserted(), static_cast<std::uint64_t>(writers * cycles));  // no cycle was lost
  EXPECT_EQ(f.count_contained(blume_test::present_keys(writers * cycles)), static_cast<std::size_t>(writers * cycles));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"shared.blume"});
}

TEST(FileLock, NoWaitThrowsFileLockedWhileAnotherWriterHoldsIt) {
  const temp_dir dir;
  const auto path = dir / "held.blume";
  blume::save(blume::bloom_filter<>(100, 0.01), path);
  const blume::file_lock held(path);
  EXPECT_TRUE(held.owns_lock());
  // flock locks belong to open files: a second open in this process contends like another process would.
  EXPECT_THROW(blume::file_lock(path, blume::file_lock::mode::no_wait), blume::file_locked);
  EXPECT_NO_THROW(blume::load<blume::bloom_filter<>>(path));  // readers never wait
}

TEST(FileLock, AWaiterLocksTheFileThatReplacedTheOneItWaitedFor) {
  const temp_dir dir;
  const auto path = dir / "replaced.blume";
  blume::save(blume::bloom_filter<>(100, 0.01), path);
  std::atomic<bool> locked{false};
  std::thread waiter;
  {
    const blume::file_lock first(path);
    waiter = std::thread([&] {
      const blume::file_lock second(path);  // waits for `first`, then finds the path renamed onto a new file
      locked = true;
      // The lock it holds is on the file the path names now: a no-wait attempt fails.
      EXPECT_THROW(blume::file_lock(path, blume::file_lock::mode::no_wait), blume::file_locked);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(locked);
    blume::save(blume::bloom_filter<>(200, 0.01), path);  // replaces the inode `first` holds
  }
  waiter.join();
  EXPECT_TRUE(locked);
}

TEST(FileLock, APathThatDoesNotExistYetIsNotLocked) {
  const temp_dir dir;
  const blume::file_lock lock(dir / "new.blume");
  EXPECT_FALSE(lock.owns_lock());
  EXPECT_TRUE(dir.entries().empty());  // and nothing was created
}

}  // namespace

// ---- what a save replaces ---------------------------------------------------------------------------

namespace save_target {

using filter = blume::bloom_filter<>;

filter with_key(const std::string& key) {
  filter f(100, 0.01);
  f.insert(key);
  return f;
}

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

}  // namespace save_target

TEST(SaveTarget, WritesThroughSymbolicLinksToTheFinalTarget) {
  using namespace save_target;
  const temp_dir dir;
  blume::save(with_key("old"), dir / "real.blume");
  std::filesystem::create_directory(dir / "sub");
  std::filesystem::create_symlink("../real.blume", dir / "sub" / "link.blume");
  std::filesystem::create_symlink(dir / "sub" / "link.blume", dir / "chain.blume");
  blume::save(with_key("new"), dir / "chain.blume");
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "chain.blume"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "sub" / "link.blume"));
  EXPECT_TRUE(blume::load<filter>(dir / "real.blume").contains("new"));
  EXPECT_EQ(blume::resolve_write_target(dir / "chain.blume"), dir / "sub" / ".." / "real.blume");
  // A dangling link: the save creates the file it names.
  std::filesystem::create_symlink("made.blume", dir / "dangling.blume");
  blume::save(with_key("k"), dir / "dangling.blume");
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(dir / "made.blume")));
  // A loop is an error, not a hang.
  std::filesystem::create_symlink("loop-b", dir / "loop-a");
  std::filesystem::create_symlink("loop-a", dir / "loop-b");
  EXPECT_THROW(blume::save(with_key("k"), dir / "loop-a"), blume::io_error);
}

TEST(SaveTarget, KeepsModeAndRefusesReadOnlyFilesUnlessForced) {
  using namespace save_target;
  const temp_dir dir;
  const auto path = dir / "f.blume";
  blume::save(with_key("a"), path);
  ::chmod(path.c_str(), 0600);
  blume::save(with_key("b"), path);
  EXPECT_EQ(mode_of(path), 0600u);
  ::chmod(path.c_str(), 0444);
  const auto before = blume_test::read_file_bytes(path);
  try {
    blume::save(with_key("c"), path);
    ADD_FAILURE() << "a read-only file was replaced";
  } catch (const blume::write_refused& e) {
    EXPECT_TRUE(e.forcible());
    EXPECT_TRUE(mentions(e.what(), "read-only"));
  }
  EXPECT_EQ(blume_test::read_file_bytes(path), before);
  blume::save(with_key("c"), path, {}, blume::write_options{.force = true});
  EXPECT_EQ(mode_of(path), 0444u);
  EXPECT_TRUE(blume::load<filter>(path).contains("c"));
}

TEST(SaveTarget, RefusesHardLinksUnlessForcedThenRewritesInPlace) {
  using namespace save_target;
  const temp_dir dir;
  blume::save(with_key("a"), dir / "one.blume");
  std::filesystem::create_hard_link(dir / "one.blume", dir / "two.blume");
  EXPECT_THROW(blume::save(with_key("b"), dir / "two.blume"), blume::write_refused);
  EXPECT_FALSE(blume::load<filter>(dir / "one.blume").contains("b"));
  blume::save(with_key("b"), dir / "two.blume", {}, blume::write_options{.force = true});
  EXPECT_TRUE(blume::load<filter>(dir / "one.blume").contains("b"));
  EXPECT_TRUE(std::filesystem::equivalent(dir / "one.blume", dir / "two.blume"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"one.blume", "two.blume"}));
}

TEST(SaveTarget, NeverReplacesWhatIsNotARegularFile) {
  using namespace save_target;
  const temp_dir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  std::filesystem::create_directory(dir / "d.blume");
  for (const auto& target : {dir / "fifo", dir / "d.blume", std::filesystem::path("/dev/null")}) {
    for (const bool force : {false, true}) {
      try {
        blume::save(with_key("k"), target, {}, blume::write_options{.force = force});
        ADD_FAILURE() << target << " was replaced";
      } catch (const blume::write_refused& e) {
        EXPECT_FALSE(e.forcible());
      }
    }
  }
  EXPECT_TRUE(std::filesystem::is_fifo(dir / "fifo"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"d.blume", "fifo"}));
}

TEST(SaveTarget, RemovesTemporaryFilesOfWritersThatAreGone) {
  using namespace save_target;
  const temp_dir dir;
  // A writer that died: a process id that no longer exists (a child reaped before the save).
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const std::string dead = ".f.blume.tmp." + std::to_string(child) + ".deadbeef";
  const std::string alive = ".f.blume.tmp." + std::to_string(::getpid()) + ".stillhere";
  const std::string other = ".g.blume.tmp." + std::to_string(child) + ".deadbeef";
  for (const auto& name : {dead, alive, other}) blume_test::write_file_bytes(dir / name, bytes(10));
  blume::save(with_key("k"), dir / "f.blume");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{alive, other, "f.blume"}));
}
