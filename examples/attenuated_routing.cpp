// SPDX-License-Identifier: Apache-2.0
// Service discovery with attenuated Bloom filters (Rhea & Kubiatowicz 2002): each node keeps D filters,
// level 0 for the services it offers and level i for those offered i hops away, learnt from its
// neighbours. A query walks towards the neighbour that knows the service at the smallest level.
//
// The network:      n4 --- n1 --- n2 --- n3       n3 offers "print", n5 offers "scan"
//                    |
//                   n5
#include <blume/blume.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

using filter = blume::attenuated_bloom_filter<>;

int main() {
  constexpr std::uint32_t depth = 3;
  const std::map<std::string, std::vector<std::string>> links = {
      {"n1", {"n2", "n4"}}, {"n2", {"n1", "n3"}}, {"n3", {"n2"}}, {"n4", {"n1", "n5"}}, {"n5", {"n4"}}};
  const std::map<std::string, std::vector<std::string>> offers = {{"n3", {"print"}}, {"n5", {"scan"}}};

  // Level 0: each node's own services.
  std::map<std::string, filter> local;
  for (const auto& [node, neighbours] : links) {
    filter f(100, 0.001, depth);  // each level sized for 100 services at 0.1%
    if (auto it = offers.find(node); it != offers.end())
      for (const std::string& service : it->second) f.insert(service);
    local.emplace(node, f);
  }
  // depth − 1 rounds of a distance-vector protocol: every node rebuilds its levels from its own services
  // and its neighbours' filters of the round before.
  std::map<std::string, filter> nodes = local;
  for (std::uint32_t round = 1; round < depth; ++round) {
    std::map<std::string, filter> next = local;
    for (const auto& [node, neighbours] : links)
      for (const std::string& n : neighbours) next.at(node).absorb(nodes.at(n));
    nodes = std::move(next);
  }

  const auto level_text = [](std::optional<std::uint32_t> level) {
    return level ? "level " + std::to_string(*level) : std::string("not known");
  };
  std::printf("Where each node knows \"print\" from (level i: i hops away):\n");
  for (const auto& [node, f] : nodes) {
    std::printf("  %s:", node.c_str());
    for (std::uint32_t i = 0; i < depth; ++i) std::printf("  L%u %s", i, f.level(i).contains("print") ? "yes" : "no ");
    std::printf("   nearest: %s\n", level_text(f.nearest("print")).c_str());
  }
  std::printf(
      "(n3's level 2 is its own service come back through n2: a level holds every walk of its length,\n"
      " so the smallest level that holds a service is the distance that counts.)\n");

  // The walk: stop where level 0 holds the service, else go to the neighbour that knows it nearest.
  std::printf("\nn1 looks for \"print\":\n");
  std::string at = "n1";
  for (std::uint32_t hop = 0; hop <= depth; ++hop) {
    if (nodes.at(at).contains("print")) {
      std::printf("  %s offers \"print\": found after %u hops\n", at.c_str(), hop);
      return 0;
    }
    std::optional<std::uint32_t> best;
    std::string next;
    for (const std::string& n : links.at(at)) {
      const auto level = nodes.at(n).nearest("print");
      std::printf("  %s asks %s: %s\n", at.c_str(), n.c_str(), level_text(level).c_str());
      if (level && (!best || *level < *best)) {
        best = level;
        next = n;
      }
    }
    if (!best) break;
    std::printf("  %s forwards the query to %s\n", at.c_str(), next.c_str());
    at = next;
  }
  std::printf("  not found\n");
  return 1;
}
