// SPDX-License-Identifier: Apache-2.0
// What the verbs share about filters: the capabilities the tool keys on the kind, inserting batches of
// keys, locking and writing an output file, and refusing a filter filled past its design.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/fill.hpp"
#include "blume/io/file_io.hpp"
#include "key_input.hpp"
#include "shared.hpp"
#include "units.hpp"

namespace CLI {
class App;
}

namespace blume::cli {

// ---- inserting --------------------------------------------------------------------------------------

/// Inserts one key; false only when the filter had no room for it.
template <class F, class K>
bool insert_stored(F& f, const K& k) {
  if constexpr (requires { f.try_insert(k) == insert_result::full; }) {
    return f.try_insert(k) != insert_result::full;
  } else {
    return f.insert(k);
  }
}

/// The keys of a kind of integer keys (kind_input::integers) are decimal numbers in key files and on the
/// command line; the filter takes each as its 8 little-endian bytes, as the library and Python pass an
/// integer. A key that is not a decimal number below 2^64 is an invalid_argument naming it.
class integer_keys {
 public:
  const std::vector<std::string_view>& of(const std::vector<std::string_view>& text) {
    values_.resize(text.size());
    views_.resize(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto v = parse_integer_key(text[i]);
      if (!v)
        throw invalid_argument("key '" + std::string(text[i].substr(0, 64)) +
                               "' is not an integer: this kind's keys are decimal integers of its universe");
      values_[i] = *v;
      views_[i] = std::string_view(reinterpret_cast<const char*>(&values_[i]), 8);
    }
    return views_;
  }

 private:
  std::vector<std::uint64_t> values_;
  std::vector<std::string_view> views_;
};

/// The keys a filter of kind F takes for `text` keys: the same, or their integers' bytes (integer_keys).
template <class F>
const std::vector<std::string_view>& keys_for(const std::vector<std::string_view>& text, integer_keys& scratch) {
  if constexpr (F::input == kind_input::integers) {
    return scratch.of(text);
  } else {
    return text;
  }
}

/// Inserts keys (a batch of string_views) and returns how many were refused because the filter is full.
template <class F>
std::uint64_t insert_batch(F& f, const std::vector<std::string_view>& text_keys, bool concurrent) {
  static_assert(takes_inserts<F>);
  integer_keys scratch;
  const std::vector<std::string_view>& keys = keys_for<F>(text_keys, scratch);
  if constexpr (can_insert_concurrently<F>) {
    if (concurrent) {
      f.insert_many_concurrent(keys);
      return 0;
    }
  }
  if constexpr (may_be_full<F>) {
    return keys.size() - f.insert_many(keys);
  } else {
    f.insert_many(keys);
    return 0;
  }
}

/// Inserts every key of `block` (empty keys skipped); returns {keys, refused}.
template <class F>
std::pair<std::uint64_t, std::uint64_t> insert_block(F& f, std::string_view block, char delimiter, bool concurrent) {
  std::vector<std::string_view> batch;
  batch.reserve(4096);
  std::uint64_t keys = 0, refused = 0;
  for_each_key(block, delimiter, [&](std::string_view k) {
    if (k.empty()) return;
    batch.push_back(k);
    if (batch.size() == 4096) {
      refused += insert_batch(f, batch, concurrent);
      keys += batch.size();
      batch.clear();
    }
  });
  refused += insert_batch(f, batch, concurrent);
  keys += batch.size();
  return {keys, refused};
}

/// Splits `block` into `parts` pieces at key boundaries.
std::vector<std::string_view> split(std::string_view block, char delimiter, unsigned parts);

// ---- writing ----------------------------------------------------------------------------------------

/// Locks the file a command is about to replace, so concurrent writers serialise (see blume::file_lock).
/// Standard output needs no lock.
void lock_target(std::optional<file_lock>& lock, const std::string& path, bool no_wait);

/// Writes a command's filter: to a file atomically, or to standard output for "-". A refusal to replace the
/// target (write_refused) says how --force overrides it, where it can.
void write_output(const any_filter& f, const std::string& path, const filter_design& design,
                  const write_options& options = {});

/// Runs a save or its check, naming --force in a refusal it would override.
template <class Fn>
void with_force_hint(Fn&& fn) {
  try {
    fn();
  } catch (const write_refused& e) {
    if (!e.forcible()) throw;
    throw write_refused(std::string(e.what()) + " (--force writes it anyway)", true);
  }
}

/// Throws what write_output would refuse the target with, before a verb spends time on its result.
void check_output(const std::string& path, const write_options& options);

/// Adds --force to a verb that writes a filter file: replace a read-only target, rewrite a hard-linked one
/// in place (write_options::force).
void add_force_flag(CLI::App& cmd, bool& force);

// ---- overfill -----------------------------------------------------------------------------------------

/// A fixed-size filter given more keys than it was planned for keeps answering, but "maybe" loses its
/// meaning: past a rate this many times the target, writers refuse unless told otherwise.
inline constexpr double overfill_tolerance = 1.5;

std::string count_text(double count);

/// Throws when `f` is filled past the tolerance: `what` says what would have happened, `remedy` how to
/// get a filter that holds the keys. A filter without a design record (a version-1 file) has no known
/// target, and a capacity read off its geometry can be far off (split-block's k is fixed), so there it
/// only warns.
template <class F>
void refuse_overfill(const F& f, const filter_design& design, const std::string& what, const std::string& remedy) {
  if constexpr (fill_measurable<F>) {  // the others grow, refuse keys without room, forget, or are built whole
    const fill_state s = fill_against(f, design);
    if (!(s.rate > overfill_tolerance * s.target)) return;
    const std::string state = count_text(s.count) + " against a capacity of " +
                              std::to_string(static_cast<std::uint64_t>(std::llround(s.capacity))) +
                              (s.inferred ? " (inferred from its geometry)" : "") +
                              " would raise its false-positive rate to " + percent(s.rate) + " (target " +
                              percent(s.target) + ")";
    if (s.inferred) {
      std::fprintf(stderr, "blume: warning: %s: %s; the file records no planned capacity to hold it to\n", what.c_str(),
                   state.c_str());
      return;
    }
    throw invalid_argument(what + ": " + state + "; " + remedy + ", or pass --allow-overfill");
  }
}

}  // namespace blume::cli
