// SPDX-License-Identifier: Apache-2.0
// blume's bit-sliced index beside SQLite FTS5 on one corpus and one set of queries, in one process.
//
//   fts5_compare CORPUS_DIR [--queries N] [--rounds R] [--seed S] [--seeds K] [--lines 1]
//
// Every file under CORPUS_DIR is a document (with --lines 1, every non-empty line is one). Both sides split
// text the same way (FTS5's ascii tokenizer, blume::for_each_term). FTS5 answers each AND query exactly,
// which is the truth: every FTS5 match must be among blume's candidates. The queries are 1, 2 and 3 terms
// drawn from the corpus's own words, rare and frequent. Times are medians of R interleaved rounds, per query.
//
// The model of false candidates is an expectation over the index's seed: on text, the documents that hold
// none of a query's terms pass or fail together, as the frequent words they share happen to fill the
// query's rows or not, so one seed's count strays from the mean far more than a binomial would. Each index
// is therefore built under K seeds, and the ratio of measured to expected false candidates is reported as
// its mean over the seeds with the 99.9% interval of that mean (Student's t on K − 1 degrees of freedom).
// It exits non-zero on a missed match, or when an interval excludes 1.
#include <sqlite3.h>
#include <blume/index/bitsliced_index.hpp>
#include <blume/io/index_format.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

struct database {
  sqlite3* db = nullptr;
  explicit database(const fs::path& path) {
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("cannot open " + path.string());
  }
  ~database() { sqlite3_close(db); }
  void exec(const std::string& sql) const {
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string why = error != nullptr ? error : "?";
      sqlite3_free(error);
      throw std::runtime_error(sql + ": " + why);
    }
  }
  std::int64_t scalar(const std::string& sql) const {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    std::int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
  }
};

/// An FTS5 table of the documents (rowid = document number + 1), built and sized on disk.
struct fts5_index {
  database db;
  sqlite3_stmt* match = nullptr;
  double build_seconds = 0;
  std::uint64_t bytes = 0;

  fts5_index(const fs::path& path, const std::vector<std::string>& docs, const std::string& options) : db(path) {
    const auto start = clock_type::now();
    db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
    db.exec("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='ascii'" + options + ")");
    db.exec("BEGIN");
    sqlite3_stmt* insert = nullptr;
    sqlite3_prepare_v2(db.db, "INSERT INTO docs(rowid, body) VALUES (?, ?)", -1, &insert, nullptr);
    for (std::size_t d = 0; d < docs.size(); ++d) {
      sqlite3_bind_int64(insert, 1, static_cast<sqlite3_int64>(d + 1));
      sqlite3_bind_text(insert, 2, docs[d].data(), static_cast<int>(docs[d].size()), SQLITE_STATIC);
      if (sqlite3_step(insert) != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db.db));
      sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    db.exec("COMMIT");
    db.exec("INSERT INTO docs(docs) VALUES('optimize')");  // one segment: FTS5 at its smallest and fastest
    build_seconds = seconds_since(start);
    db.exec("VACUUM");
    bytes = static_cast<std::uint64_t>(db.scalar("PRAGMA page_count") * db.scalar("PRAGMA page_size"));
    sqlite3_prepare_v2(db.db, "SELECT rowid FROM docs WHERE docs MATCH ?", -1, &match, nullptr);
  }
  ~fts5_index() { sqlite3_finalize(match); }

  /// The documents holding every term, ascending.
  std::vector<std::uint32_t> query(const std::vector<std::string>& terms) {
    std::string expression;
    for (const std::string& t : terms) expression += (expression.empty() ? "\"" : " \"") + t + "\"";
    sqlite3_bind_text(match, 1, expression.c_str(), static_cast<int>(expression.size()), SQLITE_TRANSIENT);
    std::vector<std::uint32_t> out;
    while (sqlite3_step(match) == SQLITE_ROW)
      out.push_back(static_cast<std::uint32_t>(sqlite3_column_int64(match, 0) - 1));
    sqlite3_reset(match);
    std::ranges::sort(out);
    return out;
  }
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

double percentile(std::vector<double> v, double q) {
  std::ranges::sort(v);
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

std::string thousands(std::uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

/// Student's t quantile for a two-sided 99.9% interval on `dof` degrees of freedom (1 … 30).
double t_999(std::size_t dof) {
  static constexpr double table[] = {636.62, 31.599, 12.924, 8.610, 6.869, 5.959, 5.408, 5.041, 4.781, 4.587,
                                     4.437,  4.318,  4.221,  4.140, 4.073, 4.015, 3.965, 3.922, 3.883, 3.850,
                                     3.819,  3.792,  3.768,  3.745, 3.725, 3.707, 3.690, 3.674, 3.659, 3.646};
  return table[std::clamp<std::size_t>(dof, 1, 30) - 1];
}

/// Measured over expected false candidates, seed by seed: their mean and its 99.9% interval.
struct model_check {
  std::vector<double> ratios;
  double mean() const {
    double sum = 0;
    for (double r : ratios) sum += r;
    return sum / static_cast<double>(ratios.size());
  }
  double half_width() const {
    const double m = mean();
    double squares = 0;
    for (double r : ratios) squares += (r - m) * (r - m);
    const auto k = static_cast<double>(ratios.size());
    return t_999(ratios.size() - 1) * std::sqrt(squares / (k - 1) / k);
  }
  bool holds() const { return std::abs(mean() - 1.0) <= half_width(); }
  std::string describe() const {
    char text[96];
    std::snprintf(text, sizeof text, "%.3f (%.3f to %.3f)", mean(), mean() - half_width(), mean() + half_width());
    return text;
  }
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: fts5_compare CORPUS_DIR [--queries N] [--rounds R] [--seed S] [--seeds K] [--lines 1]\n");
    return 2;
  }
  const fs::path corpus = argv[1];
  std::size_t query_count = 1200, rounds = 5, seeds = 8;
  std::uint64_t seed = 2017;
  bool lines = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const auto value = std::stoull(argv[i + 1]);
    if (flag == "--queries") query_count = value;
    else if (flag == "--rounds") rounds = std::max<std::size_t>(1, value);
    else if (flag == "--seed") seed = value;
    else if (flag == "--seeds") seeds = std::clamp<std::size_t>(value, 2, 31);
    else if (flag == "--lines") lines = value != 0;
    else throw std::runtime_error("unknown option " + flag);
  }

  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(corpus))
    if (e.is_regular_file()) files.push_back(e.path());
  std::ranges::sort(files);
  std::vector<std::string> docs, names;
  std::uint64_t text_bytes = 0;
  for (const fs::path& f : files) {
    std::string text = read_text(f);
    text_bytes += text.size();
    if (!lines) {
      docs.push_back(std::move(text));
      names.push_back(f.filename().string());
      continue;
    }
    std::istringstream in(text);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      docs.push_back(std::move(line));
      names.push_back(f.filename().string() + ":" + std::to_string(n));
    }
  }
  std::printf("corpus: %s documents (%s), %s bytes of text (%s)\n", thousands(docs.size()).c_str(),
              lines ? "non-empty lines" : "files", thousands(text_bytes).c_str(), corpus.c_str());

  // blume: build, then the file's size.
  auto start = clock_type::now();
  blume::bitsliced_builder builder;
  for (std::size_t d = 0; d < docs.size(); ++d) builder.add_text(names[d], docs[d]);
  const std::uint64_t postings = builder.postings();
  const blume::bitsliced_index index = std::move(builder).finish();
  const double blume_build = seconds_since(start);
  const std::uint64_t blume_bytes = blume::encode_index(index).size();
  const blume::bitsliced_index::memory memory = index.memory_use();

  const fs::path dir = fs::temp_directory_path() / ("blume-fts5-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct cleanup {
    fs::path dir;
    ~cleanup() { fs::remove_all(dir); }
  } remove_dir{dir};
  // FTS5 as most use it (the text kept in the table, positions indexed), and at its smallest (the index
  // alone, document ids only), which is what answers AND queries: the fair peer for the candidates.
  fts5_index fts_full(dir / "full.db", docs, "");
  fts5_index fts(dir / "lean.db", docs, ", content='', detail=none");

  // The vocabulary with document counts, for queries of rare and frequent terms.
  std::unordered_map<std::string, std::uint32_t> df;
  std::vector<std::vector<std::string>> doc_terms(docs.size());
  for (std::size_t d = 0; d < docs.size(); ++d) {
    blume::for_each_term(docs[d], [&](std::string_view t) { doc_terms[d].emplace_back(t); });
    std::ranges::sort(doc_terms[d]);
    doc_terms[d].erase(std::unique(doc_terms[d].begin(), doc_terms[d].end()), doc_terms[d].end());
    for (const std::string& t : doc_terms[d]) ++df[t];
  }
  std::vector<std::string> vocabulary;
  for (const auto& [t, n] : df) vocabulary.push_back(t);
  std::ranges::sort(vocabulary);
  std::mt19937_64 rng(seed);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  std::vector<std::vector<std::string>> queries;
  while (queries.size() < query_count) {
    const std::size_t terms = 1 + queries.size() % 3;
    std::vector<std::string> q;
    // Half the queries: terms of one document (they co-occur, so they have matches), which favours the
    // frequent; the other half: any word of the vocabulary, mostly rare ones.
    const bool from_document = (queries.size() / 3) % 2 == 0;
    const auto& source = doc_terms[rng() % docs.size()];
    if (from_document && source.empty()) continue;
    for (std::size_t i = 0; i < terms; ++i) q.push_back(from_document ? pick(source) : pick(vocabulary));
    queries.push_back(std::move(q));
  }

  // The truth, once: each query's exact matches, and the documents holding any of its terms (the model's
  // domain is the rest), from FTS5.
  std::vector<std::vector<std::uint32_t>> exact(queries.size()), holding(queries.size());
  std::uint64_t matches_total = 0;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    exact[i] = fts.query(queries[i]);
    matches_total += exact[i].size();
    for (const std::string& t : queries[i]) {
      const std::vector<std::uint32_t> h = fts.query({t});
      holding[i].insert(holding[i].end(), h.begin(), h.end());
    }
    std::ranges::sort(holding[i]);
    holding[i].erase(std::unique(holding[i].begin(), holding[i].end()), holding[i].end());
  }

  // One index against the truth: candidates, misses, and false candidates among the documents holding none
  // of the terms, measured and as the model expects them.
  struct evaluation {
    std::uint64_t candidates = 0, misses = 0;
    double none = 0, expected = 0;
  };
  auto evaluate = [&](const blume::bitsliced_index& x) {
    const blume::bitsliced_model model(x);
    evaluation e;
    for (std::size_t i = 0; i < queries.size(); ++i) {
      const std::vector<std::uint32_t> candidates = x.candidates(queries[i]);
      e.candidates += candidates.size();
      for (std::uint32_t m : exact[i]) e.misses += std::ranges::binary_search(candidates, m) ? 0 : 1;
      for (std::uint32_t c : candidates) e.none += std::ranges::binary_search(holding[i], c) ? 0 : 1;
      const std::vector<double> p = model.candidate_probability(queries[i]);
      for (double v : p) e.expected += v;
      for (std::uint32_t d : holding[i]) e.expected -= p[d];
    }
    return e;
  };
  const evaluation first = evaluate(index);
  std::uint64_t misses = first.misses;

  // Speed: each query R times on each side, interleaved; the median per query.
  std::vector<std::vector<double>> ours(queries.size()), theirs(queries.size());
  volatile std::size_t sink = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < queries.size(); ++i) {
      auto t0 = clock_type::now();
      sink = sink + index.count_candidates(queries[i]);
      ours[i].push_back(seconds_since(t0));
      t0 = clock_type::now();
      sink = sink + fts.query(queries[i]).size();
      theirs[i].push_back(seconds_since(t0));
    }
  }
  std::vector<double> ours_median, theirs_median;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    ours_median.push_back(percentile(ours[i], 0.5));
    theirs_median.push_back(percentile(theirs[i], 0.5));
  }

  std::printf("%s queries (1, 2 and 3 terms), %s postings, %zu rounds interleaved\n\n",
              thousands(queries.size()).c_str(), thousands(postings).c_str(), rounds);
  std::printf("| index | size | build | query median | query p99 | answers | of them exact matches |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| blume bit-sliced (candidates) | %.1f MiB | %.2f s | %.1f µs | %.1f µs | %s | %s |\n",
              static_cast<double>(blume_bytes) / 1048576.0, blume_build, 1e6 * percentile(ours_median, 0.5),
              1e6 * percentile(ours_median, 0.99), thousands(first.candidates).c_str(),
              thousands(matches_total).c_str());
  std::printf("| FTS5, index only (content='', detail=none) | %.1f MiB | %.2f s | %.1f µs | %.1f µs | %s | all |\n",
              static_cast<double>(fts.bytes) / 1048576.0, fts.build_seconds, 1e6 * percentile(theirs_median, 0.5),
              1e6 * percentile(theirs_median, 0.99), thousands(matches_total).c_str());
  std::printf("| FTS5, default (text and positions) | %.1f MiB | %.2f s | | | | |\n",
              static_cast<double>(fts_full.bytes) / 1048576.0, fts_full.build_seconds);
  std::printf("\nsize: blume / FTS5 index only %.2f, blume / FTS5 default %.2f; query median: FTS5 / blume %.1f×\n",
              static_cast<double>(blume_bytes) / static_cast<double>(fts.bytes),
              static_cast<double>(blume_bytes) / static_cast<double>(fts_full.bytes),
              percentile(theirs_median, 0.5) / percentile(ours_median, 0.5));
  std::printf(
      "blume memory: shared rows %.1f MiB, private rows %.1f MiB, higher-rank rows %.1f MiB, term table %.1f MiB, "
      "names %.1f MiB, %zu shards\n",
      static_cast<double>(memory.shared) / 1048576.0, static_cast<double>(memory.private_rows) / 1048576.0,
      static_cast<double>(memory.higher) / 1048576.0, static_cast<double>(memory.term_table) / 1048576.0,
      static_cast<double>(memory.names) / 1048576.0, index.shards().size());
  // Each refinement's effect: the same corpus and queries under other options, each index under K seeds.
  struct variant {
    const char* name;
    blume::bitsliced_options options;
  };
  const variant variants[] = {
      {"classic signatures (every term as rare as the rarest)", {.rank = 0, .frequency_conscious = false}},
      {"frequency-conscious", {.rank = 0}},
      {"frequency-conscious, rank-3 rows (the default)", {}},
      {"frequency-conscious, rank-3 rows, one shard", {.shard_ratio = 1e6}},
      {"frequency-conscious, rank-0, one shard", {.rank = 0, .shard_ratio = 1e6}},
      {"frequency-conscious, rank-0, density 0.35", {.density = 0.35, .rank = 0}},
  };
  std::printf(
      "\n| blume variant | rows | false candidates | of them with none of the terms (expected) | "
      "measured / expected over %zu seeds (99.9%%) | query median |\n",
      seeds);
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  bool model_holds = true;
  for (const variant& v : variants) {
    model_check check;
    evaluation at_first;
    double expected_total = 0;
    std::vector<double> times;
    for (std::size_t k = 0; k < seeds; ++k) {
      blume::bitsliced_options options = v.options;
      options.seed += k;
      blume::bitsliced_builder b(options);
      for (std::size_t d = 0; d < docs.size(); ++d) b.add_text(names[d], docs[d]);
      const blume::bitsliced_index x = std::move(b).finish();
      const evaluation e = evaluate(x);
      misses += e.misses;
      expected_total += e.expected;
      if (e.expected > 0) check.ratios.push_back(e.none / e.expected);
      if (k != 0) continue;
      at_first = e;
      const blume::bitsliced_index::memory mem = x.memory_use();
      for (const auto& q : queries) {
        std::vector<double> t;
        for (std::size_t r = 0; r < rounds; ++r) {
          const auto t0 = clock_type::now();
          sink = sink + x.count_candidates(q);
          t.push_back(seconds_since(t0));
        }
        times.push_back(percentile(t, 0.5));
      }
      std::printf("| %s | %.2f MiB | %s | %.0f (%.1f) | ", v.name,
                  static_cast<double>(mem.shared + mem.private_rows + mem.higher) / 1048576.0,
                  thousands(e.candidates - matches_total).c_str(), e.none, e.expected);
    }
    // Too few expected false candidates make each seed's ratio mostly counting noise: not judged.
    const bool judged = expected_total >= 50 && check.ratios.size() == seeds;
    model_holds = model_holds && (!judged || check.holds());
    std::printf("%s%s | %.1f µs |\n", judged ? check.describe().c_str() : "too few to judge",
                judged && !check.holds() ? " **off**" : "", 1e6 * percentile(times, 0.5));
  }

  std::printf("\nthe model: %s\n", model_holds ? "holds in every variant (1 within each interval)"
                                               : "FAILS in a variant above (1 outside its interval)");
  std::printf("missed exact matches: %s\n", thousands(misses).c_str());
  (void)sink;
  if (misses != 0) {
    std::fprintf(stderr, "FAILED: blume's candidates missed %llu exact matches\n",
                 static_cast<unsigned long long>(misses));
    return 1;
  }
  if (!model_holds) {
    std::fprintf(stderr, "FAILED: the model of false candidates is off\n");
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "fts5_compare: %s\n", e.what());
  return 2;
}
