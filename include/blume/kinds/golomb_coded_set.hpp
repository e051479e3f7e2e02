// SPDX-License-Identifier: Apache-2.0
// The Golomb-coded set (Putze, Sanders & Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", 2007;
// the structure behind BIP 158's compact block filters): the keys' hashes reduced to [0, n·2^P), sorted,
// and stored as coded gaps. An absent key's value collides with a stored one with probability about
// n / (n·2^P) = 2^−P. The gaps are roughly geometric with mean 2^P:
//  * The Rice code (the default) takes M = 2^(P−1): a code is a unary quotient q, a zero and P − 1 bits,
//    P + E[q] = P + e^(−1/2)/(1 − e^(−1/2)) ≈ P + 1.54 bits a gap. Its length is the unary part plus a constant,
//    so one code follows the next after a bit count and a shift.
//  * The Golomb code with the optimal M ≈ 2^P·ln 2 (Gallager & van Voorhis) takes about P + 1.47, within a
//    few hundredths of a bit of the information-theoretic bound, but its truncated-binary remainder puts
//    a compare and a select between one code and the next, and lookups take about 1.6× as long.
// Both are against a Bloom filter's 1.44·P.
//
// To look a key up without decoding the whole set, the value range is cut into buckets of about
// `bucket_keys` keys; each bucket's gaps start from the bucket's first value, and an index holds each
// bucket's bit offset: 16 bits, relative to a 64-bit base every 2^s buckets, s the largest (at most 16)
// under which every offset fits. A lookup decodes about half a bucket. With the default 128 keys per
// bucket that is about 64 codes, the bucket is found by a shift, and the index costs 16/128 + 64/(2^s·128)
// bits per key: 0.14 at 2^−8, where s is 5. A lookup first asks for every cache line of its bucket (up to
// four), so their misses overlap. Files written before (Golomb codes; before those, 32-bit offsets with
// s = 16) are read as they are.
//
// A bulk lookup (contains_many, count_contained) sorts its keys' values (a radix sort) and decodes each
// bucket they fall in once, from its start, answering every key in it on the way. Its buffers (17 bytes a
// key) are kept by the thread for its next call while they hold at most 2^21 keys; a bulk lookup made while
// another is running on the thread (from the keys' range or the output) takes buffers of its own.
//
// Thread safety: const calls may run concurrently; nothing changes after construction.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ranges>
#include <string>
#include <vector>

#include "blume/build_stats.hpp"
#include "blume/detail/bits.hpp"
#include "blume/detail/golomb_code.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/peeling.hpp"
#include "blume/detail/radix_sort.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// The gaps' code. Rice (M = 2^(P−1)) decodes about twice as fast; Golomb (M ≈ 2^P·ln 2) takes about 0.07
/// bits a key fewer, for sets that are sent more often than they are queried.
enum class gcs_code : std::uint8_t { golomb = 0, rice = 1 };

template <hasher Hasher = xxh3_hasher>
class golomb_coded_set : public detail::key_interface<golomb_coded_set<Hasher>> {
  using key_calls = detail::key_interface<golomb_coded_set>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{15};
  static constexpr std::string_view name = "gcs";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = true;
  static constexpr std::string_view merge_refusal = "they are static: build one from the union of the key sets instead";
  static constexpr std::uint32_t default_bucket_keys = 128;
  /// Buckets per base in files of the first layout (32-bit offsets).
  static constexpr std::uint32_t wide_offset_shift = 16;

  // The planner's model: m = the coded stream's bits (about n·(P + 1.7), whole words), k = P; an absent key
  // matches one of n values spread over n·2^P.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return detail::word_bytes(bits); }
  static double model_fpr(double /*n*/, double /*m*/, double k) noexcept {
    return std::ldexp(1.0, -static_cast<int>(k));
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_gcs_for_rate<golomb_coded_set>(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_gcs_for_bits<golomb_coded_set>(items, bits);
  }

  /// The static kinds' common builder (kinds.hpp): from the keys' digest lows, at the default seed and the
  /// largest rate 2^−P at or below `fpr`.
  static golomb_coded_set from_digest_lows(std::vector<std::uint64_t> lows, double fpr, build_stats* /*stats*/) {
    const std::uint32_t p = plan(std::max<std::size_t>(lows.size(), 1), fpr).hashes;
    return build_from_hashes(std::move(lows), p, Hasher::default_seed);
  }

  /// The set of `keys` (duplicates allowed) at false-positive rate 2^−fpr_bits (1 … 32).
  template <std::ranges::input_range R>
  static golomb_coded_set build(const R& keys, std::uint32_t fpr_bits, std::uint64_t seed = Hasher::default_seed,
                                std::uint32_t bucket_keys = default_bucket_keys, gcs_code code = gcs_code::rice) {
    const Hasher hasher(seed);
    std::vector<std::uint64_t> lows;
    if constexpr (std::ranges::sized_range<R>) lows.reserve(std::ranges::size(keys));
    for (auto&& k : keys) lows.push_back(hash_key(hasher, k).low);
    return build_from_hashes(std::move(lows), fpr_bits, seed, bucket_keys, code);
  }
  /// From the low halves of the keys' digests (what build() computes), consumed.
  static golomb_coded_set build_from_hashes(std::vector<std::uint64_t> lows, std::uint32_t fpr_bits,
                                            std::uint64_t seed = Hasher::default_seed,
                                            std::uint32_t bucket_keys = default_bucket_keys,
                                            gcs_code code = gcs_code::rice) {
    check(fpr_bits, bucket_keys);
    golomb_coded_set s(Hasher(seed), fpr_bits, lows.size(), bucket_keys, code == gcs_code::rice);
    if (lows.empty()) return s;
    for (std::uint64_t& x : lows) x = s.value_of(x);
    detail::sort_unique(lows);
    s.encode(lows);
    return s;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // bits = the coded stream's words × 64, hashes = P, layout = keys per bucket; extra = {n (keys given),
  // values stored, s + 1 (0 in files of the first layout), the code (0 Golomb, 1 Rice), 0, 0}; inserted = n. Payload: the stream (u64
  // words, the last one zero), the buckets' offsets (buckets + 1 of them: u16, zero-padded to a multiple of
  // 4; u32 in the first layout), the 64-bit bases, one per 2^s buckets plus two.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = bits_.size() * 64;
    p.secondary = fpr_bits_;
    p.layout = bucket_keys_;
    p.extra = {items_, stored_, short_offsets_ ? offset_shift_ + 1 : 0, rice_ ? 1u : 0u, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::as_bytes(std::span<const std::uint64_t>(bits_)));
    if (short_offsets_) fn(std::as_bytes(std::span<const std::uint16_t>(offsets16_)));
    else fn(std::as_bytes(std::span<const std::uint32_t>(offsets32_)));
    fn(std::as_bytes(std::span<const std::uint64_t>(bases_)));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    const golomb_coded_set shape = shape_of(p);
    return p.primary / 8 + shape.offset_bytes() + shape.base_count() * 8;
  }
  /// Adopts a payload after checking that every offset lies inside the stream and that they never go
  /// back, so no lookup can read outside it; other damage only gives wrong answers, which the payload
  /// checksum catches.
  static golomb_coded_set from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                       byte_storage payload) {
    golomb_coded_set s = [&] {
      try {
        return shape_of(p, seed);
      } catch (const invalid_argument& e) {
        throw format_error(std::string("invalid parameters: ") + e.what());
      }
    }();
    if (inserted != s.items_) throw format_error("the header's item count does not match the parameters");
    const std::uint64_t words = p.primary / 64;
    if (payload.size() != words * 8 + s.offset_bytes() + s.base_count() * 8)
      throw format_error("payload size does not match the parameters");
    // An empty set has an empty payload, whose data() may be null: copy only what there is.
    const std::byte* at = payload.data();
    const auto take = [&](auto& into, std::size_t count) {
      into.resize(count);
      const std::size_t bytes = count * sizeof(into[0]);
      if (bytes != 0) std::memcpy(into.data(), at, bytes);
      at += bytes;
    };
    take(s.bits_, words);
    if (s.short_offsets_) {
      take(s.offsets16_, s.offset_bytes() / 2);
      if (std::any_of(s.offsets16_.begin() + static_cast<std::ptrdiff_t>(s.offset_count()), s.offsets16_.end(),
                      [](std::uint16_t x) { return x != 0; }))
        throw format_error("the offsets' padding is not zero");
    } else {
      take(s.offsets32_, s.offset_count());
    }
    take(s.bases_, s.base_count());
    if (s.items_ != 0) {
      if (words == 0 || s.bits_.back() != 0) throw format_error("the coded stream lacks its zero end word");
      std::uint64_t previous = 0;
      for (std::uint64_t b = 0; b < s.offset_count(); ++b) {
        const std::uint64_t offset = s.bucket_offset(b);
        if (offset < previous || offset > (words - 1) * 64)
          throw format_error("bucket " + std::to_string(b) + "'s offset is out of order");
        previous = offset;
      }
    } else if (words != 0 || s.offset_bytes() != 0) {
      throw format_error("an empty set has no stream");
    }
    s.stored_ = p.extra[1];
    return s;
  }

  bool contains(const digest& d) const noexcept { return items_ != 0 && contains_value(value_of(d.low)); }

  /// Writes one bool per key (or digest) to `out`, in order; returns how many answered true. Each bucket the
  /// keys fall in is decoded once.
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    scratch_lease lease;
    std::vector<char>& answers = lease.buffers().answers;
    const std::size_t hits = answer_many(keys, lease.buffers(), &answers);
    for (char a : answers) {
      *out = a != 0;
      ++out;
    }
    return hits;
  }
  /// How many of `keys` the filter answers true for.
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const {
    scratch_lease lease;
    return answer_many(keys, lease.buffers(), nullptr);
  }

  /// Keys given (duplicates included): n in the range n·2^P.
  std::uint64_t inserted() const noexcept { return items_; }
  std::uint64_t stored_values() const noexcept { return stored_; }
  /// stored / N with N = n·2^P: an absent key's value is uniform in [0, N) and the stored values are
  /// distinct, so it is one of them with exactly that probability (a little under 2^−P, as colliding
  /// keys share a value).
  double predicted_fpr() const noexcept {
    return items_ == 0 ? 0.0 : static_cast<double>(stored_) / static_cast<double>(range_);
  }
  std::size_t size_in_bytes() const noexcept {
    return sizeof(*this) + bits_.size() * 8 + offset_bytes() + bases_.size() * 8;
  }
  /// Bits per stored value, the stream and the bucket index together.
  double bits_per_key() const noexcept {
    return stored_ == 0 ? 0.0
                        : static_cast<double>(bits_.size() * 64 + offset_bytes() * 8 + bases_.size() * 64) /
                              static_cast<double>(stored_);
  }
  /// The bucket index's share of bits_per_key().
  double index_bits_per_key() const noexcept {
    return stored_ == 0 ? 0.0
                        : static_cast<double>(offset_bytes() * 8 + bases_.size() * 64) / static_cast<double>(stored_);
  }
  std::uint32_t bucket_keys() const noexcept { return bucket_keys_; }
  std::uint64_t golomb_parameter() const noexcept { return code_.m(); }
  gcs_code code() const noexcept { return rice_ ? gcs_code::rice : gcs_code::golomb; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }

  friend bool operator==(const golomb_coded_set& a, const golomb_coded_set& b) noexcept {
    return a.items_ == b.items_ && a.fpr_bits_ == b.fpr_bits_ && a.bucket_keys_ == b.bucket_keys_ &&
           a.seed() == b.seed() && a.short_offsets_ == b.short_offsets_ && a.offset_shift_ == b.offset_shift_ &&
           a.rice_ == b.rice_ && a.bits_ == b.bits_ && a.offsets16_ == b.offsets16_ && a.offsets32_ == b.offsets32_ &&
           a.bases_ == b.bases_;
  }

 private:
  /// visit(value) for the values of bucket `b` in ascending order, until it returns false or the bucket
  /// ends. A damaged stream (only a forged file has one) ends the bucket early: nothing is read past it.
  template <class Visit>
  void decode_bucket(std::uint64_t bucket, Visit&& visit) const noexcept {
    std::uint64_t pos = bucket_offset(bucket);
    const std::uint64_t end = bucket_offset(bucket + 1);
    std::uint64_t value = bucket * bucket_range_ - 1;  // the gap before the first value is value − start
    const std::uint64_t m = code_.m(), u = code_.u();
    const std::uint32_t b = code_.b();
    if (rice_ && b != 0) {
      decode_rice_bucket(pos, end, value, visit);
      return;
    }
    if (b == 0) {  // M = 1: unary codes only (P = 1), the general decoder
      while (pos < end) {
        std::uint64_t gap = 0;
        if (!code_.get(bits_, pos, end, gap)) return;
        value += gap + 1;
        if (!visit(value)) return;
      }
      return;
    }
    // Codes are decoded one after another, each starting where the previous one ends, so the time per code
    // is the latency of that chain. The codes are taken from a 64-bit buffer, shifted by each code's length
    // and topped up with the stream's next aligned 32 bits, whose address does not depend on the codes just
    // read (so the load runs ahead of them), rather than re-read at every code.
    const std::byte* stream = reinterpret_cast<const std::byte*>(bits_.data());
    const auto chunk = [stream](std::uint64_t i) {  // 32-bit chunk i of the stream (little-endian)
      std::uint32_t c;
      std::memcpy(&c, stream + i * 4, sizeof c);
      return std::uint64_t{c};
    };
    std::uint64_t next_chunk = 0, buffer = 0;
    unsigned avail = 0;  // bits of `buffer` that are the stream's from `pos` on (the rest are zero)
    const auto restart = [&] {
      next_chunk = pos / 32 + 1;
      buffer = chunk(pos / 32) >> (pos % 32);
      avail = 32 - static_cast<unsigned>(pos % 32);
    };
    restart();
    const std::uint64_t remainder_mask = (std::uint64_t{1} << (b - 1)) - 1;
    while (pos < end) {
      // The stream ends with a zero word of slack, so the chunk at pos + avail ≤ end + 32 exists.
      if (avail <= 32) {
        buffer |= chunk(next_chunk++) << avail;
        avail += 32;
      }
      std::uint64_t gap = 0;
      const auto unary = static_cast<unsigned>(std::countr_zero(~buffer));
      if (unary + b + 1 < avail) {
        // q ones, a zero, b − 1 remainder bits, and one more when those are ≥ u (see encode()).
        std::uint64_t x = (buffer >> (unary + 1)) & remainder_mask;
        const std::uint64_t longer = x >= u;  // a coin flip: blended with a mask, never branched on
        const std::uint64_t extended = ((x << 1) | ((buffer >> (unary + b)) & 1)) - u;
        x ^= (x ^ extended) & (0 - longer);
        const unsigned length = unary + b + static_cast<unsigned>(longer);
        gap = unary * m + x;
        buffer >>= length;
        avail -= length;
        pos += length;
        if (pos > end) return;
      } else {  // a code longer than the buffer holds (a run of ones): the general decoder, then restart
        if (!code_.get(bits_, pos, end, gap)) return;
        restart();
      }
      value += gap + 1;
      if (!visit(value)) return;
    }
  }

  /// Whether value v (of a non-empty set) is stored: its bucket decoded up to the first value not below it.
  bool contains_value(std::uint64_t v) const noexcept {
    bool found = false;
    decode_bucket(bucket_of(v), [&](std::uint64_t value) {
      found = value == v;
      return value < v;  // on, while below v
    });
    return found;
  }

  /// Where a Rice-coded bucket (M = 2^k, k ≥ 1) is being decoded: the next code's bit, the bucket's end,
  /// and the last value decoded.
  struct rice_cursor {
    std::uint64_t pos, end, value;
  };
  /// Asks for every cache line of the bucket from c.pos (up to four; a bucket spans two or three), so that
  /// their misses overlap instead of each one waiting for the codes before it.
  void prefetch_bucket(const rice_cursor& c) const noexcept {
    const std::byte* stream = reinterpret_cast<const std::byte*>(bits_.data());
    if (c.pos >= c.end) return;
    for (std::uint64_t line = c.pos >> 9; line <= (c.end - 1) >> 9 && line < (c.pos >> 9) + 4; ++line)
      detail::prefetch_read(stream + line * 64);
  }
  /// Decodes the codes that one unaligned 64-bit load holds from c.pos (at least 57 bits of the stream),
  /// calling visit(value) for each; false once the bucket ends or visit returns false. A code's length is its
  /// unary part plus k + 1, so the chain from one code to the next is a bit count and a shift. The group's
  /// size is fixed for the set, so the loop's branches follow one pattern; a group that would overrun the
  /// load (rare) ends early.
  template <class Visit>
  bool rice_step(rice_cursor& c, Visit& visit) const noexcept {
    if (c.pos >= c.end) return false;
    const std::uint32_t k = code_.b();
    const std::uint64_t low_mask = (std::uint64_t{1} << (k - 1)) - 1;
    // pos < end ≤ the last word's first bit, so the 8 bytes from pos / 8 lie within the stream.
    const unsigned skip = static_cast<unsigned>(c.pos & 7);
    std::uint64_t w = detail::read_u64(reinterpret_cast<const std::byte*>(bits_.data()) + (c.pos >> 3)) >> skip;
    const unsigned avail = 64 - skip;
    unsigned used = 0;
    for (std::uint32_t j = 0; j < rice_group_; ++j) {
      const auto q = static_cast<unsigned>(std::countr_zero(~w));
      const unsigned length = q + 1 + k;
      if (used + length > avail) break;  // also a run of ones reaching past the load (q + 1 ≤ avail here)
      // The remainder is written as a truncated-binary one with u = 0: its low bit last (golomb_code).
      const std::uint64_t tail = w >> (q + 1);
      const std::uint64_t r = ((tail & low_mask) << 1) | ((tail >> (k - 1)) & 1);
      w = tail >> k;
      used += length;
      c.value += (std::uint64_t{q} << k) + r + 1;
      if (c.pos + used > c.end) return false;  // a code overrunning its bucket: a damaged stream
      if (!visit(c.value)) return false;
    }
    if (used == 0) {  // a code longer than one load: a run of 50 or more ones
      std::uint64_t gap = 0;
      if (!code_.get(bits_, c.pos, c.end, gap)) return false;
      c.value += gap + 1;
      return visit(c.value);
    }
    c.pos += used;
    return true;
  }
  /// decode_bucket for M = 2^k (k ≥ 1).
  template <class Visit>
  void decode_rice_bucket(std::uint64_t pos, std::uint64_t end, std::uint64_t value, Visit& visit) const noexcept {
    rice_cursor c{pos, end, value};
    prefetch_bucket(c);
    while (rice_step(c, visit)) {
    }
  }

  /// The bulk lookups' buffers, kept by each thread between calls while they hold at most
  /// kept_scratch_probes keys: where the kernel zeroes fresh pages slowly, taking them anew costs more than
  /// the lookups (a million probes of a set of 10M keys, in a VM: 147 ns a key with fresh buffers, 64 ns
  /// with kept ones).
  struct bulk_scratch {
    std::vector<std::uint64_t> values, spare;
    std::vector<char> answers;
    bool busy = false;
  };
  static constexpr std::size_t kept_scratch_probes = std::size_t{1} << 21;  // 34 MiB a thread at most
  /// One bulk call's buffers: the thread's kept ones, or buffers of its own when a bulk call is already using
  /// them on this thread (the keys' range or the output iterator may make bulk lookups too). The kept ones
  /// are given back, shrunk past kept_scratch_probes, however the call ends.
  class scratch_lease {
   public:
    scratch_lease() noexcept : kept_(kept_scratch()), nested_(kept_.busy) { kept_.busy = true; }
    scratch_lease(const scratch_lease&) = delete;
    scratch_lease& operator=(const scratch_lease&) = delete;
    ~scratch_lease() {
      if (nested_) return;
      kept_.busy = false;
      if (kept_.values.capacity() > kept_scratch_probes || kept_.answers.capacity() > kept_scratch_probes) {
        std::vector<std::uint64_t>().swap(kept_.values);
        std::vector<std::uint64_t>().swap(kept_.spare);
        std::vector<char>().swap(kept_.answers);
      }
    }
    bulk_scratch& buffers() noexcept { return nested_ ? own_ : kept_; }

   private:
    static bulk_scratch& kept_scratch() noexcept {
      thread_local bulk_scratch kept;
      return kept;
    }
    bulk_scratch& kept_;
    bool nested_;
    bulk_scratch own_;
  };

  /// The bulk lookups: the keys' values sorted (a radix sort, each value with its key's index in the bits
  /// below it when answers are wanted), then each bucket they fall in decoded once, from its start to its
  /// last key's value. Answers go to `answers` in the keys' order when it is given.
  template <class R>
  std::size_t answer_many(const R& keys, bulk_scratch& scratch, std::vector<char>* answers) const {
    std::vector<std::uint64_t>& values = scratch.values;
    values.clear();
    if constexpr (std::ranges::sized_range<R>) values.reserve(std::ranges::size(keys));
    for (auto&& k : keys) {
      std::uint64_t low;
      if constexpr (std::same_as<std::remove_cvref_t<decltype(k)>, digest>) low = k.low;
      else low = this->hash(k).low;
      values.push_back(items_ == 0 ? 0 : value_of(low));
    }
    const std::size_t count = values.size();
    if (answers != nullptr) answers->assign(count, 0);
    std::size_t hits = 0;
    if (items_ != 0) {
      // Chunks small enough that an index fits below each value (all of them together unless the range
      // nears 2^64).
      const auto value_bits = static_cast<unsigned>(std::bit_width(range_ - 1));
      const auto index_bits = static_cast<unsigned>(std::bit_width(std::max<std::size_t>(count, 1) - 1));
      const std::size_t chunk =
          answers == nullptr || index_bits + value_bits <= 64 ? count : std::size_t{1} << (64 - value_bits);
      for (std::size_t from = 0; from < count; from += chunk)
        hits += answer_values(values.data() + from, std::min(chunk, count - from), from, value_bits, scratch.spare,
                              answers);
    }
    return hits;
  }
  /// answer_many for the values v[0, n) of keys from + 0, from + 1, …: sorted in place, so that each bucket
  /// is decoded once, however many of them fall in it (a few keys are looked up one by one).
  std::size_t answer_values(std::uint64_t* v, std::size_t n, std::size_t from, unsigned value_bits,
                            std::vector<std::uint64_t>& spare, std::vector<char>* answers) const {
    std::size_t hits = 0;
    if (n < 64) {
      for (std::size_t i = 0; i < n; ++i) {
        const bool found = contains_value(v[i]);
        hits += found;
        if (answers != nullptr) (*answers)[from + i] = found;
      }
      return hits;
    }
    const unsigned index_bits = answers == nullptr ? 0 : static_cast<unsigned>(std::bit_width(n - 1));
    if (index_bits != 0)
      for (std::size_t i = 0; i < n; ++i) v[i] = v[i] << index_bits | i;
    if (spare.size() < n) spare.resize(n);
    detail::radix_sort_bits(v, spare.data(), n, index_bits, value_bits);
    const std::uint64_t index_mask = (std::uint64_t{1} << index_bits) - 1;
    for (std::size_t i = 0; i < n;) {
      const std::uint64_t bucket = bucket_of(v[i] >> index_bits);
      std::size_t end = i + 1;  // v[i, end) fall in this bucket, ascending, so one pass answers them all
      while (end < n && bucket_of(v[end] >> index_bits) == bucket) ++end;
      std::size_t j = i;
      decode_bucket(bucket, [&](std::uint64_t value) {
        for (; j < end && (v[j] >> index_bits) <= value; ++j) {
          const bool found = (v[j] >> index_bits) == value;
          hits += found;
          if (answers != nullptr) (*answers)[from + (v[j] & index_mask)] = found;
        }
        return j < end;
      });
      i = end;  // past the bucket's last value, the rest of its keys are absent
    }
    return hits;
  }

  static void check(std::uint32_t fpr_bits, std::uint32_t bucket_keys) {
    if (fpr_bits == 0 || fpr_bits > 32)
      throw invalid_argument("Golomb-coded set: rate bits must be in [1, 32], got " + std::to_string(fpr_bits));
    if (bucket_keys == 0 || bucket_keys > (1u << 20))
      throw invalid_argument("Golomb-coded set: keys per bucket must be in [1, 2^20], got " +
                             std::to_string(bucket_keys));
  }
  /// The set a header describes, without its stream (which is checked against it afterwards).
  static golomb_coded_set shape_of(const filter_parameters& p, std::uint64_t seed = Hasher::default_seed) {
    check(p.secondary, p.layout);
    if (p.extra[3] > 1) throw invalid_argument("unknown code " + std::to_string(p.extra[3]));
    for (std::size_t i = 4; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    if (p.extra[2] > wide_offset_shift + 1) throw invalid_argument("buckets per base beyond 2^16");
    if (p.primary % 64 != 0 || p.primary > max_filter_bits)
      throw invalid_argument("stream bits must be whole words within 2^40");
    if (p.extra[1] > p.extra[0]) throw invalid_argument("more values stored than keys given");
    golomb_coded_set s(Hasher(seed), p.secondary, p.extra[0], p.layout, p.extra[3] == 1);
    if (s.buckets_ > max_filter_bits / 32) throw invalid_argument("too many buckets");
    s.short_offsets_ = p.extra[2] != 0;
    s.offset_shift_ = s.short_offsets_ ? static_cast<std::uint32_t>(p.extra[2] - 1) : wide_offset_shift;
    return s;
  }
  std::uint64_t offset_count() const noexcept { return items_ == 0 ? 0 : buckets_ + 1; }
  /// The offsets' bytes in the payload: u16 padded to a multiple of 4, or u32 in the first layout.
  std::uint64_t offset_bytes() const noexcept {
    return short_offsets_ ? (offset_count() + 3) / 4 * 8 : offset_count() * 4;
  }
  std::uint64_t base_count() const noexcept { return items_ == 0 ? 0 : (buckets_ >> offset_shift_) + 2; }

  golomb_coded_set(const Hasher& h, std::uint32_t fpr_bits, std::uint64_t items, std::uint32_t bucket_keys, bool rice)
      : hasher_(h), fpr_bits_(fpr_bits), bucket_keys_(bucket_keys), items_(items), rice_(rice) {
    if (items == 0) return;
    if (items > (std::uint64_t{1} << (63 - fpr_bits)))
      throw invalid_argument("Golomb-coded set: " + std::to_string(items) + " keys at 2^-" + std::to_string(fpr_bits) +
                             " overflow the 64-bit value range");
    range_ = items << fpr_bits;
    // Gaps between n values spread over n·2^P are geometric with p = 2^−P.
    const double p = std::ldexp(1.0, -static_cast<int>(fpr_bits));
    code_ = rice ? detail::golomb_code(std::uint64_t{1} << (fpr_bits - 1)) : detail::golomb_code::for_probability(p);
    bucket_range_ = std::max<std::uint64_t>(1, std::uint64_t{bucket_keys} << fpr_bits);
    bucket_shift_ = std::has_single_bit(bucket_range_) ? static_cast<std::uint32_t>(std::countr_zero(bucket_range_))
                                                       : 64;
    // A group of codes read from one 64-bit load: about k + 2.54 bits each, so that four of them at k = 7
    // overrun the 57 bits a load always holds in well under one group in a thousand.
    rice_group_ = std::clamp(48u / (fpr_bits + 2), 1u, 8u);
    buckets_ = (range_ + bucket_range_ - 1) / bucket_range_;
  }

  std::uint64_t value_of(std::uint64_t low) const noexcept { return reduce(detail::seeded_hash(low, 0), range_); }

  void encode(const std::vector<std::uint64_t>& values) {
    stored_ = values.size();
    std::vector<std::uint64_t> start(buckets_ + 1);  // each bucket's first bit, then the stream's end
    // About P + 1.54 bits per value; reserving avoids regrowing a stream of hundreds of megabytes.
    bits_.reserve(values.size() * (fpr_bits_ + 3) / 64 + 2);
    std::uint64_t at = 0;
    std::size_t i = 0;
    for (std::uint64_t b = 0; b <= buckets_; ++b) {
      start[b] = at;
      if (b == buckets_) break;
      std::uint64_t previous = b * bucket_range_ - 1;
      const std::uint64_t end = (b + 1) * bucket_range_;
      for (; i < values.size() && values[i] < end; ++i) {
        const std::uint64_t gap = values[i] - previous - 1;
        previous = values[i];
        code_.put(bits_, at, gap);
      }
    }
    bits_.push_back(0);  // a zero word of slack for the two-word reads
    // The most buckets per base (a power of two, at most 2^16) under which every offset fits 16 bits; one
    // bucket per base always does.
    short_offsets_ = true;
    const auto fits = [&](std::uint32_t shift) {
      for (std::uint64_t b = 0; b <= buckets_; ++b)
        if (start[b] - start[(b >> shift) << shift] > 0xffff) return false;
      return true;
    };
    offset_shift_ = wide_offset_shift;
    while (offset_shift_ > 0 && !fits(offset_shift_)) --offset_shift_;
    offsets16_.assign(offset_bytes() / 2, 0);
    bases_.assign(base_count(), 0);
    for (std::uint64_t b = 0; b <= buckets_; ++b) {
      if ((b & ((std::uint64_t{1} << offset_shift_) - 1)) == 0) bases_[b >> offset_shift_] = start[b];
      offsets16_[b] = static_cast<std::uint16_t>(start[b] - bases_[b >> offset_shift_]);
    }
  }

  std::uint64_t bucket_of(std::uint64_t value) const noexcept {
    return bucket_shift_ < 64 ? value >> bucket_shift_ : value / bucket_range_;
  }
  std::uint64_t bucket_offset(std::uint64_t b) const noexcept {
    return bases_[b >> offset_shift_] + (short_offsets_ ? std::uint64_t{offsets16_[b]} : std::uint64_t{offsets32_[b]});
  }

  Hasher hasher_;
  std::uint32_t fpr_bits_ = 0;
  std::uint32_t bucket_keys_ = default_bucket_keys;
  std::uint64_t items_ = 0, stored_ = 0, range_ = 1, bucket_range_ = 1, buckets_ = 0;
  detail::golomb_code code_;
  bool rice_ = true;                 // M = 2^(P−1); false for files before it (M by the Gallager–van Voorhis rule)
  std::uint32_t rice_group_ = 1;     // codes decoded from one 64-bit load
  std::uint32_t bucket_shift_ = 64;  // log2 of the bucket range when it is a power of two, else 64
  bool short_offsets_ = true;        // 16-bit offsets; false for files of the first layout (32-bit)
  std::uint32_t offset_shift_ = wide_offset_shift;  // log2 of the buckets per base
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint16_t> offsets16_;
  std::vector<std::uint32_t> offsets32_;
  std::vector<std::uint64_t> bases_;
};

static_assert(serializable_filter<golomb_coded_set<>>);

}  // namespace blume
