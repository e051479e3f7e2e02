// Writes the seed corpus of the `file` fuzzer: one small valid file of every kind, plus the shapes a
// kind's decoder treats differently (a grown cuckoo filter, a scalable chain of several layers, an aging
// filter with a time window). Small, so that the fuzzer's mutations land in fields, not in bulk bits.
//   make_file_corpus DIR      (the `fuzz_file_corpus` target regenerates fuzz/corpus/file/)
// The regression-*.blume files in that directory are reproducers of past findings, not written here.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/strata_estimator.hpp"

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

/// A small filter of `kind`, holding a few keys.
any_filter sample(filter_kind kind) {
  constexpr std::uint64_t items = 40;
  constexpr double fpr = 0.05;
  if (input_of(kind) == kind_input::keys_with_values) {
    std::vector<std::uint32_t> values(items);
    for (std::uint32_t i = 0; i < items; ++i) values[i] = i % 15 + 1;
    return build_map_filter(kind, keys(items), values, fpr);
  }
  if (input_of(kind) == kind_input::included_and_excluded)
    return cascade_filter::build(keys(items), keys(4 * items, items));
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

void write_every_kind(const std::filesystem::path& dir) {
  for_each_kind([&](auto type) {
    using F = typename decltype(type)::type;
    write(dir, std::string(F::name), sample(F::kind));
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
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
