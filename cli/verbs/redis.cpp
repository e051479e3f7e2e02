// SPDX-License-Identifier: Apache-2.0
// `blume redis reserve|add|exists|info`: one logical Bloom filter sharded over the keys of a Redis Cluster
// (or of one server); `blume redis push|pull`: filter files into and out of keys. The logic lives in the
// cluster library; this file parses, reads keys and prints.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shared.hpp"
#include "units.hpp"

#ifdef BLUME_HAVE_CLUSTER
#include "blume/cluster/sharded_bloom_filter.hpp"
#include "blume/cluster/transfer.hpp"
#endif
#include "filter_ops.hpp"

namespace blume::cli {

namespace {

struct redis_args {
  std::string cluster = "127.0.0.1:6379";
  std::string name;
  std::string rate;
  std::string capacity;
  std::string shards = "0";
  std::string max_shard_bytes = "256MiB";
  unsigned expansion = 2;
  bool nonscaling = false;
  std::vector<std::string> keys;
  std::string input = "-";
  std::string format = "lines";
  int wait = 0;
  double timeout = 60;
  bool quiet = false;
  bool json = false;
  bool force = false;  // pull
  std::string url;     // redis://HOST:PORT, another way to give --cluster
  std::string file;    // push and pull
  std::string key;
  bool replace = false;
  bool no_wait = false;
};

#ifdef BLUME_HAVE_CLUSTER

cluster::cluster_client connect(const redis_args& a) {
  std::vector<cluster::node_address> seeds;
  std::string_view rest = a.cluster;
  if (!a.url.empty()) {
    // redis://HOST:PORT with an optional trailing '/' or database 0: the module's keys live in database 0.
    std::string_view url = a.url;
    if (url.substr(0, 8) != "redis://") throw invalid_argument("--url must look like redis://HOST:PORT");
    url.remove_prefix(8);
    if (const std::size_t at = url.rfind('@'); at != std::string_view::npos)
      throw invalid_argument("--url: credentials are not supported");
    if (const std::size_t slash = url.find('/'); slash != std::string_view::npos) {
      if (url.substr(slash) != "/" && url.substr(slash) != "/0")
        throw invalid_argument("--url: only database 0 holds filters");
      url = url.substr(0, slash);
    }
    rest = url;
  }
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    seeds.push_back(cluster::parse_address(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!(a.timeout > 0 && a.timeout < 1e6)) throw invalid_argument("--timeout must be a positive number of seconds");
  cluster::client_options o;
  o.retry_for = std::chrono::milliseconds(static_cast<long long>(a.timeout * 1000));
  return cluster::cluster_client(std::move(seeds), o);
}

/// Calls fn(batch) with the command line's keys, or with batches of the input's keys (at most `limit`).
template <class Fn>
void for_each_key_batch(const redis_args& a, std::size_t limit, Fn&& fn) {
  const key_format format = format_option(a.format);
  std::vector<std::string_view> batch;
  if (!a.keys.empty()) {
    for (std::size_t i = 0; i < a.keys.size(); ++i) {
      const std::string_view k = line_key(a.keys[i], format);
      if (k.empty()) throw invalid_argument("key " + std::to_string(i + 1) + " is empty");
      batch.push_back(k);
    }
    fn(batch);
    return;
  }
  key_source source(a.input, format);
  source.for_each_block([&](std::string_view block) {
    for_each_key(block, source.delimiter(), [&](std::string_view k) {
      if (k.empty()) return;
      batch.push_back(k);
      if (batch.size() == limit) {
        fn(batch);
        batch.clear();
      }
    });
    if (!batch.empty()) fn(batch);
    batch.clear();
  });
}

int run_reserve(const redis_args& a) {
  cluster::sharded_options o;
  o.shards = parse_count(a.shards, "--shards", 1 << 20);
  o.max_shard_bytes = parse_bytes(a.max_shard_bytes, "--max-shard-bytes");
  o.expansion = a.expansion;
  o.nonscaling = a.nonscaling;
  const double rate = parse_rate(a.rate, "error rate");
  const std::uint64_t capacity = parse_count(a.capacity, "capacity");
  // Planned before connecting, so bad parameters fail without a server.
  cluster::sharded_layout planned = cluster::sharded_layout::plan(a.name, rate, capacity, o);
  cluster::cluster_client client = connect(a);
  auto f = cluster::sharded_bloom_filter::reserve(client, std::move(planned), a.wait);
  const cluster::sharded_layout& l = f.layout();
  std::size_t nodes = 0;
  {
    std::vector<std::string> seen;
    for (const std::string& key : f.shard_keys()) {
      const std::string node = client.node_of(key).text();
      if (std::find(seen.begin(), seen.end(), node) == seen.end()) seen.push_back(node);
    }
    nodes = seen.size();
  }
  output out;
  out.add("reserved " + l.name + ": " + std::to_string(l.shards) + " shards of " + std::to_string(l.shard_capacity) +
          " keys at " + percent(l.error_rate) + " (" + human_bytes(static_cast<double>(l.shard_bytes())) + " each, " +
          human_bytes(static_cast<double>(l.shard_bytes() * l.shards)) + " in all) on " + std::to_string(nodes) +
          (nodes == 1 ? " node\n" : " nodes\n"));
  return 0;
}

int run_add(const redis_args& a) {
  cluster::cluster_client client = connect(a);
  auto f = cluster::sharded_bloom_filter::open(client, a.name);
  std::uint64_t total = 0, added = 0;
  for_each_key_batch(a, 1 << 18, [&](const std::vector<std::string_view>& batch) {
    added += f.add_many(batch, a.wait);
    total += batch.size();
  });
  output out;
  out.add("added " + std::to_string(total) + " keys to " + a.name + " (" + std::to_string(added) + " new)\n");
  return 0;
}

int run_exists(const redis_args& a) {
  cluster::cluster_client client = connect(a);
  auto f = cluster::sharded_bloom_filter::open(client, a.name);
  bool any_no = false;
  output out;
  for_each_key_batch(a, 1 << 18, [&](const std::vector<std::string_view>& batch) {
    const std::vector<char> answers = f.contains_many(batch);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      any_no |= answers[i] == 0;
      if (a.quiet) continue;
      out.add(batch[i]);
      out.add(answers[i] ? "\tmaybe\n" : "\tno\n");
    }
  });
  return any_no ? 1 : 0;
}

int run_info(const redis_args& a) {
  cluster::cluster_client client = connect(a);
  auto f = cluster::sharded_bloom_filter::open(client, a.name);
  const cluster::sharded_info i = f.info();
  const cluster::sharded_layout& l = i.layout;
  output out;
  if (a.json) {
    std::string nodes, keys;
    for (const auto& [node, count] : i.nodes)
      nodes += (nodes.empty() ? "" : ", ") + json_string(node) + ": " + std::to_string(count);
    for (const std::string& k : f.shard_keys()) keys += (keys.empty() ? "" : ", ") + json_string(k);
    out.add("{\"name\": " + json_string(l.name) + ", \"format\": " + json_string(cluster::sharded_format) +
            ", \"shards\": " + std::to_string(l.shards) + ", \"capacity\": " + std::to_string(l.capacity) +
            ", \"shard_capacity\": " + std::to_string(l.shard_capacity) +
            ", \"error_rate\": " + json_number(l.error_rate) + ", \"expansion\": " + std::to_string(l.expansion) +
            ", \"nonscaling\": " + (l.nonscaling ? "true" : "false") + ", \"seed\": " + std::to_string(l.seed) +
            ", \"items\": " + std::to_string(i.items) + ", \"bytes\": " + std::to_string(i.bytes) +
            ", \"largest_shard_bytes\": " + std::to_string(i.largest_shard_bytes) + ", \"predicted_fpr\": " +
            json_number(i.predicted_fpr) + ", \"nodes\": {" + nodes + "}, \"shard_keys\": [" + keys + "]}\n");
    return 0;
  }
  out.add("name:            " + l.name + "\n");
  out.add("format:          " + std::string(cluster::sharded_format) + "\n");
  out.add("shards:          " + std::to_string(l.shards) + " of " + std::to_string(l.shard_capacity) + " keys (" +
          l.shard_key(0) + " ...)\n");
  out.add("capacity:        " + std::to_string(l.capacity) + " at " + percent(l.error_rate) +
          (l.nonscaling ? ", non-scaling\n" : ", expansion " + std::to_string(l.expansion) + "\n"));
  out.add("items:           " + std::to_string(i.items) + " (adds that set a bit, summed over the shards)\n");
  out.add("memory:          " + human_bytes(static_cast<double>(i.bytes)) + " (largest shard " +
          human_bytes(static_cast<double>(i.largest_shard_bytes)) + ")\n");
  out.add("predicted FPR:   " + percent(i.predicted_fpr) + " at this fill\n");
  for (const auto& [node, count] : i.nodes) out.add("node " + node + ": " + std::to_string(count) + " shards\n");
  return 0;
}

std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  return buf;
}

int run_push(const redis_args& a) {
  cluster::cluster_client client = connect(a);
  cluster::push_options o;
  o.replace = a.replace;
  const auto started = std::chrono::steady_clock::now();
  const cluster::transfer_report r = cluster::push_file(client, a.file, a.key, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  output out;
  out.add("pushed " + a.file + " to " + a.key + " (" + r.type + "): " + human_bytes(static_cast<double>(r.bytes)) +
          " in " + std::to_string(r.chunks) + " chunks, " + seconds_text(seconds) + "\n");
  return 0;
}

int run_pull(const redis_args& a) {
  cluster::cluster_client client = connect(a);
  check_output(a.file, write_options{a.force});
  std::optional<file_lock> lock;
  lock_target(lock, a.file, a.no_wait);
  const auto started = std::chrono::steady_clock::now();
  cluster::transfer_report r;
  with_force_hint([&] { r = cluster::pull_to_file(client, a.key, a.file, write_options{a.force}); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  output out;
  out.add("pulled " + a.key + " (" + r.type + ") to " + a.file + ": " + human_bytes(static_cast<double>(r.bytes)) +
          " in " + std::to_string(r.chunks) + " chunks, " + seconds_text(seconds) + "\n");
  return 0;
}

#else

// Built without hiredis: the verbs exist (so --help lists them) and say why they cannot run.
constexpr int (*run_push)(const redis_args&) = nullptr;
constexpr int (*run_pull)(const redis_args&) = nullptr;
constexpr int (*run_reserve)(const redis_args&) = nullptr;
constexpr int (*run_add)(const redis_args&) = nullptr;
constexpr int (*run_exists)(const redis_args&) = nullptr;
constexpr int (*run_info)(const redis_args&) = nullptr;

#endif

void server_options(CLI::App& cmd, redis_args& a) {
  cmd.add_option("--cluster", a.cluster,
                 "HOST:PORT of any node (several separated by commas); a server without cluster mode works too")
      ->capture_default_str();
  cmd.add_option("--url", a.url, "redis://HOST:PORT, instead of --cluster");
  cmd.add_option("--timeout", a.timeout,
                 "seconds to keep retrying through redirections, failovers and lost connections")
      ->capture_default_str();
}

void connection_options(CLI::App& cmd, redis_args& a) {
  server_options(cmd, a);
  cmd.add_option("name", a.name, "the filter's name (its meta key)")->required();
}

void key_options(CLI::App& cmd, redis_args& a) {
  cmd.add_option("keys", a.keys, "keys (default: read from --input)");
  cmd.add_option("--input,-i", a.input, "file of keys, '-' for standard input")->capture_default_str();
  cmd.add_option("--format", a.format, "keys: lines or nul")->capture_default_str();
}

void on_run(CLI::App* cmd, int& status, const std::shared_ptr<redis_args>& a, int (*run)(const redis_args&)) {
  cmd->callback([a, &status, run] {
    if (run == nullptr)
      throw io_error("this blume was built without hiredis (Debian: libhiredis-dev): the redis verbs are unavailable");
    status = run(*a);
  });
}

}  // namespace

void register_redis(CLI::App& app, int& status) {
  CLI::App* redis =
      app.add_subcommand("redis",
                         "One Bloom filter sharded over the keys of a Redis Cluster: each shard a RedisBloom filter");
  redis->require_subcommand(1);
  const auto a = std::make_shared<redis_args>();

  CLI::App* reserve = redis->add_subcommand("reserve", "Create a sharded filter: NAME ERROR_RATE CAPACITY");
  connection_options(*reserve, *a);
  reserve->add_option("error_rate", a->rate, "target false-positive rate, e.g. 0.01 or 1%")->required();
  reserve->add_option("capacity", a->capacity, "keys it must hold, e.g. 100M")->required();
  reserve->add_option("--shards", a->shards,
                      "number of shards (0, the default: at least 16, more to keep each under the limit)");
  reserve->add_option("--max-shard-bytes", a->max_shard_bytes, "the largest a shard may be")->capture_default_str();
  reserve->add_option("--expansion", a->expansion, "each shard's EXPANSION when it outgrows its capacity")
      ->capture_default_str();
  reserve->add_flag("--nonscaling", a->nonscaling, "shards refuse keys beyond their capacity (NONSCALING)");
  reserve->add_option("--wait", a->wait, "replicas that must hold the new keys before it returns")
      ->capture_default_str();
  on_run(reserve, status, a, run_reserve);

  CLI::App* add = redis->add_subcommand("add", "Add keys (arguments or --input) to a sharded filter");
  connection_options(*add, *a);
  key_options(*add, *a);
  add->add_option("--wait", a->wait, "replicas that must hold every key before it succeeds (WAIT)")
      ->capture_default_str();
  on_run(add, status, a, run_add);

  CLI::App* exists = redis->add_subcommand("exists", "For each key: maybe or no (exit 1 if any is no)");
  connection_options(*exists, *a);
  key_options(*exists, *a);
  exists->add_flag("--quiet,-q", a->quiet, "print nothing; the exit status answers");
  on_run(exists, status, a, run_exists);

  CLI::App* info = redis->add_subcommand("info", "A sharded filter's shards, fill, memory and predicted rate");
  connection_options(*info, *a);
  info->add_flag("--json", a->json, "print one JSON object");
  on_run(info, status, a, run_info);

  CLI::App* push = redis->add_subcommand(
      "push", "Load a filter file into a key: counting -> CBF, aging -> WBF, built with --redisbloom -> BF");
  server_options(*push, *a);
  push->add_option("file", a->file, "the filter file")->required();
  push->add_option("key", a->key, "the key to create")->required();
  push->add_flag("--replace", a->replace, "delete the key first if it exists");
  on_run(push, status, a, run_push);

  CLI::App* pull = redis->add_subcommand("pull", "Save a key (BF, CBF or WBF) to a filter file, atomically");
  server_options(*pull, *a);
  pull->add_option("key", a->key, "the key to read")->required();
  pull->add_option("file", a->file, "the filter file to write")->required();
  pull->add_flag("--no-wait", a->no_wait, "fail at once if another writer holds the file");
  add_force_flag(*pull, a->force);
  on_run(pull, status, a, run_pull);
}

}  // namespace blume::cli
