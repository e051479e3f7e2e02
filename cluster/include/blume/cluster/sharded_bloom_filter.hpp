// SPDX-License-Identifier: Apache-2.0
// One logical Bloom filter over many keys of a Redis Cluster. Each shard key is an ordinary RedisBloom
// filter (BF.RESERVE), so every tool that reads RedisBloom reads a shard; the shard of an item comes from
// its XXH3 digest, independent of the MurmurHash probes inside the shard. Shards stay far below the size
// where a key can no longer move between nodes (slot migration sends a key as one DUMP payload, capped by
// proto-max-bulk-len, 512 MB by default), and their names put them on evenly spaced slots.
// docs/redis.md ("Sharded filters on Redis Cluster") describes the meta key and the names byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/cluster/client.hpp"

namespace blume::cluster {

inline constexpr std::string_view sharded_format = "blume-sharded-bloom/1";

struct sharded_options {
  /// Number of shards; 0 chooses the smallest count ≥ min_shards whose shards fit max_shard_bytes.
  std::uint64_t shards = 0;
  std::uint64_t min_shards = 16;
  /// The largest first layer a shard may have (its BF.RESERVE size).
  std::uint64_t max_shard_bytes = std::uint64_t{256} << 20;
  std::uint32_t expansion = 2;
  bool nonscaling = false;
  std::uint64_t seed = 0x626c756d65ULL;  // xxh3_hasher's default seed
};

/// What a sharded filter is: everything in its meta key. Pure data and arithmetic (no server).
struct sharded_layout {
  std::string name;
  std::uint64_t shards = 0;
  std::uint64_t capacity = 0;
  std::uint64_t shard_capacity = 0;  // capacity / shards with headroom for the binomial spread of keys
  double error_rate = 0;
  std::uint32_t expansion = 2;
  bool nonscaling = false;
  std::uint64_t seed = 0;
  std::vector<std::string> tags;  // one hash tag per shard

  /// Plans a filter: checks the name and the parameters (throwing blume::invalid_argument), chooses the
  /// shard count and each shard's hash tag.
  static sharded_layout plan(std::string name, double error_rate, std::uint64_t capacity,
                             const sharded_options& options = {});
  /// Reads a meta key's fields (HGETALL's pairs); throws blume::format_error naming what is wrong.
  static sharded_layout from_fields(std::string name, const std::map<std::string, std::string>& fields);
  /// The meta key's fields, in a fixed order.
  std::vector<std::pair<std::string, std::string>> fields() const;

  /// Shard i's key: NAME ":" i "{" tag "}".
  std::string shard_key(std::uint64_t i) const;
  /// The shard of an item: (XXH3-128(item, seed).low × shards) >> 64.
  std::uint64_t shard_of(std::string_view item) const noexcept;
  /// Bytes of one shard's first layer (what BF.RESERVE allocates).
  std::uint64_t shard_bytes() const;
  /// The predicted false-positive rate of one shard after `items` counted adds.
  double shard_fpr(std::uint64_t items) const;
};

/// The slot a shard is placed on: NAME's own slot, then evenly spaced steps of 16384 / shards.
std::uint32_t shard_slot(std::string_view name, std::uint64_t shard, std::uint64_t shards) noexcept;
/// The first string over [0-9a-z], shortest first and then in that alphabet's order, whose CRC16 falls on
/// `slot`: a tag that puts a key on that slot.
std::string slot_tag(std::uint32_t slot);

struct sharded_info {
  sharded_layout layout;
  std::uint64_t items = 0;  // Σ BF.CARD: adds that set a bit
  std::uint64_t bytes = 0;  // Σ BF.INFO SIZE
  std::uint64_t largest_shard_bytes = 0;
  double predicted_fpr = 0;                    // the mean of the shards' rates at their fills
  std::map<std::string, std::uint64_t> nodes;  // "host:port" → shards it serves
};

/// A sharded filter on a cluster, through a client the caller owns (and keeps alive).
class sharded_bloom_filter {
 public:
  /// Creates the shards (BF.RESERVE) and then the meta key, so that a filter exists once its meta key
  /// does. Refuses a name already in use, deleting any shard it created.
  static sharded_bloom_filter reserve(cluster_client& client, std::string name, double error_rate,
                                      std::uint64_t capacity, const sharded_options& options = {},
                                      int wait_replicas = 0);
  /// The same for a layout already planned (sharded_layout::plan), so a caller that checked its parameters
  /// before connecting does not plan twice.
  static sharded_bloom_filter reserve(cluster_client& client, sharded_layout layout, int wait_replicas = 0);
  /// Opens an existing filter from its meta key; throws blume::invalid_argument when there is none.
  static sharded_bloom_filter open(cluster_client& client, std::string name);

  const sharded_layout& layout() const noexcept { return layout_; }
  const std::vector<std::string>& shard_keys() const noexcept { return keys_; }

  /// Adds items (BF.INSERT … NOCREATE, so a lost shard is an error rather than a small new filter) in
  /// commands of at most `per_command` items, pipelined per node; returns how many set a bit (RedisBloom's
  /// "new", which repeated sends after a failover count again as not new). With `wait_replicas`, returns
  /// only once that many replicas hold every item.
  std::uint64_t add_many(std::span<const std::string_view> items, int wait_replicas = 0);
  /// Answers for every item: 1 maybe, 0 no. A missing shard key is an error, not a row of zeros.
  std::vector<char> contains_many(std::span<const std::string_view> items);
  bool add(std::string_view item) { return add_many(std::span(&item, 1)) != 0; }
  bool contains(std::string_view item) { return contains_many(std::span(&item, 1))[0] != 0; }

  sharded_info info();

  std::size_t per_command = 1000;

 private:
  sharded_bloom_filter(cluster_client& client, sharded_layout layout);

  cluster_client* client_;
  sharded_layout layout_;
  std::vector<std::string> keys_;
};

}  // namespace blume::cluster
