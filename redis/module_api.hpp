// SPDX-License-Identifier: Apache-2.0
// Our own declarations of the Redis module API. No Debian package ships `redismodule.h`, so the module
// declares the few structs, constants and function pointers it uses, and fills the pointers at load time
// through the lookup function the server hands over in the context (see `load` at the end).
//
// Target: Debian 12 redis-server 7.0.15. Every line below was checked against it; how it was checked:
//   T = exercised by a throwaway module loaded into Debian's redis-server 7.0.15 (RESP2 and RESP3 replies
//       read byte for byte, DEBUG RELOAD, DEBUG LOADAOF, COPY, DEL/UNLINK, MEMORY USAGE, DEBUG DIGEST-VALUE,
//       RESTORE of a truncated payload, CONFIG GET/SET, a replica, MODULE LOAD of a busy name).
//   S = the server exports the implementation as `RM_<Name>` (`nm -D /usr/bin/redis-server`), and where
//       a width was in doubt, its machine code (`objdump -d`) was read.
//   D = Redis modules API reference, https://redis.io/docs/latest/develop/reference/modules/modules-api-ref/
//       (one section per function, with "Available since"), generated from src/module.c.
//   H = src/redismodule.h and src/module.c of Redis 7.0.15, https://github.com/redis/redis/tree/7.0.15/src
//
// Facts we established beyond the core set (core: loading, status codes, key types, the callback table,
// RDB/AOF/digest I/O, replies with integers/errors/simple strings/arrays/doubles/bulk/null, numeric configs):
//
// | function / constant          | C signature or value                                          | since | check |
// |------------------------------|---------------------------------------------------------------|-------|-------|
// | GetContextFlags              | int (Ctx*)                                                    | 4.0.3 | D S T |
// | CTX_FLAGS_MULTI              | 1<<1   (inside MULTI/EXEC)                                    |       | H T   |
// | CTX_FLAGS_MAXMEMORY          | 1<<8   (maxmemory > 0)                                        |       | H T   |
// | CTX_FLAGS_OOM                | 1<<10  (used memory above maxmemory)                          |       | H T   |
// | CTX_FLAGS_REPLICATED         | 1<<12  (command arrived over the replication link)            |       | H T   |
// | CTX_FLAGS_LOADING            | 1<<13  (RDB/AOF load; valid with a NULL ctx inside rdb_load)  |       | H T   |
// | CTX_FLAGS_RESP3              | 1<<22  (the client said HELLO 3; `or $0x400000` in the code)  |       | H S T |
// | ReplyWithMap                 | int (Ctx*, long pairs); RESP2: a flat array of 2*pairs        | 7.0.0 | D S T |
// | ReplyWithBool                | int (Ctx*, int); RESP3 `#t`/`#f`, RESP2 the INTEGER :1/:0     | 7.0.0 | D S T |
// | ReplyWithString              | int (Ctx*, Str*)  (bulk string)                               | 4.0.0 | D S T |
// | ReplySetArrayLength          | void (Ctx*, long); after ReplyWithArray(ctx, -1)              | 4.0.0 | D S T |
// | POSTPONED_(ARRAY_)LEN        | -1 (long)                                                     |       | H D T |
// | CreateString / FreeString    | Str* (Ctx*, const char*, size_t) / void (Ctx*, Str*)          | 4.0.0 | D S T |
// | RegisterStringConfig         | int (Ctx*, name, const char *dflt, unsigned flags, get, set,  | 7.0.0 | D S T |
// |                              |      apply, void *priv); get: Str* (name, priv);              |       |       |
// |                              |      set: int (name, Str *val, priv, Str **err)               |       |       |
// | CONFIG_DEFAULT/IMMUTABLE     | 0 / 1<<0 (CONFIG SET refused: "can't set immutable config")   |       | D T   |
// | CONFIG_HIDDEN / CONFIG_MEMORY| 1<<4 (not matched by CONFIG GET patterns) / 1<<7 ("1mb" ok)   |       | D T   |
// | GetServerInfo                | RedisModuleServerInfoData* (Ctx*, const char *section)        | 6.0.0 | D S T |
// | ServerInfoGetFieldUnsigned   | unsigned long long (Data*, const char *field, int *out_err)   | 6.0.0 | D S T |
// | FreeServerInfo               | void (Ctx*, Data*)  (pass the same ctx as GetServerInfo)      | 6.0.0 | D S T |
// | GetUsedMemoryRatio           | float (void)  (`movss` into xmm0: a float, not a double)      | 6.0.0 | D S T |
// | TryAlloc                     | void* (size_t); NULL instead of aborting the server           | 7.0.0 | D S T |
// | Replicate                    | int (Ctx*, const char *cmd, const char *fmt, ...); after      | 4.0.0 | D S T |
// |                              | ReplicateVerbatim in one command, both go out in MULTI/EXEC   |       |       |
// | IsKeysPositionRequest        | int (Ctx*); with flag "getkeys-api", a call that only asks    | 4.0.0 | D S T |
// | KeyAtPos                     | void (Ctx*, int pos) answers it, one key at a time            | 4.0.0 | D S T |
// | DeleteKey                    | int (Key*); the key must be open for writing                  | 4.0.0 | D S T |
// | SetExpire                    | int (Key*, long long ms from now); ERR for an empty key       | 4.0.0 | D S T |
// | Milliseconds                 | long long (void): Unix time in ms                             | 4.0.0 | D S T |
// | SetAbsExpire                 | int (Key*, long long Unix ms); optional: null before 6.2.2    | 6.2.2 | D S T |
// | TryCalloc / TryRealloc       | void* (size_t n, size_t size) / void* (void*, size_t);        | 7.4.0 | D, T  |
// |                              | optional: the lookup fails on 7.0.15, the pointers stay null  |       |       |
//
// Behaviour seen on 7.0.15 that the documentation does not say, or says otherwise (all T):
// - ReplyWithBool answers a RESP2 client with the integers :1/:0 (the doc says the strings "1"/"0").
// - ReplyWithDouble sends 17 significant digits in both protocols: RESP2 `$20 0.050000000000000003`,
//   RESP3 `,0.050000000000000003`. ReplyWithNull is `$-1` in RESP2 and `_` in RESP3. ReplyWithMap is `%`
//   in RESP3 and a flat array of keys and values in RESP2. These adapt to the client by themselves; only a
//   reply whose *shape* differs per protocol (RedisBloom's BF.INFO) needs CTX_FLAGS_RESP3.
// - A postponed length puts the same bytes on the wire as a known one; nested postponed arrays are closed
//   innermost first.
// - COPY whose `copy` callback returns NULL replies the error "module key failed to copy" (not 0).
// - DEL calls `unlink` and `free`; UNLINK calls `free_effort`, `unlink` and `free` (at once when the effort
//   is small). MEMORY USAGE reports mem_usage plus the key's own overhead (32 bytes here).
// - CTX_FLAGS_LOADING is set for GetContextFlags(NULL) inside rdb_load and for commands replayed from the
//   AOF; CTX_FLAGS_REPLICATED for commands a replica applies from its primary (never refuse those).
// - ServerInfoGetFieldUnsigned on a missing field returns 0 and sets *out_err to 1 (ERR).
// - GetUsedMemoryRatio is 0 when maxmemory is 0 (no limit) and above 1 when over the limit, so "would this
//   fit" needs used_memory and maxmemory from GetServerInfo("memory").
// - TryAlloc(2^50) returns NULL and the server lives on; Alloc of the same size kills the server (SIGABRT,
//   "Out Of Memory allocating 1125899906842624 bytes!"). Size-check with TryAlloc or before allocating.
// - Numeric configs: out of range -> "argument must be between <min> and <max> inclusive"; CONFIG_MEMORY
//   accepts "1mb"; CONFIG_IMMUTABLE -> "can't set immutable config". A value given after --loadmodule as
//   `--<module>.<name> value` is applied by LoadConfigs (the setter runs; the getter sees it afterwards).
// - A string config's setter receives a string the server frees right after the call: copy the bytes (or
//   retain the string). The getter's returned string stays owned by the module. The `*err` string the
//   setter creates is freed by the server, and its text reaches the client after "CONFIG SET failed ...".
// - With options_handle_io_errors, RESTORE of a truncated payload (valid checksum) makes IsIOError true in
//   rdb_load; returning NULL gives the client "Bad data format" and the server lives on.
// - Log works before SetModuleAttribs (the line is then prefixed `<module>` instead of `<name>`).
// - Visibility: build with -fvisibility=hidden. Without it GCC exports the inline variables below as
//   STB_GNU_UNIQUE symbols (the .so can never be dlclosed, and two modules built from this header would
//   share one set of pointers). Inline members of std templates (std::string) stay exported even then:
//   add -fvisibility-inlines-hidden or a linker version script so only RedisModule_OnLoad is exported.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
// Opaque server objects: only ever handled through pointers.
struct RedisModuleCtx;
struct RedisModuleString;
struct RedisModuleKey;
struct RedisModuleIO;
struct RedisModuleType;
struct RedisModuleDigest;
struct RedisModuleDefragCtx;
struct RedisModuleKeyOptCtx;
struct RedisModuleServerInfoData;
}

namespace blume::redis::api {

// ---- constants ----------------------------------------------------------------------------------------

inline constexpr int ok = 0;   // REDISMODULE_OK
inline constexpr int err = 1;  // REDISMODULE_ERR
inline constexpr int apiver_1 = 1;

// OpenKey modes; combine with |.
inline constexpr int open_read = 1 << 0;
inline constexpr int open_write = 1 << 1;
inline constexpr int open_notouch = 1 << 16;  // do not update the key's LRU/LFU

// KeyType results.
inline constexpr int keytype_empty = 0;
inline constexpr int keytype_string = 1;
inline constexpr int keytype_list = 2;
inline constexpr int keytype_hash = 3;
inline constexpr int keytype_set = 4;
inline constexpr int keytype_zset = 5;
inline constexpr int keytype_module = 6;
inline constexpr int keytype_stream = 7;

inline constexpr char errormsg_wrongtype[] = "WRONGTYPE Operation against a key holding the wrong kind of value";

// ReplyWithArray length "not known yet"; close it with ReplySetArrayLength. (A postponed map would need
// ReplySetMapLength, which is not declared here.)
inline constexpr long postponed_len = -1;

// SetModuleOptions bits.
inline constexpr int options_handle_io_errors = 1 << 0;        // rdb_load may see IsIOError and return NULL
inline constexpr int options_handle_repl_async_load = 1 << 2;  // needed for repl-diskless-load swapdb

// GetContextFlags bits (a subset).
inline constexpr int ctx_flags_multi = 1 << 1;
inline constexpr int ctx_flags_maxmemory = 1 << 8;
inline constexpr int ctx_flags_oom = 1 << 10;
inline constexpr int ctx_flags_replicated = 1 << 12;  // a replica applying its primary's stream: never refuse
inline constexpr int ctx_flags_loading = 1 << 13;
inline constexpr int ctx_flags_resp3 = 1 << 22;

// Module config flags (Register*Config).
inline constexpr unsigned config_default = 0;
inline constexpr unsigned config_immutable = 1u << 0;
inline constexpr unsigned config_hidden = 1u << 4;
inline constexpr unsigned config_memory = 1u << 7;  // numeric configs accept "64mb", "1gb"

// Log levels understood by Log.
inline constexpr char log_debug[] = "debug";
inline constexpr char log_verbose[] = "verbose";
inline constexpr char log_notice[] = "notice";
inline constexpr char log_warning[] = "warning";

// ---- callback types -----------------------------------------------------------------------------------

using command_func = int (*)(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);

using rdb_load_func = void* (*)(RedisModuleIO* rdb, int encver);
using rdb_save_func = void (*)(RedisModuleIO* rdb, void* value);
using aof_rewrite_func = void (*)(RedisModuleIO* aof, RedisModuleString* key, void* value);
using mem_usage_func = std::size_t (*)(const void* value);
using digest_func = void (*)(RedisModuleDigest* digest, void* value);
using free_func = void (*)(void* value);
using aux_load_func = int (*)(RedisModuleIO* rdb, int encver, int when);
using aux_save_func = void (*)(RedisModuleIO* rdb, int when);
using free_effort_func = std::size_t (*)(RedisModuleString* key, const void* value);
using unlink_func = void (*)(RedisModuleString* key, const void* value);
// Returning NULL makes COPY reply "module key failed to copy".
using copy_func = void* (*)(RedisModuleString* fromkey, RedisModuleString* tokey, const void* value);
using defrag_func = int (*)(RedisModuleDefragCtx* ctx, RedisModuleString* key, void** value);
using mem_usage2_func = std::size_t (*)(RedisModuleKeyOptCtx* ctx, const void* value, std::size_t sample_size);
using free_effort2_func = std::size_t (*)(RedisModuleKeyOptCtx* ctx, const void* value);
using unlink2_func = void (*)(RedisModuleKeyOptCtx* ctx, const void* value);
using copy2_func = void* (*)(RedisModuleKeyOptCtx* ctx, const void* value);

using numeric_config_get_func = long long (*)(const char* name, void* privdata);
using numeric_config_set_func = int (*)(const char* name, long long value, void* privdata, RedisModuleString** err);
using string_config_get_func = RedisModuleString* (*)(const char* name, void* privdata);
using string_config_set_func = int (*)(const char* name, RedisModuleString* value, void* privdata,
                                       RedisModuleString** err);
using config_apply_func = int (*)(RedisModuleCtx* ctx, void* privdata, RedisModuleString** err);

// ---- the data type's callback table -------------------------------------------------------------------

// The version of the table below; the server reads only the groups a version covers.
inline constexpr std::uint64_t type_method_version = 4;

/// The server's RedisModuleTypeMethods, version 4, field for field.
///
/// Trap: the CreateDataType documentation shows an initializer listing `digest` before `mem_usage`. That is
/// C designated-initializer order, not the binary order: the table has mem_usage at offset 32 and digest at
/// 40. C++20 designated initializers must follow declaration order, so `{.mem_usage = .., .digest = ..}`
/// compiles and the reversed order does not. Never raise `version` without adding the next group's fields:
/// the server would read past the end of this struct.
struct type_methods {
  std::uint64_t version = type_method_version;
  // version 1
  rdb_load_func rdb_load = nullptr;
  rdb_save_func rdb_save = nullptr;
  aof_rewrite_func aof_rewrite = nullptr;
  mem_usage_func mem_usage = nullptr;
  digest_func digest = nullptr;
  free_func free = nullptr;
  // version 2
  aux_load_func aux_load = nullptr;
  aux_save_func aux_save = nullptr;
  int aux_save_triggers = 0;
  // version 3
  free_effort_func free_effort = nullptr;
  unlink_func unlink = nullptr;
  copy_func copy = nullptr;
  defrag_func defrag = nullptr;
  // version 4 (the server prefers these over their version-3 namesakes when set)
  mem_usage2_func mem_usage2 = nullptr;
  free_effort2_func free_effort2 = nullptr;
  unlink2_func unlink2 = nullptr;
  copy2_func copy2 = nullptr;
};

// x86-64 offsets of the 7.0.15 server's table (src/redismodule.h; the field order is also the bindgen
// output of the redis-module Rust crate).
static_assert(sizeof(void*) == 8, "the offsets below are those of a 64-bit server");
static_assert(offsetof(type_methods, version) == 0);
static_assert(offsetof(type_methods, rdb_load) == 8);
static_assert(offsetof(type_methods, rdb_save) == 16);
static_assert(offsetof(type_methods, aof_rewrite) == 24);
static_assert(offsetof(type_methods, mem_usage) == 32);
static_assert(offsetof(type_methods, digest) == 40);
static_assert(offsetof(type_methods, free) == 48);
static_assert(offsetof(type_methods, aux_load) == 56);
static_assert(offsetof(type_methods, aux_save) == 64);
static_assert(offsetof(type_methods, aux_save_triggers) == 72);
static_assert(offsetof(type_methods, free_effort) == 80);
static_assert(offsetof(type_methods, unlink) == 88);
static_assert(offsetof(type_methods, copy) == 96);
static_assert(offsetof(type_methods, defrag) == 104);
static_assert(offsetof(type_methods, mem_usage2) == 112);
static_assert(offsetof(type_methods, free_effort2) == 120);
static_assert(offsetof(type_methods, unlink2) == 128);
static_assert(offsetof(type_methods, copy2) == 136);
static_assert(sizeof(type_methods) == 144);

// ---- the API: one pointer per server function, filled by `load` ---------------------------------------
//
// Integer widths are the server's: `long` for reply lengths, `long long` for numbers, `size_t` for byte
// counts. On x86-64 a narrower declaration leaves garbage in the upper half of the register.

// Module setup
inline void (*SetModuleAttribs)(RedisModuleCtx* ctx, const char* name, int ver, int apiver) = nullptr;
inline int (*IsModuleNameBusy)(const char* name) = nullptr;  // optional: probed, may stay null
inline int (*CreateCommand)(RedisModuleCtx* ctx, const char* name, command_func cmdfunc, const char* strflags,
                            int firstkey, int lastkey, int keystep) = nullptr;
// The server copies the table: it may live on OnLoad's stack. NULL on failure (then fail OnLoad).
inline RedisModuleType* (*CreateDataType)(RedisModuleCtx* ctx, const char* name, int encver,
                                          type_methods* typemethods) = nullptr;
inline void (*SetModuleOptions)(RedisModuleCtx* ctx, int options) = nullptr;
inline void (*Log)(RedisModuleCtx* ctx, const char* level, const char* fmt, ...)
    __attribute__((format(printf, 3, 4))) = nullptr;
inline int (*GetContextFlags)(RedisModuleCtx* ctx) = nullptr;

// Configs: register all, then LoadConfigs once, inside OnLoad.
inline int (*RegisterNumericConfig)(RedisModuleCtx* ctx, const char* name, long long default_val, unsigned int flags,
                                    long long min, long long max, numeric_config_get_func getfn,
                                    numeric_config_set_func setfn, config_apply_func applyfn, void* privdata) = nullptr;
inline int (*RegisterStringConfig)(RedisModuleCtx* ctx, const char* name, const char* default_val, unsigned int flags,
                                   string_config_get_func getfn, string_config_set_func setfn,
                                   config_apply_func applyfn, void* privdata) = nullptr;
inline int (*LoadConfigs)(RedisModuleCtx* ctx) = nullptr;

// Server heap: counted in INFO memory and against maxmemory. Never mix with malloc/free.
inline void* (*Alloc)(std::size_t bytes) = nullptr;     // aborts the server when out of memory
inline void* (*TryAlloc)(std::size_t bytes) = nullptr;  // returns NULL instead
inline void* (*Calloc)(std::size_t nmemb, std::size_t size) = nullptr;
inline void* (*Realloc)(void* ptr, std::size_t bytes) = nullptr;
inline void (*Free)(void* ptr) = nullptr;
inline void* (*TryCalloc)(std::size_t nmemb, std::size_t size) = nullptr;  // optional (7.4+)
inline void* (*TryRealloc)(void* ptr, std::size_t bytes) = nullptr;        // optional (7.4+)

// Memory figures, to refuse a filter that would not fit.
inline RedisModuleServerInfoData* (*GetServerInfo)(RedisModuleCtx* ctx, const char* section) = nullptr;
inline unsigned long long (*ServerInfoGetFieldUnsigned)(RedisModuleServerInfoData* data, const char* field,
                                                        int* out_err) = nullptr;
inline void (*FreeServerInfo)(RedisModuleCtx* ctx, RedisModuleServerInfoData* data) = nullptr;
inline float (*GetUsedMemoryRatio)() = nullptr;

// Replies
inline int (*WrongArity)(RedisModuleCtx* ctx) = nullptr;
inline int (*ReplyWithLongLong)(RedisModuleCtx* ctx, long long ll) = nullptr;
inline int (*ReplyWithError)(RedisModuleCtx* ctx, const char* err) = nullptr;  // include the code: "ERR ..."
inline int (*ReplyWithSimpleString)(RedisModuleCtx* ctx, const char* msg) = nullptr;
inline int (*ReplyWithArray)(RedisModuleCtx* ctx, long len) = nullptr;
inline int (*ReplyWithMap)(RedisModuleCtx* ctx, long len) = nullptr;  // len = number of pairs
inline void (*ReplySetArrayLength)(RedisModuleCtx* ctx, long len) = nullptr;
inline int (*ReplyWithDouble)(RedisModuleCtx* ctx, double d) = nullptr;
inline int (*ReplyWithBool)(RedisModuleCtx* ctx, int b) = nullptr;
inline int (*ReplyWithStringBuffer)(RedisModuleCtx* ctx, const char* buf, std::size_t len) = nullptr;
inline int (*ReplyWithString)(RedisModuleCtx* ctx, RedisModuleString* str) = nullptr;
inline int (*ReplyWithNull)(RedisModuleCtx* ctx) = nullptr;

// Strings
inline const char* (*StringPtrLen)(const RedisModuleString* str, std::size_t* len) = nullptr;
inline int (*StringToLongLong)(const RedisModuleString* str, long long* ll) = nullptr;
inline int (*StringToDouble)(const RedisModuleString* str, double* d) = nullptr;
inline RedisModuleString* (*CreateString)(RedisModuleCtx* ctx, const char* ptr, std::size_t len) = nullptr;
inline void (*FreeString)(RedisModuleCtx* ctx, RedisModuleString* str) = nullptr;

// Keys and module values
inline RedisModuleKey* (*OpenKey)(RedisModuleCtx* ctx, RedisModuleString* keyname, int mode) = nullptr;
inline void (*CloseKey)(RedisModuleKey* key) = nullptr;  // NULL allowed
inline int (*KeyType)(RedisModuleKey* key) = nullptr;    // NULL -> keytype_empty
inline RedisModuleType* (*ModuleTypeGetType)(RedisModuleKey* key) = nullptr;
inline void* (*ModuleTypeGetValue)(RedisModuleKey* key) = nullptr;
inline int (*ModuleTypeSetValue)(RedisModuleKey* key, RedisModuleType* mt, void* value) = nullptr;  // frees the old
inline int (*ReplicateVerbatim)(RedisModuleCtx* ctx) = nullptr;
/// Propagates a command of the module's choosing (format letters as EmitAOF's) after this one.
inline int (*Replicate)(RedisModuleCtx* ctx, const char* cmdname, const char* fmt, ...) = nullptr;
/// Removes the key (open for writing) and its value.
inline int (*DeleteKey)(RedisModuleKey* key) = nullptr;
/// Sets a key's time to live in milliseconds from now; the key must be open for writing and not empty.
inline int (*SetExpire)(RedisModuleKey* key, long long milliseconds) = nullptr;
/// The server's clock in Unix milliseconds.
inline long long (*Milliseconds)() = nullptr;
/// Sets a key's expiry to an absolute Unix time in milliseconds (null on servers before 6.2.2).
inline int (*SetAbsExpire)(RedisModuleKey* key, long long unix_ms) = nullptr;
/// For a command flagged "getkeys-api": whether this call only asks where the keys are, and the answer.
inline int (*IsKeysPositionRequest)(RedisModuleCtx* ctx) = nullptr;
inline void (*KeyAtPos)(RedisModuleCtx* ctx, int pos) = nullptr;

// RDB I/O (inside rdb_save / rdb_load)
inline void (*SaveUnsigned)(RedisModuleIO* io, std::uint64_t value) = nullptr;
inline std::uint64_t (*LoadUnsigned)(RedisModuleIO* io) = nullptr;
inline void (*SaveStringBuffer)(RedisModuleIO* io, const char* str, std::size_t len) = nullptr;
inline char* (*LoadStringBuffer)(RedisModuleIO* io, std::size_t* lenptr) = nullptr;  // release with Free
inline void (*SaveDouble)(RedisModuleIO* io, double value) = nullptr;
inline double (*LoadDouble)(RedisModuleIO* io) = nullptr;
inline int (*IsIOError)(RedisModuleIO* io) = nullptr;
inline void (*LogIOError)(RedisModuleIO* io, const char* level, const char* fmt, ...)
    __attribute__((format(printf, 3, 4))) = nullptr;

// AOF rewrite: format letters c (C string), s (Str*), b (buffer, size_t), l (long long), v (Str**, size_t).
inline void (*EmitAOF)(RedisModuleIO* io, const char* cmdname, const char* fmt, ...) = nullptr;

// DEBUG DIGEST
inline void (*DigestAddStringBuffer)(RedisModuleDigest* md, const char* ele, std::size_t len) = nullptr;
inline void (*DigestAddLongLong)(RedisModuleDigest* md, long long ele) = nullptr;
inline void (*DigestEndSequence)(RedisModuleDigest* md) = nullptr;

// ---- obtaining the pointers ---------------------------------------------------------------------------

/// The server's lookup function: `lookup("RedisModule_<Name>", &fp)` stores the address and returns `ok`,
/// or returns `err` and leaves `fp` alone for a name it does not know.
using lookup_func = int (*)(const char* name, void* out);

namespace detail {

template <class Function>
bool bind(lookup_func lookup, const char* name, Function*& slot) {
  void* address = nullptr;
  if (lookup(name, &address) != ok || address == nullptr) {
    slot = nullptr;
    return false;
  }
  slot = reinterpret_cast<Function*>(address);
  return true;
}

}  // namespace detail

/// Fills every pointer above through `lookup`. Returns false if a function the module cannot do without is
/// unknown to the server, and then names the first such function in `*missing` (when given). Optional
/// functions are probed and simply stay null.
inline bool resolve(lookup_func lookup, const char** missing = nullptr) {
  const char* first_missing = nullptr;
  auto required = [&](const char* name, auto*& slot) {
    if (!detail::bind(lookup, name, slot) && first_missing == nullptr) first_missing = name;
  };
  auto optional = [&](const char* name, auto*& slot) { detail::bind(lookup, name, slot); };

  required("RedisModule_SetModuleAttribs", SetModuleAttribs);
  optional("RedisModule_IsModuleNameBusy", IsModuleNameBusy);
  required("RedisModule_CreateCommand", CreateCommand);
  required("RedisModule_CreateDataType", CreateDataType);
  required("RedisModule_SetModuleOptions", SetModuleOptions);
  required("RedisModule_Log", Log);
  required("RedisModule_GetContextFlags", GetContextFlags);
  required("RedisModule_RegisterNumericConfig", RegisterNumericConfig);
  required("RedisModule_RegisterStringConfig", RegisterStringConfig);
  required("RedisModule_LoadConfigs", LoadConfigs);
  required("RedisModule_Alloc", Alloc);
  required("RedisModule_TryAlloc", TryAlloc);
  required("RedisModule_Calloc", Calloc);
  required("RedisModule_Realloc", Realloc);
  required("RedisModule_Free", Free);
  optional("RedisModule_TryCalloc", TryCalloc);
  optional("RedisModule_TryRealloc", TryRealloc);
  required("RedisModule_GetServerInfo", GetServerInfo);
  required("RedisModule_ServerInfoGetFieldUnsigned", ServerInfoGetFieldUnsigned);
  required("RedisModule_FreeServerInfo", FreeServerInfo);
  required("RedisModule_GetUsedMemoryRatio", GetUsedMemoryRatio);
  required("RedisModule_WrongArity", WrongArity);
  required("RedisModule_ReplyWithLongLong", ReplyWithLongLong);
  required("RedisModule_ReplyWithError", ReplyWithError);
  required("RedisModule_ReplyWithSimpleString", ReplyWithSimpleString);
  required("RedisModule_ReplyWithArray", ReplyWithArray);
  required("RedisModule_ReplyWithMap", ReplyWithMap);
  required("RedisModule_ReplySetArrayLength", ReplySetArrayLength);
  required("RedisModule_ReplyWithDouble", ReplyWithDouble);
  required("RedisModule_ReplyWithBool", ReplyWithBool);
  required("RedisModule_ReplyWithStringBuffer", ReplyWithStringBuffer);
  required("RedisModule_ReplyWithString", ReplyWithString);
  required("RedisModule_ReplyWithNull", ReplyWithNull);
  required("RedisModule_StringPtrLen", StringPtrLen);
  required("RedisModule_StringToLongLong", StringToLongLong);
  required("RedisModule_StringToDouble", StringToDouble);
  required("RedisModule_CreateString", CreateString);
  required("RedisModule_FreeString", FreeString);
  required("RedisModule_OpenKey", OpenKey);
  required("RedisModule_CloseKey", CloseKey);
  required("RedisModule_KeyType", KeyType);
  required("RedisModule_ModuleTypeGetType", ModuleTypeGetType);
  required("RedisModule_ModuleTypeGetValue", ModuleTypeGetValue);
  required("RedisModule_ModuleTypeSetValue", ModuleTypeSetValue);
  required("RedisModule_ReplicateVerbatim", ReplicateVerbatim);
  required("RedisModule_Replicate", Replicate);
  required("RedisModule_DeleteKey", DeleteKey);
  required("RedisModule_SetExpire", SetExpire);
  required("RedisModule_Milliseconds", Milliseconds);
  optional("RedisModule_SetAbsExpire", SetAbsExpire);
  required("RedisModule_IsKeysPositionRequest", IsKeysPositionRequest);
  required("RedisModule_KeyAtPos", KeyAtPos);
  required("RedisModule_SaveUnsigned", SaveUnsigned);
  required("RedisModule_LoadUnsigned", LoadUnsigned);
  required("RedisModule_SaveStringBuffer", SaveStringBuffer);
  required("RedisModule_LoadStringBuffer", LoadStringBuffer);
  required("RedisModule_SaveDouble", SaveDouble);
  required("RedisModule_LoadDouble", LoadDouble);
  required("RedisModule_IsIOError", IsIOError);
  required("RedisModule_LogIOError", LogIOError);
  required("RedisModule_EmitAOF", EmitAOF);
  required("RedisModule_DigestAddStringBuffer", DigestAddStringBuffer);
  required("RedisModule_DigestAddLongLong", DigestAddLongLong);
  required("RedisModule_DigestEndSequence", DigestEndSequence);

  if (missing != nullptr) *missing = first_missing;
  return first_missing == nullptr;
}

/// What RedisModule_Init does in the C header, which we do not have: take the lookup function from the
/// context's first field, fill the pointers, refuse a module name already taken, and register the module
/// with SetModuleAttribs (which must precede CreateCommand, CreateDataType and the config calls).
/// Call first thing in RedisModule_OnLoad and return `err` from OnLoad when this returns false; the reason
/// is logged when the server offers Log, and a missing function is also named in `*missing`.
inline bool load(RedisModuleCtx* ctx, const char* name, int version, const char** missing = nullptr) {
  // The context's first pointer-sized field is the lookup function (src/module.c: "Must be the first field").
  const auto lookup = reinterpret_cast<lookup_func>(*reinterpret_cast<void* const*>(ctx));
  const char* absent = nullptr;
  const bool complete = resolve(lookup, &absent);
  if (missing != nullptr) *missing = absent;
  if (SetModuleAttribs == nullptr) return false;

  if (IsModuleNameBusy != nullptr && IsModuleNameBusy(name) != 0) {
    if (Log != nullptr) Log(ctx, log_warning, "a module named '%s' is already loaded", name);
    return false;
  }
  SetModuleAttribs(ctx, name, version, apiver_1);
  if (!complete) {
    if (Log != nullptr) Log(ctx, log_warning, "this server lacks %s (Redis 7.0 or later is required)", absent);
    return false;
  }
  return true;
}

}  // namespace blume::redis::api
