// SPDX-License-Identifier: Apache-2.0
// A Redis Cluster client for the sharded filters: the slot map, one connection per node, pipelines per node,
// and the redirections a cluster sends while slots move or a primary fails over. Built on hiredis, which
// stays out of this header: replies are copied into `reply`.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blume::cluster {

/// host:port of one server.
struct node_address {
  std::string host;
  std::uint16_t port = 0;

  std::string text() const { return host + ":" + std::to_string(port); }
  friend bool operator==(const node_address&, const node_address&) = default;
};

/// "HOST:PORT", "[IPv6]:PORT" or "HOST" (port 6379). Throws blume::invalid_argument.
node_address parse_address(std::string_view text);

/// Redis's CRC16 (XMODEM: polynomial 0x1021, initial value 0), over the bytes of `s`.
std::uint16_t crc16(std::string_view s) noexcept;

/// Number of hash slots of a Redis Cluster.
inline constexpr std::uint32_t slot_count = 16384;

/// The slot of `key`: CRC16 of its hash tag (the bytes between the first '{' and the next '}', when that is
/// not empty), else of the whole key, modulo 16384. The same rule as the server's keyHashSlot.
std::uint16_t key_slot(std::string_view key) noexcept;

/// One reply, copied out of hiredis.
struct reply {
  enum class type { string, status, error, integer, nil, array };
  type kind = type::nil;
  std::string text;  // string, status and error replies
  long long integer = 0;
  std::vector<reply> elements;

  bool is_error() const noexcept { return kind == type::error; }
};

/// A command and the key that routes it. The views must outlive the call that runs it.
struct command {
  std::string_view key;
  std::vector<std::string_view> args;  // the command's name first
};

struct client_options {
  /// How long one connect or one read may block before the node counts as unreachable.
  std::chrono::milliseconds io_timeout{10'000};
  /// How long redirections, a cluster that is down, a failover or lost connections are retried before a
  /// call gives up (throwing blume::io_error).
  std::chrono::milliseconds retry_for{60'000};
  /// WAIT's own timeout when a call asks for replicas; a short WAIT that falls short is simply repeated.
  std::chrono::milliseconds wait_timeout{2'000};
};

/// Talks to a Redis Cluster (or to one server without cluster mode, which then serves every slot). Every
/// command goes to the primary serving its key's slot. Not thread-safe: one client per thread.
class cluster_client {
 public:
  /// Connects to the first reachable seed and reads the slot map. Throws blume::io_error when no seed answers.
  explicit cluster_client(std::vector<node_address> seeds, client_options options = {});
  ~cluster_client();
  cluster_client(const cluster_client&) = delete;
  cluster_client& operator=(const cluster_client&) = delete;

  /// Runs `commands`, each on the primary serving its key, and returns their replies in order. Commands for
  /// one node go out as one pipeline, and every node's pipeline is sent before any reply is read, so the
  /// nodes work at once. MOVED and ASK are followed; TRYAGAIN, CLUSTERDOWN, LOADING, a lost connection and a
  /// primary that became a replica are retried with the slot map read again, until options.retry_for.
  /// With `wait_replicas` > 0 a node's commands count as done only once WAIT reports that many replicas
  /// have them; until then they are sent again (so use it with idempotent commands). An error reply of a
  /// command itself is returned, not thrown.
  std::vector<reply> run(std::span<const command> commands, int wait_replicas = 0);
  reply run(const command& c, int wait_replicas = 0);

  /// True when the server runs in cluster mode.
  bool is_cluster() const noexcept { return cluster_mode_; }
  /// The primary serving `key` in the current slot map.
  const node_address& node_of(std::string_view key) const;
  /// The primaries in the current slot map.
  std::vector<node_address> primaries() const;
  /// Reads the slot map again from any reachable node.
  void refresh_slots();

 private:
  struct connection;
  connection* connect(std::size_t node);
  void drop(std::size_t node);
  std::size_t node_index(const node_address& a);

  client_options options_;
  std::vector<node_address> nodes_;                       // every node seen: seeds, primaries, redirection targets
  std::vector<std::unique_ptr<connection>> connections_;  // by node index; null when not connected
  std::array<std::uint32_t, slot_count> slots_{};         // slot → node index
  bool cluster_mode_ = true;
};

}  // namespace blume::cluster
