// Fuzzes the file decoders of every kind: the input is a filter file whose two checksums are recomputed
// first (tests/forge.hpp), so the fuzzer's mutations reach the header fields and payloads behind them.
// A file must either be refused with a format_error or load into a filter that works: lookups, inserts
// that are found right after (a false negative is a bug: abort), the accessors, and a serialization that
// loads again into the same bytes. Any other exception, a sanitizer report, a stall or a huge allocation
// is a finding (libFuzzer's -timeout and -malloc_limit_mb catch the last two).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "forge.hpp"

namespace {

[[noreturn]] void fail(blume::filter_kind kind, const char* what) {
  std::fprintf(stderr, "file_fuzz: %s filter: %s\n", std::string(blume::kind_name(kind)).c_str(), what);
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

template <class F>
void exercise(F& f) {
  // One clock reading for the whole run: an aging filter's window may be a nanosecond long, and a key
  // inserted at one reading may rightly be gone at the next.
  const auto now = std::chrono::system_clock::now();
  std::uint64_t keys[32];
  for (std::uint64_t i = 0; i < 32; ++i) keys[i] = 0x9e3779b97f4a7c15ULL * (i + 1);
  for (const std::uint64_t k : keys) (void)contains(f, k, now);
  (void)contains(f, 0, now);
  if constexpr (!takes_time<F>) (void)f.count_contained(std::span<const std::uint64_t>(keys));

  if constexpr (requires { f.insert(std::uint64_t{1}); }) {
    for (const std::uint64_t k : keys)
      if (insert(f, k, now) && !contains(f, k, now)) fail(F::kind, "a key just inserted is not found");
  }
  if constexpr (requires { f.estimated_count(); }) (void)f.estimated_count();
  if constexpr (requires { f.predicted_fpr(); }) (void)f.predicted_fpr();
  (void)f.size_in_bytes();
  (void)f.inserted();

  const std::vector<std::byte> saved = blume::to_bytes(f);
  try {
    const blume::any_filter again = blume::filter_from_bytes(saved);
    if (blume::to_bytes(std::get<F>(again)) != saved) fail(F::kind, "a reloaded filter saves different bytes");
  } catch (const blume::format_error& e) {
    std::fprintf(stderr, "file_fuzz: %s\n", e.what());
    fail(F::kind, "a filter's own bytes are refused");
  }

  if constexpr (requires { f.erase(std::uint64_t{1}); }) {
    for (const std::uint64_t k : keys) (void)f.erase(k);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (size != 0) std::memcpy(bytes.data(), data, size);
  blume_test::fix_checksums(bytes);
  std::optional<blume::any_filter> filter;
  try {
    filter = blume::filter_from_bytes(bytes);
  } catch (const blume::format_error&) {
    return 0;  // refused, as it should be; any other exception escapes and is a finding
  }
  std::visit([](auto& f) { exercise(f); }, *filter);
  return 0;
}
