// SPDX-License-Identifier: Apache-2.0
// Blocked cells for the spatial filter and the compact approximator: every key's cells in one 64-byte block.
// Their rates against the blocked model (math::blocked_fpr over Poisson block loads) on every key pattern, the
// planner, the probe sequence both probe loops walk, and their files.
#include <gtest/gtest.h>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "blume/any_filter.hpp"
#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::cell_layout;
using blume::compact_approximator;
using blume::max_lattice;
using blume::spatial_bloom_filter;
using blume_test::absent_key;
using blume_test::key_patterns;
using blume_test::pattern_key;
using blume_test::pattern_names;
using blume_test::present_key;

// Past every key index inserted, so pattern_key(p, absent_index + i) is never a member.
constexpr std::uint64_t absent_index = std::uint64_t{1} << 28;

template <unsigned Bits>
void expect_one_sequence() {
  for (std::uint32_t k = 1; k <= 64; ++k) {
    for (const std::uint64_t low : {0x0123456789abcdefull, ~0ull, 0ull, 0x9e3779b97f4a7c15ull}) {
      std::vector<unsigned> unrolled, looped;
      blume::detail::block_offsets<Bits>(low, k, [&](unsigned o) { unrolled.push_back(o); });
      blume::detail::block_offsets_loop<Bits>(low, k, [&](unsigned o) { looped.push_back(o); });
      ASSERT_EQ(unrolled.size(), k);
      ASSERT_EQ(unrolled, looped) << Bits << "-bit offsets, k = " << k;
      for (const unsigned o : unrolled) ASSERT_LT(o, 1u << Bits);
    }
  }
}

// The unrolled probes (the blocked Bloom filter's) and the loop (the lattice cells') are one sequence.
TEST(BlockedCells, BothProbeLoopsWalkOneSequence) {
  expect_one_sequence<3>();
  expect_one_sequence<4>();
  expect_one_sequence<5>();
  expect_one_sequence<6>();
  expect_one_sequence<9>();
}

// Four sets of unequal sizes, blocked, planned at 1% for the worst set: for every key pattern, absent keys
// reported as each set, members reported as a later set (never an earlier one, never none) and the
// emersion, each against the blocked model; and the key count read back from the cells.
TEST(BlockedCells, SpatialRatesMatchTheBlockedModelOnEveryKeyPattern) {
  const std::vector<std::uint64_t> sizes{blume_test::scaled(160'000), blume_test::scaled(120'000),
                                         blume_test::scaled(80'000), blume_test::scaled(40'000)};
  std::uint64_t total = 0;
  for (const std::uint64_t s : sizes) total += s;
  constexpr std::uint64_t probes = blume_test::scaled(1'000'000);
  for (int pattern = 0; pattern < key_patterns; ++pattern) {
    SCOPED_TRACE(pattern_names[pattern]);
    spatial_bloom_filter<> f(sizes, 0.01, cell_layout::blocked);
    ASSERT_EQ(f.layout(), cell_layout::blocked);
    ASSERT_EQ(f.cells() % 64, 0u);
    std::uint64_t index = 0;
    for (std::uint32_t set = 1; set <= sizes.size(); ++set)
      for (std::uint64_t i = 0; i < sizes[set - 1]; ++i) f.insert(pattern_key(pattern, index++), set);
    const auto rates = f.all_set_rates();
    index = 0;
    double first_misreported = 0;
    for (std::uint32_t set = 1; set <= sizes.size(); ++set) {
      std::uint64_t later = 0;
      for (std::uint64_t i = 0; i < sizes[set - 1]; ++i) {
        const auto answer = f.find(pattern_key(pattern, index++));
        ASSERT_TRUE(answer.has_value()) << "a member of set " << set << " was reported in no set";
        ASSERT_GE(*answer, set) << "a member of set " << set << " was reported as an earlier set";
        later += *answer > set;
      }
      if (set == 1) first_misreported = static_cast<double>(later) / static_cast<double>(sizes[0]);
      EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(later), static_cast<double>(sizes[set - 1]),
                                                  rates[set - 1].misreport))
          << "set " << set << ": " << later << " misreported, model " << rates[set - 1].misreport;
      EXPECT_NEAR(f.emersion(set), rates[set - 1].emersion, 0.01) << "set " << set;
      EXPECT_LE(rates[set - 1].worst(), 0.01) << "the planned target, at the planned sizes";
    }
    std::vector<std::uint64_t> reported(sizes.size() + 1, 0);
    for (std::uint64_t i = 0; i < probes; ++i) ++reported[f.find(pattern_key(pattern, absent_index + i)).value_or(0)];
    double union_rate = 0;
    for (std::uint32_t set = 1; set <= sizes.size(); ++set) {
      union_rate += rates[set - 1].false_positive;
      EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(reported[set]), probes,
                                                  rates[set - 1].false_positive))
          << "set " << set << ": " << reported[set] << " absent keys reported as it, model "
          << rates[set - 1].false_positive;
    }
    EXPECT_NEAR(union_rate, f.predicted_fpr(), 1e-12);
    EXPECT_NEAR(f.estimated_count(), static_cast<double>(total), 0.02 * static_cast<double>(total));
    std::printf(
        "%-10s cells %llu (%.2f a key), k %u: absent keys in a set %.5f (model %.5f), set 1 misreported "
        "%.5f (model %.5f)\n",
        pattern_names[pattern], static_cast<unsigned long long>(f.cells()),
        static_cast<double>(f.cells()) / static_cast<double>(total), f.hashes(),
        static_cast<double>(probes - reported[0]) / static_cast<double>(probes), f.predicted_fpr(), first_misreported,
        rates[0].misreport);
  }
}

// Values under max on cells of 8, 32 and 64 bits (blocks of 64, 16 and 8 cells): never below a key's value;
// members above it and absent keys above bottom at the blocked model's rates, on every key pattern.
template <class Value>
void expect_compact_model(int pattern) {
  using F = compact_approximator<max_lattice<Value>>;
  constexpr std::uint64_t n = blume_test::scaled(200'000);
  F f(n, 0.01, cell_layout::blocked);
  ASSERT_EQ(f.cells() % F::block_cells, 0u);
  // Values 1 … 100 in turn: a key of value v is overestimated when all its cells met keys of larger values.
  std::vector<std::uint64_t> above(101, 0);
  for (std::uint64_t i = 0; i < n; ++i) f.insert(pattern_key(pattern, i), static_cast<Value>(i % 100 + 1));
  for (std::uint64_t v = 0; v <= 100; ++v)
    for (std::uint64_t w = v + 1; w <= 100; ++w) above[v] += n / 100 + (w - 1 < n % 100 ? 1 : 0);
  std::uint64_t over = 0;
  double predicted = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const Value value = static_cast<Value>(i % 100 + 1);
    const Value answer = f.value(pattern_key(pattern, i));
    ASSERT_GE(answer, value) << "key " << i << " answered below its value";
    over += answer > value;
    predicted += f.overestimate_probability(static_cast<double>(above[value]));
  }
  EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(over), static_cast<double>(n),
                                              predicted / static_cast<double>(n)))
      << 8 * sizeof(Value) << "-bit cells: " << over << " above their value, model " << predicted;
  constexpr std::uint64_t probes = blume_test::scaled(400'000);
  std::uint64_t hits = 0;
  for (std::uint64_t i = 0; i < probes; ++i) hits += f.contains(pattern_key(pattern, absent_index + i));
  EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), probes, f.predicted_fpr()))
      << 8 * sizeof(Value) << "-bit cells: " << hits << " absent keys above bottom, model " << f.predicted_fpr();
  EXPECT_LE(f.predicted_fpr(), 0.01);
  EXPECT_NEAR(f.estimated_count(), static_cast<double>(n), 0.03 * static_cast<double>(n));
  std::printf("%-10s %2zu-bit cells: %llu cells (%.2f a key), k %u, absent keys %.5f (model %.5f)\n",
              pattern_names[pattern], 8 * sizeof(Value), static_cast<unsigned long long>(f.cells()),
              static_cast<double>(f.cells()) / static_cast<double>(n), f.hashes(),
              static_cast<double>(hits) / static_cast<double>(probes), f.predicted_fpr());
}

TEST(BlockedCells, CompactRatesMatchTheBlockedModelOnEveryKeyPattern) {
  for (int pattern = 0; pattern < key_patterns; ++pattern) {
    SCOPED_TRACE(pattern_names[pattern]);
    expect_compact_model<std::uint8_t>(pattern);
    expect_compact_model<std::uint32_t>(pattern);
    expect_compact_model<std::uint64_t>(pattern);
  }
}

// Blocked plans come in whole blocks, meet the target and are not wasteful; they take more cells than the
// classic plan, the more the fewer cells a block holds.
TEST(BlockedCells, PlansMeetTheTargetInWholeBlocks) {
  for (const double fpr : {0.1, 0.01, 0.001}) {
    const std::vector<std::uint64_t> sizes{1000, 50'000, 3000, 1};
    const blume::filter_plan p = spatial_bloom_filter<>::plan(sizes, fpr, cell_layout::blocked);
    EXPECT_EQ(p.bits % 64, 0u);
    double worst = 0, worse = 0;
    for (const auto& r : blume::detail::spatial_rates(sizes, static_cast<double>(p.bits), p.hashes, 64))
      worst = std::max(worst, r.worst());
    for (const auto& r : blume::detail::spatial_rates(sizes, static_cast<double>(p.bits - 64), p.hashes, 64))
      worse = std::max(worse, r.worst());
    EXPECT_LE(worst, fpr);
    EXPECT_DOUBLE_EQ(worst, p.predicted_fpr);
    EXPECT_GT(worse, fpr) << "one block fewer still meets the target";
    EXPECT_GT(p.bits, spatial_bloom_filter<>::plan(sizes, fpr).bits);

    const blume::filter_plan c = compact_approximator<>::plan(54'001, fpr, cell_layout::blocked);
    EXPECT_EQ(c.bits % 16, 0u);
    EXPECT_LE(c.predicted_fpr, fpr);
    EXPECT_DOUBLE_EQ(c.predicted_fpr, blume::math::blocked_fpr(54'001, static_cast<double>(c.bits), c.hashes, 16));
    EXPECT_GT(blume::math::blocked_fpr(54'001, static_cast<double>(c.bits) * 0.98, c.hashes, 16), 0.99 * fpr);
    const blume::filter_plan budget = compact_approximator<>::plan_for_bits(54'001, c.bits + 5, cell_layout::blocked);
    EXPECT_EQ(budget.bits, c.bits);
  }
  EXPECT_THROW(compact_approximator<>::with_geometry(1000, 3, 1, cell_layout::blocked), blume::invalid_argument);
  EXPECT_THROW(spatial_bloom_filter<>::with_geometry(1000, 3, 2, 1, cell_layout::blocked), blume::invalid_argument);
  EXPECT_NO_THROW(spatial_bloom_filter<>::with_geometry(1024, 3, 2, 1, cell_layout::blocked));
}

TEST(BlockedCells, BulkCallsAgreeWithOneByOne) {
  constexpr std::uint64_t n = 20'000;
  const std::vector<std::uint64_t> keys = blume_test::present_keys(n);
  std::vector<std::uint64_t> sets(n);
  for (std::uint64_t i = 0; i < n; ++i) sets[i] = i % 3 + 1;
  spatial_bloom_filter<> one(std::vector<std::uint64_t>{7000, 7000, 6000}, 0.01, cell_layout::blocked);
  spatial_bloom_filter<> bulk = one;
  for (std::uint64_t i = 0; i < n; ++i) one.insert(keys[i], static_cast<std::uint32_t>(sets[i]));
  bulk.insert_many(keys, sets);
  EXPECT_EQ(one, bulk);
  std::vector<std::uint64_t> probes = keys;
  const std::vector<std::uint64_t> absent = blume_test::absent_keys(n);
  probes.insert(probes.end(), absent.begin(), absent.end());
  std::vector<std::optional<std::uint32_t>> found;
  one.find_many(probes, std::back_inserter(found));
  for (std::size_t i = 0; i < probes.size(); ++i) ASSERT_EQ(found[i], one.find(probes[i])) << i;
  EXPECT_EQ(one.count_contained(probes),
            static_cast<std::size_t>(std::count_if(found.begin(), found.end(),
                                                   [](const auto& v) { return v.has_value(); })));
}

// The layout is part of the file (extra[5] = 1) and of a filter's identity: blocked and classic filters of
// the same cells neither compare equal nor merge, and readers refuse an unknown layout or cells that do not
// fill whole blocks.
TEST(BlockedCells, FilesRecordTheLayoutAndRefuseWhatDoesNotFit) {
  auto blocked = spatial_bloom_filter<>::with_geometry(4096, 4, 3, 7, cell_layout::blocked);
  auto classic = spatial_bloom_filter<>::with_geometry(4096, 4, 3, 7);
  for (std::uint64_t i = 0; i < 300; ++i) {
    blocked.insert(present_key(i), static_cast<std::uint32_t>(i % 3 + 1));
    classic.insert(present_key(i), static_cast<std::uint32_t>(i % 3 + 1));
  }
  EXPECT_NE(blocked, classic);
  EXPECT_THROW(blocked.merge(classic), blume::incompatible_filters);
  std::vector<std::byte> bytes = blume::to_bytes(blocked);
  EXPECT_EQ(blume::decode_header(bytes).extra[5], 1u);
  EXPECT_EQ(blume::decode_header(blume::to_bytes(classic)).extra[5], 0u);
  const auto back = blume::from_bytes<spatial_bloom_filter<>>(bytes);
  EXPECT_EQ(back, blocked);
  EXPECT_EQ(back.layout(), cell_layout::blocked);
  for (std::uint64_t i = 0; i < 300; ++i) ASSERT_GE(back.find(present_key(i)).value_or(0), i % 3 + 1);
  const auto any = blume::filter_from_bytes(bytes);
  EXPECT_EQ(std::get<spatial_bloom_filter<>>(any), blocked);

  constexpr std::size_t extra5 = 72 + 5 * 8;
  std::vector<std::byte> unknown = bytes;
  unknown[extra5] = std::byte{2};
  blume_test::fix_checksums(unknown);
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::format_error>([&] {
                                     blume::from_bytes<spatial_bloom_filter<>>(unknown);
                                   }),
                                   "unknown cell layout 2"));

  // 1000 cells are not whole blocks of 64: classic files of them load, blocked ones are refused.
  auto odd = compact_approximator<>::with_geometry(1000, 3);
  odd.insert(std::uint64_t{5}, 9u);
  std::vector<std::byte> odd_bytes = blume::to_bytes(odd);
  EXPECT_NO_THROW(blume::from_bytes<compact_approximator<>>(odd_bytes));
  odd_bytes[extra5] = std::byte{1};
  blume_test::fix_checksums(odd_bytes);
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::format_error>([&] {
                                     blume::from_bytes<compact_approximator<>>(odd_bytes);
                                   }),
                                   "blocks of 16"));

  auto c = compact_approximator<>::with_geometry(1024, 3, 7, cell_layout::blocked);
  for (std::uint64_t i = 0; i < 100; ++i) c.insert(present_key(i), static_cast<std::uint32_t>(i));
  const auto c_back = blume::from_bytes<compact_approximator<>>(blume::to_bytes(c));
  EXPECT_EQ(c_back, c);
  for (std::uint64_t i = 0; i < 100; ++i) ASSERT_GE(c_back.value(present_key(i)), i);
}

// A forged header's key count cannot stall the model: 2^62 keys in one block of 16 cells probed 64 times
// (the Poisson mean 2^62: summed term by term, ~10^9 terms) is a full filter, answered at once.
TEST(BlockedCells, AHostileKeyCountIsModelledAtOnce) {
  EXPECT_EQ(blume::math::blocked_fpr(0x1p62, 16, 64, 16), 1.0);
  EXPECT_EQ(blume::math::split_block_fpr(0x1p62, 256), 1.0);
  auto f = compact_approximator<>::with_geometry(16, 64, 7, cell_layout::blocked);
  std::vector<std::byte> bytes = blume::to_bytes(f);
  blume::detail::write_le<std::uint64_t>(bytes.data() + blume::detail::off_inserted, std::uint64_t{1} << 62);
  blume_test::fix_checksums(bytes);
  const auto forged = blume::from_bytes<compact_approximator<>>(bytes);
  EXPECT_EQ(forged.predicted_fpr(), 1.0);
  EXPECT_GT(forged.overestimate_probability(1e6), 0.99);
}

// Through the surfaces' one entry for kinds of keys with values: blocked on request, refused for kinds
// without cells.
TEST(BlockedCells, BuildMapFilterTakesTheLayout) {
  const std::vector<std::uint64_t> keys = blume_test::present_keys(5000);
  std::vector<std::uint64_t> values(keys.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = i % 4 + 1;
  for (const blume::filter_kind kind : {spatial_bloom_filter<>::kind, compact_approximator<>::kind}) {
    const blume::any_filter f = blume::build_map_filter(kind, keys, values, 0.01, std::nullopt, cell_layout::blocked);
    std::visit(
        [&](const auto& typed) {
          if constexpr (requires {
                          { typed.layout() } -> std::same_as<cell_layout>;
                        }) {
            EXPECT_EQ(typed.layout(), cell_layout::blocked);
            for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(typed.contains(keys[i]));
          } else {
            ADD_FAILURE() << "not a kind of lattice cells";
          }
        },
        f);
  }
  EXPECT_THROW(blume::build_map_filter(blume::bloomier_filter<>::kind, keys, values, 0.01, std::nullopt,
                                       cell_layout::blocked),
               blume::invalid_argument);
}

TEST(BlockedCells, LayoutsAreNamedOneWayForEverySurface) {
  EXPECT_EQ(blume::parse_cell_layout("classic"), cell_layout::classic);
  EXPECT_EQ(blume::parse_cell_layout("blocked"), cell_layout::blocked);
  for (const char* bad : {"", "Blocked", "block", "split-block"}) {
    try {
      blume::parse_cell_layout(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const blume::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("classic or blocked"), std::string::npos) << e.what();
    }
  }
}

TEST(BlockedCells, OneShareOfUnreachedCellsServesBothModels) {
  // The closed forms, written out here: (1 − 1/m)^{kn} with probes anywhere; with blocks of B cells,
  // e^{−λ(1 − (1 − 1/B)^k)} for λ = nB/m keys a block.
  const double m = 65536, k = 5;
  const auto classic = [&](double n) { return std::pow(1 - 1 / m, k * n); };
  const auto blocked = [&](double n, double b) { return std::exp(-(n * b / m) * (1 - std::pow(1 - 1 / b, k))); };
  for (const double n : {0.0, 1000.0, 3000.0, 50000.0}) {
    EXPECT_NEAR(blume::math::unreached_share(n, m, k), classic(n), 1e-12) << n;
    for (const double b : {8.0, 16.0, 64.0})
      EXPECT_NEAR(blume::math::unreached_share(n, m, k, b), blocked(n, b), 1e-12) << n << " " << b;
  }
  // A spatial set's emersion is the share the later sets leave unreached, in both layouts.
  const std::vector<std::uint64_t> sizes = {3000, 2000, 1000};
  EXPECT_NEAR(blume::detail::spatial_rates(sizes, m, k)[0].emersion, classic(3000), 1e-12);
  EXPECT_NEAR(blume::detail::spatial_rates(sizes, m, k)[1].emersion, classic(1000), 1e-12);
  EXPECT_NEAR(blume::detail::spatial_rates(sizes, m, k, 16)[0].emersion, blocked(3000, 16), 1e-12);
  EXPECT_DOUBLE_EQ(blume::detail::spatial_rates(sizes, m, k, 16)[2].emersion, 1.0);
  // A filter's count estimate inverts the same share: built with n keys, a blocked compact filter of
  // 8-bit cells reads about n back from its occupied cells.
  const auto keys = blume_test::present_keys(20000);
  const std::vector<std::uint64_t> values(keys.size(), 1);
  const auto f = compact_approximator<max_lattice<std::uint8_t>>::from_pairs(keys, values, 0.01, cell_layout::blocked);
  EXPECT_NEAR(f.estimated_count(), 20000.0, 20000.0 * 0.03);
  // Large blocks (k/B → 0): e^{−λ(1 − (1 − 1/B)^k)} → e^{−λk/B} = e^{−nk/m}, the classic share.
  EXPECT_NEAR(blume::math::unreached_share(1000, 1 << 20, 3, 1 << 16), blume::math::unreached_share(1000, 1 << 20, 3),
              1e-6);
}

}  // namespace
