// SPDX-License-Identifier: Apache-2.0
// Fuzzes the file decoders of every kind: the input is a filter file whose two checksums are recomputed
// first (tests/forge.hpp), so the fuzzer's mutations reach the header fields and payloads behind them.
// A file must either be refused with a format_error or load into a filter that works: lookups, inserts
// that are found right after (a false negative is a bug: abort), the accessors, and a serialization that
// loads again into the same bytes (exercise.hpp). Any other exception, a sanitizer report, a stall or a
// huge allocation is a finding (libFuzzer's -timeout and -malloc_limit_mb catch the last two). The
// families' harnesses (growing, lattice, bitarray, iblt) go further for their kinds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <variant>
#include <vector>

#include "exercise.hpp"

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
  std::visit([](auto& f) { blume_fuzz::exercise(f); }, *filter);
  return 0;
}
