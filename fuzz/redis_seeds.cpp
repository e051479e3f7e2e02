// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpora of the Redis harnesses (fuzz/corpus/redis_*/) from the module's own encoders:
// a few small Bloom, cuckoo, counting and aging filters, as LOADCHUNK streams and as RDB records. Regenerate with
//   clang++-14 -std=c++20 -I include fuzz/redis_seeds.cpp redis/codec.cpp -lxxhash -o seeds
//   ./seeds fuzz/corpus
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../redis/codec.hpp"  // relative: the harnesses need no include path of their own
#include "../redis/counting_codec.hpp"
#include "../redis/window_codec.hpp"

namespace rb = blume::redisbloom;
using namespace blume::redis;

namespace {

void write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

/// The harness's stream: the header, then every SCANDUMP chunk with the iterator LOADCHUNK gets.
template <class Value, class Chunk>
std::string chunk_stream(const Value& v, std::string header, bool length_prefix, Chunk chunk) {
  std::string out;
  if (length_prefix) put(out, static_cast<std::uint16_t>(header.size()));
  out += header;
  for (long long it = 1;;) {
    const rb::chunk c = chunk(v, it);
    if (c.next == 0) break;
    put(out, static_cast<std::int64_t>(c.next));
    put(out, static_cast<std::uint16_t>(c.bytes.size()));
    out.append(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
    it = c.next;
  }
  return out;
}

rb::bloom_value bloom(std::uint64_t capacity, double fpr, std::uint32_t growth, bool scaling, int items) {
  rb::bloom_value v = rb::make_bloom(capacity, fpr, growth, scaling);
  for (int i = 0; i < items; ++i) v.chain.try_insert(v.chain.hash("item" + std::to_string(i)));
  return v;
}

rb::cuckoo_value cuckoo(std::uint64_t capacity, std::uint32_t bucket_size, std::uint32_t expansion, int items) {
  rb::cuckoo_value v = rb::make_cuckoo(capacity, bucket_size, 20, expansion);
  for (int i = 0; i < items; ++i) rb::cuckoo_insert(v, v.filter.hash("item" + std::to_string(i)));
  return v;
}

template <class F>
counting_codec::value_type counting(std::uint64_t capacity, double fpr, int items) {
  counting_codec::value_type v;
  F f(capacity, fpr);
  for (int i = 0; i < items; ++i) f.insert(f.hash("item" + std::to_string(i)));
  v.filter.emplace(std::in_place_type<F>, std::move(f));
  v.design = {capacity, fpr};
  return v;
}

window_codec::value_type window(std::uint64_t items, std::int64_t seconds, int added) {
  const window_filter::time_point t0{std::chrono::seconds(1'800'000'000)};
  window_codec::value_type v;
  window_filter f(items, 0.01, std::chrono::seconds(seconds), window_filter::hasher_type::default_seed, t0);
  for (int i = 0; i < added; ++i) f.insert(f.hash("item" + std::to_string(i)), t0 + std::chrono::seconds(i));
  v.filter.emplace(std::move(f));
  v.design = {items, 0.01};
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  const std::vector<std::pair<std::string, rb::bloom_value>> blooms = {
      {"small", bloom(100, 0.01, 2, true, 40)},
      {"grown", bloom(20, 0.05, 2, true, 150)},
      {"nonscaling", bloom(64, 0.001, 2, false, 64)},
  };
  for (const auto& [name, v] : blooms) {
    write(root / "redis_bf_chunk", name,
          chunk_stream(v, rb::encode_header(rb::record_of(v)), true,
                       [](const rb::bloom_value& x, long long it) { return rb::bloom_chunk(x, it, 64); }));
    byte_rdb_writer out;
    save_bloom(out, v);
    write(root / "redis_bf_rdb", name, std::string(1, char(bloom_encoding_version)) + out.bytes());
  }
  const std::vector<std::pair<std::string, rb::cuckoo_value>> cuckoos = {
      {"small", cuckoo(64, 2, 1, 30)},
      {"grown", cuckoo(16, 2, 2, 120)},
      {"bucket4", cuckoo(128, 4, 0, 100)},
  };
  for (const auto& [name, v] : cuckoos) {
    write(root / "redis_cf_chunk", name,
          chunk_stream(v, rb::encode_header(rb::record_of(v)), false,
                       [](const rb::cuckoo_value& x, long long it) { return rb::cuckoo_chunk(x, it, 64); }));
    byte_rdb_writer out;
    save_cuckoo(out, v);
    write(root / "redis_cf_rdb", name, std::string(1, char(cuckoo_encoding_version)) + out.bytes());
  }
  // A cuckoo record of encoding 3 (before RedisBloom stored deletes, bucket size, iterations and
  // expansion): one sub-filter, its geometry from the configuration the harness loads under (2, 20, 1).
  {
    const rb::cuckoo_value v = cuckoo(64, 2, 1, 20);
    byte_rdb_writer out;
    out.save_unsigned(1);
    out.save_unsigned(v.filter.buckets());
    out.save_unsigned(v.items);
    out.save_string(v.filter.slot_bytes(0));
    write(root / "redis_cf_rdb", "encoding3", std::string(1, char(3)) + out.bytes());
  }
  std::vector<std::pair<std::string, counting_codec::value_type>> countings;
  countings.emplace_back("small4", counting<blume::redis::counting4>(100, 0.01, 40));
  countings.emplace_back("small8", counting<blume::redis::counting8>(50, 0.05, 30));
  for (const auto& [name, v] : countings) {
    write(root / "redis_cbf_chunk", name,
          chunk_stream(v, counting_codec::header(v), true, [](const counting_codec::value_type& x, long long it) {
            return counting_codec::chunk(x, it, 64);
          }));
    byte_rdb_writer out;
    counting_codec::save(out, v);
    write(root / "redis_cbf_rdb", name, out.bytes());
  }
  std::vector<std::pair<std::string, window_codec::value_type>> windows;
  windows.emplace_back("items", window(64, 0, 100));
  windows.emplace_back("seconds", window(64, 30, 50));
  for (const auto& [name, v] : windows) {
    write(root / "redis_wbf_chunk", name,
          chunk_stream(v, window_codec::header(v), true,
                       [](const window_codec::value_type& x, long long it) { return window_codec::chunk(x, it, 64); }));
    byte_rdb_writer out;
    window_codec::save(out, v);
    write(root / "redis_wbf_rdb", name, out.bytes());
  }
  // A value LOADCHUNK is still filling: its header and the first 64 payload bytes.
  {
    const auto& whole = countings[0].second;
    auto pending = counting_codec::from_header(counting_codec::header(whole), 1 << 20);
    const rb::chunk first = counting_codec::chunk(whole, 1, 64);
    std::string why;
    counting_codec::load_chunk(*pending, first.next, first.bytes, &why);
    byte_rdb_writer out;
    counting_codec::save(out, *pending);
    write(root / "redis_cbf_rdb", "pending", out.bytes());
  }
  return 0;
}
