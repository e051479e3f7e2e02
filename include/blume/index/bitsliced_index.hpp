// SPDX-License-Identifier: Apache-2.0
// bitsliced_index: one Bloom filter per document, many documents at once, stored transposed (bit-sliced):
// row j holds bit j of every document's filter, so a query of t terms ANDs the few rows its terms probe
// instead of testing every document's filter. A document holding every term is always a candidate; a
// candidate may be a false positive. This is BitFunnel's signature file (Goodwin et al., "BitFunnel:
// Revisiting Signatures for Search", SIGIR 2017), with the refinements of that paper that pay here:
//
//  * Shards by document length. A long document sets many bits and a short one few; each shard holds
//    documents whose bit counts differ by at most `shard_ratio` and gets as many rows as keep its mean
//    density at `density`, so no document's column saturates.
//  * Frequency-conscious signatures. A term in a fraction f of the documents needs rows enough that a
//    document without it passes them all with probability density^k ≤ noise·f: rare terms get more rows,
//    frequent ones fewer, and a term in at least `density` of the documents gets a private row of its own,
//    which is exact (it would fill a shared row past the target by itself). A term table keeps the terms
//    whose rows differ from a rare term's ("ad hoc" terms, not stored, get the rows of a term in one
//    document).
//  * Higher-rank rows. A rank-r row has one bit per 2^r consecutive columns, set when any of them has the
//    term. Rare terms keep one rank-0 row and put their others at rank r: the same density, so the same
//    false-positive rate per document at the same memory per bit set, but a query reads 2^r times fewer
//    words of them and skips every stretch of 64·2^r columns where they are all zero.
//
// The model (bitsliced_model): a query's distinct rows in a shard are uniform among its rows, whatever
// terms they belong to, so a document holding none of its terms, whose column has x of the shard's m shared
// rows set, passes its r rank-0 rows with probability C(x, r)/C(m, r). Its group, with y of the H
// higher-rank rows set, has a query term's higher-rank rows set for certain when one of the 2^rank − 1
// other documents of the group holds the term, and passes the rest with probability C(y', h')/C(H', h')
// over the rows, set bits and total left; the model sums over which of the terms the neighbours hold (each
// with the chance its holders give, columns being in a pseudo-random order of their documents within a
// shard). A private row is zero for every document without its term. The holders of a term come from the
// term table's count, or for a rare term from its candidates less the false candidates this model expects.
//
// This is an expectation over the index's seed. On text, the documents holding none of a query's terms
// pass or fail together as the frequent words they share happen to fill the query's rows or not, so one
// index's count strays from the expectation more than a binomial would; averaged over seeds it holds
// (examples/text_search measures both).
//
// Thread safety: a built index is immutable; any number of threads may query it.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/index/terms.hpp"

namespace blume {

/// How a bitsliced index is built. The defaults are the ones the tool uses.
struct bitsliced_options {
  /// The density every shared row is sized for (BitFunnel runs its rows at 0.1 to 0.3).
  double density = 0.2;
  /// False candidates allowed per true match, per term: a term of frequency f gets the k rows with
  /// density^k ≤ noise·f.
  double noise = 0.1;
  /// The rank of the higher-rank rows, 3 to 6, or 0 for rank-0 rows only.
  std::uint32_t rank = 3;
  /// Off: every term gets the rows a term of one document needs, no term table, no private rows, no
  /// higher-rank rows (a classic signature file, for comparison).
  bool frequency_conscious = true;
  /// The largest ratio of bit counts of two documents in one shard.
  double shard_ratio = 1.5;
  std::uint64_t seed = xxh3_hasher::default_seed;

  /// Throws invalid_argument naming the first value out of range.
  void validate() const {
    if (!(density > 0.0 && density <= 0.5))
      throw invalid_argument("bit-sliced index: density must be in (0, 0.5], got " + std::to_string(density));
    if (!(noise > 0.0 && noise <= 1.0))
      throw invalid_argument("bit-sliced index: noise must be in (0, 1], got " + std::to_string(noise));
    if (rank != 0 && (rank < 3 || rank > 6))
      throw invalid_argument("bit-sliced index: rank must be 0 or 3 to 6, got " + std::to_string(rank));
    if (rank != 0 && !frequency_conscious)
      throw invalid_argument("bit-sliced index: higher-rank rows need frequency-conscious signatures");
    if (!(shard_ratio >= 1.0 && shard_ratio <= 1e6))
      throw invalid_argument("bit-sliced index: shard ratio must be in [1, 1e6], got " + std::to_string(shard_ratio));
  }
};

/// The rows a term sets in every shard: `rank0` shared rank-0 rows and `higher` rows of the index's rank
/// chosen by its probes, or one private row of its own.
struct term_rows {
  static constexpr std::uint32_t no_private_row = 0xffffffffU;
  std::uint32_t rank0 = 0;
  std::uint32_t higher = 0;
  std::uint32_t private_row = no_private_row;
  bool is_private() const noexcept { return private_row != no_private_row; }
  friend constexpr bool operator==(const term_rows&, const term_rows&) = default;
};

/// A term of the term table: its id (the low half of its digest), the documents it is in, its rows.
struct term_entry {
  std::uint64_t id = 0;
  std::uint32_t documents = 0;
  term_rows rows;
};

/// Documents of similar length, their columns and their rows. Row words: the rank-0 rows (shared, then
/// one per private row) of `words` words each, then the higher-rank rows of ⌈words / 2^rank⌉ words each.
/// A shard without higher-rank rows (too few columns for them to fill a word) puts every row of a term at
/// rank 0.
struct bitsliced_shard {
  std::uint32_t shared_rows = 0;
  std::uint32_t higher_rows = 0;
  std::uint64_t words = 0;              // words of a rank-0 row: ⌈columns / 64⌉
  std::vector<std::uint32_t> document;  // column → document number
  std::vector<std::uint64_t> bits;

  std::uint64_t columns() const noexcept { return document.size(); }
  std::uint64_t higher_words(std::uint32_t rank) const noexcept {
    return higher_rows == 0 ? 0 : (words + (std::uint64_t{1} << rank) - 1) >> rank;
  }
  /// Words of the whole shard for `private_rows` private rows.
  std::uint64_t total_words(std::uint32_t private_rows, std::uint32_t rank) const noexcept {
    return (std::uint64_t{shared_rows} + private_rows) * words + std::uint64_t{higher_rows} * higher_words(rank);
  }
};

/// Columns a shard needs before higher-rank rows pay: with fewer, a row of one bit per 2^rank columns would
/// be mostly padding of its last word.
constexpr std::uint64_t min_columns_for_rank(std::uint32_t rank) noexcept { return 256ULL << rank; }

namespace detail {

/// The i-th row probe of a term: position and id are independent halves of its one digest.
constexpr std::uint64_t term_probe(const digest& d, std::uint32_t i) noexcept {
  return murmur3_fmix64(d.high + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(i) + 1));
}

/// k such that density^k ≤ noise·f, at least 1 and at most 24.
inline std::uint32_t rows_for_frequency(double f, double density, double noise) noexcept {
  const double k = std::ceil(std::log(noise * f) / std::log(density) - 1e-9);
  return static_cast<std::uint32_t>(std::clamp(k, 1.0, 24.0));
}

/// Each of the 64 >> rank low bits of `segment` repeated 2^rank times: a higher-rank word's bits for one
/// rank-0 word.
constexpr std::uint64_t expand_segment(std::uint64_t segment, std::uint32_t rank) noexcept {
  const std::uint32_t width = 1U << rank;
  const std::uint64_t run = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  std::uint64_t out = 0;
  for (std::uint32_t b = 0; b < (64U >> rank); ++b)
    if ((segment >> b) & 1U) out |= run << (b * width);
  return out;
}

}  // namespace detail

class bitsliced_builder;

class bitsliced_index {
 public:
  /// The rows of one query term in one shard.
  struct row_ref {
    const std::uint64_t* words = nullptr;
    bool higher = false;
    bool exact = false;    // a private row: set for the term's documents alone
    std::size_t term = 0;  // index into the query's distinct terms
  };

  const bitsliced_options& options() const noexcept { return options_; }
  std::uint64_t documents() const noexcept { return names_.size(); }
  const std::string& document_name(std::uint32_t document) const { return names_.at(document); }
  std::span<const bitsliced_shard> shards() const noexcept { return shards_; }
  /// The terms whose rows differ from an ad hoc term's, sorted by id.
  std::span<const term_entry> term_table() const noexcept { return terms_; }
  /// The rows of a term not in the table.
  const term_rows& adhoc_rows() const noexcept { return adhoc_; }
  std::uint32_t private_rows() const noexcept { return private_rows_; }

  /// The rows `term` sets (its table entry, or the ad hoc rows) and the documents it is in when the table
  /// knows (0 otherwise).
  std::pair<term_rows, std::uint32_t> rows_of(std::string_view term) const noexcept { return rows_of(hash_term(term)); }

  /// The documents (numbers in input order, ascending) that may hold every term of `terms` (any range of
  /// strings; repeats count once). No document holding them all is missing. Throws invalid_argument for an
  /// empty query.
  template <class R>
  std::vector<std::uint32_t> candidates(const R& terms) const {
    std::vector<std::uint32_t> out;
    for_each_candidate(terms, [&](std::uint32_t d) { out.push_back(d); });
    std::ranges::sort(out);
    return out;
  }

  /// How many documents are candidates for `terms`, without listing them.
  template <class R>
  std::uint64_t count_candidates(const R& terms) const {
    std::uint64_t n = 0;
    for_each_candidate(terms, [&](std::uint32_t) { ++n; });
    return n;
  }

  /// fn(document) for each candidate of `terms`, shard by shard (not in document order).
  template <class R, class Fn>
  void for_each_candidate(const R& terms, Fn&& fn) const {
    const std::vector<digest> query = distinct_terms(terms);
    std::vector<row_ref> rows;
    for (const bitsliced_shard& shard : shards_) {
      rows_in(shard, query, rows);
      scan(shard, rows, fn);
    }
  }

  // ---- memory --------------------------------------------------------------------------------------------

  /// Bytes of rank-0 shared rows, private rows, higher-rank rows, column maps, the term table and names.
  struct memory {
    std::uint64_t shared = 0, private_rows = 0, higher = 0, columns = 0, term_table = 0, names = 0;
    std::uint64_t total() const noexcept { return shared + private_rows + higher + columns + term_table + names; }
  };
  memory memory_use() const noexcept {
    memory m;
    for (const bitsliced_shard& s : shards_) {
      m.shared += 8 * s.words * s.shared_rows;
      m.private_rows += 8 * s.words * private_rows_;
      m.higher += 8 * s.higher_words(options_.rank) * s.higher_rows;
      m.columns += 4 * s.columns();
    }
    m.term_table = 16 * terms_.size();
    for (const std::string& n : names_) m.names += 4 + n.size();
    return m;
  }
  std::uint64_t size_in_bytes() const noexcept { return memory_use().total(); }

  /// The parts, as a codec reads them back (io/index_format.hpp checks them before calling).
  static bitsliced_index from_parts(bitsliced_options options, term_rows adhoc, std::uint32_t private_rows,
                                    std::vector<term_entry> terms, std::vector<bitsliced_shard> shards,
                                    std::vector<std::string> names) {
    bitsliced_index x;
    x.options_ = options;
    x.adhoc_ = adhoc;
    x.private_rows_ = private_rows;
    x.terms_ = std::move(terms);
    x.shards_ = std::move(shards);
    x.names_ = std::move(names);
    return x;
  }

 private:
  friend class bitsliced_builder;
  friend class bitsliced_model;

  digest hash_term(std::string_view term) const noexcept { return hash_key(xxh3_hasher(options_.seed), term); }

  template <class R>
  std::vector<digest> distinct_terms(const R& terms) const {
    std::vector<digest> query;
    for (const auto& term : terms) query.push_back(hash_term(std::string_view(term)));
    if (query.empty()) throw invalid_argument("bit-sliced index: a query needs at least one term");
    std::ranges::sort(query, [](const digest& a, const digest& b) {
      return std::pair(a.low, a.high) < std::pair(b.low, b.high);
    });
    query.erase(std::unique(query.begin(), query.end()), query.end());
    return query;
  }

  std::pair<term_rows, std::uint32_t> rows_of(const digest& d) const noexcept {
    const auto it = std::ranges::lower_bound(terms_, d.low, {}, &term_entry::id);
    if (it != terms_.end() && it->id == d.low) return {it->rows, it->documents};
    return {adhoc_, 0};
  }

  const std::uint64_t* private_row(const bitsliced_shard& s, std::uint32_t p) const noexcept {
    return s.bits.data() + (static_cast<std::uint64_t>(s.shared_rows) + p) * s.words;
  }
  const std::uint64_t* higher_row(const bitsliced_shard& s, std::uint32_t j) const noexcept {
    return s.bits.data() + (static_cast<std::uint64_t>(s.shared_rows) + private_rows_) * s.words +
           static_cast<std::uint64_t>(j) * s.higher_words(options_.rank);
  }

  /// The distinct rows of the query in one shard: higher-rank rows first, then rank-0 rows.
  void rows_in(const bitsliced_shard& shard, const std::vector<digest>& query, std::vector<row_ref>& rows) const {
    rows.clear();
    for (std::size_t t = 0; t < query.size(); ++t) {
      const term_rows r = rows_of(query[t]).first;
      if (r.is_private()) {
        rows.push_back({private_row(shard, r.private_row), false, true, t});
        continue;
      }
      const std::uint32_t rank0 = shard.higher_rows == 0 ? r.rank0 + r.higher : r.rank0;
      for (std::uint32_t i = 0; i < rank0; ++i)
        rows.push_back({shard.bits.data() + reduce(detail::term_probe(query[t], i), shard.shared_rows) * shard.words,
                        false, false, t});
      if (shard.higher_rows == 0) continue;
      for (std::uint32_t i = 0; i < r.higher; ++i)
        rows.push_back({higher_row(shard, static_cast<std::uint32_t>(reduce(detail::term_probe(query[t], r.rank0 + i),
                                                                            shard.higher_rows))),
                        true, false, t});
    }
    std::ranges::sort(rows, [](const row_ref& a, const row_ref& b) {
      return std::pair(!a.higher, a.words) < std::pair(!b.higher, b.words);
    });
    rows.erase(std::unique(rows.begin(), rows.end(),
                           [](const row_ref& a, const row_ref& b) { return a.words == b.words; }),
               rows.end());
  }

  template <class Fn>
  void scan(const bitsliced_shard& shard, const std::vector<row_ref>& rows, Fn& fn) const {
    const auto first_rank0 = std::ranges::find_if(rows, [](const row_ref& r) { return !r.higher; });
    const std::span<const row_ref> higher(rows.begin(), first_rank0), rank0(first_rank0, rows.end());
    auto emit = [&](std::uint64_t word, std::uint64_t bits) {
      while (bits != 0) {
        const std::uint64_t column = word * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
        fn(shard.document[column]);
        bits &= bits - 1;
      }
    };
    auto and_rank0 = [&](std::uint64_t word, std::uint64_t acc) {
      for (const row_ref& r : rank0) {
        if (acc == 0) return;
        acc &= r.words[word];
      }
      emit(word, acc);
    };
    if (higher.empty()) {
      for (std::uint64_t u = 0; u < shard.words; ++u) and_rank0(u, ~std::uint64_t{0});
      return;
    }
    const std::uint32_t rank = options_.rank;
    const std::uint64_t per_word = std::uint64_t{1} << rank, segment_bits = 64U >> rank;
    const std::uint64_t segment_mask = segment_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << segment_bits) - 1;
    for (std::uint64_t w = 0; w < shard.higher_words(rank); ++w) {
      std::uint64_t acc = ~std::uint64_t{0};
      for (const row_ref& r : higher) {
        acc &= r.words[w];
        if (acc == 0) break;
      }
      if (acc == 0) continue;  // 64·2^rank columns skipped at once
      for (std::uint64_t i = 0; i < per_word && w * per_word + i < shard.words; ++i) {
        const std::uint64_t segment = (acc >> (i * segment_bits)) & segment_mask;
        if (segment != 0) and_rank0(w * per_word + i, detail::expand_segment(segment, rank));
      }
    }
  }

  bitsliced_options options_;
  term_rows adhoc_;
  std::uint32_t private_rows_ = 0;
  std::vector<term_entry> terms_;
  std::vector<bitsliced_shard> shards_;
  std::vector<std::string> names_;
};

/// The index's model of false candidates (see the header comment), read off its rows once: how many bits
/// each column and each higher-rank group has set.
class bitsliced_model {
 public:
  explicit bitsliced_model(const bitsliced_index& index) : index_(&index) {
    const std::uint32_t rank = index.options().rank;
    for (const bitsliced_shard& s : index.shards()) {
      shard_counts r;
      r.column.resize(s.columns());
      r.group.resize(s.higher_rows == 0 ? 0 : (s.columns() + (std::uint64_t{1} << rank) - 1) >> rank);
      count_bits(s.bits.data(), s.shared_rows, s.words, r.column);
      count_bits(index.higher_row(s, 0), s.higher_rows, s.higher_words(rank), r.group);
      counts_.push_back(std::move(r));
    }
  }

  /// For each document, the probability that it is a candidate for `terms` if it holds none of them: the
  /// mean over the index's seeds (see the header comment).
  template <class R>
  std::vector<double> candidate_probability(const R& terms) const {
    const bitsliced_index& x = *index_;
    const std::vector<digest> query = x.distinct_terms(terms);
    std::vector<double> out(x.documents(), 0.0);
    // How many of each shard's documents hold each term, for the neighbours that share a higher-rank bit.
    const std::vector<std::vector<double>> holders = estimate_holders(query);
    std::vector<bitsliced_index::row_ref> rows;
    for (std::size_t si = 0; si < x.shards().size(); ++si) {
      const bitsliced_shard& s = x.shards()[si];
      const shard_counts& n = counts_[si];
      x.rows_in(s, query, rows);
      if (std::ranges::any_of(rows, &bitsliced_index::row_ref::exact)) continue;  // a private row: never
      const auto higher = static_cast<std::uint32_t>(std::ranges::count_if(rows, &bitsliced_index::row_ref::higher));
      const auto rank0 = static_cast<std::uint32_t>(rows.size()) - higher;
      const std::vector<double> group_pass = group_probability(s, query, rows, holders[si], higher);
      for (std::uint64_t c = 0; c < s.columns(); ++c) {
        double p = all_set(n.column[c], s.shared_rows, rank0);
        if (higher > 0) p *= group_pass[n.group[c >> x.options().rank]];
        out[s.document[c]] = p;
      }
    }
    return out;
  }

  /// Expected candidates among the documents holding none of `terms` (the sum over all documents of
  /// candidate_probability: a close bound when the terms are rare).
  template <class R>
  double expected_false_candidates(const R& terms) const {
    double sum = 0.0;
    for (double p : candidate_probability(terms)) sum += p;
    return sum;
  }

 private:
  struct shard_counts {
    std::vector<std::uint32_t> column;  // set bits of each column among the shard's shared rows
    std::vector<std::uint32_t> group;   // set bits of each group among its higher-rank rows
  };
  /// Terms at most this many of a query are weighed as possibly held by a group neighbour (2^n cases each);
  /// the rest, the rarest, as not held.
  static constexpr std::size_t max_held_terms = 8;

  /// Counts each slot's (column's or group's) set bits over `count` rows.
  static void count_bits(const std::uint64_t* rows, std::uint32_t count, std::uint64_t words,
                         std::vector<std::uint32_t>& slots) {
    for (std::uint64_t j = 0; j < count; ++j)
      for (std::uint64_t w = 0; w < words; ++w)
        for (std::uint64_t bits = rows[j * words + w]; bits != 0; bits &= bits - 1)
          ++slots[w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits))];
  }

  /// C(set, r) / C(rows, r): the chance that r distinct rows, uniform among `rows`, all fall among the `set`
  /// rows a column (or group) has set.
  static double all_set(std::uint32_t set, std::uint32_t rows, std::uint32_t r) noexcept {
    double p = 1.0;
    for (std::uint32_t i = 0; i < r && p > 0.0; ++i)
      p *= set > i ? static_cast<double>(set - i) / static_cast<double>(rows - i) : 0.0;
    return p;
  }

  /// For each shard and term of the query, how many of the shard's documents hold the term. Its candidates
  /// there hold it or are false candidates: the term table counts its documents, split between the shards
  /// as their candidates are; a term not in the table (a rare one) holds as many as, with the false
  /// candidates this model expects of that many holders, make its candidates.
  std::vector<std::vector<double>> estimate_holders(const std::vector<digest>& query) const {
    const bitsliced_index& x = *index_;
    std::vector<std::vector<double>> holders(x.shards().size(), std::vector<double>(query.size(), 0.0));
    std::vector<bitsliced_index::row_ref> own;
    for (std::size_t t = 0; t < query.size(); ++t) {
      const std::vector<digest> term{query[t]};
      const std::uint32_t documents = x.rows_of(query[t]).second;
      double candidates = 0.0;
      for (std::size_t si = 0; si < x.shards().size(); ++si) {
        const bitsliced_shard& s = x.shards()[si];
        x.rows_in(s, term, own);
        double n = 0.0;
        auto count = [&n](std::uint32_t) { n += 1.0; };
        x.scan(s, own, count);
        candidates += n;
        if (documents == 0 && n > 0.0 && !own.front().exact) {
          const double found = n, columns = static_cast<double>(s.columns());
          const auto higher = static_cast<std::uint32_t>(std::ranges::count_if(own, &bitsliced_index::row_ref::higher));
          const auto rank0 = static_cast<std::uint32_t>(own.size()) - higher;
          // by_group[y]: the rank-0 chances of the columns whose group has y higher-rank rows set.
          std::vector<double> by_group(higher > 0 ? s.higher_rows + 1 : 1, 0.0);
          for (std::uint64_t c = 0; c < s.columns(); ++c)
            by_group[higher > 0 ? counts_[si].group[c >> x.options().rank] : 0] +=
                all_set(counts_[si].column[c], s.shared_rows, rank0);
          // holders + their false candidates = found; the left side grows with the holders: bisection.
          double low = 0.0, high = found;
          for (int step = 0; step < 40; ++step) {
            const double mid = (low + high) / 2;
            double expected = by_group[0];
            if (higher > 0) {
              const std::vector<double> pass = group_probability(s, term, own, {mid}, higher);
              expected = 0.0;
              for (std::size_t y = 0; y < by_group.size(); ++y) expected += by_group[y] * pass[y];
            }
            (mid + expected * (columns - mid) / columns < found ? low : high) = mid;
          }
          n = (low + high) / 2;
        }
        holders[si][t] = n;
      }
      if (documents != 0 && candidates > 0.0)
        for (auto& shard : holders) shard[t] *= std::min(1.0, static_cast<double>(documents) / candidates);
    }
    return holders;
  }

  /// A group's chance to pass the query's `higher` higher-rank rows, by how many of its higher-rank rows are
  /// set: the sum, over which of the terms its other documents hold, of that case's chance times the chance
  /// that the rows no held term sets are set.
  std::vector<double> group_probability(const bitsliced_shard& s, const std::vector<digest>& query,
                                        const std::vector<bitsliced_index::row_ref>& rows,
                                        const std::vector<double>& holders, std::uint32_t higher) const {
    if (higher == 0) return {};
    const bitsliced_index& x = *index_;
    const double neighbours = static_cast<double>((std::uint64_t{1} << x.options().rank) - 1);
    const double columns = static_cast<double>(s.columns());
    std::vector<std::size_t> held;
    for (std::size_t t = 0; t < query.size(); ++t)
      if (holders[t] > 0.0) held.push_back(t);
    std::sort(held.begin(), held.end(), [&](std::size_t a, std::size_t b) { return holders[a] > holders[b]; });
    if (held.size() > max_held_terms) held.resize(max_held_terms);
    // owners[j]: the held terms (bits) that probe the query's higher-rank row j.
    std::vector<std::uint32_t> owners(higher, 0);
    std::vector<double> holds(held.size());
    std::vector<bitsliced_index::row_ref> own;
    for (std::size_t i = 0; i < held.size(); ++i) {
      holds[i] = -std::expm1(neighbours * std::log1p(-std::min(1.0, holders[held[i]] / columns)));
      x.rows_in(s, std::vector<digest>{query[held[i]]}, own);
      for (const auto& r : own)
        for (std::uint32_t j = 0; j < higher; ++j)
          if (r.higher && rows[j].words == r.words) owners[j] |= 1U << i;
    }
    std::vector<double> pass(s.higher_rows + 1, 0.0);
    for (std::uint32_t mask = 0; mask < (1U << held.size()); ++mask) {
      double chance = 1.0;
      for (std::size_t i = 0; i < held.size(); ++i) chance *= (mask >> i) & 1U ? holds[i] : 1.0 - holds[i];
      const auto covered = static_cast<std::uint32_t>(std::ranges::count_if(owners, [mask](std::uint32_t o) {
        return (o & mask) != 0;
      }));
      for (std::uint32_t y = covered; y <= s.higher_rows; ++y)
        pass[y] += chance * all_set(y - covered, s.higher_rows - covered, higher - covered);
    }
    return pass;
  }

  const bitsliced_index* index_;
  std::vector<shard_counts> counts_;
};

/// Collects documents, then builds their index (two passes: term frequencies first, then rows).
class bitsliced_builder {
 public:
  explicit bitsliced_builder(bitsliced_options options = {}) : options_(options) { options_.validate(); }

  /// Adds a document of `terms` (any range of strings; repeats count once) named `name`.
  template <class R>
  void add_document(std::string name, const R& terms) {
    if (names_.size() >= max_documents)
      throw invalid_argument("bit-sliced index: at most " + std::to_string(max_documents) + " documents");
    const std::size_t first = terms_.size();
    const xxh3_hasher h(options_.seed);
    for (const auto& term : terms) terms_.push_back(hash_key(h, std::string_view(term)));
    dedupe_from(first);
    names_.push_back(std::move(name));
  }

  /// Adds a document of the terms of `text` (for_each_term).
  void add_text(std::string name, std::string_view text) {
    if (names_.size() >= max_documents)
      throw invalid_argument("bit-sliced index: at most " + std::to_string(max_documents) + " documents");
    const std::size_t first = terms_.size();
    const xxh3_hasher h(options_.seed);
    for_each_term(text, [&](std::string_view term) { terms_.push_back(hash_key(h, term)); });
    dedupe_from(first);
    names_.push_back(std::move(name));
  }

  std::uint64_t documents() const noexcept { return names_.size(); }
  /// (document, term) pairs so far: the postings an inverted file would hold.
  std::uint64_t postings() const noexcept { return terms_.size(); }

  bitsliced_index finish() &&;

  static constexpr std::uint64_t max_documents = 0xffffffffULL;

 private:
  void dedupe_from(std::size_t first) {
    // Iterators, not a subrange: clang 14 cannot compile libstdc++ 12's subrange.
    const auto first_term = terms_.begin() + static_cast<std::ptrdiff_t>(first);
    std::sort(first_term, terms_.end(),
              [](const digest& a, const digest& b) { return std::pair(a.low, a.high) < std::pair(b.low, b.high); });
    terms_.erase(std::unique(first_term, terms_.end()), terms_.end());
    ends_.push_back(terms_.size());
  }

  bitsliced_options options_;
  std::vector<std::string> names_;
  std::vector<digest> terms_;        // each document's distinct terms, document after document
  std::vector<std::uint64_t> ends_;  // where each document's terms end
};

inline bitsliced_index bitsliced_builder::finish() && {
  const bitsliced_options& o = options_;
  const std::uint64_t n_docs = names_.size();
  const double docs = static_cast<double>(std::max<std::uint64_t>(n_docs, 1));
  const std::uint32_t group = 1U << o.rank;

  // Pass 1: each distinct term's document count.
  std::vector<std::uint64_t> ids(terms_.size());
  std::ranges::transform(terms_, ids.begin(), &digest::low);
  std::ranges::sort(ids);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> df;  // (id, documents), sorted by id
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j < ids.size() && ids[j] == ids[i]) ++j;
    df.emplace_back(ids[i], static_cast<std::uint32_t>(j - i));
    i = j;
  }
  std::vector<std::uint64_t>().swap(ids);

  const std::uint32_t adhoc_k = detail::rows_for_frequency(1.0 / docs, o.density, o.noise);
  auto rows_for = [&](std::uint32_t documents) {
    term_rows r;
    const double f = documents / docs;
    const std::uint32_t k = o.frequency_conscious ? detail::rows_for_frequency(f, o.density, o.noise) : adhoc_k;
    if (o.rank != 0 && k >= 2 && f * group <= o.density / 4) {
      r.rank0 = 1;
      r.higher = k - 1;
    } else {
      r.rank0 = k;
    }
    return r;
  };
  const term_rows adhoc = rows_for(1);
  const double per_bit = -std::log1p(-o.density);  // bits set per row slot at the target density

  // The term table: private rows for the most frequent terms, explicit rows where they differ from ad hoc.
  std::vector<term_entry> table;
  std::uint32_t private_rows = 0;
  if (o.frequency_conscious) {
    for (const auto& [id, documents] : df) {
      term_rows r = rows_for(documents);
      if (documents / docs >= o.density) r = term_rows{0, 0, private_rows++};
      // An entry (16 bytes) is kept where it is needed (a private row; rank-0 rows only, for a term too
      // frequent to share a higher-rank bit with its neighbours) or where the rows it saves cost more.
      const bool needed = r.is_private() || (r.higher == 0 && adhoc.higher != 0);
      const double saved_bits =
          (static_cast<double>(adhoc.rank0 + adhoc.higher) - (r.rank0 + r.higher)) * documents / per_bit;
      if (needed || saved_bits > 8.0 * sizeof(term_entry)) table.push_back({id, documents, r});
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>>().swap(df);
  auto rows_of = [&](const digest& d) {
    const auto it = std::ranges::lower_bound(table, d.low, {}, &term_entry::id);
    return it != table.end() && it->id == d.low ? it->rows : adhoc;
  };

  // Each document's bits at rank 0 (shared) and at the higher rank; shards of similar bit counts.
  std::vector<std::uint64_t> bits0(n_docs), bits_high(n_docs);
  for (std::uint64_t d = 0; d < n_docs; ++d) {
    for (std::uint64_t t = d == 0 ? 0 : ends_[d - 1]; t < ends_[d]; ++t) {
      const term_rows r = rows_of(terms_[t]);
      bits0[d] += r.rank0;
      bits_high[d] += r.higher;
    }
  }
  std::vector<std::uint32_t> order(n_docs);
  for (std::uint64_t d = 0; d < n_docs; ++d) order[d] = static_cast<std::uint32_t>(d);
  std::ranges::stable_sort(order, [&](std::uint32_t a, std::uint32_t b) {
    return bits0[a] + bits_high[a] < bits0[b] + bits_high[b];
  });
  std::vector<bitsliced_shard> shards;
  for (std::size_t i = 0; i < order.size();) {
    const double smallest = static_cast<double>(bits0[order[i]] + bits_high[order[i]] + 1);
    std::size_t j = i;
    double sum0 = 0, sum_high = 0;
    while (j < order.size() &&
           static_cast<double>(bits0[order[j]] + bits_high[order[j]] + 1) <= o.shard_ratio * smallest) {
      sum0 += static_cast<double>(bits0[order[j]]);
      sum_high += static_cast<double>(bits_high[order[j]]);
      ++j;
    }
    bitsliced_shard s;
    s.document.assign(order.begin() + static_cast<std::ptrdiff_t>(i), order.begin() + static_cast<std::ptrdiff_t>(j));
    // A pseudo-random column order (see the header comment), fixed by the seed.
    const std::uint64_t order_seed = o.seed;
    std::sort(s.document.begin(), s.document.end(), [order_seed](std::uint32_t a, std::uint32_t b) {
      return detail::murmur3_fmix64(a ^ order_seed) < detail::murmur3_fmix64(b ^ order_seed);
    });
    const double columns = static_cast<double>(j - i);
    if (o.rank == 0 || s.columns() < min_columns_for_rank(o.rank)) {
      sum0 += sum_high;
      sum_high = 0;
    }
    s.shared_rows = static_cast<std::uint32_t>(std::max(1.0, std::ceil(sum0 / columns / per_bit)));
    s.higher_rows =
        sum_high > 0 ? static_cast<std::uint32_t>(std::max(1.0, std::ceil(group * sum_high / columns / per_bit))) : 0;
    s.words = (s.columns() + 63) / 64;
    s.bits.assign(s.total_words(private_rows, o.rank), 0);
    shards.push_back(std::move(s));
    i = j;
  }

  bitsliced_index index =
      bitsliced_index::from_parts(o, adhoc, private_rows, std::move(table), std::move(shards), std::move(names_));
  // Pass 2: the bits.
  for (bitsliced_shard& s : index.shards_) {
    for (std::uint64_t c = 0; c < s.columns(); ++c) {
      const std::uint32_t d = s.document[c];
      for (std::uint64_t t = d == 0 ? 0 : ends_[d - 1]; t < ends_[d]; ++t) {
        const digest& term = terms_[t];
        const term_rows r = index.rows_of(term).first;
        if (r.is_private()) {
          s.bits[(std::uint64_t{s.shared_rows} + r.private_row) * s.words + (c >> 6)] |= std::uint64_t{1} << (c & 63);
          continue;
        }
        const std::uint32_t rank0 = s.higher_rows == 0 ? r.rank0 + r.higher : r.rank0;
        for (std::uint32_t i = 0; i < rank0; ++i)
          s.bits[reduce(detail::term_probe(term, i), s.shared_rows) * s.words + (c >> 6)] |= std::uint64_t{1}
                                                                                             << (c & 63);
        if (s.higher_rows == 0) continue;
        const std::uint64_t g = c >> o.rank;
        std::uint64_t* higher = s.bits.data() + (std::uint64_t{s.shared_rows} + private_rows) * s.words;
        for (std::uint32_t i = 0; i < r.higher; ++i)
          higher[reduce(detail::term_probe(term, r.rank0 + i), s.higher_rows) * s.higher_words(o.rank) + (g >> 6)] |=
              std::uint64_t{1} << (g & 63);
      }
    }
  }
  terms_.clear();
  ends_.clear();
  return index;
}

}  // namespace blume
