// SPDX-License-Identifier: Apache-2.0
// A Bloom semi-join between two SQLite databases (Bloomjoin: Mackert & Lohman 1986). Site A holds
// customers, site B their orders; A wants the orders of its Icelandic customers. Instead of sending B the
// list of those customers' ids, A sends a filter of them; B keeps the orders whose customer the filter may
// hold (a SQL function probes it inside B's query) and sends those back, and A joins them exactly. The
// filter's false positives cost rows on the way back, never a wrong answer: A's join drops them.
//
//   semi_join [orders] [customers]        1,000,000 orders of 100,000 customers by default
//
// It exits non-zero if the semi-join's result differs from the join SQLite computes over both tables,
// or if far more customers pass the filter than its planned false-positive rate allows.
#include <sqlite3.h>
#include <blume/blume.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

using filter = blume::split_block_bloom_filter<>;
constexpr std::uint64_t data_seed = 7;
// What a shipped order row costs on the wire: three 64-bit integers.
constexpr std::uint64_t row_bytes = 24;
// What a shipped key costs in a plain list: one 64-bit integer. The ids are random 63-bit numbers, as
// surrogate keys from a hash or a snowflake generator are, so a list of them does not compress much.
constexpr std::uint64_t key_bytes = 8;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct db_closer {
  void operator()(sqlite3* db) const noexcept { sqlite3_close(db); }
};
struct statement_finalizer {
  void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};
using database = std::unique_ptr<sqlite3, db_closer>;
using statement = std::unique_ptr<sqlite3_stmt, statement_finalizer>;

void check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw std::runtime_error(std::string(what) + ": " + sqlite3_errmsg(db));
}

database open(const char* uri) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
  database owned(db);
  check(rc, db, "open");
  return owned;
}

void exec(sqlite3* db, const char* sql) { check(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), db, sql); }

statement prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  check(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), db, sql);
  return statement(s);
}

std::int64_t scalar(sqlite3* db, const char* sql) {
  statement s = prepare(db, sql);
  check(sqlite3_step(s.get()), db, sql);
  return sqlite3_column_int64(s.get(), 0);
}

// may_join(customer_id): false only for a customer A certainly did not ask for.
void may_join(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* f = static_cast<const filter*>(sqlite3_user_data(ctx));
  // A NULL key joins nothing, and SQLite would turn a text or real key into some integer.
  if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) return sqlite3_result_int(ctx, 0);
  sqlite3_result_int(ctx, f->contains(static_cast<std::int64_t>(sqlite3_value_int64(argv[0]))) ? 1 : 0);
}

std::uint64_t parse_count(const char* text, const char* what) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) {
    std::fprintf(stderr, "semi_join: %s must be a positive integer, got \"%s\"\n", what, text);
    std::exit(2);
  }
  return v;
}

std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

struct order_row {
  std::int64_t order_id, customer_id, amount_cents;
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc > 3) {
    std::fprintf(stderr, "usage: semi_join [orders] [customers]\n");
    return 2;
  }
  const std::uint64_t order_count = argc > 1 ? parse_count(argv[1], "orders") : 1'000'000;
  const std::uint64_t customer_count = argc > 2 ? parse_count(argv[2], "customers") : 100'000;

  // Site B's database is a named in-memory one with a shared cache, so that site A can attach it to
  // compute the exact join the semi-join must reproduce.
  const database site_a = open("file:site_a?mode=memory&cache=shared");
  const database site_b = open("file:site_b?mode=memory&cache=shared");
  sqlite3* a = site_a.get();
  sqlite3* b = site_b.get();

  // Country shares in percent; the query asks for the 2% in Iceland.
  constexpr std::array<std::pair<const char*, int>, 10> countries = {{{"US", 30},
                                                                      {"DE", 15},
                                                                      {"GB", 12},
                                                                      {"FR", 10},
                                                                      {"JP", 10},
                                                                      {"BR", 8},
                                                                      {"IN", 7},
                                                                      {"CA", 4},
                                                                      {"NZ", 2},
                                                                      {"IS", 2}}};
  std::uint64_t state = data_seed;
  std::vector<std::int64_t> customer_ids;
  {
    exec(a, "CREATE TABLE customers(id INTEGER PRIMARY KEY, country TEXT NOT NULL, name TEXT NOT NULL)");
    exec(a, "BEGIN");
    statement insert = prepare(a, "INSERT INTO customers VALUES (?, ?, ?)");
    std::unordered_set<std::int64_t> taken;
    while (customer_ids.size() < customer_count) {
      const auto id = static_cast<std::int64_t>(splitmix64(state) >> 1);
      if (!taken.insert(id).second) continue;
      int pick = static_cast<int>(splitmix64(state) % 100);
      std::size_t c = 0;
      while (pick >= countries[c].second) pick -= countries[c++].second;
      const std::string name = "customer " + std::to_string(customer_ids.size());
      sqlite3_bind_int64(insert.get(), 1, id);
      sqlite3_bind_text(insert.get(), 2, countries[c].first, -1, SQLITE_STATIC);
      sqlite3_bind_text(insert.get(), 3, name.c_str(), -1, SQLITE_TRANSIENT);
      check(sqlite3_step(insert.get()), a, "insert customer");
      sqlite3_reset(insert.get());
      customer_ids.push_back(id);
    }
    exec(a, "COMMIT");
  }
  {
    exec(
        b,
        "CREATE TABLE orders(order_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount_cents INTEGER NOT NULL)");
    exec(b, "BEGIN");
    statement insert = prepare(b, "INSERT INTO orders VALUES (?, ?, ?)");
    for (std::uint64_t i = 0; i < order_count; ++i) {
      sqlite3_bind_int64(insert.get(), 1, static_cast<std::int64_t>(i) + 1);
      sqlite3_bind_int64(insert.get(), 2, customer_ids[splitmix64(state) % customer_ids.size()]);
      sqlite3_bind_int64(insert.get(), 3, static_cast<std::int64_t>(100 + splitmix64(state) % 100'000));
      check(sqlite3_step(insert.get()), b, "insert order");
      sqlite3_reset(insert.get());
    }
    exec(b, "COMMIT");
  }

  // Site A: the join keys of its side of the query.
  std::vector<std::int64_t> keys;
  {
    statement select = prepare(a, "SELECT id FROM customers WHERE country = 'IS'");
    while (sqlite3_step(select.get()) == SQLITE_ROW) keys.push_back(sqlite3_column_int64(select.get(), 0));
  }
  // The answer to reproduce, computed by SQLite over both tables at once.
  exec(a, "ATTACH DATABASE 'file:site_b?mode=memory&cache=shared' AS site_b");
  exec(a,
       "CREATE TEMP TABLE exact AS SELECT o.order_id, c.id, c.name, o.amount_cents FROM site_b.orders o "
       "JOIN customers c ON c.id = o.customer_id WHERE c.country = 'IS'");
  // The customers whose orders a false positive would bring: those with orders, not asked for.
  const auto other_customers = static_cast<double>(
      scalar(a,
             "SELECT count(DISTINCT o.customer_id) FROM site_b.orders o JOIN customers c ON c.id = o.customer_id "
             "WHERE c.country <> 'IS'"));
  exec(a, "DETACH DATABASE site_b");
  const auto matches = static_cast<std::uint64_t>(scalar(a, "SELECT count(*) FROM exact"));
  const std::uint64_t others = order_count - matches;

  std::printf("site A: %s customers; country = 'IS' selects %s of them: the join keys\n",
              grouped(customer_count).c_str(), grouped(keys.size()).c_str());
  std::printf("site B: %s orders, of which %s are theirs; a row ships as %llu bytes, a key as %llu\n\n",
              grouped(order_count).c_str(), grouped(matches).c_str(), static_cast<unsigned long long>(row_bytes),
              static_cast<unsigned long long>(key_bytes));
  std::printf("%-26s %12s %12s %24s %14s\n", "A sends B", "bytes A->B", "rows B->A", "false-positive rows",
              "total bytes");
  std::printf("%-26s %12s %12s %24s %14s\n", "nothing (B sends all)", "0", grouped(order_count).c_str(), "-",
              grouped(order_count * row_bytes).c_str());
  std::printf("%-26s %12s %12s %24s %14s\n", "the key list", grouped(keys.size() * key_bytes).c_str(),
              grouped(matches).c_str(), "0", grouped(keys.size() * key_bytes + matches * row_bytes).c_str());

  exec(a, "CREATE TEMP TABLE shipped(order_id INTEGER, customer_id INTEGER, amount_cents INTEGER)");
  bool ok = true;
  for (const double fpr : {0.01, 0.001, 0.0001}) {
    // Site A: build the filter and serialize it, header and all: those bytes are what travels.
    filter f(keys.size(), fpr);
    for (const std::int64_t k : keys) f.insert(k);
    const std::vector<std::byte> message = blume::to_bytes(f, {keys.size(), fpr});

    // Site B: read the filter back from the bytes and let its query ask it.
    filter received = blume::from_bytes<filter>(message);
    check(sqlite3_create_function_v2(b, "may_join", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, &received, may_join, nullptr,
                                     nullptr, nullptr),
          b, "create may_join");
    std::vector<order_row> reply;
    {
      statement select =
          prepare(b, "SELECT order_id, customer_id, amount_cents FROM orders WHERE may_join(customer_id)");
      int rc;
      while ((rc = sqlite3_step(select.get())) == SQLITE_ROW)
        reply.push_back({sqlite3_column_int64(select.get(), 0), sqlite3_column_int64(select.get(), 1),
                         sqlite3_column_int64(select.get(), 2)});
      check(rc, b, "scan orders");
    }

    // Site A: the exact join over what came back.
    exec(a, "DELETE FROM shipped");
    exec(a, "BEGIN");
    {
      statement insert = prepare(a, "INSERT INTO shipped VALUES (?, ?, ?)");
      for (const order_row& r : reply) {
        sqlite3_bind_int64(insert.get(), 1, r.order_id);
        sqlite3_bind_int64(insert.get(), 2, r.customer_id);
        sqlite3_bind_int64(insert.get(), 3, r.amount_cents);
        check(sqlite3_step(insert.get()), a, "insert shipped row");
        sqlite3_reset(insert.get());
      }
    }
    exec(a, "COMMIT");
    exec(a, "DROP TABLE IF EXISTS temp.joined");
    exec(a,
         "CREATE TEMP TABLE joined AS SELECT s.order_id, c.id, c.name, s.amount_cents FROM shipped s "
         "JOIN customers c ON c.id = s.customer_id WHERE c.country = 'IS'");
    const bool same = scalar(a, "SELECT count(*) FROM joined") == static_cast<std::int64_t>(matches) &&
                      scalar(a, "SELECT count(*) FROM (SELECT * FROM joined EXCEPT SELECT * FROM exact)") == 0 &&
                      scalar(a, "SELECT count(*) FROM (SELECT * FROM exact EXCEPT SELECT * FROM joined)") == 0;

    const std::uint64_t false_rows = reply.size() - matches;
    const double observed = others ? static_cast<double>(false_rows) / static_cast<double>(others) : 0;
    const double planned = f.predicted_fpr();
    char label[32], false_text[48];
    std::snprintf(label, sizeof label, "split-block, fpr %g%%", 100 * fpr);
    std::snprintf(false_text, sizeof false_text, "%s (%.3f%%; %.3f%%)", grouped(false_rows).c_str(), 100 * observed,
                  100 * planned);
    std::printf("%-26s %12s %12s %24s %14s%s\n", label, grouped(message.size()).c_str(), grouped(reply.size()).c_str(),
                false_text, grouped(message.size() + reply.size() * row_bytes).c_str(), same ? "" : "   WRONG RESULT");
    if (!same) ok = false;
    // The rows of one falsely matched customer come back together, so the check counts customers, each
    // one lookup: their number is about Poisson with mean planned × other customers, and a count more
    // than four standard deviations above it means the filter does worse than it was planned to.
    const double mean = planned * other_customers;
    const auto false_customers = static_cast<double>(
        scalar(a,
               "SELECT count(DISTINCT s.customer_id) FROM shipped s JOIN customers c ON c.id = s.customer_id "
               "WHERE c.country <> 'IS'"));
    if (false_customers > mean + 4 * std::sqrt(mean) + 3) {
      std::printf("FAILED: %.0f customers not asked for passed the filter, about %.1f expected\n", false_customers,
                  mean);
      ok = false;
    }
  }
  std::printf(
      "(false-positive rows: count (share of the orders not asked for; the rate the filter predicts for its fill))\n");
  if (!ok) return 1;
  std::printf("\nthe semi-join equals the exact join at every rate: %s rows\n", grouped(matches).c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "semi_join: %s\n", e.what());
  return 1;
}
