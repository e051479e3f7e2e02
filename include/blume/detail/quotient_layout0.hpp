// SPDX-License-Identifier: Apache-2.0
// The quotient filter's first file layout (layout 0, blume 0.x until the rank-and-select layout): s slots of
// r + 3 bits packed in little-endian 64-bit words, slot i at bits i·(r + 3), the low three bits of a slot
// is_occupied, is_continuation and is_shifted (Bender et al. 2012, §2), the rest the remainder; runs sorted,
// each remainder at max(previous position + 1, its quotient), wrapping around the end of the table.
// Files of this layout still load: this reader checks the table is one the old writer could have produced
// and lists its fingerprints, from which quotient_filter builds its current layout.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "blume/error.hpp"

namespace blume::detail {

class quotient_layout0 {
 public:
  /// Payload bytes of s slots of r-bit remainders: s·(r + 3) bits in whole 64-bit words.
  static std::uint64_t payload_bytes(std::uint64_t s, std::uint32_t r) noexcept { return (s * (r + 3) + 63) / 64 * 8; }

  /// Every stored fingerprint quotient·2^r + remainder, ascending; throws format_error unless the table is
  /// one insert and erase could have produced (see check). The caller has checked s and r and the size.
  static std::vector<std::uint64_t> sorted_fingerprints(std::span<const std::byte> table, std::uint64_t s,
                                                        std::uint32_t r) {
    const quotient_layout0 t(table, s, r);
    return t.check_and_list();
  }

 private:
  quotient_layout0(std::span<const std::byte> table, std::uint64_t s, std::uint32_t r)
      : bytes_(table), slots_(s), r_(r), width_(r + 3), mask_((std::uint64_t{1} << width_) - 1) {}

  std::uint64_t get(std::uint64_t i) const noexcept {
    const std::uint64_t bit = i * width_;
    std::uint64_t v = 0;
    // A slot spans at most 5 bytes past its first (35 bits from any bit offset).
    for (std::uint64_t b = bit / 8, shift = 0; b < bytes_.size() && shift < width_ + (bit % 8); ++b, shift += 8)
      v |= static_cast<std::uint64_t>(bytes_[b]) << shift;
    return (v >> (bit % 8)) & mask_;
  }
  std::uint64_t wrap(std::uint64_t i) const noexcept { return i >= slots_ ? i - slots_ : i; }
  static bool occupied(std::uint64_t v) noexcept { return v & 1; }
  static bool continuation(std::uint64_t v) noexcept { return v & 2; }
  static bool shifted(std::uint64_t v) noexcept { return v & 4; }
  static bool empty(std::uint64_t v) noexcept { return (v & 7) == 0; }

  /// One pass from an empty slot, so a hostile table can neither loop nor read out of bounds: bits past the
  /// last slot are zero; some slot is empty and holds no remainder; a cluster begins unshifted, not a
  /// continuation, at an occupied slot; each new run takes the next occupied quotient, not past the run's
  /// start; is_shifted is set exactly where a remainder is not at its quotient; remainders within a run
  /// ascend; every occupied quotient has a run.
  std::vector<std::uint64_t> check_and_list() const {
    const std::uint64_t used_bits = slots_ * width_;
    for (std::uint64_t bit = used_bits; bit < bytes_.size() * 8; ++bit)
      if ((static_cast<unsigned>(bytes_[bit / 8]) >> (bit % 8)) & 1u)
        throw format_error("padding bits past bit " + std::to_string(used_bits) + " are set");
    std::uint64_t e = 0;
    while (e < slots_ && !empty(get(e))) ++e;
    if (e == slots_) throw format_error("quotient table has no empty slot");
    auto bad = [&](std::uint64_t offset, const std::string& what) {
      return format_error("quotient table slot " + std::to_string(wrap(e + offset)) + ": " + what);
    };
    std::vector<std::uint64_t> out;
    std::uint64_t i = 0;  // offset from e; offset slots_ is e itself, which is empty
    while (i < slots_) {
      std::uint64_t v = get(wrap(e + i));
      if (empty(v)) {
        if ((v >> 3) != 0) throw bad(i, "an empty slot holds a remainder");
        ++i;
        continue;
      }
      if (continuation(v)) throw bad(i, "a continuation with no run start before it");
      if (shifted(v)) throw bad(i, "a shifted remainder right after an empty slot");
      if (!occupied(v)) throw bad(i, "a remainder in its canonical slot, which is not marked occupied");
      std::uint64_t quotient = i, previous_remainder = v >> 3;
      out.push_back(wrap(e + quotient) << r_ | previous_remainder);
      std::uint64_t j = i + 1;
      for (; j < slots_; ++j) {
        v = get(wrap(e + j));
        if (empty(v)) break;
        if (!continuation(v)) {
          do {
            ++quotient;
          } while (quotient <= j && !occupied(get(wrap(e + quotient))));
          if (quotient > j) throw bad(j, "a run starts but no occupied quotient is left for it");
        } else if ((v >> 3) < previous_remainder) {
          throw bad(j, "remainders of a run out of order");
        }
        if (shifted(v) != (j != quotient)) throw bad(j, "is_shifted is inconsistent with the run's quotient");
        previous_remainder = v >> 3;
        out.push_back(wrap(e + quotient) << r_ | previous_remainder);
      }
      for (std::uint64_t k = quotient + 1; k < j; ++k)
        if (occupied(get(wrap(e + k)))) throw bad(k, "marked occupied but has no run");
      i = j;
    }
    // Walking from just after the empty slot e, the quotients ascend and wrap once past the end.
    const auto wrapped = std::partition_point(out.begin(), out.end(), [&](std::uint64_t f) { return (f >> r_) > e; });
    std::rotate(out.begin(), wrapped, out.end());
    return out;
  }

  std::span<const std::byte> bytes_;
  std::uint64_t slots_;
  std::uint32_t r_, width_;
  std::uint64_t mask_;
};

}  // namespace blume::detail
