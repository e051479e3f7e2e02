// SPDX-License-Identifier: Apache-2.0
// Forged files for every kind: random edits to the payload, to header fields, to the length, and both at
// once, with both checksums recomputed as a forger would. Each must either load into a filter that then
// answers, inserts, erases and saves without reading out of bounds (the sanitizer builds watch), or be
// refused with a format_error; never another exception, never a crash.
#include <gtest/gtest.h>

#include <xxhash.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/blume.hpp"
#include "blume/kinds/strata_estimator.hpp"
#include "forge.hpp"
#include "test_support.hpp"

namespace {

using namespace blume;

/// Vectors of `dim` values for a kind of vectors: value j of vector i is ((31i + 17j) mod 101) / 100.
std::vector<double> vectors(std::size_t count, std::size_t dim) {
  std::vector<double> rows(count * dim);
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t j = 0; j < dim; ++j) rows[i * dim + j] = static_cast<double>((31 * i + 17 * j) % 101) / 100;
  return rows;
}

template <class F>
void use(F& f) {
  if constexpr (F::input == kind_input::vectors) {
    if (f.dim() > 4096 || f.clock() > ~std::uint64_t{0} - 64) return;  // forged sizes a reader rightly accepts
    const auto rows = vectors(20, f.dim());
    std::vector<double> scores(20);
    f.novelty_many(rows, scores);
    f.observe_many(rows);
    f.elapse(3);
    (void)to_bytes(f);
    return;
  } else {
    for (std::uint64_t k = 0; k < 100; ++k) (void)f.contains(k * 7919);
    std::vector<std::uint64_t> keys(64);
    for (std::uint64_t k = 0; k < keys.size(); ++k) keys[k] = k;
    (void)f.count_contained(keys);
  }
  if constexpr (requires { f.insert(std::uint64_t{1}); }) {
    for (std::uint64_t k = 0; k < 30; ++k) {
      if constexpr (requires { f.universe(); }) {
        if (!f.universe().contains(k + 1000)) continue;  // refused, rightly: a forged universe may be that small
      }
      f.insert(k + 1000);
    }
  }
  if constexpr (requires { f.erase(std::uint64_t{1}); }) {
    for (std::uint64_t k = 0; k < 30; ++k) f.erase(k);
  }
  if constexpr (requires { f.predicted_fpr(); }) (void)f.predicted_fpr();
  (void)to_bytes(f);
}

void put_header(std::vector<std::byte>& bytes, const file_header& h) {
  const auto encoded = encode_header(h);
  std::copy(encoded.begin(), encoded.end(), bytes.begin());
}

/// One forged variant of `good`, both checksums valid.
std::vector<std::byte> forge(const std::vector<std::byte>& good, std::mt19937_64& rng) {
  std::vector<std::byte> bytes = good;
  const std::size_t payload = bytes.size() - header_size;
  const auto flip_payload_byte = [&] {
    if (payload != 0) bytes[header_size + rng() % payload] ^= static_cast<std::byte>(1 + rng() % 255);
  };
  switch (rng() % 4) {
    case 0:
      for (int e = 1 + static_cast<int>(rng() % 4); e > 0; --e) flip_payload_byte();
      break;
    case 1: {
      file_header h = decode_header(bytes);
      const std::uint64_t v = rng() % 3 == 0 ? rng() : rng() % 2 ? rng() % 70 : std::uint64_t{1} << (rng() % 64);
      switch (rng() % 9) {
        case 0: h.primary = v; break;
        case 1: h.secondary = static_cast<std::uint32_t>(v); break;
        case 2: h.layout = static_cast<std::uint32_t>(v); break;
        case 3: h.inserted = v; break;
        case 4: h.seed = v; break;
        default: h.extra[rng() % h.extra.size()] = v; break;
      }
      put_header(bytes, h);
      break;
    }
    case 2: {
      bytes.resize(header_size + rng() % (payload + 64), std::byte{0});
      if (rng() % 2 != 0) {
        file_header h = decode_header(bytes);
        h.payload_size = bytes.size() - header_size;
        put_header(bytes, h);
      }
      break;
    }
    default: {
      flip_payload_byte();
      file_header h = decode_header(bytes);
      h.extra[rng() % h.extra.size()] ^= std::uint64_t{1} << (rng() % 64);
      put_header(bytes, h);
      break;
    }
  }
  file_header h = decode_header(bytes);
  h.payload_checksum = XXH64(bytes.data() + header_size, bytes.size() - header_size, 0);
  put_header(bytes, h);
  return bytes;
}

template <class F>
void check_forgeries(const std::string& name, const F& original, std::uint64_t seed) {
  SCOPED_TRACE(name);
  const std::vector<std::byte> good = to_bytes(original);
  std::mt19937_64 rng(seed);
  std::size_t loaded = 0, refused = 0;
  for (int round = 0; round < 400; ++round) {
    const std::vector<std::byte> bytes = forge(good, rng);
    try {
      F f = from_bytes<F>(bytes);
      ++loaded;
      use(f);
    } catch (const format_error&) {
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": not a format_error: " << e.what();
    }
  }
  EXPECT_GT(refused, 0u) << "some forgeries are caught";
  EXPECT_EQ(loaded + refused, 400u);
}

std::vector<std::uint64_t> keys() {
  std::vector<std::uint64_t> k(3000);
  for (std::uint64_t i = 0; i < k.size(); ++i) k[i] = i * 7919;
  return k;
}

template <class F>
F filled(F f) {
  for (const std::uint64_t k : keys()) f.insert(k);
  return f;
}

/// A filled filter of kind F, from its own inputs: keys (inserted, or built whole for a static kind), keys
/// with values, or included and excluded keys.
template <class F>
F sample() {
  const auto k = keys();
  if constexpr (F::input == kind_input::keys_with_values) {
    std::vector<std::uint32_t> values(k.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i % 200 + 1);
    return F::from_pairs(k, values, 0.01);
  } else if constexpr (F::input == kind_input::included_and_excluded) {
    std::vector<std::uint64_t> excluded(30'000);
    for (std::uint64_t i = 0; i < excluded.size(); ++i) excluded[i] = i * 7919 + 1;
    return F::build(k, excluded);
  } else if constexpr (F::input == kind_input::integers) {
    // Keys of [0, 2^32): 3000 of them, past a zone of 8.
    return filled(F::for_zone(integer_universe::of_size(std::uint64_t{1} << 32), 8));
  } else if constexpr (F::input == kind_input::vectors) {
    F f = F::for_dimension(16);
    f.observe_many(vectors(300, 16));
    f.elapse(40);
    return f;
  } else if constexpr (F::is_static) {
    std::vector<std::uint64_t> lows;
    for (const std::uint64_t key : k) lows.push_back(hash_key(xxh3_hasher(), key).low);
    return std::get<F>(build_static_filter(F::kind, std::move(lows), 1.0 / 256));
  } else {
    // The scalable chain is sized for a tenth of the keys, so that the file holds several layers.
    return filled(std::get<F>(make_filter(F::kind, can_grow<F> ? 300 : 3000, 0.01)));
  }
}

// Every kind in the list, each with its own random edits (seeded by its id).
TEST(HostileFiles, EveryKind) {
  for_each_kind([](auto type) {
    using F = typename decltype(type)::type;
    check_forgeries(std::string(F::name), sample<F>(), static_cast<std::uint64_t>(F::kind));
  });
}

// Shapes a kind's decoder treats differently from its sample.
TEST(HostileFiles, SpecialShapes) {
  cuckoo_geometry g;
  g.buckets = 100;
  g.expansion = 2;
  check_forgeries("grown cuckoo", filled(cuckoo_filter<>(g)), 7);
  check_forgeries("gcs of many buckets", golomb_coded_set<>::build(keys(), 8, xxh3_hasher::default_seed, 64), 16);
  strata_estimator<> sketch;
  sketch.insert_many(keys());
  check_forgeries("iblt of strata (a sketch)", sketch.table(), 23);
  auto difference = invertible_bloom_filter<>::for_difference(100);
  difference.insert_many(keys());
  check_forgeries("iblt for a difference", difference, 24);
}

// ---- files that ask for memory they do not account for (issue 28) -----------------------------------
// A file may describe a structure that grows; what one insert then allocates must follow from the file,
// within what a fresh plan may make.

using scalable = scalable_bloom_filter<>;

/// The fuzz corpus's scalable-layers shape: three layers (8, 24 and 72 keys, growth 3, tightening 0.7), the
/// newest full, so the next new key adds layer 3 (216 keys). 456 bytes.
std::vector<std::byte> full_chain() {
  scalable_options o;
  o.growth = 3;
  o.tightening = 0.7;
  scalable f(8, 0.05, o);
  for (std::uint64_t i = 0; !f.needs_new_layer() || f.layers().size() < 3; ++i) f.insert(i * 7919);
  return to_bytes(f);
}

void edit_header(std::vector<std::byte>& bytes, const std::function<void(file_header&)>& edit) {
  file_header h = decode_header(bytes);
  edit(h);
  put_header(bytes, h);
  blume_test::fix_checksums(bytes);
}

/// A word of the payload, in place (the caller fixes the checksums).
void put_u64(std::vector<std::byte>& bytes, std::size_t at, std::uint64_t v) {
  detail::write_le<std::uint64_t>(bytes.data() + header_size + at, v);
}

/// A new key into a chain whose newest layer is full: what the chain then holds beyond what it held.
std::size_t growth_of_one_insert(scalable& f) {
  const std::size_t before = f.size_in_bytes();
  (void)f.try_insert(std::uint64_t{0xdeadbeef});
  return f.size_in_bytes() - before;
}

// The file: the 456-byte chain with its rate set to 6.4e-309. Below 2^-64 each key of a planned
// layer costs millions of bits (k stays at 64), so the next layer of 216 keys took 117 MB. A plan refuses
// the rate, and so does the loader, saying why.
TEST(HostileFiles, AScalableRateBelowThePlansSmallestIsRefusedOnLoad) {
  auto bytes = full_chain();
  ASSERT_EQ(bytes.size(), 456u);
  EXPECT_NO_THROW((void)from_bytes<scalable>(bytes));
  edit_header(bytes, [](file_header& h) { h.extra[0] = std::bit_cast<std::uint64_t>(6.4e-309); });
  const std::string message = blume_test::message_of<format_error>([&] { (void)from_bytes<scalable>(bytes); });
  EXPECT_TRUE(blume_test::mentions(message, "smallest")) << message;
  EXPECT_TRUE(blume_test::mentions(message, "6.4e-309")) << message;
  EXPECT_THROW(scalable(8, 6.4e-309), invalid_argument) << "the same limit as a fresh chain's";
  EXPECT_THROW((void)plan_for(8, 1e-25, scalable::kind), invalid_argument);
}

// A rate above the limit with a tightening of 2.7e-100: the next layer's rate, 0.05·(1 − r)·r^3 ≈ 1e-300,
// is below what any plan makes. Its 216 keys took 84 MB; now the chain is full and says why.
TEST(HostileFiles, AScalableTighteningThatStarvesTheNextLayerLeavesTheChainFull) {
  auto bytes = full_chain();
  edit_header(bytes, [](file_header& h) { h.extra[2] = std::bit_cast<std::uint64_t>(2.7e-100); });
  scalable f = from_bytes<scalable>(bytes);
  EXPECT_LT(growth_of_one_insert(f), 4096u);
  EXPECT_EQ(f.layers().size(), 3u);
  EXPECT_EQ(f.try_insert(std::uint64_t{0xfeedface}), insert_result::full);
  EXPECT_TRUE(blume_test::mentions(f.growth_refusal(), "smallest")) << f.growth_refusal();
  EXPECT_THROW((void)f.next_layer_bytes(), invalid_argument);
}

// A header capacity of 10^7 keys over the same table, whose last row claims 4.6·10^7 keys (and as many
// counted) at a rate of 1 − 10^-9: the classic bound, m·ln²2 / ln(1/ε), lets 800 bits "hold" 10^11 keys
// at that rate, so the capacity passed, and the next layer of 2.7·10^8 keys took 370 MB. With k ≥ 1 a bit
// holds at most ln(1/(1 − ε)) keys (20.7 here): the row is refused.
TEST(HostileFiles, AScalableLayerRateNearOneCannotClaimAHugeCapacity) {
  auto bytes = full_chain();
  const scalable f = from_bytes<scalable>(bytes);
  const std::size_t layers = f.layers().size();
  const std::size_t last_row = 8 * layers + 32 * (layers - 1);
  put_u64(bytes, 8 * (layers - 1), 46'000'000);                           // the last layer's count
  put_u64(bytes, last_row + 16, 46'000'000);                              // its capacity
  put_u64(bytes, last_row + 24, std::bit_cast<std::uint64_t>(1 - 1e-9));  // its rate
  edit_header(bytes, [](file_header& h) { h.primary = 10'000'000; });
  try {
    scalable forged = from_bytes<scalable>(bytes);
    const std::size_t grown = growth_of_one_insert(forged);
    ADD_FAILURE() << "loaded, and one insert took " << grown << " bytes";
  } catch (const format_error& e) {
    EXPECT_TRUE(blume_test::mentions(e.what(), "capacity")) << e.what();
  }
}

// A d-left table of one bucket of one cell (20-bit remainders), holding the fingerprint of a key with its
// last bit flipped: the two share a bucket at every size down to a 1-bit remainder, so the key's insert
// grew the 11-byte table 2^19-fold. One insert now doubles a table at most twice.
TEST(HostileFiles, ADLeftTableBesideAKeyGrowsAtMostTwiceOnItsInsert) {
  using dleft = dleft_counting_filter<>;
  dleft_geometry g;
  g.subtables = 1;
  g.buckets = 1;
  g.cells = 1;
  g.remainder_bits = 20;
  g.counter_bits = 4;
  const dleft empty(g);
  const std::uint64_t key = 42;
  const std::uint64_t h = empty.fingerprint(empty.hash(key));
  auto bytes = to_bytes(empty);
  ASSERT_EQ(bytes.size(), header_size + 3 + 8);  // a 24-bit cell, then 8 zero bytes
  const std::uint64_t cell = ((h ^ 1) << g.counter_bits) | 1;
  for (int i = 0; i < 3; ++i) bytes[header_size + i] = static_cast<std::byte>(cell >> (8 * i));
  edit_header(bytes, [](file_header& hd) { hd.inserted = 1; });
  dleft f = from_bytes<dleft>(bytes);
  const std::size_t before = f.size_in_bytes();
  (void)f.insert(key);
  EXPECT_LE(f.geometry().buckets, 4u);
  EXPECT_LE(f.size_in_bytes(), 4 * before);
}

}  // namespace
