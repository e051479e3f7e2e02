// SPDX-License-Identifier: Apache-2.0
// The bit-sliced index: no matching document is ever missed, its model holds for the documents that hold
// none of a query's terms, each refinement does what it claims, its file round-trips, is pinned by golden
// bytes and refuses damaged or hostile bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "blume/io/index_format.hpp"
#include "test_support.hpp"

namespace {

using blume_test::pattern_key;

/// A corpus whose term frequencies fall off as Zipf's law says text does, with documents of lengths from
/// 5 to 3,000 terms. Term r is written from key pattern `pattern`'s r-th key, so that structured term
/// strings (sequential numbers, multiples of 2^16 and 2^32, negatives) meet the hash as well as random ones.
struct corpus {
  std::vector<std::vector<std::string>> documents;
  std::unordered_map<std::string, std::vector<std::uint32_t>> postings;  // term → documents, ascending

  corpus(std::size_t count, int pattern, std::uint64_t seed = 1) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::size_t d = 0; d < count; ++d) {
      const auto length = static_cast<std::size_t>(std::exp(u(rng) * std::log(3000.0 / 5)) * 5);
      std::vector<std::string> terms;
      for (std::size_t i = 0; i < length; ++i) {
        // Rank r ~ 1/r over 200,000 terms.
        const auto rank = static_cast<std::uint64_t>(std::exp(u(rng) * std::log(200'000.0)));
        terms.push_back(std::to_string(static_cast<std::int64_t>(pattern_key(pattern, rank))));
      }
      for (const std::string& t : std::set<std::string>(terms.begin(), terms.end()))
        postings[t].push_back(static_cast<std::uint32_t>(d));
      documents.push_back(std::move(terms));
    }
  }

  blume::bitsliced_index index(const blume::bitsliced_options& options = {}) const {
    blume::bitsliced_builder b(options);
    for (std::size_t d = 0; d < documents.size(); ++d) b.add_document("doc" + std::to_string(d), documents[d]);
    return std::move(b).finish();
  }

  /// How many of the query's distinct terms each document holds.
  std::vector<std::uint8_t> held(const std::vector<std::string>& query) const {
    std::vector<std::uint8_t> n(documents.size());
    for (const std::string& t : std::set<std::string>(query.begin(), query.end()))
      for (std::uint32_t d : postings.at(t)) ++n[d];
    return n;
  }
  std::size_t distinct(const std::vector<std::string>& query) const {
    return std::set<std::string>(query.begin(), query.end()).size();
  }

  /// `count` queries of 1 to 3 terms drawn from the documents' own words: a random document's random term
  /// (frequent terms come up often), and with half the queries a term of rank-order rarity.
  std::vector<std::vector<std::string>> queries(std::size_t count, std::uint64_t seed = 2) const {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<std::string>> out;
    while (out.size() < count) {
      std::vector<std::string> q;
      const std::size_t terms = 1 + rng() % 3;
      for (std::size_t i = 0; i < terms; ++i) {
        const auto& doc = documents[rng() % documents.size()];
        if (!doc.empty()) q.push_back(doc[rng() % doc.size()]);
      }
      if (!q.empty()) out.push_back(std::move(q));
    }
    return out;
  }
};

TEST(Terms, AreLowerCasedRunsOfLettersDigitsAndNonAsciiBytes) {
  std::vector<std::string> terms;
  blume::for_each_term("Hello, WORLD_x 42 caf\xc3\xa9--grep(1) ", [&](std::string_view t) { terms.emplace_back(t); });
  EXPECT_EQ(terms, (std::vector<std::string>{"hello", "world", "x", "42", "caf\xc3\xa9", "grep", "1"}));
}

TEST(BitslicedIndex, NoDocumentHoldingEveryTermIsMissed) {
  for (int pattern = 0; pattern < blume_test::key_patterns; ++pattern) {
    const corpus c(1500, pattern, 10 + pattern);
    for (const blume::bitsliced_options& options : {blume::bitsliced_options{}, blume::bitsliced_options{.rank = 0},
                                                    blume::bitsliced_options{.rank = 0, .frequency_conscious = false},
                                                    blume::bitsliced_options{.density = 0.4, .rank = 6}}) {
      const blume::bitsliced_index index = c.index(options);
      for (const auto& q : c.queries(blume_test::scaled(150, 3, 50), pattern)) {
        const std::vector<std::uint32_t> candidates = index.candidates(q);
        const std::vector<std::uint8_t> held = c.held(q);
        for (std::size_t d = 0; d < c.documents.size(); ++d)
          if (held[d] == c.distinct(q)) {
            ASSERT_TRUE(std::ranges::binary_search(candidates, static_cast<std::uint32_t>(d)))
                << blume_test::pattern_names[pattern] << " rank " << options.rank << " document " << d;
          }
      }
    }
  }
}

/// Candidates among the documents that hold none of the query's terms, measured and as the model expects.
struct false_candidates {
  double measured = 0, expected = 0, trials = 0;
};
false_candidates measure(const corpus& c, const blume::bitsliced_index& index,
                         const std::vector<std::vector<std::string>>& queries) {
  false_candidates out;
  const blume::bitsliced_model model(index);
  for (const auto& q : queries) {
    const std::vector<std::uint32_t> candidates = index.candidates(q);
    const std::vector<double> p = model.candidate_probability(q);
    const std::vector<std::uint8_t> held = c.held(q);
    for (std::size_t d = 0; d < c.documents.size(); ++d) {
      if (held[d] != 0) continue;
      out.trials += 1;
      out.expected += p[d];
      out.measured += std::ranges::binary_search(candidates, static_cast<std::uint32_t>(d)) ? 1 : 0;
    }
  }
  return out;
}

// Rank-0 rows pass documents independently: the measured count is binomial around the model.
TEST(BitslicedIndex, TheModelHoldsForDocumentsWithNoneOfTheTerms) {
  for (int pattern = 0; pattern < blume_test::key_patterns; ++pattern) {
    const corpus c(3000, pattern, 20 + pattern);
    // A looser noise target makes false candidates common enough to measure.
    const blume::bitsliced_index index = c.index({.density = 0.3, .noise = 1.0, .rank = 0});
    const false_candidates f = measure(c, index, c.queries(blume_test::scaled(400, 4, 100), 7 + pattern));
    EXPECT_GT(f.measured, 100) << blume_test::pattern_names[pattern];
    EXPECT_TRUE(blume_test::within_binomial_999(f.measured, f.trials, f.expected / f.trials, 0.05))
        << blume_test::pattern_names[pattern];
  }
}

// A higher-rank bit answers for 2^rank neighbours at once, so candidates come in correlated groups: the
// mean still holds, with the interval widened by the group (at most 2^rank documents move together).
TEST(BitslicedIndex, TheModelHoldsWithHigherRankRows) {
  const corpus c(3000, 0, 31);
  // One shard of all 3,000 documents: enough columns for higher-rank rows, and lengths that vary 600-fold.
  const blume::bitsliced_index index = c.index({.density = 0.3, .noise = 1.0, .rank = 3, .shard_ratio = 1e6});
  ASSERT_EQ(index.shards().size(), 1U);
  ASSERT_GT(index.shards()[0].higher_rows, 0U);
  const false_candidates f = measure(c, index, c.queries(blume_test::scaled(400, 4, 100), 8));
  const double p = f.expected / f.trials;
  const double allowed = 3.29 * std::sqrt(8.0 * f.trials * p * (1 - p)) + 0.05 * f.expected;
  EXPECT_GT(f.measured, 100);
  EXPECT_NEAR(f.measured, f.expected, allowed);
}

// A document shares its higher-rank bits with 2^rank − 1 neighbours, and a query term that one of them holds
// has those bits set for certain: with frequent terms this is most of the false candidates, and the model
// has to count it.
TEST(BitslicedIndex, TheModelCountsNeighboursHoldingAQueryTerm) {
  // Terms rare enough for higher-rank rows (a fraction f with f·2^rank ≤ density/4).
  const double frequency[] = {0.009, 0.006, 0.004, 0.002, 0.001};
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<std::string>> docs(8000);
  for (auto& d : docs) {
    for (int t = 0; t < 5; ++t)
      if (u(rng) < frequency[t]) d.push_back("common" + std::to_string(t));
    for (int i = 0; i < 6; ++i) d.push_back("rare" + std::to_string(rng() % 20'000));
  }
  blume::bitsliced_builder b({.density = 0.3, .rank = 3, .shard_ratio = 1e6});
  for (std::size_t d = 0; d < docs.size(); ++d) b.add_document("d" + std::to_string(d), docs[d]);
  const blume::bitsliced_index index = std::move(b).finish();
  ASSERT_GT(index.shards()[0].higher_rows, 0U);
  // The rarest two are ad hoc terms, whose holders the model estimates from their candidates alone.
  EXPECT_EQ(index.rows_of("common4").second, 0U);
  const blume::bitsliced_model model(index);
  double measured = 0, expected = 0, variance = 0;
  for (int a = 0; a < 5; ++a)
    for (int z = a; z < 5; ++z) {
      const std::vector<std::string> q{"common" + std::to_string(a), "common" + std::to_string(z)};
      const std::vector<std::uint32_t> candidates = index.candidates(q);
      const std::vector<double> p = model.candidate_probability(q);
      for (std::size_t d = 0; d < docs.size(); ++d) {
        if (std::ranges::find(docs[d], q[0]) != docs[d].end() || std::ranges::find(docs[d], q[1]) != docs[d].end())
          continue;
        expected += p[d];
        variance += p[d] * (1 - p[d]);
        measured += std::ranges::binary_search(candidates, static_cast<std::uint32_t>(d)) ? 1 : 0;
      }
    }
  EXPECT_GT(measured, 200);
  EXPECT_NEAR(measured, expected, 3.29 * std::sqrt(8.0 * variance) + 0.05 * expected);
}

TEST(BitslicedIndex, APrivateRowIsExact) {
  const corpus c(1000, 0, 5);
  const blume::bitsliced_index index = c.index();
  ASSERT_GT(index.private_rows(), 0U);
  const std::string frequent = std::to_string(static_cast<std::int64_t>(pattern_key(0, 1)));
  EXPECT_TRUE(index.rows_of(frequent).first.is_private());
  EXPECT_EQ(index.candidates(std::vector{frequent}), c.postings.at(frequent));
  EXPECT_EQ(blume::bitsliced_model(index).expected_false_candidates(std::vector{frequent}), 0.0);
}

// Frequency-conscious signatures give frequent terms fewer rows (and the most frequent private ones): less
// memory, spending the noise target (false candidates up to `noise` times a term's matches) that a
// signature sized for the rarest term leaves unused.
TEST(BitslicedIndex, FrequencyConsciousSignaturesTakeLessMemoryWithinTheNoiseTarget) {
  const corpus c(3000, 0, 41);
  const blume::bitsliced_index plain = c.index({.rank = 0, .frequency_conscious = false});
  const blume::bitsliced_index conscious = c.index({.rank = 0});
  EXPECT_LT(conscious.size_in_bytes(), 0.8 * plain.size_in_bytes());
  double allowed = 0, measured = 0;
  for (const auto& q : c.queries(300, 9)) {
    // A query of one term: its false candidates, against noise × the documents that hold it.
    const std::vector<std::string> one{q[0]};
    const std::vector<std::uint32_t> candidates = conscious.candidates(one);
    const auto holding = static_cast<double>(c.postings.at(q[0]).size());
    measured += static_cast<double>(candidates.size()) - holding;
    allowed += conscious.options().noise * holding;
  }
  EXPECT_LT(measured, allowed);
}

// Higher-rank rows keep the density, so memory and the false-candidate rate stay where they were.
TEST(BitslicedIndex, HigherRankRowsKeepMemoryAndRate) {
  const corpus c(3000, 0, 43);
  const blume::bitsliced_index rank0 = c.index({.rank = 0, .shard_ratio = 1e6});
  const blume::bitsliced_index rank3 = c.index({.rank = 3, .shard_ratio = 1e6});
  ASSERT_GT(rank3.shards()[0].higher_rows, 0U);
  EXPECT_NEAR(static_cast<double>(rank3.size_in_bytes()), static_cast<double>(rank0.size_in_bytes()),
              0.15 * static_cast<double>(rank0.size_in_bytes()));
  const auto queries = c.queries(300, 10);
  const double a = measure(c, rank0, queries).measured, b = measure(c, rank3, queries).measured;
  EXPECT_LT(b, 2.0 * a + 20);
}

TEST(BitslicedIndex, RefusesBadOptionsAndEmptyQueries) {
  EXPECT_THROW(blume::bitsliced_builder({.density = 0.0}), blume::invalid_argument);
  EXPECT_THROW(blume::bitsliced_builder({.density = 0.7}), blume::invalid_argument);
  EXPECT_THROW(blume::bitsliced_builder({.noise = 0.0}), blume::invalid_argument);
  EXPECT_THROW(blume::bitsliced_builder({.rank = 2}), blume::invalid_argument);
  EXPECT_THROW(blume::bitsliced_builder({.rank = 3, .frequency_conscious = false}), blume::invalid_argument);
  EXPECT_THROW(blume::bitsliced_builder({.shard_ratio = 0.5}), blume::invalid_argument);
  const blume::bitsliced_index index = corpus(10, 0).index();
  EXPECT_THROW((void)index.candidates(std::vector<std::string>{}), blume::invalid_argument);
}

TEST(BitslicedIndex, AnEmptyIndexAnswersNothingAndRoundTrips) {
  const blume::bitsliced_index index = blume::bitsliced_builder().finish();
  EXPECT_EQ(index.documents(), 0U);
  EXPECT_TRUE(index.candidates(std::vector<std::string>{"x"}).empty());
  EXPECT_EQ(blume::decode_index(blume::encode_index(index)).documents(), 0U);
}

TEST(BitslicedIndex, TextDocumentsAreTokenized) {
  blume::bitsliced_builder b;
  b.add_text("a.txt", "The quick brown Fox.");
  b.add_text("b.txt", "the lazy dog");
  const blume::bitsliced_index index = std::move(b).finish();
  EXPECT_EQ(index.candidates(std::vector<std::string>{"fox", "quick"}), std::vector<std::uint32_t>{0});
  EXPECT_EQ(index.candidates(std::vector<std::string>{"the"}), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(index.document_name(1), "b.txt");
}

// ---- the file ------------------------------------------------------------------------------------------

TEST(BitslicedIndexFile, RoundTripsToTheSameAnswersAndBytes) {
  const corpus c(800, 0, 3);
  const blume::bitsliced_index index = c.index();
  const std::vector<std::byte> bytes = blume::encode_index(index);
  const blume::bitsliced_index back = blume::decode_index(bytes);
  EXPECT_EQ(blume::encode_index(back), bytes);
  for (const auto& q : c.queries(50)) EXPECT_EQ(back.candidates(q), index.candidates(q));
  const blume_test::temp_dir dir;
  blume::save_index(index, dir.path() / "i.bidx");
  EXPECT_EQ(blume::encode_index(blume::load_index(dir.path() / "i.bidx")), bytes);
}

// Frozen bytes: a change here means term hashing, row choice, sharding or the format changed, and indexes
// on disk would answer wrongly. Change the format on purpose (a new version), never by accident.
TEST(BitslicedIndexFile, GoldenBytes) {
  blume::bitsliced_builder b;
  for (int d = 0; d < 300; ++d) {
    std::string text;
    for (int t = 0; t <= d % 40; ++t) text += "term" + std::to_string((d * 7 + t * t) % 500) + " ";
    b.add_text("doc-" + std::to_string(d), text);
  }
  const std::vector<std::byte> bytes = blume::encode_index(std::move(b).finish());
  EXPECT_EQ(bytes.size(), 32224u);
  EXPECT_EQ(XXH64(bytes.data(), bytes.size(), 0), 18203550475797186566ull);
}

TEST(BitslicedIndexFile, DamagedBytesAreRefused) {
  const std::vector<std::byte> good = blume::encode_index(corpus(60, 0, 4).index());
  for (std::size_t n = 0; n < good.size(); n += 1 + n / 16) {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW((void)blume::decode_index(cut), blume::format_error) << n;
  }
  for (std::size_t at = 0; at < good.size(); at += 1 + at / 8) {
    std::vector<std::byte> flipped = good;
    flipped[at] ^= std::byte{0x10};
    EXPECT_THROW((void)blume::decode_index(flipped), blume::format_error) << at;
  }
}

/// The bytes with the uint64 at `offset` set to v and the checksum made right again: a forged file.
std::vector<std::byte> forged(std::vector<std::byte> bytes, std::size_t offset, std::uint64_t v,
                              std::size_t width = 8) {
  std::memcpy(bytes.data() + offset, &v, width);
  const std::size_t body = bytes.size() - 8;
  const std::uint64_t sum = XXH64(bytes.data(), body, 0);
  std::memcpy(bytes.data() + body, &sum, 8);
  return bytes;
}

// A bit past a shard's last column names a column that does not exist: refused, in rank-0 and higher rows.
TEST(BitslicedIndexFile, BitsPastTheLastColumnAreRefused) {
  const blume::bitsliced_index one_shard = corpus(3000, 0, 4).index({.shard_ratio = 1e6});
  ASSERT_GT(one_shard.shards()[0].higher_rows, 0U);
  const std::vector<std::byte> good = blume::encode_index(one_shard);
  const blume::bitsliced_shard& s = one_shard.shards()[0];
  std::uint64_t term_count = 0;
  std::memcpy(&term_count, good.data() + 80, 8);
  const std::size_t rows =
      blume::index_format::header_size + 16 * term_count + 24 + blume::index_format::padded8(4 * s.columns());
  const std::uint64_t last_bit = uint64_t{1} << 63;  // 3,000 columns leave the last word's top bits unused
  const std::size_t last_word_of_row0 = rows + 8 * (s.words - 1);
  std::uint64_t word = 0;
  std::memcpy(&word, good.data() + last_word_of_row0, 8);
  EXPECT_THROW((void)blume::decode_index(forged(good, last_word_of_row0, word | last_bit)), blume::format_error);
  const std::uint64_t higher_words = (s.words + 7) / 8;
  const std::size_t last_word_of_higher =
      rows + 8 * ((s.shared_rows + one_shard.private_rows()) * s.words + higher_words - 1);
  std::memcpy(&word, good.data() + last_word_of_higher, 8);
  EXPECT_THROW((void)blume::decode_index(forged(good, last_word_of_higher, word | last_bit)), blume::format_error);
  EXPECT_NO_THROW((void)blume::decode_index(forged(good, last_word_of_row0, word & 0)));
}

// The format has one encoding of each index: a forged byte anywhere (padding included) is refused, or it
// changed the index, which then writes exactly the forged bytes back.
TEST(BitslicedIndexFile, EveryForgedByteIsRefusedOrWrittenBackExactly) {
  // 61 documents named doc0 … doc60 leave 5 bytes of padding after the names, and odd shards leave
  // 4 after their column maps.
  blume::bitsliced_builder b;
  for (int d = 0; d < 61; ++d)
    b.add_text("doc" + std::to_string(d), "w" + std::to_string(d % 7) + " x y" + std::to_string(d));
  const std::vector<std::byte> good = blume::encode_index(std::move(b).finish());
  ASSERT_LT(good.size(), 20'000U);
  for (std::size_t at = 0; at + 8 < good.size(); ++at) {
    std::vector<std::byte> bytes = forged(good, at, std::to_integer<std::uint8_t>(good[at]) ^ 0x01U, 1);
    try {
      EXPECT_TRUE(blume::encode_index(blume::decode_index(bytes)) == bytes) << "byte " << at;
    } catch (const blume::format_error&) {
    }
  }
}

TEST(BitslicedIndexFile, ForgedCountsAreRefusedBeforeAllocating) {
  const std::vector<std::byte> good = blume::encode_index(corpus(60, 0, 4).index());
  const std::size_t terms = blume::index_format::header_size;
  std::uint64_t term_count = 0;
  std::memcpy(&term_count, good.data() + 80, 8);
  const std::size_t shards = terms + 16 * term_count;
  for (const auto& [offset, value, width] : std::vector<std::tuple<std::size_t, std::uint64_t, std::size_t>>{
           {24, ~0ULL, 8},                // documents
           {24, 59, 8},                   // one document fewer than the columns hold
           {56, 2, 4},                    // rank
           {60, 3, 4},                    // flags
           {64, 7, 4},                    // hash id
           {68, 0xffffffff, 4},           // private rows
           {72, 0, 4},                    // ad hoc rank-0 rows
           {80, 1ULL << 60, 8},           // term count
           {88, 1ULL << 60, 8},           // shard count
           {shards, 1ULL << 40, 8},       // a shard's columns
           {shards + 8, 0xffffffff, 4},   // its shared rows
           {shards + 12, 0xffffffff, 4},  // its higher-rank rows
           {shards + 16, 1ULL << 50, 8},  // its row length
       }) {
    EXPECT_THROW((void)blume::decode_index(forged(good, offset, value, width)), blume::format_error) << offset;
  }
}

}  // namespace
