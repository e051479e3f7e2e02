// SPDX-License-Identifier: Apache-2.0
// A Bloom filter in front of a database: only addresses the filter calls "maybe" cost a query.
#include <blume/blume.hpp>

#include <cstdio>
#include <string>
#include <unordered_set>

int main() {
  // Stand-in for the users table.
  std::unordered_set<std::string> database = {"anna@example.com", "ben@example.org", "carla@example.net"};

  // Size the filter for the expected number of users and the false-positive rate we accept.
  const blume::filter_plan plan = blume::plan_for(1'000'000, 0.01, blume::split_block_bloom_filter<>::kind);
  std::printf("filter: %llu bits, k = %u, %.2f bits per key, predicted fpr %.4f\n",
              static_cast<unsigned long long>(plan.bits), plan.hashes, plan.bits_per_key(), plan.predicted_fpr);
  blume::split_block_bloom_filter<> registered(plan);
  for (const std::string& email : database) registered.insert(email);

  int queries = 0;
  auto is_taken = [&](const std::string& email) {
    if (!registered.contains(email)) return false;  // certain: no query needed
    ++queries;                                      // "maybe": ask the database
    return database.count(email) != 0;
  };

  for (const char* email : {"anna@example.com", "dmitri@example.com", "emma@example.org"})
    std::printf("%-22s %s\n", email, is_taken(email) ? "taken" : "available");
  std::printf("database queries: %d of 3\n", queries);

  // Persist it; reopen it later without copying.
  blume::save(registered, "registered.blume");
  auto reopened = blume::map_file<blume::split_block_bloom_filter<>>("registered.blume");
  std::printf("reopened: contains anna? %s\n", reopened.contains("anna@example.com") ? "maybe" : "no");
  return reopened == registered ? 0 : 1;
}
