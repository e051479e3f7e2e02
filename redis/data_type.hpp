// SPDX-License-Identifier: Apache-2.0
// What the BF and CF data types share: the type callbacks that only move a value's dump (AOF rewrite,
// DEBUG DIGEST), free and copy it, and the registration of a type and its commands. A Traits class
// supplies the rest: the value type, its RDB encoding, its RedisBloom size, and its dump as a header
// plus the chunks SCANDUMP returns.
#pragma once

#include <concepts>
#include <exception>
#include <span>
#include <string>

#include "blume/compat/redisbloom_format.hpp"
#include "codec.hpp"
#include "config.hpp"
#include "module_api.hpp"

namespace blume::redis {

/// The codec's RDB interfaces over the server's RedisModuleIO: exactly the calls the loaders made
/// before they were separated from the server, so the bytes and the behaviour are the same.
class module_rdb_reader final : public rdb_reader {
 public:
  explicit module_rdb_reader(RedisModuleIO* io) noexcept : io_(io) {}
  std::uint64_t load_unsigned() override { return api::LoadUnsigned(io_); }
  double load_double() override { return api::LoadDouble(io_); }
  rdb_buffer load_string() override {
    std::size_t len = 0;
    const char* p = api::LoadStringBuffer(io_, &len);
    if (p == nullptr) return {};
    return {p, len, [](const char* q) noexcept { api::Free(const_cast<char*>(q)); }};
  }
  bool failed() const override { return api::IsIOError(io_) != 0; }

 private:
  RedisModuleIO* io_;
};

class module_rdb_writer final : public rdb_writer {
 public:
  explicit module_rdb_writer(RedisModuleIO* io) noexcept : io_(io) {}
  void save_unsigned(std::uint64_t v) override { api::SaveUnsigned(io_, v); }
  void save_double(double v) override { api::SaveDouble(io_, v); }
  void save_string(std::span<const std::byte> bytes) override {
    api::SaveStringBuffer(io_, reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }

 private:
  RedisModuleIO* io_;
};

/// The configuration an RDB record is loaded under.
inline rdb_limits current_rdb_limits() noexcept {
  const module_config& c = config();
  return {static_cast<std::uint64_t>(c.max_filter_memory), static_cast<std::uint32_t>(c.cf_bucket_size),
          static_cast<std::uint32_t>(c.cf_max_iterations), static_cast<std::uint32_t>(c.cf_expansion_factor)};
}

/// Loads a record with `load` (codec.hpp's load_bloom or load_cuckoo); a refusal is logged with its
/// reason, and the server answers RESTORE with "Bad data format" or stops loading the RDB.
template <class Load>
void* rdb_load_with(RedisModuleIO* io, int encver, Load load) {
  module_rdb_reader in(io);
  std::string why;
  auto v = load(in, encver, current_rdb_limits(), &why);
  if (v == nullptr) {
    api::LogIOError(io, api::log_warning, "%s", why.c_str());
    return nullptr;
  }
  return v.release();
}

/// A command and where its keys are (1-based argv positions; a negative last counts from the end). Most
/// take one key, argv[1]; Redis Cluster routes by these positions and refuses keys of different slots.
struct command {
  const char* name;
  api::command_func fn;
  const char* flags;
  int first_key = 1, last_key = 1, key_step = 1;
};

inline bool create_commands(RedisModuleCtx* ctx, std::span<const command> commands) {
  for (const command& c : commands)
    if (api::CreateCommand(ctx, c.name, c.fn, c.flags, c.first_key, c.last_key, c.key_step) != api::ok) return false;
  return true;
}

/// What a data type supplies: its value type (copyable, for COPY), the command that loads its chunks (for
/// the AOF rewrite), its dump as a header plus the chunks SCANDUMP returns after each iterator, the size
/// RedisBloom reports for it (MEMORY USAGE), and its RDB encoding.
template <class T>
concept data_type_traits =
    std::copy_constructible<typename T::value_type> &&
    requires(const typename T::value_type& v, long long iterator, RedisModuleIO* io, int encver, void* value) {
      { T::loadchunk_command } -> std::convertible_to<const char*>;
      { T::header(v) } -> std::same_as<std::string>;
      { T::chunk(v, iterator) } -> std::same_as<redisbloom::chunk>;
      { T::size(v) } -> std::convertible_to<std::size_t>;
      { T::rdb_load(io, encver) } -> std::same_as<void*>;
      T::rdb_save(io, value);
    };

template <data_type_traits Traits>
struct data_type {
  using value_type = typename Traits::value_type;

  static const value_type& of(const void* value) { return *static_cast<const value_type*>(value); }

  /// Calls fn(bytes, iterator) for the header (iterator 1) and then for every chunk, with the iterator
  /// SCANDUMP returns after it: the LOADCHUNK sequence that rebuilds the value.
  template <class Fn>
  static void for_each_chunk(const value_type& v, Fn&& fn) {
    const std::string header = Traits::header(v);
    fn(header.data(), header.size(), 1LL);
    for (long long it = 1;;) {
      const redisbloom::chunk c = Traits::chunk(v, it);
      if (c.next == 0) break;
      fn(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size(), c.next);
      it = c.next;
    }
  }

  static void aof_rewrite(RedisModuleIO* io, RedisModuleString* key, void* value) {
    for_each_chunk(of(value), [&](const char* bytes, std::size_t size, long long iterator) {
      api::EmitAOF(io, Traits::loadchunk_command, "slb", key, iterator, bytes, size);
    });
  }
  static void digest(RedisModuleDigest* md, void* value) {
    for_each_chunk(of(value), [&](const char* bytes, std::size_t size, long long) {
      api::DigestAddStringBuffer(md, bytes, size);
    });
    api::DigestEndSequence(md);
  }
  static std::size_t mem_usage(const void* value) { return Traits::size(of(value)); }
  static void free(void* value) { delete static_cast<value_type*>(value); }
  static void* copy(RedisModuleString*, RedisModuleString*, const void* value) {
    try {
      return new value_type(of(value));
    } catch (const std::exception&) {
      return nullptr;  // COPY fails cleanly
    }
  }

  /// Registers the type (RedisBloom's name and encoding version) and its commands.
  static RedisModuleType* create(RedisModuleCtx* ctx, const char* name, int encoding_version,
                                 std::span<const command> commands) {
    static api::type_methods methods;
    methods.rdb_load = Traits::rdb_load;
    methods.rdb_save = Traits::rdb_save;
    methods.aof_rewrite = aof_rewrite;
    methods.mem_usage = mem_usage;
    methods.digest = digest;
    methods.free = free;
    methods.copy = copy;
    RedisModuleType* type = api::CreateDataType(ctx, name, encoding_version, &methods);
    if (type == nullptr || !create_commands(ctx, commands)) return nullptr;
    return type;
  }
};

}  // namespace blume::redis
