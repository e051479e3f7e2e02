// SPDX-License-Identifier: Apache-2.0
// A state search with a filter as its visited set. Breadth-first over every board of the R×C sliding-tile
// puzzle reachable from the solved one (exactly (RC)!/2 of them: half the permutations, Johnson & Story
// 1879), with four visited sets at the same memory per state: an exact hash set, a classic Bloom filter at
// its best k (SPIN's bitstate hashing), a split-block filter and a hash-compaction table. A lossy set may
// answer "seen" for a new board: that board is omitted (not expanded), and so is what only it leads to.
//
//   explore [--rows R] [--cols C] [--bits B,B,...] [--sets exact,bloom,split-block,compaction] [--no-check]
//
// For each set and budget it prints the boards reached and missed, the memory and the time of the search, and
// (unless --no-check) the boards omitted directly, counted against an exact oracle (a bit per permutation
// rank, kept during the same search, so its work is in every row's time alike), beside the number the set's
// own model expects: ∫₀ⁿ fpr(x) dx over the boards it took in. It exits 1 when a check fails: the exact set
// must reach every board, and every lossy set's omissions must lie within 3.29 standard deviations (Poisson)
// plus 10% of its model.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "blume/blume.hpp"

namespace {

// ---- the puzzle -------------------------------------------------------------------------------------------

/// A board: cell i's tile in bits 4i … 4i + 3, tile 0 the blank.
using board = std::uint64_t;

struct puzzle {
  int rows, cols, cells;

  board solved() const {
    board b = 0;
    for (int i = 0; i < cells; ++i) b |= static_cast<board>(i) << (4 * i);
    return b;
  }
  static int tile(board b, int i) { return static_cast<int>(b >> (4 * i) & 15); }
  int blank(board b) const {
    for (int i = 0;; ++i)
      if (tile(b, i) == 0) return i;
  }
  /// Calls fn(next) for each board one slide away.
  template <class Fn>
  void for_each_move(board b, Fn&& fn) const {
    const int z = blank(b), r = z / cols, c = z % cols;
    const auto slide = [&](int from) {
      const auto t = static_cast<board>(tile(b, from));
      fn(b ^ (t << (4 * z)) ^ (t << (4 * from)));
    };
    if (c > 0) slide(z - 1);
    if (c < cols - 1) slide(z + 1);
    if (r > 0) slide(z - cols);
    if (r < rows - 1) slide(z + cols);
  }
  /// The board's rank among the cells! permutations (its Lehmer code): the oracle's index. Each digit is the
  /// tile less the smaller tiles already placed, counted with one popcount.
  std::uint64_t rank(board b) const {
    std::uint64_t r = 0;
    std::uint32_t placed = 0;
    for (int i = 0; i < cells; ++i) {
      const int t = tile(b, i);
      const auto digit = static_cast<std::uint64_t>(t - std::popcount(placed & ((1u << t) - 1)));
      r = r * static_cast<std::uint64_t>(cells - i) + digit;
      placed |= 1u << t;
    }
    return r;
  }
  std::uint64_t reachable() const {  // cells! / 2
    std::uint64_t f = 1;
    for (int i = 2; i <= cells; ++i) f *= static_cast<std::uint64_t>(i);
    return f / 2;
  }
  std::uint64_t permutations() const { return reachable() * 2; }
};

std::string grouped(std::uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string mebibytes(std::uint64_t bytes) {
  char out[32];
  std::snprintf(out, sizeof out, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return out;
}

// ---- visited sets -----------------------------------------------------------------------------------------

/// The exact set: open addressing of boards + 1 (0 marks an empty slot), linear probing, at most half full.
class exact_set {
 public:
  explicit exact_set(std::uint64_t boards) : mask_(std::bit_ceil(2 * boards) - 1), slots_(mask_ + 1, 0) {}
  bool add(board b) {
    for (std::uint64_t i = blume::detail::murmur3_fmix64(b) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == b + 1) return false;
      if (slots_[i] == 0) {
        slots_[i] = b + 1;
        return true;
      }
    }
  }
  std::uint64_t bytes() const { return slots_.size() * sizeof(slots_[0]); }
  double expected_omissions(double) const { return 0; }

 private:
  std::uint64_t mask_;
  std::vector<std::uint64_t> slots_;
};

/// The new boards a visited set of kind F and geometry (bits, k) takes as seen while n boards go in, by its
/// model: ∫₀ⁿ fpr(x) dx (Simpson's rule, 256 intervals).
template <class F>
double expected_omissions(double n, std::uint64_t bits, std::uint32_t k) {
  const auto fpr = [&](double x) { return F::model_fpr(x, static_cast<double>(bits), static_cast<double>(k)); };
  constexpr int intervals = 256;
  const double h = n / intervals;
  double sum = fpr(0) + fpr(n);
  for (int i = 1; i < intervals; ++i) sum += (i % 2 ? 4 : 2) * fpr(i * h);
  return sum * h / 3;
}

/// A blume kind as the visited set, configured for a search (as Dillinger & Manolios configure both): of the
/// geometries that fit `bits`, the one whose model expects the fewest omissions over the whole search, not
/// the lowest rate at its end (which a filter's own planner minimises). For a Bloom filter that is its k; for
/// hash compaction, its signature width b in a prime number of slots ⌊bits/b⌋ that holds every board below
/// 94% load; split-block's k is fixed.
template <class F>
class filter_set {
 public:
  filter_set(std::uint64_t boards, std::uint64_t bits) : boards_(boards), bits_(bits), f_(make()) {}

  bool add(board b) {
    if constexpr (requires { f_.try_insert(b); }) {
      const blume::insert_result r = f_.try_insert(b);
      if (r == blume::insert_result::full) throw blume::error("the hash-compaction table is full");
      return r == blume::insert_result::added;
    } else {
      return f_.insert(b);  // true: it set a bit, so the board was new to it
    }
  }
  std::uint64_t bytes() const { return (f_.bits() + 7) / 8; }
  std::string geometry() const {
    if constexpr (requires { f_.signature_bits(); }) {
      return grouped(f_.slots()) + " slots of " + std::to_string(f_.signature_bits()) + " bits";
    } else {
      return "k = " + std::to_string(f_.hashes());
    }
  }
  double expected_omissions(double n) const { return ::expected_omissions<F>(n, f_.bits(), f_.hashes()); }

 private:
  F make() const {
    const auto n = static_cast<double>(boards_);
    if constexpr (F::kind == blume::compaction_filter<>::kind) {
      std::optional<F> best;
      double fewest = 0;
      for (std::uint32_t b = 1; b <= blume::compaction_max_signature_bits; ++b) {
        const std::uint64_t s = blume::detail::prime_at_most(bits_ / b);
        if (s < 2 ||
            blume::math::compaction_after(n / static_cast<double>(s), std::ldexp(1.0, static_cast<int>(b)) - 1).load >
                0.94)
          continue;
        const double e = ::expected_omissions<F>(n, s * b, b);
        if (!best || e < fewest) best = F::with_slots(s, b), fewest = e;
      }
      if (!best)
        throw blume::invalid_argument("no hash-compaction table of " + std::to_string(bits_) +
                                      " bits holds every board");
      return std::move(*best);
    } else if constexpr (F::kind == blume::bloom_filter<>::kind) {
      std::uint32_t best_k = 1;
      for (std::uint32_t k = 2; k <= 32; ++k)
        if (::expected_omissions<F>(n, bits_, k) < ::expected_omissions<F>(n, bits_, best_k)) best_k = k;
      return F::with_geometry(bits_, best_k);
    } else {
      return F(F::plan_for_bits(boards_, bits_));
    }
  }

  std::uint64_t boards_, bits_;
  F f_;
};

// ---- the search -------------------------------------------------------------------------------------------

struct outcome {
  std::uint64_t reached = 0;
  std::uint64_t omitted = 0;  // distinct boards a set answered "seen" for before they were reached
  double seconds = 0;
};

/// Breadth-first from the solved board; with an oracle, also counts the boards omitted directly.
template <class Set>
outcome search(const puzzle& p, Set& visited, bool with_oracle) {
  std::vector<bool> reached_rank, omitted_rank;
  if (with_oracle) {
    reached_rank.assign(p.permutations(), false);
    omitted_rank.assign(p.permutations(), false);
  }
  outcome o;
  const auto start = std::chrono::steady_clock::now();
  std::vector<board> layer{p.solved()}, next;
  visited.add(p.solved());
  if (with_oracle) reached_rank[p.rank(p.solved())] = true;
  o.reached = 1;
  while (!layer.empty()) {
    next.clear();
    for (const board b : layer) {
      p.for_each_move(b, [&](board n) {
        const bool added = visited.add(n);
        if (added) next.push_back(n);
        if (with_oracle) {
          const std::uint64_t r = p.rank(n);
          if (added) reached_rank[r] = true;
          else if (!reached_rank[r] && !omitted_rank[r]) omitted_rank[r] = true, ++o.omitted;
        }
      });
    }
    o.reached += next.size();
    layer.swap(next);
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "explore: %s\nusage: explore [--rows R] [--cols C] [--bits B,B,...] "
               "[--sets exact,bloom,split-block,compaction] [--no-check]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  puzzle p{3, 3, 9};
  std::vector<std::string> bits_list = {"1", "2", "4", "8", "12", "16"};
  std::vector<std::string> sets = {"exact", "bloom", "split-block", "compaction"};
  bool check = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--rows") p.rows = std::atoi(value().c_str());
    else if (a == "--cols") p.cols = std::atoi(value().c_str());
    else if (a == "--bits") bits_list = split(value());
    else if (a == "--sets") sets = split(value());
    else if (a == "--no-check") check = false;
    else usage(("unknown argument " + a).c_str());
  }
  p.cells = p.rows * p.cols;
  if (p.rows < 2 || p.cols < 2 || p.cells > 16) usage("the board is 2×2 to 16 cells");
  if (check && p.cells > 12) usage("the oracle has a bit per permutation: --no-check above 12 cells");
  const std::uint64_t total = p.reachable();
  std::printf("%d×%d sliding-tile puzzle: %s boards reachable ((%d)!/2)\n\n", p.rows, p.cols, grouped(total).c_str(),
              p.cells);
  std::printf("| visited set | bits/board | geometry | memory | reached | missed | omitted | model expects | time |\n");
  std::printf("|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
  bool ok = true;
  const auto report = [&](const std::string& name, const std::string& per_board, const std::string& geometry,
                          auto& fresh_set) {
    auto visited = fresh_set();
    const outcome o = search(p, visited, check);
    std::string omitted = "–", expected = "–";
    if (check) {
      const double e = visited.expected_omissions(static_cast<double>(o.reached + o.omitted));
      omitted = grouped(o.omitted);
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, e < 10 ? "%.2f" : "%.0f", e);
      expected = buffer;
      const double allowed = 3.29 * std::sqrt(e) + 0.1 * e + 3;
      if (std::abs(static_cast<double>(o.omitted) - e) > allowed) {
        std::printf("check failed: %s at %s bits: %llu omitted, the model expects %.1f ± %.1f\n", name.c_str(),
                    per_board.c_str(), static_cast<unsigned long long>(o.omitted), e, allowed);
        ok = false;
      }
    }
    if (o.reached > total || (name == "exact" && o.reached != total)) {
      std::printf("check failed: %s reached %llu of %llu boards\n", name.c_str(),
                  static_cast<unsigned long long>(o.reached), static_cast<unsigned long long>(total));
      ok = false;
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %.2f s |\n", name.c_str(), per_board.c_str(),
                geometry.c_str(), mebibytes(visited.bytes()).c_str(), grouped(o.reached).c_str(),
                grouped(total - o.reached).c_str(), omitted.c_str(), expected.c_str(), o.seconds);
    std::fflush(stdout);
  };
  for (const std::string& set : sets) {
    if (set == "exact") {
      auto fresh = [&] { return exact_set(total); };
      const exact_set probe(total);
      char per_board[32];
      std::snprintf(per_board, sizeof per_board, "%.0f", 8.0 * static_cast<double>(probe.bytes()) / total);
      report(set, per_board, "open addressing, ≤ 50% full", fresh);
      continue;
    }
    for (const std::string& b : bits_list) {
      const auto bits = static_cast<std::uint64_t>(std::llround(std::stod(b) * static_cast<double>(total)));
      const auto run = [&](auto type) {
        using F = typename decltype(type)::type;
        auto fresh = [&] { return filter_set<F>(total, bits); };
        report(set, b, fresh().geometry(), fresh);
      };
      if (set == "bloom") run(std::type_identity<blume::bloom_filter<>>{});
      else if (set == "split-block") run(std::type_identity<blume::split_block_bloom_filter<>>{});
      else if (set == "compaction") run(std::type_identity<blume::compaction_filter<>>{});
      else usage(("unknown set " + set).c_str());
    }
  }
  std::printf("\n%s\n", ok ? "all checks passed" : "some checks failed");
  return ok ? 0 : 1;
}
