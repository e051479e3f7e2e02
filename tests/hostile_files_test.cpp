// Forged files for every kind: random edits to the payload, to header fields, to the length, and both at
// once, with both checksums recomputed as a forger would. Each must either load into a filter that then
// answers, inserts, erases and saves without reading out of bounds (the sanitizer builds watch), or be
// refused with a format_error; never another exception, never a crash.
#include <gtest/gtest.h>

#include <xxhash.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/blume.hpp"
#include "blume/strata_estimator.hpp"

namespace {

using namespace blume;

template <class F>
void use(F& f) {
  for (std::uint64_t k = 0; k < 100; ++k) (void)f.contains(k * 7919);
  std::vector<std::uint64_t> keys(64);
  for (std::uint64_t k = 0; k < keys.size(); ++k) keys[k] = k;
  (void)f.count_contained(keys);
  if constexpr (requires { f.insert(std::uint64_t{1}); }) {
    for (std::uint64_t k = 0; k < 30; ++k) f.insert(k + 1000);
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

}  // namespace
