// SPDX-License-Identifier: Apache-2.0
// Filters between files and Redis keys, through the module's chunk commands: `blume redis push` and
// `pull`. A file's kind decides the key's type:
//   counting (4- or 8-bit counters)      CBF   the stream is the file's bytes (CBF.LOADCHUNK)
//   aging                                WBF   the same (WBF.LOADCHUNK)
//   RedisBloom chain (kind 8, hash id 2) BF    converted to RedisBloom's SCANDUMP stream (BF.LOADCHUNK);
//                                              `blume build --redisbloom` writes such files
// Every other kind has no Redis type and is refused before anything is sent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "blume/cluster/client.hpp"
#include "blume/io/file_io.hpp"

namespace blume::cluster {

struct transfer_report {
  std::string type;          // the key's type: "BF", "CBF" or "WBF"
  std::uint64_t bytes = 0;   // header and payload bytes moved
  std::uint64_t chunks = 0;  // LOADCHUNK or SCANDUMP calls, header included
};

struct push_options {
  bool replace = false;  // delete an existing key first (else an existing key is an error)
  std::size_t chunk_bytes = std::size_t{16} << 20;
};

/// Loads the filter file at `path` into `key`. Throws invalid_argument for a kind Redis cannot hold,
/// format_error for a damaged file, io_error for a refusal by the server (the key is then deleted).
transfer_report push_file(cluster_client& client, const std::filesystem::path& path, std::string_view key,
                          const push_options& options = {});

/// Saves `key` (a BF, CBF or WBF) to `path` atomically. Throws invalid_argument for a missing key or
/// another type, format_error when the bytes read do not make a filter (the key changed while it was
/// read: try again), write_refused when the file cannot be replaced (write_file_atomically).
transfer_report pull_to_file(cluster_client& client, std::string_view key, const std::filesystem::path& path,
                             const write_options& options = {});

}  // namespace blume::cluster
