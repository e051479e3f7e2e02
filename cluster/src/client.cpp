// SPDX-License-Identifier: Apache-2.0
// The cluster client: see client.hpp. Redirections and retries live here and nowhere else.
#include "blume/cluster/client.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <thread>

#include "blume/error.hpp"

namespace blume::cluster {

namespace {

constexpr std::array<std::uint16_t, 256> crc16_table = [] {
  std::array<std::uint16_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i << 8;
    for (int b = 0; b < 8; ++b) c = (c & 0x8000) ? (c << 1) ^ 0x1021 : c << 1;
    t[i] = static_cast<std::uint16_t>(c);
  }
  return t;
}();

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>(ms.count() % 1000 * 1000);
  return tv;
}

reply copy_reply(const redisReply* r) {
  reply out;
  if (r == nullptr) return out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.kind = reply::type::string; break;
    case REDIS_REPLY_STATUS: out.kind = reply::type::status; break;
    case REDIS_REPLY_ERROR: out.kind = reply::type::error; break;
    case REDIS_REPLY_INTEGER: out.kind = reply::type::integer; break;
    case REDIS_REPLY_ARRAY: out.kind = reply::type::array; break;
    default: out.kind = reply::type::nil; break;
  }
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR)
    out.text.assign(r->str, r->len);
  if (r->type == REDIS_REPLY_INTEGER) out.integer = r->integer;
  if (r->type == REDIS_REPLY_ARRAY) {
    out.elements.reserve(r->elements);
    for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// "MOVED 3999 127.0.0.1:6381" → slot and address.
bool parse_redirection(std::string_view text, std::uint32_t& slot, node_address& to) {
  const std::size_t a = text.find(' ');
  if (a == std::string_view::npos) return false;
  const std::size_t b = text.find(' ', a + 1);
  if (b == std::string_view::npos) return false;
  const std::string_view number = text.substr(a + 1, b - a - 1);
  if (std::from_chars(number.data(), number.data() + number.size(), slot).ec != std::errc{} || slot >= slot_count)
    return false;
  try {
    to = parse_address(text.substr(b + 1));
  } catch (const invalid_argument&) {
    return false;
  }
  return true;
}

}  // namespace

node_address parse_address(std::string_view text) {
  node_address a;
  std::string_view host = text;
  std::string_view port;
  if (starts_with(text, "[")) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos)
      throw invalid_argument("address '" + std::string(text) + "': an IPv6 address needs its closing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') throw invalid_argument("address '" + std::string(text) + "': expected ':PORT'");
      port = text.substr(close + 2);
    }
  } else if (const std::size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) throw invalid_argument("address '" + std::string(text) + "': no host");
  a.host = std::string(host);
  a.port = 6379;
  if (!port.empty() || text.find(':') != std::string_view::npos) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535)
      throw invalid_argument("address '" + std::string(text) + "': the port must be a number from 1 to 65535");
    a.port = static_cast<std::uint16_t>(value);
  }
  return a;
}

std::uint16_t crc16(std::string_view s) noexcept {
  std::uint16_t crc = 0;
  for (const char ch : s)
    crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_table[((crc >> 8) ^ static_cast<std::uint8_t>(ch)) & 0xff]);
  return crc;
}

std::uint16_t key_slot(std::string_view key) noexcept {
  if (const std::size_t open = key.find('{'); open != std::string_view::npos) {
    const std::size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return static_cast<std::uint16_t>(crc16(key) % slot_count);
}

struct cluster_client::connection {
  redisContext* context = nullptr;
  ~connection() {
    if (context != nullptr) redisFree(context);
  }
};

cluster_client::cluster_client(std::vector<node_address> seeds, client_options options)
    : options_(options), nodes_(std::move(seeds)) {
  if (nodes_.empty()) throw invalid_argument("Redis Cluster: no address to connect to");
  connections_.resize(nodes_.size());
  refresh_slots();
}

cluster_client::~cluster_client() = default;

std::size_t cluster_client::node_index(const node_address& a) {
  const auto it = std::find(nodes_.begin(), nodes_.end(), a);
  if (it != nodes_.end()) return static_cast<std::size_t>(it - nodes_.begin());
  nodes_.push_back(a);
  connections_.emplace_back();
  return nodes_.size() - 1;
}

cluster_client::connection* cluster_client::connect(std::size_t node) {
  if (connections_[node]) return connections_[node].get();
  auto c = std::make_unique<connection>();
  c->context = redisConnectWithTimeout(nodes_[node].host.c_str(), nodes_[node].port, to_timeval(options_.io_timeout));
  if (c->context == nullptr || c->context->err != 0) return nullptr;
  redisSetTimeout(c->context, to_timeval(options_.io_timeout));
  connections_[node] = std::move(c);
  return connections_[node].get();
}

void cluster_client::drop(std::size_t node) { connections_[node].reset(); }

void cluster_client::refresh_slots() {
  std::string problems;
  // Every node seen so far is asked in turn: after a failover the seed itself may be the one that is gone.
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    connection* c = connect(node);
    if (c == nullptr) {
      problems += " " + nodes_[node].text() + " (cannot connect)";
      continue;
    }
    auto* raw = static_cast<redisReply*>(redisCommand(c->context, "CLUSTER SLOTS"));
    if (raw == nullptr) {
      problems += " " + nodes_[node].text() + " (" + c->context->errstr + ")";
      drop(node);
      continue;
    }
    const reply r = copy_reply(raw);
    freeReplyObject(raw);
    if (r.is_error()) {
      if (r.text.find("cluster support disabled") != std::string::npos) {
        // A server without cluster mode serves every slot itself.
        cluster_mode_ = false;
        slots_.fill(static_cast<std::uint32_t>(node));
        return;
      }
      problems += " " + nodes_[node].text() + " (" + r.text + ")";
      continue;
    }
    const node_address asked = nodes_[node];
    for (const reply& range : r.elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      const long long first = range.elements[0].integer;
      const long long last = range.elements[1].integer;
      const reply& primary = range.elements[2];
      node_address a{primary.elements[0].text, static_cast<std::uint16_t>(primary.elements[1].integer)};
      if (a.host.empty()) a.host = asked.host;  // a node that does not know its own address
      const auto index = static_cast<std::uint32_t>(node_index(a));
      for (long long s = std::max(0LL, first); s <= last && s < slot_count; ++s) slots_[s] = index;
    }
    cluster_mode_ = true;
    return;
  }
  throw io_error("Redis Cluster: no node answers:" + problems);
}

const node_address& cluster_client::node_of(std::string_view key) const { return nodes_[slots_[key_slot(key)]]; }

std::vector<node_address> cluster_client::primaries() const {
  std::set<std::uint32_t> seen(slots_.begin(), slots_.end());
  std::vector<node_address> out;
  for (const std::uint32_t i : seen) out.push_back(nodes_[i]);
  return out;
}

reply cluster_client::run(const command& c, int wait_replicas) {
  return std::move(run(std::span<const command>(&c, 1), wait_replicas).front());
}

std::vector<reply> cluster_client::run(std::span<const command> commands, int wait_replicas) {
  const std::size_t n = commands.size();
  std::vector<reply> out(n);
  std::vector<std::uint32_t> ask(n, UINT32_MAX);  // the node an ASK sent the command to, for its next try
  std::vector<std::size_t> pending(n);
  for (std::size_t i = 0; i < n; ++i) pending[i] = i;
  const auto deadline = std::chrono::steady_clock::now() + options_.retry_for;
  const std::string wait_count = std::to_string(wait_replicas);
  const std::string wait_ms = std::to_string(options_.wait_timeout.count());
  std::string problem;
  std::vector<const char*> argv;
  std::vector<std::size_t> argl;

  while (!pending.empty()) {
    std::map<std::uint32_t, std::vector<std::size_t>> groups;
    for (const std::size_t i : pending)
      groups[ask[i] != UINT32_MAX ? ask[i] : slots_[key_slot(commands[i].key)]].push_back(i);
    bool refresh = false;
    bool back_off = false;
    std::vector<std::uint32_t> sent;

    // Every node's pipeline goes out before any reply is read, so the nodes work at the same time.
    for (const auto& [node, members] : groups) {
      connection* c = connect(node);
      if (c == nullptr) {
        problem = "cannot connect to " + nodes_[node].text();
        refresh = back_off = true;
        continue;
      }
      for (const std::size_t i : members) {
        if (ask[i] != UINT32_MAX) redisAppendCommand(c->context, "ASKING");
        argv.clear();
        argl.clear();
        for (const std::string_view a : commands[i].args) {
          argv.push_back(a.data());
          argl.push_back(a.size());
        }
        redisAppendCommandArgv(c->context, static_cast<int>(argv.size()), argv.data(), argl.data());
      }
      if (wait_replicas > 0) redisAppendCommand(c->context, "WAIT %s %s", wait_count.c_str(), wait_ms.c_str());
      int flushed = 0;
      bool ok = true;
      while (ok && !flushed) ok = redisBufferWrite(c->context, &flushed) == REDIS_OK;
      if (!ok) {
        problem = nodes_[node].text() + ": " + c->context->errstr;
        drop(node);
        refresh = back_off = true;
        continue;
      }
      sent.push_back(node);
    }

    std::vector<char> done(n, 0);
    for (const std::uint32_t node : sent) {
      const std::vector<std::size_t>& members = groups[node];
      connection* c = connections_[node].get();
      auto next = [&](reply& r) {
        void* raw = nullptr;
        if (redisGetReply(c->context, &raw) != REDIS_OK) return false;
        r = copy_reply(static_cast<redisReply*>(raw));
        freeReplyObject(raw);
        return true;
      };
      std::vector<std::size_t> answered;
      bool ok = true;
      for (const std::size_t i : members) {
        reply r;
        if (ask[i] != UINT32_MAX && !(ok = next(r))) break;  // ASKING's +OK
        if (!(ok = next(r))) break;
        if (r.is_error()) {
          std::uint32_t slot = 0;
          node_address to;
          if (starts_with(r.text, "MOVED ") && parse_redirection(r.text, slot, to)) {
            slots_[slot] = static_cast<std::uint32_t>(node_index(to));
            ask[i] = UINT32_MAX;
            refresh = true;  // one slot moved, most likely with others: read the whole map again
            problem = r.text;
            continue;
          }
          if (starts_with(r.text, "ASK ") && parse_redirection(r.text, slot, to)) {
            ask[i] = static_cast<std::uint32_t>(node_index(to));
            problem = r.text;
            continue;
          }
          if (starts_with(r.text, "TRYAGAIN") || starts_with(r.text, "CLUSTERDOWN") || starts_with(r.text, "LOADING") ||
              starts_with(r.text, "MASTERDOWN") || starts_with(r.text, "READONLY")) {
            ask[i] = UINT32_MAX;
            refresh = refresh || !starts_with(r.text, "TRYAGAIN");
            back_off = true;
            problem = r.text;
            continue;
          }
        }
        ask[i] = UINT32_MAX;
        out[i] = std::move(r);
        answered.push_back(i);
      }
      bool acknowledged = ok;
      if (ok && wait_replicas > 0) {
        reply w;
        if (!(ok = next(w))) {
          acknowledged = false;
        } else if (w.kind != reply::type::integer || w.integer < wait_replicas) {
          // Too few replicas so far, or a node that is no longer a primary: send the commands again (to
          // whichever node serves them by then) rather than call them acknowledged.
          acknowledged = false;
          problem = nodes_[node].text() + ": WAIT " + wait_count + " answered " +
                    (w.is_error() ? w.text : std::to_string(w.integer));
          refresh = refresh || w.is_error();
          back_off = true;
        }
      }
      if (!ok) {
        problem = nodes_[node].text() + ": " + c->context->errstr;
        drop(node);
        refresh = back_off = true;
      }
      if (acknowledged)
        for (const std::size_t i : answered) done[i] = 1;
    }

    std::erase_if(pending, [&](std::size_t i) { return done[i] != 0; });
    if (pending.empty()) break;
    if (std::chrono::steady_clock::now() > deadline)
      throw io_error("Redis Cluster: " + std::to_string(pending.size()) + " of " + std::to_string(n) +
                     " commands not done after " + std::to_string(options_.retry_for.count() / 1000) +
                     " s; last: " + problem);
    if (refresh) {
      try {
        refresh_slots();
      } catch (const io_error& e) {
        problem = e.what();
        back_off = true;
      }
    }
    if (back_off) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return out;
}

}  // namespace blume::cluster
