// SPDX-License-Identifier: Apache-2.0
// What the file harnesses share: exercise(f) puts a loaded filter through what a user would do with it
// (lookups, inserts that must be found right after, the accessors, a serialization that loads again into
// the same bytes, erases), aborting on a broken promise; load_family() reads an input as a file of one
// family of kinds, so a family's harness spends its mutations on those kinds' decoders.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "forge.hpp"

namespace blume_fuzz {

[[noreturn]] inline void fail(blume::filter_kind kind, const char* what) {
  std::fprintf(stderr, "fuzz: %s filter: %s\n", std::string(blume::kind_name(kind)).c_str(), what);
  std::abort();
}

/// Kinds whose answers depend on the time (a window in time): every call gets the run's one clock reading.
template <class F>
constexpr bool takes_time =
    requires(const F& f) { f.contains(std::uint64_t{1}, std::chrono::system_clock::time_point{}); };

template <class F>
bool contains(const F& f, std::uint64_t key, std::chrono::system_clock::time_point now) {
  if constexpr (takes_time<F>) {
    return f.contains(key, now);
  } else {
    return f.contains(key);
  }
}

/// `key` as a key the filter takes: a kind of integer keys (egh) refuses keys outside its universe, rightly,
/// so they are folded into it.
template <class F>
std::uint64_t in_universe(const F& f, std::uint64_t key) {
  if constexpr (requires { f.universe(); }) {
    if (!f.universe().contains(key)) return key % (f.universe().largest + 1);  // largest < 2^64 − 1 here
  }
  return key;
}

/// Inserts `key`; false only where the kind may refuse a key (full) and did.
template <class F>
bool insert(F& f, std::uint64_t key, std::chrono::system_clock::time_point now) {
  if constexpr (takes_time<F>) {
    f.insert(key, now);
    return true;
  } else if constexpr (requires { f.try_insert(key) == blume::insert_result::full; }) {
    return f.try_insert(key) != blume::insert_result::full;  // insert's false also means "present"
  } else if constexpr (blume::may_be_full<F>) {
    return f.insert(key);  // a full table's insert says so
  } else {
    f.insert(key);
    return true;
  }
}

/// A filter's bytes must load again into a filter that saves the same bytes.
template <class F>
void round_trip(const F& f) {
  const std::vector<std::byte> saved = blume::to_bytes(f);
  try {
    const blume::any_filter again = blume::filter_from_bytes(saved);
    if (blume::to_bytes(std::get<F>(again)) != saved) fail(F::kind, "a reloaded filter saves different bytes");
  } catch (const blume::format_error& e) {
    std::fprintf(stderr, "fuzz: %s\n", e.what());
    fail(F::kind, "a filter's own bytes are refused");
  }
}

/// The keys every harness inserts and looks up.
inline std::uint64_t key(std::uint64_t i) { return 0x9e3779b97f4a7c15ULL * (i + 1); }

/// A kind of vectors: scores, observations that must read low right after, elapsed steps, the accessors.
template <class F>
void exercise_vectors(F& f) {
  if (f.dim() > 4096) return;  // a forged dimension: rows of it would only cost the fuzzer memory
  std::vector<double> rows(8 * std::size_t{f.dim()}), scores(8);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<double>(key(i) >> 11) / 9007199254740992.0;
  f.novelty_many(rows, scores);
  for (const double v : scores)
    if (!(v >= 0 && v <= 1)) fail(F::kind, "a novelty outside [0, 1]");
  (void)f.mean_weight();
  if (f.clock() > ~std::uint64_t{0} - 16) return;  // a forged clock at its end: observing is refused, rightly
  f.observe_many(rows);
  const std::span<const double> first(rows.data(), f.dim());
  const double before = f.novelty(first);
  f.observe(first);
  if (f.novelty(first) > before) fail(F::kind, "an input just observed reads more novel than before");
  f.elapse(3);
  (void)f.expected_unrelated_novelty();
  (void)f.size_in_bytes();
  round_trip(f);
}

template <class F>
void exercise_keys(F& f) {
  // One clock reading for the whole run: an aging filter's window may be a nanosecond long, and a key
  // inserted at one reading may rightly be gone at the next.
  const auto now = std::chrono::system_clock::now();
  std::uint64_t keys[32];
  for (std::uint64_t i = 0; i < 32; ++i) keys[i] = key(i);
  for (const std::uint64_t k : keys) (void)contains(f, k, now);
  (void)contains(f, 0, now);
  if constexpr (!takes_time<F>) (void)f.count_contained(std::span<const std::uint64_t>(keys));

  if constexpr (requires { f.insert(std::uint64_t{1}); }) {
    for (const std::uint64_t any : keys) {
      const std::uint64_t k = in_universe(f, any);
      if (insert(f, k, now) && !contains(f, k, now)) fail(F::kind, "a key just inserted is not found");
    }
  } else if constexpr (blume::takes_valued_inserts<F>) {
    // Keys with values: each value the kind takes (a spatial filter's sets are 1 … sets()).
    std::uint64_t most = F::max_value;
    if constexpr (requires { f.sets(); }) most = std::min<std::uint64_t>(most, f.sets());
    for (std::uint64_t i = 0; i < 32; ++i) {
      const std::uint64_t v = 1 + i % std::max<std::uint64_t>(most, 1);
      if constexpr (requires { typename F::value_type; }) {
        f.insert(keys[i], static_cast<typename F::value_type>(v));
      } else {
        f.insert(keys[i], static_cast<std::uint32_t>(v));
      }
      if (!f.find(keys[i]).has_value()) fail(F::kind, "a key just inserted with a value is not found");
    }
  }
  if constexpr (requires { f.estimated_count(); }) (void)f.estimated_count();
  if constexpr (requires { f.predicted_fpr(); }) (void)f.predicted_fpr();
  (void)f.size_in_bytes();
  (void)f.inserted();

  round_trip(f);

  if constexpr (requires { f.erase(std::uint64_t{1}); }) {
    for (const std::uint64_t k : keys) (void)f.erase(k);
  }
}

template <class F>
void exercise(F& f) {
  if constexpr (F::input == blume::kind_input::vectors) {
    exercise_vectors(f);
  } else {
    exercise_keys(f);
  }
}

/// `data` as a filter file of one of `family`'s kinds: a header naming another kind is made to name one
/// of the family (chosen by the kind it named), and both checksums are recomputed, so every input reaches
/// the family's decoders. Nothing when the decoder refuses it (format_error); any other exception escapes.
inline std::optional<blume::any_filter> load_family(const std::uint8_t* data, std::size_t size,
                                                    std::span<const blume::filter_kind> family) {
  std::vector<std::byte> bytes(size);
  if (size != 0) std::memcpy(bytes.data(), data, size);
  namespace d = blume::detail;
  if (size >= d::off_kind + 2) {
    const auto kind = d::read_le<std::uint16_t>(bytes.data() + d::off_kind);
    if (std::find(family.begin(), family.end(), blume::filter_kind{kind}) == family.end())
      d::write_le<std::uint16_t>(bytes.data() + d::off_kind, static_cast<std::uint16_t>(family[kind % family.size()]));
  }
  blume_test::fix_checksums(bytes);
  try {
    return blume::filter_from_bytes(bytes);
  } catch (const blume::format_error&) {
    return std::nullopt;  // refused, as it should be
  }
}

/// What every family harness does with an input: load it as one of `family`'s kinds (load_family) and hand
/// the filter, typed, to `check`.
template <class Check>
int fuzz_family(const std::uint8_t* data, std::size_t size, std::span<const blume::filter_kind> family, Check&& check) {
  std::optional<blume::any_filter> filter = load_family(data, size, family);
  if (filter) std::visit(check, *filter);
  return 0;
}

}  // namespace blume_fuzz
