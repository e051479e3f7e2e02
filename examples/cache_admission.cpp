// SPDX-License-Identifier: Apache-2.0
// Cache admission with a doorkeeper: an LRU cache admits an object only on its second miss within a
// window, so "one-hit wonders" (objects requested once, the bulk of a heavy-tailed trace) never cost a
// cache write nor evict something useful (Maggs & Sitaraman 2015; TinyLFU's doorkeeper, Einziger et al. 2017).
//
// The trace: Zipf-distributed requests (exponent 0.9, a common fit for web and CDN traces) over
// `objects` objects, from a fixed seed, so every run and every platform sees the same requests.
//
//   cache_admission [requests] [objects]        10,000,000 requests over 1,000,000 objects by default
//
// It exits non-zero if a check fails: the fast LRU must agree with a plain std::list one, and the filter
// must not admit objects on their first request more often than its planned false-positive rate allows.
#include <blume/blume.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

constexpr double zipf_exponent = 0.9;
constexpr std::uint64_t trace_seed = 42;
constexpr double doorkeeper_fpr = 0.01;
// The doorkeeper remembers the last (window_factor × capacity) misses: as many objects as the cache holds.
// An object that misses twice within that span comes back faster than LRU turns the cache over, so it has
// a fair chance of a hit once admitted. Longer windows admit more objects that LRU evicts before they
// return: at 10M requests, windows of 2, 4 and 8 × capacity each cost hit rate and writes at every cache
// size. Shorter ones save more writes still on a trace as stationary as this one (at half the window the
// hit rate rises for the small caches and falls for the large), but on real traces, whose popular objects
// change, they keep newcomers out longer.
constexpr std::uint64_t window_factor = 1;

// The doorkeeper forgets, so that "second request" means "second request lately": a filter that only
// grows would, after a while, hold nearly every object and admit everything. Of the kinds that forget,
// the aging filter has the sharp window this policy needs: an object among the last w/2 misses is always
// found and one older than w never is. A stable filter forgets at random (an object seen a moment ago may
// be gone), and a plain filter cleared every w misses (TinyLFU's reset) forgets everything at once, so
// right after each reset it turns away every object, popular ones included.
using doorkeeper = blume::aging_bloom_filter<>;
// Rotation is by count only (no time window), so one fixed instant serves as the clock.
const doorkeeper::time_point epoch{};

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Walker's alias method (Vose's construction): one random number per request, whatever the object count,
// where an inverse-CDF search would cost ~20 cache misses each.
std::vector<std::uint32_t> zipf_trace(std::uint64_t requests, std::uint32_t objects, double s, std::uint64_t seed) {
  std::vector<double> p(objects);
  double sum = 0;
  for (std::uint32_t i = 0; i < objects; ++i) sum += p[i] = std::pow(static_cast<double>(i) + 1, -s);
  std::vector<std::uint32_t> small, large, alias(objects);
  std::vector<std::uint64_t> threshold(objects);  // keep object i when the coin (32 bits) is below this
  for (std::uint32_t i = 0; i < objects; ++i) {
    p[i] *= objects / sum;
    (p[i] < 1 ? small : large).push_back(i);
  }
  while (!small.empty() && !large.empty()) {
    const std::uint32_t l = small.back(), g = large.back();
    small.pop_back();
    threshold[l] = static_cast<std::uint64_t>(std::ldexp(p[l], 32));
    alias[l] = g;
    p[g] -= 1 - p[l];
    if (p[g] < 1) {
      large.pop_back();
      small.push_back(g);
    }
  }
  // What is left has probability 1 up to rounding.
  for (std::uint32_t i : small) threshold[i] = std::uint64_t{1} << 32;
  for (std::uint32_t i : large) threshold[i] = std::uint64_t{1} << 32;

  std::vector<std::uint32_t> trace(requests);
  std::uint64_t state = seed;
  for (auto& r : trace) {
    const std::uint64_t x = splitmix64(state);
    const auto i = static_cast<std::uint32_t>(((x >> 32) * objects) >> 32);
    r = (x & 0xffffffffULL) < threshold[i] ? i : alias[i];
  }
  return trace;
}

// An LRU over object ids 0 … objects−1: a circular doubly linked list threaded through two arrays indexed
// by id, with slot `objects` as its head, so a request costs a few array writes and no allocation.
class lru_cache {
 public:
  lru_cache(std::uint32_t objects, std::uint32_t capacity)
      : next_(objects + std::size_t{1}, absent), prev_(objects + std::size_t{1}, absent), head_(objects),
        capacity_(capacity) {
    next_[head_] = prev_[head_] = head_;
  }
  /// A hit moves the object to the front.
  bool touch(std::uint32_t x) {
    if (next_[x] == absent) return false;
    unlink(x);
    push_front(x);
    return true;
  }
  void insert(std::uint32_t x) {
    if (size_ == capacity_) {
      const std::uint32_t last = prev_[head_];
      unlink(last);
      next_[last] = absent;
      --size_;
    }
    push_front(x);
    ++size_;
  }

 private:
  static constexpr std::uint32_t absent = UINT32_MAX;
  void unlink(std::uint32_t x) {
    next_[prev_[x]] = next_[x];
    prev_[next_[x]] = prev_[x];
  }
  void push_front(std::uint32_t x) {
    next_[x] = next_[head_];
    prev_[x] = head_;
    prev_[next_[head_]] = x;
    next_[head_] = x;
  }
  std::vector<std::uint32_t> next_, prev_;
  std::uint32_t head_, capacity_, size_ = 0;
};

// The textbook LRU, to check the fast one against.
class reference_lru {
 public:
  reference_lru(std::uint32_t, std::uint32_t capacity) : capacity_(capacity) {}
  bool touch(std::uint32_t x) {
    const auto it = where_.find(x);
    if (it == where_.end()) return false;
    order_.splice(order_.begin(), order_, it->second);
    return true;
  }
  void insert(std::uint32_t x) {
    if (order_.size() == capacity_) {
      where_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(x);
    where_[x] = order_.begin();
  }

 private:
  std::list<std::uint32_t> order_;
  std::unordered_map<std::uint32_t, std::list<std::uint32_t>::iterator> where_;
  std::uint32_t capacity_;
};

struct result {
  std::uint64_t hits = 0;
  std::uint64_t writes = 0;
  std::uint64_t first_requests = 0;    // objects never requested before
  std::uint64_t false_admissions = 0;  // ... that the doorkeeper let in all the same
  std::size_t filter_bytes = 0;
  double seconds = 0;
};

// window == 0: no doorkeeper, every miss is written to the cache.
template <class Cache>
result simulate(std::span<const std::uint32_t> trace, std::uint32_t objects, std::uint32_t capacity,
                std::uint64_t window) {
  const auto start = std::chrono::steady_clock::now();
  Cache cache(objects, capacity);
  std::optional<doorkeeper> door;
  if (window != 0)
    door.emplace(window, doorkeeper_fpr, std::chrono::nanoseconds{0}, doorkeeper::hasher_type::default_seed, epoch);
  std::vector<bool> seen(objects);
  result r;
  for (const std::uint32_t x : trace) {
    if (cache.touch(x)) {
      ++r.hits;
      continue;
    }
    const bool first = !seen[x];
    seen[x] = true;
    r.first_requests += first;
    if (door) {
      // insert() answers whether the object was new to the window: then it is only remembered.
      if (door->insert(std::uint64_t{x}, epoch)) continue;
      r.false_admissions += first;
    }
    cache.insert(x);
    ++r.writes;
  }
  if (door) r.filter_bytes = door->size_in_bytes();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::uint64_t parse_count(const char* text, const char* what) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) {
    std::fprintf(stderr, "cache_admission: %s must be a positive integer, got \"%s\"\n", what, text);
    std::exit(2);
  }
  return v;
}

std::string kib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 3) {
    std::fprintf(stderr, "usage: cache_admission [requests] [objects]\n");
    return 2;
  }
  const std::uint64_t requests = argc > 1 ? parse_count(argv[1], "requests") : 10'000'000;
  const std::uint64_t object_count = argc > 2 ? parse_count(argv[2], "objects") : 1'000'000;
  if (object_count >= UINT32_MAX || object_count < 100) {
    std::fprintf(stderr, "cache_admission: objects must be between 100 and 2^32 - 2\n");
    return 2;
  }
  const auto objects = static_cast<std::uint32_t>(object_count);

  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::uint32_t> trace = zipf_trace(requests, objects, zipf_exponent, trace_seed);
  const double trace_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::uint32_t> times(objects);
  for (const std::uint32_t x : trace) ++times[x];
  const auto distinct = static_cast<std::uint64_t>(std::ranges::count_if(times, [](std::uint32_t t) { return t > 0; }));
  const auto once = static_cast<std::uint64_t>(std::ranges::count(times, 1u));
  std::printf("Zipf trace: %llu requests over %u objects, exponent %.2f, seed %llu (%.2f s)\n",
              static_cast<unsigned long long>(requests), objects, zipf_exponent,
              static_cast<unsigned long long>(trace_seed), trace_seconds);
  std::printf("objects requested: %llu; requested only once (one-hit wonders): %llu (%.1f%% of them)\n",
              static_cast<unsigned long long>(distinct), static_cast<unsigned long long>(once),
              100.0 * static_cast<double>(once) / static_cast<double>(distinct));
  std::printf("doorkeeper: aging Bloom filter over the last %llu x capacity misses, planned fpr %.0f%%\n\n",
              static_cast<unsigned long long>(window_factor), 100 * doorkeeper_fpr);

  std::printf("%-8s %9s  %-10s %9s %13s %13s %12s %11s %7s\n", "cache", "objects", "admission", "hit rate",
              "cache writes", "writes saved", "false adm.", "filter", "time");
  bool ok = true;
  std::uint64_t checked = 0;
  for (const double share : {0.001, 0.01, 0.05, 0.10}) {
    const auto capacity = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::llround(share * objects)));
    const std::uint64_t window = std::max<std::uint64_t>(2, window_factor * capacity);
    const result plain = simulate<lru_cache>(trace, objects, capacity, 0);
    const result gated = simulate<lru_cache>(trace, objects, capacity, window);
    const auto rate = [&](const result& r) {
      return 100.0 * static_cast<double>(r.hits) / static_cast<double>(requests);
    };
    char label[16];
    std::snprintf(label, sizeof label, "%.1f%%", 100 * share);
    std::printf("%-8s %9u  %-10s %8.2f%% %13llu %13s %12s %11s %6.2fs\n", label, capacity, "always", rate(plain),
                static_cast<unsigned long long>(plain.writes), "-", "-", "-", plain.seconds);
    const double saved = 100.0 * (1 - static_cast<double>(gated.writes) / static_cast<double>(plain.writes));
    const double false_rate = static_cast<double>(gated.false_admissions) / static_cast<double>(gated.first_requests);
    char saved_text[16], false_text[16];
    std::snprintf(saved_text, sizeof saved_text, "%.1f%%", saved);
    std::snprintf(false_text, sizeof false_text, "%.2f%%", 100 * false_rate);
    std::printf("%-8s %9s  %-10s %8.2f%% %13llu %13s %12s %11s %6.2fs\n", "", "", "doorkeeper", rate(gated),
                static_cast<unsigned long long>(gated.writes), saved_text, false_text, kib(gated.filter_bytes).c_str(),
                gated.seconds);

    // A first request can only be admitted through a false positive. The aging filter's rate is at most
    // about its planned one; twice that leaves room for chance once there are a thousand first requests.
    if (gated.first_requests >= 1000 && false_rate > 2 * doorkeeper_fpr) {
      std::printf("FAILED: %.2f%% of first requests admitted, planned %.2f%%\n", 100 * false_rate,
                  100 * doorkeeper_fpr);
      ok = false;
    }
    // The reference LRU is slow, so it replays a prefix of the trace.
    const std::span<const std::uint32_t> prefix(trace.data(), std::min<std::size_t>(trace.size(), 1'000'000));
    for (const std::uint64_t w : {std::uint64_t{0}, window}) {
      const result fast = simulate<lru_cache>(prefix, objects, capacity, w);
      const result slow = simulate<reference_lru>(prefix, objects, capacity, w);
      if (fast.hits != slow.hits || fast.writes != slow.writes) {
        std::printf("FAILED: the LRU disagrees with the reference at capacity %u%s\n", capacity,
                    w ? " with the doorkeeper" : "");
        ok = false;
      }
    }
    checked = prefix.size();
  }
  if (!ok) return 1;
  std::printf(
      "\nchecks passed: the LRU matches a std::list LRU on the first %llu requests, and false admissions stay "
      "within 2 x the planned rate\n",
      static_cast<unsigned long long>(checked));
  return 0;
}
