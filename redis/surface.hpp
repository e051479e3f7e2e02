// SPDX-License-Identifier: Apache-2.0
// What every command of the module shares: reading arguments, opening keys of our types, and replying
// in RESP2 or RESP3 the way RedisBloom does. No filter logic lives here or anywhere in redis/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "module_api.hpp"

namespace blume::redis {

inline std::string_view text(const RedisModuleString* s) noexcept {
  std::size_t len = 0;
  const char* p = api::StringPtrLen(s, &len);
  return {p, len};
}

/// Case-insensitive comparison of an argument with an ASCII keyword.
inline bool is_word(const RedisModuleString* s, std::string_view word) noexcept {
  const std::string_view t = text(s);
  if (t.size() != word.size()) return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    char w = word[i];
    if (w >= 'a' && w <= 'z') w = static_cast<char>(w - 'a' + 'A');
    if (c != w) return false;
  }
  return true;
}

/// The first argument in [from, argc) equal to `word` (case-insensitive), or -1. RedisBloom searches all
/// of argv, the command name, key and numbers included (so a key named "nonscaling" made a filter
/// non-scaling); we search only the option arguments.
inline int find_word(RedisModuleString** argv, int argc, int from, std::string_view word) noexcept {
  for (int i = from; i < argc; ++i)
    if (is_word(argv[i], word)) return i;
  return -1;
}

/// Lower-case first character of an argument (RedisBloom's BF.INSERT/CF.INSERT match options by it).
inline char initial(const RedisModuleString* s, std::size_t at = 0) noexcept {
  const std::string_view t = text(s);
  if (at >= t.size()) return '\0';
  const char c = t[at];
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::optional<long long> to_integer(const RedisModuleString* s) noexcept {
  long long v = 0;
  if (api::StringToLongLong(s, &v) != api::ok) return std::nullopt;
  return v;
}
inline std::optional<double> to_double(const RedisModuleString* s) noexcept {
  double v = 0;
  if (api::StringToDouble(s, &v) != api::ok) return std::nullopt;
  return v;
}

inline bool resp3(RedisModuleCtx* ctx) noexcept { return (api::GetContextFlags(ctx) & api::ctx_flags_resp3) != 0; }

/// RedisBloom answers yes/no as booleans in RESP3 and as 1/0 in RESP2, which is what ReplyWithBool sends
/// (the server picks by the client's protocol, so no per-reply protocol check is needed).
inline void reply_bool(RedisModuleCtx* ctx, bool b) noexcept { api::ReplyWithBool(ctx, b ? 1 : 0); }
inline int reply_error(RedisModuleCtx* ctx, const char* message) noexcept {
  api::ReplyWithError(ctx, message);
  return api::ok;
}

/// The two forms of an item command: X key item (one reply) and MX key item [item ...] (an array), both
/// served by Body(ctx, argv, argc, multi).
using item_command_body = int (*)(RedisModuleCtx*, RedisModuleString**, int, bool);
template <item_command_body Body>
int one_item(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  return Body(ctx, argv, argc, false);
}
template <item_command_body Body>
int many_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
  return Body(ctx, argv, argc, true);
}

/// A key opened for one command, closed when the command returns.
class open_key {
 public:
  open_key(RedisModuleCtx* ctx, RedisModuleString* name, int mode) noexcept : key_(api::OpenKey(ctx, name, mode)) {}
  ~open_key() { api::CloseKey(key_); }
  open_key(const open_key&) = delete;
  open_key& operator=(const open_key&) = delete;

  RedisModuleKey* get() const noexcept { return key_; }
  bool empty() const noexcept { return api::KeyType(key_) == api::keytype_empty; }
  /// The value when the key holds a value of `type`; nullptr when it is empty or of another type.
  template <class T>
  T* value(RedisModuleType* type) const noexcept {
    if (api::KeyType(key_) != api::keytype_module || api::ModuleTypeGetType(key_) != type) return nullptr;
    return static_cast<T*>(api::ModuleTypeGetValue(key_));
  }
  /// Neither empty nor of `type`: the command must answer WRONGTYPE.
  bool wrong_type(RedisModuleType* type) const noexcept {
    const int t = api::KeyType(key_);
    return t != api::keytype_empty && (t != api::keytype_module || api::ModuleTypeGetType(key_) != type);
  }

 private:
  RedisModuleKey* key_;
};

/// The TTL option of BF.RESERVE, BF.INSERT and CF.RESERVE: seconds the key lives after the command
/// creates it.
struct key_ttl {
  long long seconds = 0;                                      // 0: no TTL given
  static constexpr long long max_seconds = 10'000'000'000LL;  // about 317 years; ms fit with room to spare
};

/// Reads `TTL seconds` at argv[at] (found by the caller); an error reply (returned) for a bad value.
inline const char* parse_ttl(RedisModuleString** argv, int argc, int at, key_ttl* out) noexcept {
  if (at + 1 >= argc) return "ERR TTL needs a number of seconds";
  const auto s = to_integer(argv[at + 1]);
  if (!s || *s < 1 || *s > key_ttl::max_seconds) return "ERR TTL must be an integer in the range [1, 10000000000]";
  out->seconds = *s;
  return nullptr;
}

/// Gives a key the command just created its TTL. Replicas and the AOF get the absolute expiry
/// (PEXPIREAT after the command itself), so a replayed or replicated command does not restart the clock.
/// The key gets that same absolute time: a relative one would be counted from the server's own clock
/// reading, which can be a millisecond or more past ours, and a replayed AOF would then move the expiry.
inline void apply_ttl(RedisModuleCtx* ctx, const open_key& key, RedisModuleString* name, const key_ttl& ttl) noexcept {
  if (ttl.seconds == 0) return;
  const long long ms = ttl.seconds * 1000;
  const long long at = api::Milliseconds() + ms;
  if (api::SetAbsExpire != nullptr) api::SetAbsExpire(key.get(), at);
  else api::SetExpire(key.get(), ms);
  api::Replicate(ctx, "PEXPIREAT", "sl", name, at);
}

inline constexpr char not_found[] = "ERR not found";
inline constexpr char item_exists[] = "ERR item exists";

}  // namespace blume::redis
