// SPDX-License-Identifier: Apache-2.0
// Recomputes both checksums of a filter file, as a forger (or a fuzzer) would, so that what follows the
// checksums is what gets tested. Offsets come from format.hpp, and the header's extent from its own
// header_size field, so this keeps working when the header grows: the header checksum is the header's
// last 8 bytes, the payload starts where the header ends. No gtest here: the fuzz harnesses use it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "blume/io/format.hpp"

namespace blume_test {

/// Rewrites the payload checksum and the header checksum of `bytes` in place. Bytes too short to hold a
/// header, or whose header_size field does not fit them, are left as they are (the decoder refuses
/// them before it looks at a checksum).
inline void fix_checksums(std::span<std::byte> bytes) noexcept {
  namespace d = blume::detail;
  if (bytes.size() < d::off_header_size + 4) return;
  const std::uint64_t header = d::read_le<std::uint32_t>(bytes.data() + d::off_header_size);
  if (header < d::off_payload_checksum + 8 + 8 || header > bytes.size()) return;
  d::write_le<std::uint64_t>(bytes.data() + d::off_payload_checksum,
                             d::checksum(bytes.data() + header, bytes.size() - header));
  d::write_le<std::uint64_t>(bytes.data() + header - 8, d::checksum(bytes.data(), header - 8));
}

}  // namespace blume_test
