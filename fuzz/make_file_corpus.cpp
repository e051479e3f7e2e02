// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpus of the `file` fuzzer: one small valid file of every kind, plus the shapes a
// kind's decoder treats differently (a grown cuckoo filter, a scalable chain of several layers, an aging
// filter with a time window). Small, so that the fuzzer's mutations land in fields, not in bulk bits.
// With a family (growing, lattice, bitarray, iblt), the seeds of that family's fuzzer: its kinds' files,
// the shapes one insert away from growing, and hostile-* files, forged as issue 28's were, that a reader
// must refuse or hold to its bounds.
//   make_file_corpus DIR [FAMILY]   (the `fuzz_file_corpus` target regenerates fuzz/corpus/*/)
// The regression-*.blume files in those directories are reproducers of past findings, not written here.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/kinds/strata_estimator.hpp"

namespace {

using namespace blume;

std::vector<std::uint64_t> keys(std::uint64_t count, std::uint64_t first = 0) {
  std::vector<std::uint64_t> k(count);
  for (std::uint64_t i = 0; i < count; ++i) k[i] = 0x9e3779b97f4a7c15ULL * (first + i + 1);
  return k;
}

template <class F>
F filled(F f, std::uint64_t count) {
  for (const std::uint64_t k : keys(count)) f.insert(k);
  return f;
}

// Aging filters record start times: a fixed clock keeps the corpus the same from one generation to the next.
const aging_bloom_filter<>::time_point fixed_now{std::chrono::seconds(1'767'225'600)};  // 2026-01-01

aging_bloom_filter<> aging(std::chrono::nanoseconds window_time, std::uint64_t count) {
  aging_bloom_filter<> f(40, 0.05, window_time, xxh3_hasher::default_seed, fixed_now);
  for (const std::uint64_t k : keys(count)) f.insert(k, fixed_now);
  return f;
}

/// A scalable chain whose newest layer holds its capacity: the next new key adds a layer.
template <class F>
F full(F f) {
  for (std::uint64_t i = 0; !f.needs_new_layer(); ++i) f.insert(keys(1, 1000 + i)[0]);
  return f;
}

/// A small filter of `kind`, holding a few keys; a kind of lattice cells in `cells` layout.
any_filter sample(filter_kind kind, std::optional<cell_layout> cells = std::nullopt) {
  constexpr std::uint64_t items = 40;
  constexpr double fpr = 0.05;
  if (input_of(kind) == kind_input::keys_with_values) {
    std::vector<std::uint32_t> values(items);
    for (std::uint32_t i = 0; i < items; ++i) values[i] = i % 15 + 1;
    return build_map_filter(kind, keys(items), values, fpr, std::nullopt, cells);
  }
  if (input_of(kind) == kind_input::included_and_excluded)
    return cascade_filter::build(keys(items), keys(4 * items, items));
  if (input_of(kind) == kind_input::integers) {
    any_filter f = make_integer_filter(kind, integer_universe::of_size(1 << 20), 4);
    std::visit(
        [](auto& typed) {
          if constexpr (requires { typed.in_zone(); })
            for (const std::uint64_t k : keys(items / 2)) typed.insert(k & 0xfffff);
        },
        f);
    return f;
  }
  if (input_of(kind) == kind_input::vectors) {
    // 40 vectors of 8 values, value j of vector i being ((31i + 17j) mod 101) / 100, then 5 steps elapsed.
    any_filter f = make_vector_filter(kind, 8);
    std::visit(
        [](auto& typed) {
          if constexpr (requires { typed.elapse(1); }) {
            std::vector<double> x(8);
            for (std::size_t i = 0; i < items; ++i) {
              for (std::size_t j = 0; j < 8; ++j) x[j] = static_cast<double>((31 * i + 17 * j) % 101) / 100;
              typed.observe(x);
            }
            typed.elapse(5);
          }
        },
        f);
    return f;
  }
  if (kind == blume::aging_bloom_filter<>::kind) return aging({}, items / 2);
  if (is_static(kind)) {
    std::vector<std::uint64_t> lows;
    for (const std::uint64_t k : keys(items)) lows.push_back(hash_key(xxh3_hasher(), k).low);
    return build_static_filter(kind, std::move(lows), fpr);
  }
  any_filter f = make_filter(kind, items, fpr);
  std::visit(
      [](auto& typed) {
        if constexpr (requires { typed.insert(std::uint64_t{1}); })
          for (const std::uint64_t k : keys(items / 2)) typed.insert(k);
      },
      f);
  return f;
}

void write(const std::filesystem::path& dir, const std::string& name, const any_filter& f) {
  const std::filesystem::path path = dir / (name + ".blume");
  save_filter(f, path, {100, 0.01});  // a design record, as the tool writes one, for the fuzzer to bend
  std::printf("%s: %ju bytes\n", path.c_str(), static_cast<std::uintmax_t>(std::filesystem::file_size(path)));
}

/// `f`'s file with its header edited (and, by `payload`, its payload), both checksums recomputed.
void write_forged(const std::filesystem::path& dir, const std::string& name, const any_filter& f,
                  const std::function<void(file_header&)>& edit,
                  const std::function<void(std::span<std::byte>)>& payload = {}) {
  std::vector<std::byte> bytes = std::visit([](const auto& typed) { return to_bytes(typed); }, f);
  file_header h = decode_header(bytes);
  edit(h);
  const std::span<std::byte> body(bytes.data() + header_size, bytes.size() - header_size);
  if (payload) payload(body);
  h.payload_checksum = detail::checksum(body.data(), body.size());
  const auto header = encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  const std::filesystem::path path = dir / (name + ".blume");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
}

/// The fuzz harnesses' n-th key (exercise.hpp's key()).
std::uint64_t fuzz_key(std::uint64_t n) { return 0x9e3779b97f4a7c15ULL * (n + 1); }

void write_growing(const std::filesystem::path& dir) {
  using scalable = scalable_bloom_filter<>;
  write(dir, "scalable", sample(scalable::kind));
  scalable_options o;
  o.growth = 3;
  o.tightening = 0.7;
  const scalable layers = full(filled(scalable(8, 0.05, o), 60));
  write(dir, "scalable-layers", layers);
  write(dir, "scalable-full", full(scalable(40, 0.05)));
  o.growth = 1;
  o.tightening = 0.9;
  write(dir, "scalable-growth-1", full(filled(scalable(4, 0.1, o), 20)));
  // Issue 28's files: a rate below 2^-64; a tightening that takes the next layer's rate to 1e-300; a last
  // layer whose rate near 1 lets it claim 4.6·10^7 keys under a header of 10^7.
  write_forged(dir, "hostile-scalable-rate-6.4e-309", layers,
               [](file_header& h) { h.extra[0] = std::bit_cast<std::uint64_t>(6.4e-309); });
  write_forged(dir, "hostile-scalable-tightening-2.7e-100", layers,
               [](file_header& h) { h.extra[2] = std::bit_cast<std::uint64_t>(2.7e-100); });
  const std::size_t n = layers.layers().size(), row = 8 * n + 32 * (n - 1);
  write_forged(
      dir, "hostile-scalable-rate-near-1", layers, [](file_header& h) { h.primary = 10'000'000; },
      [&](std::span<std::byte> payload) {
        detail::write_le<std::uint64_t>(payload.data() + 8 * (n - 1), 46'000'000);
        detail::write_le<std::uint64_t>(payload.data() + row + 16, 46'000'000);
        detail::write_le<std::uint64_t>(payload.data() + row + 24, std::bit_cast<std::uint64_t>(1 - 1e-9));
      });

  using dleft = dleft_counting_filter<>;
  write(dir, "dleft", sample(dleft::kind));
  dleft_geometry g;
  g.buckets = 2;
  g.remainder_bits = 12;
  write(dir, "dleft-small", filled(dleft(g), 56));  // 56 keys in 64 cells: new keys soon double the table
  // One bucket of one cell holding the harness's first key's fingerprint with its last bit flipped: the two
  // share a bucket at every size, so that key's insert would double the table down to a 1-bit remainder.
  g.subtables = 1;
  g.buckets = 1;
  g.cells = 1;
  g.remainder_bits = 20;
  const dleft beside(g);
  const std::uint64_t cell = ((beside.fingerprint(beside.hash(fuzz_key(1000))) ^ 1) << g.counter_bits) | 1;
  write_forged(
      dir, "hostile-dleft-beside-a-key", beside, [](file_header& h) { h.inserted = 1; },
      [&](std::span<std::byte> payload) {
        for (int i = 0; i < 3; ++i) payload[i] = static_cast<std::byte>(cell >> (8 * i));
      });

  cuckoo_geometry c;
  c.buckets = 2;
  c.expansion = 2;
  c.max_filters = 8;
  write(dir, "cuckoo-grown", filled(cuckoo_filter<>(c), 100));
  c.expansion = 4;
  write(dir, "cuckoo-expansion-4", filled(cuckoo_filter<>(c), 8));
}

void write_family(const std::filesystem::path& dir, std::string_view family) {
  if (family == "growing") {
    write_growing(dir);
  } else if (family == "lattice") {
    write(dir, "spatial", sample(spatial_bloom_filter<>::kind));
    write(dir, "compact", sample(compact_approximator<>::kind));
    auto few = spatial_bloom_filter<>::with_geometry(64, 3, 3);
    for (std::uint32_t i = 0; i < 12; ++i) few.insert(fuzz_key(i), 1 + i % 3);
    write(dir, "spatial-3-sets", few);
    write(dir, "spatial-blocked", sample(spatial_bloom_filter<>::kind, cell_layout::blocked));
    write(dir, "compact-blocked", sample(compact_approximator<>::kind, cell_layout::blocked));
    auto one_block = spatial_bloom_filter<>::with_geometry(64, 5, 3, xxh3_hasher::default_seed, cell_layout::blocked);
    for (std::uint32_t i = 0; i < 12; ++i) one_block.insert(fuzz_key(i), 1 + i % 3);
    write(dir, "spatial-one-block", one_block);
    // A key count of 2^62 in one block of 16 cells probed 64 times: its model once summed ~10^9 Poisson terms.
    write_forged(dir, "hostile-compact-blocked-huge-count",
                 compact_approximator<>::with_geometry(16, 64, xxh3_hasher::default_seed, cell_layout::blocked),
                 [](file_header& h) { h.inserted = std::uint64_t{1} << 62; });
  } else if (family == "bitarray") {
    write(dir, "layered", sample(layered_bloom_filter<>::kind));
    write(dir, "vi-counting", sample(variable_increment_counting_filter<>::kind));
    auto node = std::get<attenuated_bloom_filter<>>(sample(attenuated_bloom_filter<>::kind));
    write(dir, "attenuated", node);
    attenuated_bloom_filter<> neighbour = node;
    neighbour.clear();
    for (const std::uint64_t k : keys(10, 500)) neighbour.insert(k);
    node.absorb(neighbour, 1);
    write(dir, "attenuated-absorbed", node);
  } else if (family == "iblt") {
    write(dir, "iblt", sample(invertible_bloom_filter<>::kind));
    auto difference = invertible_bloom_filter<>::for_difference(10);
    difference.insert_many(keys(40));
    write(dir, "iblt-difference", difference);
    auto small = invertible_bloom_filter<>::for_difference(3);
    small.insert_many(keys(2));
    write(dir, "iblt-small", small);
  } else {
    std::fprintf(stderr, "make_file_corpus: no family '%s' (growing, lattice, bitarray, iblt)\n",
                 std::string(family).c_str());
    std::exit(2);
  }
}

void write_every_kind(const std::filesystem::path& dir) {
  for_each_kind([&](auto type) {
    using F = typename decltype(type)::type;
    write(dir, std::string(F::name), sample(F::kind));
  });
  // The second layout of the kinds of lattice cells.
  write(dir, "spatial-blocked", sample(spatial_bloom_filter<>::kind, cell_layout::blocked));
  write(dir, "compact-blocked", sample(compact_approximator<>::kind, cell_layout::blocked));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s DIR [FAMILY]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  if (argc == 3) {
    write_family(dir, argv[2]);
    return 0;
  }
  write_every_kind(dir);

  // Shapes one insert away from growing, so that the fuzzer's inserts reach the code that sizes the next
  // sub-filter, layer or buffer from fields it has mutated.
  cuckoo_geometry g;
  g.buckets = 2;
  g.expansion = 2;
  g.max_filters = 8;
  write(dir, "cuckoo-grown", filled(cuckoo_filter<>(g), 100));
  scalable_options o;
  o.growth = 3;
  o.tightening = 0.7;
  write(dir, "scalable-layers", full(filled(scalable_bloom_filter<>(8, 0.05, o), 60)));
  write(dir, "scalable-full", full(scalable_bloom_filter<>(40, 0.05)));
  using namespace std::chrono_literals;
  write(dir, "aging-timed", aging(60s, 30));
  // The iblt shapes the reconcile verbs write: a sketch (32 strata) and a table sized for a difference.
  strata_estimator<> sketch;
  sketch.insert_many(keys(40));
  write(dir, "iblt-sketch", sketch.table());
  auto difference = invertible_bloom_filter<>::for_difference(10);
  difference.insert_many(keys(40));
  write(dir, "iblt-difference", difference);
  return 0;
}
