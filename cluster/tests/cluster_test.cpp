// SPDX-License-Identifier: Apache-2.0
// The sharded filter's arithmetic, without a server: slots, tags, names, the meta key, shard choice, rates.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "blume/cluster/sharded_bloom_filter.hpp"
#include "blume/compat/redisbloom.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/plan.hpp"

namespace bc = blume::cluster;

namespace {

/// True in the sanitized (and unoptimised) builds, as in tests/test_support.hpp: they run far slower.
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
constexpr bool slow_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
constexpr bool slow_build = true;
#else
constexpr bool slow_build = false;
#endif
#else
constexpr bool slow_build = false;
#endif

}  // namespace

TEST(Slots, Crc16IsRedisXmodem) {
  EXPECT_EQ(bc::crc16("123456789"), 0x31C3);  // the check value Redis's cluster specification gives
  EXPECT_EQ(bc::crc16(""), 0);
}

TEST(Slots, HashTagsFollowTheServersRule) {
  EXPECT_EQ(bc::key_slot("{user1000}.following"), bc::key_slot("user1000"));
  EXPECT_EQ(bc::key_slot("foo{bar}{zap}"), bc::key_slot("bar"));
  EXPECT_EQ(bc::key_slot("foo{{bar}}zap"), bc::key_slot("{bar"));
  EXPECT_EQ(bc::key_slot("foo{}{bar}"), bc::crc16("foo{}{bar}") % 16384);  // an empty tag hashes the whole key
  EXPECT_EQ(bc::key_slot("foo{bar"), bc::crc16("foo{bar") % 16384);
}

TEST(Slots, EverySlotHasAShortTag) {
  std::set<std::string> seen;
  for (std::uint32_t slot = 0; slot < bc::slot_count; ++slot) {
    const std::string tag = bc::slot_tag(slot);
    ASSERT_FALSE(tag.empty());
    ASSERT_LE(tag.size(), 4u);
    ASSERT_EQ(bc::key_slot("x{" + tag + "}"), slot);
    seen.insert(tag);
  }
  EXPECT_EQ(seen.size(), bc::slot_count);
  // The first tags of the enumeration, which other clients may reproduce: "0" lands on its own slot.
  EXPECT_EQ(bc::slot_tag(bc::crc16("0") % 16384), "0");
}

TEST(Addresses, Parse) {
  EXPECT_EQ(bc::parse_address("127.0.0.1:7000"), (bc::node_address{"127.0.0.1", 7000}));
  EXPECT_EQ(bc::parse_address("redis.local"), (bc::node_address{"redis.local", 6379}));
  EXPECT_EQ(bc::parse_address("[::1]:7001"), (bc::node_address{"::1", 7001}));
  for (const char* bad : {"", ":7000", "host:", "host:0", "host:65536", "host:7x", "[::1"})
    EXPECT_THROW(bc::parse_address(bad), blume::invalid_argument) << bad;
}

TEST(Layout, ShardsSitOnEvenlySpacedSlots) {
  const auto l = bc::sharded_layout::plan("users:emails", 0.01, 10'000'000);
  EXPECT_EQ(l.shards, 16u);
  // 625,000 each, and five standard deviations of a binomial share: a full filter's shards stay in one layer.
  EXPECT_EQ(l.shard_capacity, 628'828u);
  const std::uint32_t first = bc::crc16("users:emails") % 16384;
  for (std::uint64_t i = 0; i < l.shards; ++i) {
    const std::string key = l.shard_key(i);
    EXPECT_EQ(key.rfind("users:emails:" + std::to_string(i) + "{", 0), 0u) << key;
    EXPECT_EQ(bc::key_slot(key), (first + i * 1024) % 16384) << key;
  }
}

TEST(Layout, ShardsStayUnderTheSizeLimit) {
  // 1e9 keys at 1%: 1.2 GB in one filter, so more than the 16 shards a small filter gets.
  const auto l = bc::sharded_layout::plan("big", 0.01, 1'000'000'000);
  EXPECT_LE(l.shard_bytes(), std::uint64_t{256} << 20);
  EXPECT_EQ(l.shards, 16u);  // 1.2 GB / 16 = 75 MB: sixteen already fit
  bc::sharded_options tight;
  tight.max_shard_bytes = 8 << 20;
  const auto t = bc::sharded_layout::plan("big", 0.01, 1'000'000'000, tight);
  EXPECT_LE(t.shard_bytes(), tight.max_shard_bytes);
  bc::sharded_options fewer = tight;
  fewer.shards = t.shards - 1;
  EXPECT_THROW(bc::sharded_layout::plan("big", 0.01, 1'000'000'000, fewer), blume::invalid_argument);
  // Beyond what one RedisBloom layer may be (2^40 bits): a thousand shards of 256 MiB.
  const auto huge = bc::sharded_layout::plan("huge", 0.01, 200'000'000'000);
  EXPECT_LE(huge.shard_bytes(), std::uint64_t{256} << 20);
  EXPECT_GT(huge.shards, 800u);
  // Fewer keys than the minimum of shards: one shard per key, never an empty one.
  EXPECT_EQ(bc::sharded_layout::plan("tiny", 0.01, 5).shards, 5u);
}

TEST(Layout, RefusesBadNamesAndParameters) {
  EXPECT_THROW(bc::sharded_layout::plan("a{b}", 0.01, 100), blume::invalid_argument);
  EXPECT_THROW(bc::sharded_layout::plan("a}", 0.01, 100), blume::invalid_argument);
  EXPECT_THROW(bc::sharded_layout::plan("", 0.01, 100), blume::invalid_argument);
  EXPECT_THROW(bc::sharded_layout::plan("a", 0, 100), blume::invalid_argument);
  EXPECT_THROW(bc::sharded_layout::plan("a", 1, 100), blume::invalid_argument);
  EXPECT_THROW(bc::sharded_layout::plan("a", 0.01, 0), blume::invalid_argument);
  bc::sharded_options many;
  many.shards = std::uint64_t{1} << 21;
  EXPECT_THROW(bc::sharded_layout::plan("a", 0.01, 100, many), blume::invalid_argument);
}

TEST(Layout, MetaFieldsRoundTripAndRefuseDamage) {
  bc::sharded_options o;
  o.expansion = 4;
  const auto l = bc::sharded_layout::plan("users", 0.001, 123'457, o);
  std::map<std::string, std::string> fields;
  for (const auto& [k, v] : l.fields()) fields[k] = v;
  const auto back = bc::sharded_layout::from_fields("users", fields);
  EXPECT_EQ(back.shards, l.shards);
  EXPECT_EQ(back.capacity, l.capacity);
  EXPECT_EQ(back.shard_capacity, l.shard_capacity);
  EXPECT_EQ(back.error_rate, l.error_rate);
  EXPECT_EQ(back.expansion, 4u);
  EXPECT_EQ(back.seed, l.seed);
  EXPECT_EQ(back.tags, l.tags);
  auto damaged = [&](const char* field, const char* value) {
    auto f = fields;
    if (value == nullptr) {
      f.erase(field);
    } else {
      f[field] = value;
    }
    return f;
  };
  const std::vector<std::pair<const char*, const char*>> cases = {{"format", "blume-sharded-bloom/2"},
                                                                  {"format", nullptr},
                                                                  {"shards", "0"},
                                                                  {"shards", "17"},
                                                                  {"shards", "9999999999"},
                                                                  {"shards", "x"},
                                                                  {"capacity", "0"},
                                                                  {"shard_capacity", "1"},
                                                                  {"error_rate", "1.5"},
                                                                  {"error_rate", "abc"},
                                                                  {"error_rate", nullptr},
                                                                  {"nonscaling", "2"},
                                                                  {"tags", "a b"},
                                                                  {"tags", nullptr},
                                                                  {"seed", "-1"},
                                                                  {"expansion", "0"}};
  for (const auto& [field, value] : cases)
    EXPECT_THROW(bc::sharded_layout::from_fields("users", damaged(field, value)), blume::format_error)
        << field << "=" << (value ? value : "(missing)");
}

TEST(Layout, ShardChoiceIsTheDigestsLowWordScaled) {
  const auto l = bc::sharded_layout::plan("users", 0.01, 1'000'000);
  std::vector<std::uint64_t> counts(l.shards);
  const int n = slow_build ? 160'000 : 1'600'000;  // the bound below follows n
  for (int i = 0; i < n; ++i) {
    const std::string key = "user" + std::to_string(i) + "@example.com";
    const std::uint64_t s = l.shard_of(key);
    const std::uint64_t low = blume::hash_key(blume::xxh3_hasher(l.seed), key).low;
    ASSERT_EQ(s, blume::reduce(low, l.shards));
    ++counts[s];
  }
  // Each count is binomial(n, 1/16): within 5 standard deviations of n/16.
  const double mean = n / 16.0, sd = std::sqrt(mean * 15 / 16);
  for (const std::uint64_t c : counts) EXPECT_NEAR(static_cast<double>(c), mean, 5 * sd);
}

TEST(Rates, ChainModelFillsLayersInTurn) {
  const auto one = blume::redisbloom_layer_geometry(1000, 0.005);  // a scaling chain's first layer: half the rate
  EXPECT_NEAR(blume::redisbloom_chain_fpr(1000, 0.01, 2, true, 1000),
              blume::math::bloom_fpr(1000, static_cast<double>(one.bits()), one.hashes()), 1e-15);
  const auto two = blume::redisbloom_layer_geometry(2000, 0.0025);
  const double both = 1 - (1 - blume::math::bloom_fpr(1000, static_cast<double>(one.bits()), one.hashes())) *
                              (1 - blume::math::bloom_fpr(500, static_cast<double>(two.bits()), two.hashes()));
  EXPECT_NEAR(blume::redisbloom_chain_fpr(1000, 0.01, 2, true, 1500), both, 1e-15);
  const auto flat = blume::redisbloom_layer_geometry(1000, 0.01);
  EXPECT_NEAR(blume::redisbloom_chain_fpr(1000, 0.01, 2, false, 1000),
              blume::math::bloom_fpr(1000, static_cast<double>(flat.bits()), flat.hashes()), 1e-15);
  EXPECT_EQ(blume::redisbloom_chain_fpr(1000, 0.01, 2, true, 0), 0.0);
}
