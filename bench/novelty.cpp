// SPDX-License-Identifier: Apache-2.0
// blume_novelty_bench: the fruit fly's novelty filter (kinds/novelty_filter.hpp) against a classic Bloom filter of
// exact hashes of the inputs, which cannot see similarity, and against the exact nearest-neighbour distance, the
// expensive reference: the quality of their novelty scores (the area under the ROC curve of novel against
// familiar inputs), their memory and their time, on synthetic clusters and, given --digits FILE, on a real data set
// (scikit-learn's handwritten digits, written out as CSV by scripts/bench-report.sh). Then the filter's distance
// and recovery curves against the paper's rules. Prints markdown (docs/benchmarks.md, "Novelty").
//
//   blume_novelty_bench [--digits FILE] [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "blume/blume.hpp"

namespace {

using namespace blume;
using clock_type = std::chrono::steady_clock;
using rows = std::vector<std::vector<double>>;

double ns_since(clock_type::time_point t0, std::size_t n) {
  return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / static_cast<double>(n);
}

/// The area under the ROC curve of `novel` scores against `familiar` ones: the chance that a novel input scores
/// above a familiar one, ties counting half (the Mann–Whitney statistic).
double auc(std::vector<double> novel, std::vector<double> familiar) {
  std::sort(familiar.begin(), familiar.end());
  double wins = 0;
  for (const double v : novel) {
    const auto below = std::lower_bound(familiar.begin(), familiar.end(), v) - familiar.begin();
    const auto equal = std::upper_bound(familiar.begin(), familiar.end(), v) - familiar.begin() - below;
    wins += static_cast<double>(below) + 0.5 * static_cast<double>(equal);
  }
  return wins / (static_cast<double>(novel.size()) * static_cast<double>(familiar.size()));
}

/// One method's row: its scores for the two query sets, its memory, its time per observation and per query.
struct result {
  std::string method;
  double auc = 0;
  std::size_t bytes = 0;
  double observe_ns = 0, query_ns = 0;
};

struct task {
  std::string name;
  rows observed, familiar, novel;
};

result run_fly(const std::string& label, const task& t, novelty_geometry g, novelty_rules r) {
  novelty_filter f(g, r);
  auto t0 = clock_type::now();
  for (const auto& x : t.observed) f.observe(x);
  result out;
  out.method = label;
  out.observe_ns = ns_since(t0, t.observed.size());
  std::vector<double> novel, familiar;
  t0 = clock_type::now();
  for (const auto& x : t.novel) novel.push_back(f.novelty(x));
  for (const auto& x : t.familiar) familiar.push_back(f.novelty(x));
  out.query_ns = ns_since(t0, t.novel.size() + t.familiar.size());
  out.auc = auc(novel, familiar);
  out.bytes = f.size_in_bytes();
  return out;
}

std::string_view bytes_of(const std::vector<double>& x) {
  return {reinterpret_cast<const char*>(x.data()), x.size() * sizeof(double)};
}

result run_bloom(const task& t) {
  bloom_filter<> f(t.observed.size(), 0.01);
  auto t0 = clock_type::now();
  for (const auto& x : t.observed) f.insert(bytes_of(x));
  result out;
  out.method = "classic Bloom filter of exact hashes (1%)";
  out.observe_ns = ns_since(t0, t.observed.size());
  std::vector<double> novel, familiar;
  t0 = clock_type::now();
  for (const auto& x : t.novel) novel.push_back(f.contains(bytes_of(x)) ? 0.0 : 1.0);
  for (const auto& x : t.familiar) familiar.push_back(f.contains(bytes_of(x)) ? 0.0 : 1.0);
  out.query_ns = ns_since(t0, t.novel.size() + t.familiar.size());
  out.auc = auc(novel, familiar);
  out.bytes = f.size_in_bytes();
  return out;
}

result run_nearest(const task& t) {
  const std::size_t d = t.observed.front().size();
  std::vector<double> stored;
  auto t0 = clock_type::now();
  for (const auto& x : t.observed) stored.insert(stored.end(), x.begin(), x.end());
  result out;
  out.method = "exact nearest neighbour (distance)";
  out.observe_ns = ns_since(t0, t.observed.size());
  const auto nearest = [&](const std::vector<double>& x) {
    double best = INFINITY;
    for (std::size_t i = 0; i < stored.size(); i += d) {
      double s = 0;
      for (std::size_t j = 0; j < d; ++j) s += (stored[i + j] - x[j]) * (stored[i + j] - x[j]);
      best = std::min(best, s);
    }
    return std::sqrt(best);
  };
  std::vector<double> novel, familiar;
  t0 = clock_type::now();
  for (const auto& x : t.novel) novel.push_back(nearest(x));
  for (const auto& x : t.familiar) familiar.push_back(nearest(x));
  out.query_ns = ns_since(t0, t.novel.size() + t.familiar.size());
  out.auc = auc(novel, familiar);
  out.bytes = stored.size() * sizeof(double);
  return out;
}

std::string human(std::size_t bytes) {
  char text[32];
  if (bytes >= (1u << 20)) std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1u << 20));
  else std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  return text;
}

std::string time_text(double ns) {
  char text[32];
  if (ns >= 1e6) std::snprintf(text, sizeof text, "%.2f ms", ns / 1e6);
  else if (ns >= 1e3) std::snprintf(text, sizeof text, "%.1f µs", ns / 1e3);
  else std::snprintf(text, sizeof text, "%.0f ns", ns);
  return text;
}

void print_task(const task& t, std::uint32_t dim) {
  std::printf("**%s**: %zu observed inputs of %u values; %zu familiar and %zu novel queries.\n\n", t.name.c_str(),
              t.observed.size(), dim, t.familiar.size(), t.novel.size());
  std::printf("| method | AUC, novel vs familiar | memory | per observation | per query |\n|---|--:|--:|--:|--:|\n");
  const novelty_geometry g{dim};
  std::vector<result> results{run_fly("fly, δ = 0.4 (m = 2000, k = 100)", t, g, {0.4, 0}),
                              run_fly("fly, binary δ = 0 (m = 2000, k = 100)", t, g, {0, 0}),
                              run_fly("fly, δ = 0.4, m = 20000, k = 200", t, {dim, 20000, 6, 200}, {0.4, 0}),
                              run_bloom(t), run_nearest(t)};
  for (const auto& r : results)
    std::printf("| %s | %.3f | %s | %s | %s |\n", r.method.c_str(), r.auc, human(r.bytes).c_str(),
                time_text(r.observe_ns).c_str(), time_text(r.query_ns).c_str());
  std::printf("\n");
  std::fflush(stdout);
}

std::vector<double> around(const std::vector<double>& centre, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> x = centre;
  for (double& v : x) v += noise(rng);
  return x;
}

/// Clusters in [0, 1)^50: inputs are a centre plus Gaussian noise of deviation 0.05 on each value. Observed:
/// `per` inputs of each of the first `clusters` centres. Exact repeats: the familiar queries are observed inputs
/// themselves; near repeats: fresh inputs of the observed clusters. Novel: fresh inputs of as many other clusters.
std::pair<task, task> cluster_tasks(std::size_t clusters, std::size_t per, std::size_t queries) {
  std::mt19937_64 rng(2018);
  std::uniform_real_distribution<double> u(0, 1);
  rows centres(2 * clusters, std::vector<double>(50));
  for (auto& c : centres)
    for (double& v : c) v = u(rng);
  task exact, near;
  exact.name = "Clusters, exact repeats";
  near.name = "Clusters, near repeats";
  for (std::size_t c = 0; c < clusters; ++c)
    for (std::size_t i = 0; i < per; ++i) exact.observed.push_back(around(centres[c], 0.05, rng));
  near.observed = exact.observed;
  for (std::size_t q = 0; q < queries; ++q) {
    exact.familiar.push_back(exact.observed[rng() % exact.observed.size()]);
    near.familiar.push_back(around(centres[rng() % clusters], 0.05, rng));
    const auto novel = around(centres[clusters + rng() % clusters], 0.05, rng);
    exact.novel.push_back(novel);
    near.novel.push_back(novel);
  }
  return {exact, near};
}

/// scikit-learn's digits as CSV: a label, then 64 pixel values (0 … 16), a row per image. Observed: half of the
/// images of digits 0–4; familiar: the other half; novel: the images of 5–9.
task digits_task(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw io_error("cannot read " + path);
  task t;
  t.name = "Handwritten digits (scikit-learn's 1,797 images of 8×8 pixels), new classes";
  std::string line;
  std::size_t seen = 0;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string cell;
    std::getline(fields, cell, ',');
    const int label = std::stoi(cell);
    std::vector<double> x;
    while (std::getline(fields, cell, ',')) x.push_back(std::stod(cell));
    if (x.size() != 64) throw invalid_argument(path + ": a row of " + std::to_string(x.size()) + " pixels");
    if (label >= 5) t.novel.push_back(std::move(x));
    else if (seen++ % 2 == 0) t.observed.push_back(std::move(x));
    else t.familiar.push_back(std::move(x));
  }
  if (t.observed.empty() || t.novel.empty()) throw invalid_argument(path + ": no digits");
  return t;
}

void distance_curve(int trials) {
  std::printf(
      "**Distance.** One input observed (binary rule), then the mean novelty of perturbed copies (Gaussian "
      "noise of deviation σ on each of 50 values in [0, 1)), over %d inputs; the rule: the share of the "
      "tag the copy does not share.\n\n",
      trials);
  std::printf("| σ | mean novelty | mean share of the tag not shared |\n|--:|--:|--:|\n");
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(0, 1);
  for (const double sigma : {0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0}) {
    double sum = 0, rule = 0;
    for (int t = 0; t < trials; ++t) {
      novelty_filter f(novelty_geometry{50}, novelty_rules{0, 0}, 1000 + static_cast<std::uint64_t>(t));
      std::vector<double> x(50);
      for (double& v : x) v = u(rng);
      f.observe(x);
      const auto y = around(x, sigma, rng);
      sum += f.novelty(y);
      const auto a = f.tag(x), b = f.tag(y);
      std::vector<std::uint32_t> both;
      std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
      rule += 1 - static_cast<double>(both.size()) / f.tag_size();
    }
    std::printf("| %g | %.4f | %.4f |\n", sigma, sum / trials, rule / trials);
  }
  std::printf("\n");
}

void recovery_curve() {
  std::printf(
      "**Time.** One input observed under the default rules (δ = 0.4, ε = 0.01), then its novelty after t "
      "further steps, against the rule 1 − (1 − δ)(1 − ε)^t.\n\n");
  std::printf("| t | novelty | rule |\n|--:|--:|--:|\n");
  novelty_filter f(novelty_geometry{50});
  std::vector<double> x(50);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 50) / 50;
  f.observe(x);
  std::uint64_t t = 0;
  for (const std::uint64_t at : {0, 1, 10, 30, 69, 100, 200, 300, 500, 1000}) {
    f.elapse(at - t);
    t = at;
    std::printf("| %llu | %.4f | %.4f |\n", static_cast<unsigned long long>(t), f.novelty(x),
                1 - 0.6 * std::pow(0.99, static_cast<double>(t)));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string digits;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--digits" && i + 1 < argc) digits = argv[++i];
    else if (a == "--quick") quick = true;
    else {
      std::fprintf(stderr, "usage: blume_novelty_bench [--digits FILE] [--quick]\n");
      return 2;
    }
  }
  try {
    const auto [exact, near] = quick ? cluster_tasks(20, 5, 200) : cluster_tasks(100, 10, 2000);
    print_task(exact, 50);
    print_task(near, 50);
    if (!digits.empty()) print_task(digits_task(digits), 64);
    distance_curve(quick ? 50 : 1000);
    recovery_curve();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "blume_novelty_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
