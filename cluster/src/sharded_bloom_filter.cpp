// SPDX-License-Identifier: Apache-2.0
// The sharded filter: see sharded_bloom_filter.hpp. Geometry and rates come from the library's RedisBloom
// model (redisbloom.hpp); this file only names, routes and sums.
#include "blume/cluster/sharded_bloom_filter.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "blume/compat/redisbloom.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"

namespace blume::cluster {

namespace {

constexpr std::uint64_t max_shards = std::uint64_t{1} << 20;
constexpr std::string_view tag_alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";

/// For every slot, the first tag of the enumeration that lands on it. Four characters reach every slot
/// (about 170,000 of the 1.7 million candidates are needed), checked by the unit tests.
const std::vector<std::string>& tag_table() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(slot_count);
    std::size_t found = 0;
    std::string s;
    for (std::size_t length = 1; length <= 4 && found < slot_count; ++length) {
      std::vector<std::size_t> digit(length, 0);
      s.assign(length, tag_alphabet[0]);
      while (found < slot_count) {
        std::string& entry = t[crc16(s) % slot_count];
        if (entry.empty()) {
          entry = s;
          ++found;
        }
        std::size_t i = length;  // next string of this length, last character fastest
        while (i > 0 && digit[i - 1] + 1 == tag_alphabet.size()) {
          digit[i - 1] = 0;
          s[i - 1] = tag_alphabet[0];
          --i;
        }
        if (i == 0) break;
        s[i - 1] = tag_alphabet[++digit[i - 1]];
      }
    }
    return t;
  }();
  return table;
}

std::string number_text(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

template <class T>
T parse_field(const std::string& name, const std::map<std::string, std::string>& fields, const char* field) {
  const auto it = fields.find(field);
  if (it == fields.end())
    throw format_error("sharded filter '" + name + "': its meta key has no '" + field + "' field");
  T value{};
  const std::string& text = it->second;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw format_error("sharded filter '" + name + "': field '" + field + "' is not a number: '" + text + "'");
  return value;
}

/// The first layer BF.RESERVE makes for one shard.
redisbloom_layout first_layer(std::uint64_t shard_capacity, double rate, std::uint32_t expansion, bool nonscaling) {
  const redisbloom_layer_plan plan;
  return plan.layout(plan.spec(shard_capacity, rate, redisbloom_options(expansion, !nonscaling), 0, {}));
}

/// A shard's capacity: its share of the keys plus five standard deviations of that share (the count a
/// shard receives is binomial), so that no shard of a full filter outgrows its first layer: with exactly
/// capacity / shards, half of them would add a second layer and the filter would take half as much memory
/// again. Five deviations cost 0.6% more memory at 625,000 keys a shard.
std::uint64_t shard_capacity_for(std::uint64_t capacity, std::uint64_t shards) {
  const double share = static_cast<double>(capacity) / static_cast<double>(shards);
  const double deviation = std::sqrt(share * (1 - 1 / static_cast<double>(shards)));
  return static_cast<std::uint64_t>(std::ceil(share + 5 * deviation));
}

std::string server_error(const std::string& key, const reply& r) { return "shard '" + key + "': " + r.text; }

}  // namespace

std::uint32_t shard_slot(std::string_view name, std::uint64_t shard, std::uint64_t shards) noexcept {
  return static_cast<std::uint32_t>((crc16(name) % slot_count + shard * slot_count / shards) % slot_count);
}

std::string slot_tag(std::uint32_t slot) { return tag_table().at(slot); }

sharded_layout sharded_layout::plan(std::string name, double error_rate, std::uint64_t capacity,
                                    const sharded_options& options) {
  if (name.empty()) throw invalid_argument("a sharded filter needs a name");
  if (name.find_first_of("{}") != std::string::npos)
    throw invalid_argument("sharded filter '" + name +
                           "': the name may not contain '{' or '}' (its shards' hash tags decide their slots)");
  if (!(error_rate > 0 && error_rate < 1))
    throw invalid_argument("error rate must be in (0, 1), got " + number_text(error_rate));
  if (capacity == 0) throw invalid_argument("capacity must be at least 1");
  if (options.expansion == 0 && !options.nonscaling)
    throw invalid_argument("expansion must be at least 1 (or the filter non-scaling)");
  if (options.shards > max_shards || options.min_shards > max_shards)
    throw invalid_argument("at most " + std::to_string(max_shards) + " shards");
  if (options.max_shard_bytes == 0) throw invalid_argument("the largest shard must be allowed at least one byte");

  sharded_layout l;
  l.name = std::move(name);
  l.capacity = capacity;
  l.error_rate = error_rate;
  l.expansion = options.expansion;
  l.nonscaling = options.nonscaling;
  l.seed = options.seed;
  auto bytes_with = [&](std::uint64_t count) {
    return first_layer(shard_capacity_for(capacity, count), error_rate, l.expansion, l.nonscaling).bits() / 8;
  };
  if (options.shards != 0) {
    l.shards = options.shards;
    if (const std::uint64_t b = bytes_with(l.shards); b > options.max_shard_bytes)
      throw invalid_argument(std::to_string(l.shards) + " shards of " + l.name + " would hold " + std::to_string(b) +
                             " bytes each, above the limit of " + std::to_string(options.max_shard_bytes) +
                             ": use more shards or raise the limit");
  } else {
    // The whole filter's bytes from the first layer's bits per key: one layer of that size may be beyond
    // what a single RedisBloom layer can be, which is what shards are for.
    const redisbloom_layout one = first_layer(1, error_rate, l.expansion, l.nonscaling);
    const double total = static_cast<double>(capacity) * one.bits_per_entry() / 8;
    std::uint64_t s = std::max<std::uint64_t>(
        {options.min_shards, 1,
         static_cast<std::uint64_t>(std::min(std::ceil(total / static_cast<double>(options.max_shard_bytes)),
                                             static_cast<double>(max_shards)))});
    s = std::min(s, std::max<std::uint64_t>(capacity, 1));
    while (s < max_shards && bytes_with(s) > options.max_shard_bytes) ++s;
    if (bytes_with(s) > options.max_shard_bytes)
      throw invalid_argument("even " + std::to_string(s) + " shards would exceed " +
                             std::to_string(options.max_shard_bytes) + " bytes each");
    l.shards = s;
  }
  l.shard_capacity = shard_capacity_for(capacity, l.shards);
  l.tags.reserve(l.shards);
  for (std::uint64_t i = 0; i < l.shards; ++i) l.tags.push_back(slot_tag(shard_slot(l.name, i, l.shards)));
  return l;
}

sharded_layout sharded_layout::from_fields(std::string name, const std::map<std::string, std::string>& fields) {
  sharded_layout l;
  l.name = std::move(name);
  const auto format = fields.find("format");
  if (format == fields.end() || format->second != sharded_format)
    throw format_error("'" + l.name + "' is not a sharded filter of this version (its meta key's format is '" +
                       (format == fields.end() ? std::string("missing") : format->second) + "', expected '" +
                       std::string(sharded_format) + "')");
  l.shards = parse_field<std::uint64_t>(l.name, fields, "shards");
  l.capacity = parse_field<std::uint64_t>(l.name, fields, "capacity");
  l.shard_capacity = parse_field<std::uint64_t>(l.name, fields, "shard_capacity");
  l.expansion = parse_field<std::uint32_t>(l.name, fields, "expansion");
  l.seed = parse_field<std::uint64_t>(l.name, fields, "seed");
  const auto nonscaling = parse_field<unsigned>(l.name, fields, "nonscaling");
  const auto rate = fields.find("error_rate");
  if (rate == fields.end()) throw format_error("sharded filter '" + l.name + "': its meta key has no 'error_rate'");
  std::size_t used = 0;
  try {
    l.error_rate = std::stod(rate->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  auto bad = [&](const std::string& what) { return format_error("sharded filter '" + l.name + "': " + what); };
  if (used == 0 || used != rate->second.size() || !(l.error_rate > 0 && l.error_rate < 1))
    throw bad("error_rate '" + rate->second + "' is not a rate in (0, 1)");
  if (l.shards == 0 || l.shards > max_shards) throw bad("shards must be in [1, 2^20]");
  if (l.capacity == 0 || l.shard_capacity < (l.capacity - 1) / l.shards + 1)
    throw bad("shard_capacity is below capacity / shards");
  if (nonscaling > 1) throw bad("nonscaling must be 0 or 1");
  l.nonscaling = nonscaling == 1;
  if (l.expansion == 0 && !l.nonscaling) throw bad("expansion must be at least 1");
  const auto tags = fields.find("tags");
  if (tags == fields.end()) throw bad("its meta key has no 'tags' field");
  std::string_view rest = tags->second;
  while (!rest.empty() && l.tags.size() <= l.shards) {
    const std::size_t space = rest.find(' ');
    const std::string_view tag = rest.substr(0, space);
    if (tag.empty() || tag.find_first_of("{}") != std::string_view::npos) throw bad("a tag is empty or has a brace");
    l.tags.emplace_back(tag);
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  if (l.tags.size() != l.shards) throw bad("it lists a different number of tags than shards");
  return l;
}

std::vector<std::pair<std::string, std::string>> sharded_layout::fields() const {
  std::string joined;
  for (const std::string& t : tags) {
    if (!joined.empty()) joined += ' ';
    joined += t;
  }
  return {{"format", std::string(sharded_format)},
          {"shards", std::to_string(shards)},
          {"capacity", std::to_string(capacity)},
          {"shard_capacity", std::to_string(shard_capacity)},
          {"error_rate", number_text(error_rate)},
          {"expansion", std::to_string(expansion)},
          {"nonscaling", nonscaling ? "1" : "0"},
          {"seed", std::to_string(seed)},
          {"tags", joined}};
}

std::string sharded_layout::shard_key(std::uint64_t i) const {
  return name + ":" + std::to_string(i) + "{" + tags.at(i) + "}";
}

std::uint64_t sharded_layout::shard_of(std::string_view item) const noexcept {
  const std::uint64_t low = hash_key(xxh3_hasher(seed), item).low;
  return reduce(low, shards);
}

std::uint64_t sharded_layout::shard_bytes() const {
  return first_layer(shard_capacity, error_rate, expansion, nonscaling).bits() / 8;
}

double sharded_layout::shard_fpr(std::uint64_t items) const {
  return redisbloom_chain_fpr(shard_capacity, error_rate, expansion, !nonscaling, items);
}

sharded_bloom_filter::sharded_bloom_filter(cluster_client& client, sharded_layout layout)
    : client_(&client), layout_(std::move(layout)) {
  keys_.reserve(layout_.shards);
  for (std::uint64_t i = 0; i < layout_.shards; ++i) keys_.push_back(layout_.shard_key(i));
}

sharded_bloom_filter sharded_bloom_filter::reserve(cluster_client& client, std::string name, double error_rate,
                                                   std::uint64_t capacity, const sharded_options& options,
                                                   int wait_replicas) {
  return reserve(client, sharded_layout::plan(std::move(name), error_rate, capacity, options), wait_replicas);
}

sharded_bloom_filter sharded_bloom_filter::reserve(cluster_client& client, sharded_layout layout, int wait_replicas) {
  // A layout built by hand is held to what its meta key would have to read back as.
  try {
    const auto fields = layout.fields();
    (void)sharded_layout::from_fields(layout.name, std::map<std::string, std::string>(fields.begin(), fields.end()));
  } catch (const format_error& e) {
    throw invalid_argument(std::string("sharded filter layout: ") + e.what());
  }
  const double error_rate = layout.error_rate;
  sharded_bloom_filter f(client, std::move(layout));
  const std::string& meta = f.layout_.name;
  if (const reply r = client.run(command{meta, {"EXISTS", meta}}); r.is_error() || r.integer != 0)
    throw invalid_argument(r.is_error() ? "'" + meta + "': " + r.text : "a key named '" + meta + "' already exists");

  const std::string rate = number_text(error_rate);
  const std::string shard_capacity = std::to_string(f.layout_.shard_capacity);
  const std::string expansion = std::to_string(f.layout_.expansion);
  std::vector<command> reserves;
  for (const std::string& key : f.keys_) {
    command c{key, {"BF.RESERVE", key, rate, shard_capacity}};
    if (f.layout_.nonscaling) {
      c.args.push_back("NONSCALING");
    } else {
      c.args.push_back("EXPANSION");
      c.args.push_back(expansion);
    }
    reserves.push_back(std::move(c));
  }
  const std::vector<reply> made = client.run(reserves, wait_replicas);
  auto undo = [&] {
    std::vector<command> deletes;
    for (std::size_t i = 0; i < made.size(); ++i)
      if (!made[i].is_error()) deletes.push_back(command{f.keys_[i], {"DEL", f.keys_[i]}});
    client.run(deletes, wait_replicas);
  };
  for (std::size_t i = 0; i < made.size(); ++i)
    if (made[i].is_error()) {
      undo();
      throw invalid_argument(server_error(f.keys_[i], made[i]));
    }

  const auto fields = f.layout_.fields();
  command hset{meta, {"HSET", meta}};
  for (const auto& [field, value] : fields) {
    hset.args.push_back(field);
    hset.args.push_back(value);
  }
  if (const reply r = client.run(hset, wait_replicas); r.is_error()) {
    undo();
    throw io_error("'" + meta + "': " + r.text);
  }
  return f;
}

sharded_bloom_filter sharded_bloom_filter::open(cluster_client& client, std::string name) {
  const reply r = client.run(command{name, {"HGETALL", name}});
  if (r.is_error()) throw invalid_argument("'" + name + "' is not a sharded filter: " + r.text);
  if (r.elements.empty()) throw invalid_argument("no sharded filter named '" + name + "' (no such key)");
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) fields[r.elements[i].text] = r.elements[i + 1].text;
  return sharded_bloom_filter(client, sharded_layout::from_fields(std::move(name), fields));
}

namespace {

/// Items grouped by shard, each group cut into commands of at most `per_command` items: the commands and,
/// for each, the positions of its items in the caller's span.
struct routed {
  std::vector<command> commands;
  std::vector<std::vector<std::uint32_t>> positions;
  std::vector<std::uint64_t> shard;
};

routed route(const sharded_layout& l, const std::vector<std::string>& keys, std::span<const std::string_view> items,
             std::size_t per_command, std::initializer_list<std::string_view> head, bool check_exists) {
  std::vector<std::vector<std::uint32_t>> by_shard(l.shards);
  for (std::size_t i = 0; i < items.size(); ++i)
    by_shard[l.shard_of(items[i])].push_back(static_cast<std::uint32_t>(i));
  routed r;
  for (std::uint64_t s = 0; s < l.shards; ++s) {
    const auto& members = by_shard[s];
    if (members.empty()) continue;
    if (check_exists) {
      r.commands.push_back(command{keys[s], {"EXISTS", keys[s]}});
      r.positions.emplace_back();
      r.shard.push_back(s);
    }
    for (std::size_t at = 0; at < members.size(); at += per_command) {
      const std::size_t end = std::min(members.size(), at + per_command);
      command c{keys[s], {}};
      c.args.reserve(head.size() + 1 + end - at);
      auto h = head.begin();
      c.args.push_back(*h++);
      c.args.push_back(keys[s]);
      for (; h != head.end(); ++h) c.args.push_back(*h);
      for (std::size_t i = at; i < end; ++i) c.args.push_back(items[members[i]]);
      r.commands.push_back(std::move(c));
      r.positions.emplace_back(members.begin() + static_cast<std::ptrdiff_t>(at),
                               members.begin() + static_cast<std::ptrdiff_t>(end));
      r.shard.push_back(s);
    }
  }
  return r;
}

constexpr std::size_t window = 1 << 20;  // items routed at once: bounds the commands' memory

}  // namespace

std::uint64_t sharded_bloom_filter::add_many(std::span<const std::string_view> items, int wait_replicas) {
  std::uint64_t added = 0;
  for (std::size_t from = 0; from < items.size(); from += window) {
    const auto part = items.subspan(from, std::min(window, items.size() - from));
    const routed r = route(layout_, keys_, part, per_command, {"BF.INSERT", "NOCREATE", "ITEMS"}, false);
    const std::vector<reply> replies = client_->run(r.commands, wait_replicas);
    for (std::size_t c = 0; c < replies.size(); ++c) {
      const std::string& key = keys_[r.shard[c]];
      if (replies[c].is_error()) throw io_error(server_error(key, replies[c]));
      for (const reply& e : replies[c].elements) {
        if (e.is_error()) throw io_error(server_error(key, e));
        added += e.integer != 0;
      }
      if (replies[c].elements.size() != r.positions[c].size())
        throw io_error("shard '" + key + "': BF.INSERT answered for " + std::to_string(replies[c].elements.size()) +
                       " of " + std::to_string(r.positions[c].size()) + " items");
    }
  }
  return added;
}

std::vector<char> sharded_bloom_filter::contains_many(std::span<const std::string_view> items) {
  std::vector<char> answers(items.size(), 0);
  for (std::size_t from = 0; from < items.size(); from += window) {
    const auto part = items.subspan(from, std::min(window, items.size() - from));
    const routed r = route(layout_, keys_, part, per_command, {"BF.MEXISTS"}, true);
    const std::vector<reply> replies = client_->run(r.commands);
    for (std::size_t c = 0; c < replies.size(); ++c) {
      const std::string& key = keys_[r.shard[c]];
      if (replies[c].is_error()) throw io_error(server_error(key, replies[c]));
      if (r.positions[c].empty()) {  // the EXISTS before a shard's lookups
        if (replies[c].integer != 1)
          throw io_error("shard '" + key + "' of '" + layout_.name +
                         "' is missing: the filter is damaged, and its answers would be false negatives");
        continue;
      }
      if (replies[c].elements.size() != r.positions[c].size())
        throw io_error("shard '" + key + "': BF.MEXISTS answered for " + std::to_string(replies[c].elements.size()) +
                       " of " + std::to_string(r.positions[c].size()) + " items");
      for (std::size_t i = 0; i < r.positions[c].size(); ++i)
        answers[from + r.positions[c][i]] = replies[c].elements[i].integer != 0;
    }
  }
  return answers;
}

sharded_info sharded_bloom_filter::info() {
  std::vector<command> infos;
  for (const std::string& key : keys_) infos.push_back(command{key, {"BF.INFO", key}});
  const std::vector<reply> replies = client_->run(infos);
  sharded_info out;
  out.layout = layout_;
  double rate_sum = 0;
  for (std::size_t s = 0; s < replies.size(); ++s) {
    const reply& r = replies[s];
    if (r.is_error()) throw io_error(server_error(keys_[s], r));
    std::uint64_t items = 0;
    std::uint64_t size = 0;
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      if (r.elements[i].text == "Number of items inserted")
        items = static_cast<std::uint64_t>(r.elements[i + 1].integer);
      if (r.elements[i].text == "Size") size = static_cast<std::uint64_t>(r.elements[i + 1].integer);
    }
    out.items += items;
    out.bytes += size;
    out.largest_shard_bytes = std::max(out.largest_shard_bytes, size);
    rate_sum += layout_.shard_fpr(items);
    ++out.nodes[client_->node_of(keys_[s]).text()];
  }
  out.predicted_fpr = rate_sum / static_cast<double>(layout_.shards);
  return out;
}

}  // namespace blume::cluster
