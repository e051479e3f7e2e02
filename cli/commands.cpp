#include "commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include <optional>

#include "blume/any_filter.hpp"
#include "blume/fill.hpp"
#include "blume/plan.hpp"
#include "progress.hpp"
#include "synthetic_keys.hpp"

namespace blume::cli {

namespace {

// ---- formatting -------------------------------------------------------------------------------------

std::string human_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}
std::string percent(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof buf, rate >= 0.001 ? "%.3f%%" : "%.5f%%", rate * 100);
  return buf;
}
std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// Buffered standard output: one write per megabyte rather than one per answer.
class output {
 public:
  ~output() { flush(); }
  void add(std::string_view s) {
    buffer_ += s;
    if (buffer_.size() >= (1u << 20)) flush();
  }
  void flush() {
    if (buffer_.empty()) return;
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size() || std::fflush(stdout) != 0)
      throw io_error("cannot write to standard output");
    buffer_.clear();
  }

 private:
  std::string buffer_;
};

// ---- kinds ------------------------------------------------------------------------------------------

template <class F>
constexpr bool concurrent_insert = F::kind == filter_kind::bloom || F::kind == filter_kind::partitioned ||
                                   F::kind == filter_kind::blocked || F::kind == filter_kind::split_block;
template <class F>
constexpr bool has_erase = requires(F& f, std::string_view k) { f.erase(k); } &&
                           (F::kind == filter_kind::counting || F::kind == filter_kind::cuckoo ||
                            F::kind == filter_kind::quotient);
template <class F>
constexpr bool bit_array = requires(const F& f) { f.fill_ratio(); };
/// Kinds whose insert_many reports how many keys it stored (the others always store them): a table that
/// fills up, and a scalable chain that is non-scaling or cannot add its next layer.
template <class F>
constexpr bool may_be_full =
    F::kind == filter_kind::cuckoo || F::kind == filter_kind::quotient || F::kind == filter_kind::scalable;

/// Inserts one key; false only when the filter had no room for it.
template <class F, class K>
bool insert_stored(F& f, const K& k) {
  if constexpr (requires { f.try_insert(k) == insert_result::full; }) {
    return f.try_insert(k) != insert_result::full;
  } else {
    return f.insert(k);
  }
}

/// Inserts keys (a batch of string_views) and returns how many were refused because the filter is full.
template <class F>
constexpr bool takes_inserts = requires(F& f, std::string_view k) { f.insert(k); };

template <class F>
std::uint64_t insert_batch(F& f, const std::vector<std::string_view>& keys, bool concurrent) {
  static_assert(takes_inserts<F>);
  if constexpr (concurrent_insert<F>) {
    if (concurrent) {
      f.insert_many_concurrent(keys);
      return 0;
    }
  }
  if constexpr (may_be_full<F>) {
    return keys.size() - f.insert_many(keys);
  } else {
    f.insert_many(keys);
    return 0;
  }
}

/// Inserts every key of `block` (empty keys skipped); returns {keys, refused}.
template <class F>
std::pair<std::uint64_t, std::uint64_t> insert_block(F& f, std::string_view block, char delimiter, bool concurrent) {
  std::vector<std::string_view> batch;
  batch.reserve(4096);
  std::uint64_t keys = 0, refused = 0;
  for_each_key(block, delimiter, [&](std::string_view k) {
    if (k.empty()) return;
    batch.push_back(k);
    if (batch.size() == 4096) {
      refused += insert_batch(f, batch, concurrent);
      keys += batch.size();
      batch.clear();
    }
  });
  refused += insert_batch(f, batch, concurrent);
  keys += batch.size();
  return {keys, refused};
}

/// Splits `block` into `parts` pieces at key boundaries.
std::vector<std::string_view> split(std::string_view block, char delimiter, unsigned parts) {
  std::vector<std::string_view> out;
  for (unsigned i = parts; i > 1 && !block.empty(); --i) {
    std::size_t cut = block.size() / i;
    const std::size_t d = block.find(delimiter, cut);
    cut = d == std::string_view::npos ? block.size() : d + 1;
    out.push_back(block.substr(0, cut));
    block.remove_prefix(cut);
  }
  if (!block.empty()) out.push_back(block);
  return out;
}

// ---- writing ----------------------------------------------------------------------------------------

/// Locks the file a command is about to replace, so concurrent writers serialise (see blume::file_lock).
/// Standard output needs no lock.
void lock_target(std::optional<file_lock>& lock, const std::string& path, bool no_wait) {
  if (path == "-") return;
  try {
    lock.emplace(path, no_wait ? file_lock::mode::no_wait : file_lock::mode::wait);
  } catch (const file_locked& e) {
    throw file_locked(std::string(e.what()) + " (--no-wait)");
  }
}

/// Writes a command's filter: to a file atomically, or to standard output for "-".
void write_output(const any_filter& f, const std::string& path, const filter_design& design) {
  if (path != "-") {
    save_filter(f, path, design);
    return;
  }
  if (::isatty(STDOUT_FILENO) != 0)
    throw invalid_argument("refusing to write a binary filter to a terminal: redirect standard output or give --output FILE");
  std::fflush(stdout);
  write_filter(f, STDOUT_FILENO, "standard output", design);
}

// ---- overfill -----------------------------------------------------------------------------------------

/// A fixed-size filter given more keys than it was planned for keeps answering, but "maybe" loses its
/// meaning: past a rate this many times the target, writers refuse unless told otherwise.
constexpr double overfill_tolerance = 1.5;

std::string count_text(double count) {
  return std::isfinite(count) ? "about " + std::to_string(static_cast<std::uint64_t>(std::llround(count))) + " distinct keys"
                              : "enough distinct keys to set every bit";
}

/// Throws when `f` is filled past the tolerance: `what` says what would have happened, `remedy` how to
/// get a filter that holds the keys. A filter without a design record (a version-1 file) has no known
/// target, and a capacity read off its geometry can be far off (split-block's k is fixed), so there it
/// only warns.
template <class F>
void refuse_overfill(const F& f, const filter_design& design, const std::string& what, const std::string& remedy) {
  if constexpr (fill_measurable<F>) {  // the others grow, refuse keys without room, forget, or are built whole
    const fill_state s = fill_against(f, design);
    if (!(s.rate > overfill_tolerance * s.target)) return;
    const std::string state = count_text(s.count) + " against a capacity of " +
                              std::to_string(static_cast<std::uint64_t>(std::llround(s.capacity))) +
                              (s.inferred ? " (inferred from its geometry)" : "") +
                              " would raise its false-positive rate to " + percent(s.rate) + " (target " +
                              percent(s.target) + ")";
    if (s.inferred) {
      std::fprintf(stderr, "blume: warning: %s: %s; the file records no planned capacity to hold it to\n",
                   what.c_str(), state.c_str());
      return;
    }
    throw invalid_argument(what + ": " + state + "; " + remedy + ", or pass --allow-overfill");
  }
}

}  // namespace

filter_kind default_kind(std::uint64_t items, double fpr) {
  for (const filter_kind k : {filter_kind::split_block, filter_kind::blocked}) {
    try {
      const filter_plan p = plan_for(items, fpr, k);
      // A blocked layout pays in memory at low rates; past 1.5 × the classic size the classic filter is
      // the better default.
      if (static_cast<double>(p.bits) <= 1.5 * math::optimal_bits(static_cast<double>(items), fpr)) return k;
    } catch (const invalid_argument&) {
    }
  }
  return filter_kind::bloom;
}

// ---- plan -------------------------------------------------------------------------------------------

namespace {

/// A budget that buys a rate this high buys nothing useful: half the absent keys would pass.
constexpr double useless_rate = 0.5;

struct plan_row {
  filter_kind kind;
  std::optional<filter_plan> plan;
  std::string problem;  // why there is no plan
};

}  // namespace

int run_plan(const plan_options& o) {
  std::vector<filter_kind> kinds;
  if (o.kind) {
    kinds.push_back(*o.kind);
  } else {
    kinds.assign(all_kinds.begin(), all_kinds.end());
    if (o.value_bits) kinds.push_back(filter_kind::bloomier);
    if (o.excluded) kinds.push_back(filter_kind::cascade);
  }
  const double n = static_cast<double>(o.items);
  // The largest filter blume builds: a bigger budget is capped, and says so.
  const bool capped = o.memory_bytes && *o.memory_bytes > max_filter_bits / 8;
  const std::uint64_t budget_bits = o.memory_bytes ? std::min<std::uint64_t>(*o.memory_bytes, max_filter_bits / 8) * 8 : 0;
  std::vector<plan_row> rows;
  double best_rate = 1;
  bool any_useful = false;
  for (const filter_kind k : kinds) {
    plan_row row{k, std::nullopt, {}};
    try {
      if (k == filter_kind::cascade && o.excluded) {
        row.plan = plan_cascade(o.items, *o.excluded);  // its size follows from the two sets alone
      } else if (o.memory_bytes) {
        row.plan = plan_for_bits(o.items, budget_bits, k);
        if (!(row.plan->predicted_fpr < useless_rate)) {
          row.problem = "budget too small: the rate would be " + percent(row.plan->predicted_fpr);
          row.plan.reset();
        }
      } else if (k == filter_kind::bloomier && o.value_bits) {
        row.plan = plan_bloomier(o.items, *o.fpr, *o.value_bits);
      } else {
        row.plan = plan_for(o.items, *o.fpr, k);
      }
    } catch (const invalid_argument& e) {
      row.problem = e.what();
    }
    if (row.plan) {
      any_useful = true;
      if (k != filter_kind::cascade) best_rate = std::min(best_rate, row.plan->predicted_fpr);
    }
    rows.push_back(std::move(row));
  }
  if (o.memory_bytes && !any_useful)
    throw invalid_argument("--memory " + human_bytes(static_cast<double>(*o.memory_bytes)) + " cannot hold " +
                           std::to_string(o.items) + " items at any useful rate (" +
                           fixed(static_cast<double>(budget_bits) / n, 3) + " bits per key; every kind's rate would be " +
                           percent(useless_rate) + " or more)");
  const double rate = o.fpr ? *o.fpr : best_rate;
  // A std::unordered_set<std::string>: a 32-byte string object and an 8-byte hash in a node, malloc's
  // 16-byte chunk header, a bucket pointer, and the key's own heap block once it outgrows the string's
  // 15-byte inline buffer.
  const double key_heap = o.key_bytes > 15 ? std::ceil((static_cast<double>(o.key_bytes) + 1 + 8) / 16) * 16 : 0;
  const double set_bytes = n * (48 + 8 + 8 + key_heap);
  const bool compare = o.fpr || o.memory_bytes;  // a cascade alone: no rate to compare with

  if (o.json) {
    std::string out = "{\"items\": " + std::to_string(o.items);
    if (o.fpr) out += ", \"fpr\": " + json_number(*o.fpr);
    if (o.memory_bytes)
      out += ", \"memory_bytes\": " + std::to_string(*o.memory_bytes) + ", \"capped_to_bytes\": " +
             (capped ? std::to_string(budget_bits / 8) : std::string("null"));
    if (o.excluded) out += ", \"excluded\": " + std::to_string(*o.excluded);
    out += ", \"kinds\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const plan_row& r = rows[i];
      out += (i ? ", " : "") + std::string("{\"kind\": ") + json_string(kind_name(r.kind));
      if (r.plan) {
        const bool exact = r.kind == filter_kind::cascade;
        out += ", \"bits\": " + std::to_string(r.plan->bits) + ", \"bytes\": " + std::to_string(r.plan->bytes) +
               ", \"hashes\": " + std::to_string(r.plan->hashes) + ", \"bits_per_key\": " +
               json_number(r.plan->bits_per_key()) + ", \"predicted_fpr\": " +
               (exact ? std::string("0") : json_number(r.plan->predicted_fpr));
      } else {
        out += ", \"error\": " + json_string(r.problem);
      }
      out += "}";
    }
    out += "]";
    if (compare)
      out += ", \"hash_set_bytes\": " + json_number(set_bytes) + ", \"minimum_bits_per_key\": " +
             json_number(std::log2(1 / rate));
    std::printf("%s}\n", out.c_str());
    return 0;
  }

  if (o.memory_bytes) {
    std::printf("%llu items in %s (%s bits per key)%s:\n\n", static_cast<unsigned long long>(o.items),
                human_bytes(static_cast<double>(budget_bits / 8)).c_str(),
                fixed(static_cast<double>(budget_bits) / n, 2).c_str(),
                capped ? (", capped from " + human_bytes(static_cast<double>(*o.memory_bytes)) +
                          ": the largest filter blume builds").c_str()
                       : "");
  } else if (o.fpr) {
    std::printf("%llu items at a false-positive rate of %s:\n\n", static_cast<unsigned long long>(o.items),
                percent(*o.fpr).c_str());
  } else {
    std::printf("%llu included keys against %llu excluded ones, exact on both:\n\n",
                static_cast<unsigned long long>(o.items), static_cast<unsigned long long>(*o.excluded));
  }
  std::printf("%-12s %16s %12s %4s %9s %14s\n", "kind", "bits", "memory", "k", "bits/key", "predicted FPR");
  for (const plan_row& r : rows) {
    if (!r.plan) {
      std::printf("%-12s %s\n", std::string(kind_name(r.kind)).c_str(), r.problem.c_str());
      continue;
    }
    const filter_plan& p = *r.plan;
    // A cascade's k column is its levels, and it has no false positives on its universe.
    const bool exact = r.kind == filter_kind::cascade;
    std::printf("%-12s %16llu %12s %4u %9s %14s\n", std::string(kind_name(r.kind)).c_str(),
                static_cast<unsigned long long>(p.bits), human_bytes(static_cast<double>(p.bytes)).c_str(), p.hashes,
                fixed(p.bits_per_key(), 2).c_str(), exact ? "exact" : percent(p.predicted_fpr).c_str());
  }
  if (!compare) return 0;
  std::printf("\nfor comparison:\n");
  std::printf("  a hash set of the keys (std::unordered_set<std::string>, %llu-byte keys): about %s\n",
              static_cast<unsigned long long>(o.key_bytes), human_bytes(set_bytes).c_str());
  std::printf("  the information-theoretic minimum at %s: log2(1/ε) = %s bits per key, %s\n", percent(rate).c_str(),
              fixed(std::log2(1 / rate), 2).c_str(), human_bytes(n * std::log2(1 / rate) / 8).c_str());
  return 0;
}

// ---- build ------------------------------------------------------------------------------------------

namespace {

/// A static kind: the keys' digests (8 bytes each) are collected, hashed on every thread, then the filter
/// is built from all of them.
any_filter build_static(const build_options& o, filter_kind kind, key_source& source, progress& bar, std::uint64_t& keys,
                        build_stats& stats) {
  plan_for(std::max<std::uint64_t>(o.items, 1), o.fpr, kind);  // refuses a target the kind cannot meet
  std::vector<std::uint64_t> lows;
  lows.reserve(o.items);
  std::uint64_t bytes = 0;
  const xxh3_hasher hasher;
  const unsigned threads = std::max(1u, o.threads);
  source.for_each_block([&](std::string_view block) {
    const std::vector<std::string_view> parts = split(block, source.delimiter(), threads);
    std::vector<std::vector<std::uint64_t>> hashed(parts.size());
    const auto hash_part = [&](std::size_t i) {
      for_each_key(parts[i], source.delimiter(), [&](std::string_view k) {
        if (!k.empty()) hashed[i].push_back(hash_key(hasher, k).low);
      });
    };
    std::vector<std::thread> workers;
    for (std::size_t i = 1; i < parts.size(); ++i) workers.emplace_back(hash_part, i);
    if (!parts.empty()) hash_part(0);
    for (std::thread& w : workers) w.join();
    for (const auto& h : hashed) lows.insert(lows.end(), h.begin(), h.end());
    bytes += block.size();
    bar.update(lows.size(), bytes);
  });
  keys = lows.size();
  return build_static_filter(kind, std::move(lows), o.fpr, &stats);
}

/// Every key of a file (or stdin), copied: the map kinds build from whole sets held at once.
std::vector<std::string> read_keys(const std::string& path, key_format format) {
  key_source source(path, format);
  std::vector<std::string> keys;
  source.for_each_block([&](std::string_view block) {
    for_each_key(block, source.delimiter(), [&](std::string_view k) {
      if (!k.empty()) keys.emplace_back(k);
    });
  });
  return keys;
}

/// A Bloomier map from KEY<TAB>VALUE records (the value after the last tab, a decimal integer).
any_filter build_bloomier(const build_options& o, std::uint64_t& keys) {
  if (!o.included.empty() || !o.excluded.empty())
    throw invalid_argument("--included and --excluded are for a cascade; a bloomier map reads KEY<TAB>VALUE records");
  key_source source(o.input, o.format);
  std::vector<std::string> names;
  std::vector<std::uint64_t> values;
  std::uint64_t record = 0, widest = 0;
  const std::uint32_t limit = o.value_bits.value_or(32);
  source.for_each_block([&](std::string_view block) {
    for_each_key(block, source.delimiter(), [&](std::string_view line) {
      ++record;
      if (line.empty()) return;
      const std::size_t tab = line.rfind('\t');
      const std::string_view text = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
      std::uint64_t value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (tab == std::string_view::npos || text.empty() || ec != std::errc() || end != text.data() + text.size())
        throw invalid_argument("record " + std::to_string(record) + " of " + (o.input == "-" ? "stdin" : o.input) +
                               " is not KEY<TAB>VALUE with a decimal value");
      if (limit < 64 && (value >> limit) != 0)
        throw invalid_argument("record " + std::to_string(record) + ": value " + std::to_string(value) +
                               " does not fit in " + std::to_string(limit) + " bits");
      widest = std::max(widest, value);
      names.emplace_back(line.substr(0, tab));
      values.push_back(value);
    });
  });
  keys = names.size();
  const auto value_bits = o.value_bits.value_or(std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::bit_width(widest))));
  // The rate of an absent key passing is 2^-check bits: the fewest bits that meet --fpr.
  const auto check_bits = static_cast<std::uint32_t>(std::clamp(std::ceil(-std::log2(o.fpr)), 1.0, 32.0));
  return bloomier_filter<>::build(names, values, value_bits, check_bits);
}

/// A cascade from the two key files.
any_filter build_cascade(const build_options& o, std::uint64_t& keys) {
  if (o.included.empty() || o.excluded.empty())
    throw invalid_argument("a cascade needs --included FILE and --excluded FILE (the keys to answer yes and no for)");
  if (o.input != "-")
    throw invalid_argument("a cascade reads --included and --excluded, not --input");
  const std::vector<std::string> included = read_keys(o.included, o.format);
  const std::vector<std::string> excluded = read_keys(o.excluded, o.format);
  keys = included.size();
  return cascade_filter::build(included, excluded);
}

}  // namespace

namespace {

void refuse_empty(const build_options& o, std::uint64_t keys, const std::string& input) {
  if (keys == 0 && !o.allow_empty)
    throw invalid_argument("no keys in " + (input == "-" ? std::string("standard input") : "'" + input + "'") +
                           ": refusing to build an empty filter (--allow-empty builds one anyway)");
}

/// Reports a finished build on a terminal.
void report_build(const build_options& o, filter_kind kind, std::uint64_t keys) {
  if (::isatty(STDERR_FILENO) != 0 && o.output != "-")
    std::fprintf(stderr, "wrote %s: %s filter, %llu keys\n", o.output.c_str(), std::string(kind_name(kind)).c_str(),
                 static_cast<unsigned long long>(keys));
}

}  // namespace

int run_build(const build_options& options) {
  build_options o = options;
  std::optional<file_lock> lock;
  if (o.kind == filter_kind::bloomier || o.kind == filter_kind::cascade) {
    std::uint64_t keys = 0;
    const any_filter filter = *o.kind == filter_kind::bloomier ? build_bloomier(o, keys) : build_cascade(o, keys);
    refuse_empty(o, keys, *o.kind == filter_kind::bloomier ? o.input : o.included);
    filter_design design;  // a cascade is exact: no rate to record
    if (const auto* map = std::get_if<bloomier_filter<>>(&filter); map != nullptr && keys != 0)
      design = {keys, std::ldexp(1.0, -static_cast<int>(map->check_bits()))};
    lock_target(lock, o.output, o.no_wait);
    write_output(filter, o.output, design);
    report_build(o, *o.kind, keys);
    return 0;
  }
  if (o.value_bits || !o.included.empty() || !o.excluded.empty())
    throw invalid_argument("--value-bits, --included and --excluded are for --kind bloomier and --kind cascade");
  key_source source(o.input, o.format);
  const bool sized_by_input = o.items == 0;
  if (sized_by_input) {
    const std::uint64_t counted = source.count_keys();
    refuse_empty(o, counted, o.input);
    o.items = std::max<std::uint64_t>(counted, 1);
  }
  const filter_kind kind = o.kind ? *o.kind : default_kind(o.items, o.fpr);
  const filter_design design{o.items, o.fpr};
  progress bar(o.progress && ::isatty(STDERR_FILENO) != 0, source.total_bytes());
  std::uint64_t keys = 0, refused = 0, bytes = 0;
  if (is_static(kind)) {
    build_stats stats;
    const any_filter filter = build_static(o, kind, source, bar, keys, stats);
    bar.finish(keys);
    refuse_empty(o, keys, o.input);
    lock_target(lock, o.output, o.no_wait);
    write_output(filter, o.output, {std::max<std::uint64_t>(stats.keys != 0 ? stats.keys : keys, 1), o.fpr});
    if (::isatty(STDERR_FILENO) != 0 && stats.attempts != 0 && o.output != "-")
      std::fprintf(stderr, "wrote %s: %s filter, %llu keys (%llu duplicates dropped); %u seed(s) tried, %s of working memory\n",
                   o.output.c_str(), std::string(kind_name(kind)).c_str(), static_cast<unsigned long long>(stats.keys),
                   static_cast<unsigned long long>(stats.duplicates), stats.attempts,
                   human_bytes(static_cast<double>(stats.peak_bytes)).c_str());
    return 0;
  }
  any_filter filter = make_filter(kind, o.items, o.fpr);
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (!takes_inserts<F>) {
          throw invalid_argument("a static filter cannot take inserts");
        } else {
        const unsigned threads = concurrent_insert<F> ? std::max(1u, o.threads) : 1u;
        source.for_each_block([&](std::string_view block) {
          if (threads == 1) {
            const auto [k, r] = insert_block(f, block, source.delimiter(), false);
            keys += k;
            refused += r;
          } else {
            const std::vector<std::string_view> parts = split(block, source.delimiter(), threads);
            std::vector<std::pair<std::uint64_t, std::uint64_t>> counts(parts.size());
            std::vector<std::thread> workers;
            for (std::size_t i = 1; i < parts.size(); ++i)
              workers.emplace_back([&, i] { counts[i] = insert_block(f, parts[i], source.delimiter(), true); });
            if (!parts.empty()) counts[0] = insert_block(f, parts[0], source.delimiter(), true);
            for (std::thread& w : workers) w.join();
            for (const auto& [k, r] : counts) {
              keys += k;
              refused += r;
            }
          }
          bytes += block.size();
          bar.update(keys, bytes);
        });
        }
      },
      filter);
  bar.finish(keys);
  refuse_empty(o, keys, o.input);
  if (refused != 0)
    throw invalid_argument("the " + std::string(kind_name(kind)) + " filter is full: " + std::to_string(refused) +
                           " of " + std::to_string(keys) + " keys did not fit; build it with a larger --items" +
                           (sized_by_input ? "" : " (or without --items: build then counts the input)"));
  if (!o.allow_overfill)
    std::visit(
        [&](const auto& f) {
          refuse_overfill(f, design,
                          "the " + std::string(kind_name(kind)) + " filter was sized for --items " +
                              std::to_string(o.items) + " and given " + std::to_string(keys) + " keys",
                          "build it with a larger --items (or without --items: build then counts the input)");
        },
        filter);
  lock_target(lock, o.output, o.no_wait);
  write_output(filter, o.output, design);
  report_build(o, kind, keys);
  return 0;
}

// ---- query, add, erase ------------------------------------------------------------------------------

namespace {

/// Calls fn(batch) with batches of keys: the command line's, or standard input's as they arrive. Empty
/// keys are never in a filter (build skips empty lines): an empty argument is an error, an empty line of
/// standard input is skipped.
template <class Fn>
void for_each_batch(const query_options& o, Fn&& fn) {
  std::vector<std::string_view> batch;
  if (!o.keys.empty()) {
    for (std::size_t i = 0; i < o.keys.size(); ++i) {
      const std::string_view k = line_key(o.keys[i], o.format);
      if (k.empty())
        throw invalid_argument("key " + std::to_string(i + 1) + " is empty: empty keys are never stored (build skips empty lines)");
      batch.push_back(k);
    }
    fn(batch);
    return;
  }
  key_source source("-", o.format);
  batch.reserve(4096);
  source.for_each_block(
      [&](std::string_view block) {
        for_each_key(block, source.delimiter(), [&](std::string_view k) {
          if (k.empty()) return;
          batch.push_back(k);
          if (batch.size() == 4096) {
            fn(batch);
            batch.clear();
          }
        });
        if (!batch.empty()) fn(batch);
        batch.clear();
      },
      /*gather=*/false);
}

}  // namespace

int run_query(const query_options& o) {
  const any_filter filter = open_filter(o.file);
  bool any_no = false;
  output out;
  std::vector<char> answers;
  std::visit(
      [&](const auto& f) {
        for_each_batch(o, [&](const std::vector<std::string_view>& batch) {
          answers.assign(batch.size(), 0);
          using F = std::decay_t<decltype(f)>;
          if constexpr (F::kind == filter_kind::bloomier) {
            // A map answers with the key's value.
            for (const std::string_view k : batch) {
              const auto value = f.find(k);
              any_no |= !value.has_value();
              if (o.quiet) continue;
              out.add(k);
              out.add(value ? "\t" + std::to_string(*value) + "\n" : std::string("\tno\n"));
            }
            out.flush();
            return;
          }
          if constexpr (requires { f.contains_many(batch, answers.begin()); }) {
            f.contains_many(batch, answers.begin());
          } else {
            for (std::size_t i = 0; i < batch.size(); ++i) answers[i] = f.contains(batch[i]);
          }
          for (std::size_t i = 0; i < batch.size(); ++i) {
            any_no |= answers[i] == 0;
            if (o.quiet) continue;
            out.add(batch[i]);
            // A cascade is exact on the keys it was built from: "yes" rather than "maybe". A filter that
            // forgets cannot say "no", only that the key was not seen recently.
            out.add(answers[i] != 0 ? (F::kind == filter_kind::cascade ? "\tyes\n" : "\tmaybe\n")
                                    : (forgets_v<F> ? "\tabsent\n" : "\tno\n"));
          }
          out.flush();  // answers keep pace with an interactive stream
        });
      },
      filter);
  return any_no ? 1 : 0;
}

int run_update(const query_options& o, update what) {
  std::optional<file_lock> lock;
  lock_target(lock, o.file, o.no_wait);  // held until the new file has replaced the old one
  file_header header;
  any_filter filter = open_filter(o.file, verify::full, &header);
  const filter_design design = header.design;
  std::uint64_t done = 0, total = 0, refused = 0;
  output out;
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if (what == update::erase && !has_erase<F>)
          throw invalid_argument("erase is not sound for a '" + std::string(kind_name(F::kind)) +
                                 "' filter (it cannot forget keys): use a counting, cuckoo or quotient filter");
        for_each_batch(o, [&](const std::vector<std::string_view>& batch) {
          for (const std::string_view k : batch) {
            ++total;
            if (what == update::add) {
              if constexpr (takes_inserts<F>) {
                if constexpr (may_be_full<F>) {
                  refused += !insert_stored(f, k);
                } else {
                  f.insert(k);
                }
                ++done;
              } else {
                throw invalid_argument("a '" + std::string(kind_name(F::kind)) +
                                       "' filter is static: build it again from all the keys (blume build)");
              }
            } else if constexpr (has_erase<F>) {
              const bool erased = f.erase(k);
              done += erased;
              if (!o.quiet) {
                out.add(k);
                out.add(erased ? "\terased\n" : "\tnot found\n");
              }
            }
          }
        });
      },
      filter);
  if (refused != 0)
    throw invalid_argument("the filter is full: " + std::to_string(refused) + " of " + std::to_string(total) +
                           " keys did not fit (nothing was written)");
  if (what == update::add && !o.allow_overfill)
    std::visit(
        [&](const auto& f) {
          refuse_overfill(f, design, "adding " + std::to_string(total) + " keys to '" + o.file + "'",
                          "nothing was written; build a larger filter from all the keys");
        },
        filter);
  save_filter(filter, o.file, design);
  out.flush();
  return what == update::erase && done != total ? 1 : 0;
}

// ---- info, merge, intersect, estimate ---------------------------------------------------------------

int run_info(const std::string& file, bool json) {
  file_header h;
  const any_filter filter = open_filter(file, verify::full, &h);  // verifies the checksums: a damaged file is an error
  struct field {
    std::string name;
    std::string text;
    std::string json;
  };
  std::vector<field> fields;
  const auto add = [&](std::string name, std::string text, std::string json_value) {
    fields.push_back({std::move(name), std::move(text), std::move(json_value)});
  };
  const auto integer = [&](std::string name, std::uint64_t v) { add(std::move(name), std::to_string(v), std::to_string(v)); };
  add("kind", std::string(kind_name(h.kind)), json_string(kind_name(h.kind)));
  add("version", std::string("blume ") + BLUME_VERSION, json_string(BLUME_VERSION));
  integer("format version", h.version);
  if (h.design.recorded()) {
    integer("planned capacity", h.design.items);
    add("target FPR", percent(h.design.fpr), json_number(h.design.fpr));
  } else {
    add("planned capacity", "not recorded (a version-1 file, or saved without it)", "null");
    add("target FPR", "not recorded", "null");
  }
  add("hash", h.hash == hash_id::xxh3_128 ? "xxh3-128" : "murmur64a", json_string(h.hash == hash_id::xxh3_128 ? "xxh3-128" : "murmur64a"));
  integer("seed", h.seed);
  integer("bits", h.bits);
  integer("hashes", h.hashes);
  integer("layout", h.block_bits);
  integer("inserted", h.inserted);
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (F::kind == filter_kind::stable) {
          // Recall of a key as old as the planned capacity, and the age at which half are forgotten.
          const std::uint64_t age = h.design.recorded() ? h.design.items
                                                        : static_cast<std::uint64_t>(static_cast<double>(f.cells()) / f.hashes());
          const double recall = f.recall_after(age);
          add("forgets", "yes: false negatives by design; 'absent' means not seen recently, not never inserted",
              "true");
          add("false-negative rate at capacity",
              percent(1 - recall) + " (model: for a key inserted " + std::to_string(age) + " keys ago)",
              json_number(1 - recall));
          if (const auto half = f.half_forgotten_after())
            add("half forgotten after", std::to_string(*half) + " inserts (model)", std::to_string(*half));
          else
            add("half forgotten after", "never (model: no decrements)", "null");
        } else if constexpr (F::kind == filter_kind::aging) {
          add("forgets", "yes: false negatives by design; 'absent' means not seen recently, not never inserted",
              "true");
          const std::string window = std::to_string(f.window());
          add("remembers", "every key among the last " + std::to_string(f.window() / 2) + " inserts" +
                               (f.window_time().count() != 0 ? " and the last " + fixed(f.window_time().count() / 2e9, 3) + " s" : "") +
                               "; none older than " + window + " inserts" +
                               (f.window_time().count() != 0 ? " or " + fixed(f.window_time().count() / 1e9, 3) + " s" : ""),
              "{\"always_within_items\": " + std::to_string(f.window() / 2) + ", \"never_after_items\": " + window +
                  ", \"window_seconds\": " + json_number(f.window_time().count() / 1e9) + "}");
        } else {
          add("forgets", "no: 'no' is certain", "false");
        }
        if constexpr (bit_array<F>) {
          // One pass over the bits serves the fill, the count estimate and the rate now.
          const double set = static_cast<double>(f.set_bits());
          const double fill = set / static_cast<double>(f.bits());
          const double count = math::estimate_items(F::kind, set, static_cast<double>(f.bits()), f.hashes());
          add("estimated count", fixed(count, 0), json_number(count));
          add("fill ratio", percent(fill), json_number(fill));
          // Shown beside the planned capacity (which version-1 files lack): where this k is optimal.
          const double capacity = f.optimal_load();
          add("capacity (k optimal)", fixed(capacity, 0), json_number(capacity));
          add("predicted FPR at capacity", percent(f.predicted_fpr_at(capacity)),
              json_number(f.predicted_fpr_at(capacity)));
          add("predicted FPR now", percent(f.predicted_fpr_at(count)), json_number(f.predicted_fpr_at(count)));
        } else {
          if constexpr (requires { f.estimated_count(); })
            add("estimated count", fixed(f.estimated_count(), 0), json_number(f.estimated_count()));
          if constexpr (requires { f.load_factor(); })
            add("load factor", percent(f.load_factor()), json_number(f.load_factor()));
          if constexpr (F::kind == filter_kind::bloomier) {
            add("value bits", std::to_string(f.value_bits()), std::to_string(f.value_bits()));
            add("check bits", std::to_string(f.check_bits()), std::to_string(f.check_bits()));
            add("bits per key", fixed(f.bits_per_key(), 2), json_number(f.bits_per_key()));
          }
          if constexpr (F::kind == filter_kind::cascade) {
            add("included keys", std::to_string(f.included()), std::to_string(f.included()));
            add("excluded keys", std::to_string(f.excluded()), std::to_string(f.excluded()));
            add("levels", std::to_string(f.level_count()), std::to_string(f.level_count()));
            std::string sizes, json_sizes = "[";
            for (std::size_t i = 0; i < f.level_count(); ++i) {
              sizes += (i ? ", " : "") + std::to_string(f.level(i).bits());
              json_sizes += (i ? ", " : "") + std::to_string(f.level(i).bits());
            }
            add("level bits", sizes.empty() ? "none" : sizes, json_sizes + "]");
            add("bits per included key", fixed(f.bits_per_included_key(), 2), json_number(f.bits_per_included_key()));
          }
          add("predicted FPR now", percent(f.predicted_fpr()), json_number(f.predicted_fpr()));
          // At capacity: each kind's own notion of full.
          double at_capacity = NAN;
          if constexpr (F::kind == filter_kind::cuckoo) {
            at_capacity = math::cuckoo_fpr(cuckoo_design_load, f.bucket_size(), f.fingerprint_bits());
          } else if constexpr (F::kind == filter_kind::quotient) {
            at_capacity = math::quotient_fpr(static_cast<double>(f.capacity()), static_cast<double>(f.slots()),
                                             f.remainder_bits());
          } else if constexpr (F::kind == filter_kind::scalable) {
            at_capacity = f.fpr_bound();  // however far it grows
          } else if constexpr (F::kind == filter_kind::stable) {
            at_capacity = f.stable_fpr();  // on an endless stream
          }
          if (std::isfinite(at_capacity))
            add("predicted FPR at capacity", percent(at_capacity), json_number(at_capacity));
        }
        add("size", human_bytes(static_cast<double>(f.size_in_bytes())), std::to_string(f.size_in_bytes()));
      },
      filter);
  add("checksum", "ok (header and payload)", json_string("ok"));
  if (json) {
    std::string out = "{";
    for (std::size_t i = 0; i < fields.size(); ++i) {
      std::string key = fields[i].name;
      std::replace(key.begin(), key.end(), ' ', '_');
      key.erase(std::remove_if(key.begin(), key.end(), [](char c) { return c == '(' || c == ')'; }), key.end());
      out += (i ? ", " : "") + json_string(key) + ": " + fields[i].json;
    }
    std::printf("%s}\n", out.c_str());
  } else {
    for (const field& f : fields) std::printf("%-26s %s\n", (f.name + ":").c_str(), f.text.c_str());
  }
  return 0;
}

int run_combine(const std::vector<std::string>& inputs, const std::string& output_path, combine how, bool no_wait) {
  if (inputs.size() < 2) throw invalid_argument("give at least two input files");
  std::optional<file_lock> lock;
  lock_target(lock, output_path, no_wait);  // the output may be one of the inputs: lock before reading
  file_header first;
  any_filter result = open_filter(inputs[0], verify::full, &first);
  const filter_design design = first.design;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const any_filter other = open_filter(inputs[i]);
    if (other.index() != result.index())
      throw incompatible_filters("cannot combine '" + inputs[0] + "' (" + std::string(kind_name(kind_of(result))) +
                                 ") with '" + inputs[i] + "' (" + std::string(kind_name(kind_of(other))) +
                                 "): kinds differ");
    std::visit(
        [&](auto& f) {
          using F = std::decay_t<decltype(f)>;
          const F& g = std::get<F>(other);
          if (how == combine::merge) {
            if constexpr (requires { f.merge(g); }) {
              f.merge(g);
            } else {
              throw incompatible_filters("a '" + std::string(kind_name(F::kind)) +
                                         "' filter is static: build one from the union of the key sets instead");
            }
          } else if constexpr (requires { f.intersect(g); }) {
            f.intersect(g);
          } else {
            throw incompatible_filters("intersection is not supported for '" + std::string(kind_name(F::kind)) +
                                       "' filters");
          }
        },
        result);
  }
  write_output(result, output_path, design);
  return 0;
}

int run_estimate(const std::string& a_path, const std::string& b_path, bool json) {
  const any_filter a = open_filter(a_path);
  const any_filter b = open_filter(b_path);
  if (a.index() != b.index())
    throw incompatible_filters("cannot compare a '" + std::string(kind_name(kind_of(a))) + "' filter with a '" +
                               std::string(kind_name(kind_of(b))) + "' filter: kinds differ");
  double na = 0, nb = 0, both = 0, either = 0, jaccard = 0;
  std::visit(
      [&](const auto& x) {
        using F = std::decay_t<decltype(x)>;
        if constexpr (bit_array<F>) {
          const F& y = std::get<F>(b);
          na = x.estimated_count();
          nb = y.estimated_count();
          either = estimate_union(x, y);
          both = estimate_intersection(x, y);
          jaccard = estimate_jaccard(x, y);
        } else {
          throw incompatible_filters("set-size estimates need a bit-array filter (bloom, partitioned, blocked, "
                                     "split-block, counting), not '" + std::string(kind_name(F::kind)) + "'");
        }
      },
      a);
  if (json) {
    std::printf("{\"a\": %s, \"b\": %s, \"union\": %s, \"intersection\": %s, \"jaccard\": %s}\n", json_number(na).c_str(),
                json_number(nb).c_str(), json_number(either).c_str(), json_number(both).c_str(), json_number(jaccard).c_str());
  } else {
    std::printf("A        %s\nB        %s\nA ∪ B    %s\nA ∩ B    %s\nJaccard  %s\n", fixed(na, 0).c_str(),
                fixed(nb, 0).c_str(), fixed(either, 0).c_str(), fixed(both, 0).c_str(), fixed(jaccard, 4).c_str());
  }
  return 0;
}

// ---- bench ------------------------------------------------------------------------------------------

int run_bench(const bench_options& o) {
  const std::vector<filter_kind> kinds = o.kinds.empty() ? std::vector<filter_kind>(all_kinds.begin(), all_kinds.end())
                                                         : o.kinds;
  for (const filter_kind k : kinds)
    if (k == filter_kind::bloomier || k == filter_kind::cascade)
      throw invalid_argument("blume bench times filters of one key set; a " + std::string(kind_name(k)) +
                             " takes its own inputs (see the library's tests and docs/format.md)");
  std::vector<std::uint64_t> present(o.items), absent(std::min<std::uint64_t>(o.items, 1'000'000));
  for (std::uint64_t i = 0; i < present.size(); ++i) present[i] = splitmix64(i);
  for (std::uint64_t i = 0; i < absent.size(); ++i) absent[i] = splitmix64(o.items + i);
  std::printf("n = %llu 64-bit keys, target %s; ns per key, batched calls; %u hardware threads\n\n",
              static_cast<unsigned long long>(o.items), percent(o.fpr).c_str(), std::thread::hardware_concurrency());
  std::printf("%-12s %9s %11s %12s %12s %12s\n", "kind", "bits/key", "insert ns", "+ lookup ns", "- lookup ns", "measured FPR");
  using clock = std::chrono::steady_clock;
  const auto ns_per = [](clock::duration d, std::size_t n) {
    return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(n);
  };
  for (const filter_kind k : kinds) {
    auto start = clock::now();
    any_filter filter = is_static(k) ? build_static_filter(k, [&] {
                                         std::vector<std::uint64_t> lows(present.size());
                                         const xxh3_hasher h;
                                         for (std::size_t i = 0; i < present.size(); ++i) lows[i] = hash_key(h, present[i]).low;
                                         return lows;
                                       }(), o.fpr)
                                     : make_filter(k, o.items, o.fpr);
    std::visit(
        [&](auto& f) {
          using F = std::decay_t<decltype(f)>;
          if constexpr (takes_inserts<F>) {
            start = clock::now();
            f.insert_many(present);
          }
          const double insert = ns_per(clock::now() - start, present.size());
          std::size_t sink = 0;
          start = clock::now();
          sink += f.count_contained(std::span<const std::uint64_t>(present).first(absent.size()));
          const double positive = ns_per(clock::now() - start, absent.size());
          start = clock::now();
          const std::size_t false_positives = f.count_contained(absent);
          const double negative = ns_per(clock::now() - start, absent.size());
          std::printf("%-12s %9s %11s %12s %12s %12s%s\n", std::string(kind_name(k)).c_str(),
                      fixed(static_cast<double>(f.size_in_bytes()) * 8 / static_cast<double>(o.items), 2).c_str(),
                      fixed(insert, 1).c_str(), fixed(positive, 1).c_str(), fixed(negative, 1).c_str(),
                      percent(static_cast<double>(false_positives) / static_cast<double>(absent.size())).c_str(),
                      sink == 0 ? " (?)" : "");
          std::fflush(stdout);
        },
        filter);
  }
  std::printf("\nThe full benchmark, with baselines, is bench/blume_bench in the source tree (docs/benchmarks.md).\n");
  return 0;
}

}  // namespace blume::cli
