// SPDX-License-Identifier: Apache-2.0
// The aging Bloom filter: "was this key seen recently?" for endless streams, with two buffers that take
// turns. Each buffer gets half the memory and holds half the window; inserts go to the active one; when
// it has taken its share (w/2 items, or T/2 of time), the other buffer is cleared and becomes active.
// A lookup asks both. So a key inserted among the last w/2 items (within the last T/2) is always found,
// one older than w items (T) never is, and in between it depends on where the rotation fell: "seen within
// roughly the last w items" (or T seconds). Each buffer is planned for w/2 items at rate ε/2, so a lookup
// of an absent key is a false positive with probability at most about ε.
//
// The time-windowed form answers "seen in the last T seconds", the per-item expiry RedisBloom users ask
// for, at the cost of one clock read per call; pass `now` explicitly to drive it from your own clock.
//
// Thread safety: const calls may run concurrently; insert, rotate and clear need exclusive access.
#pragma once

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include "blume/detail/key_interface.hpp"
#include "blume/error.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kinds/split_block_bloom_filter.hpp"
#include "blume/plan.hpp"

namespace blume {

template <class Buffer = split_block_bloom_filter<xxh3_hasher>, class Clock = std::chrono::system_clock>
class aging_bloom_filter : public detail::key_interface<aging_bloom_filter<Buffer, Clock>> {
  using key_calls = detail::key_interface<aging_bloom_filter>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  using key_calls::insert;
  using buffer_type = Buffer;
  using hasher_type = typename Buffer::hasher_type;
  using clock_type = Clock;
  using time_point = typename Clock::time_point;
  static constexpr filter_kind kind{10};
  static constexpr std::string_view name = "aging";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// What the file header's primary field holds, as `blume info` names it.
  static constexpr std::string_view primary_field = "window";
  /// Old keys fade by design: contains() == false means "not seen recently" (a false negative for a key
  /// inserted long enough ago), never "never inserted".
  static constexpr bool forgets = true;
  /// No merge(): the two windows rotate at different moments.
  static constexpr std::string_view merge_refusal = "their windows rotate independently";

  // The planner's model: two buffers of m/2 bits, each for half the window of n items at half the rate;
  // a lookup asks both.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return 2 * Buffer::plan_bytes(bits / 2); }
  static double model_fpr(double n, double m, double k) noexcept {
    const double one = Buffer::model_fpr(n / 2, m / 2, k);
    return 1 - (1 - one) * (1 - one);
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    detail::checked_ideal_bits(items, fpr);  // the request as given, before it is halved
    const filter_plan buffer = Buffer::plan((items + 1) / 2, fpr / 2);
    return detail::make_plan<aging_bloom_filter>(items, 2 * buffer.bits, buffer.hashes);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    detail::check_budget(items, bits);
    const filter_plan buffer = Buffer::plan_for_bits((items + 1) / 2, bits / 2);
    return detail::make_plan<aging_bloom_filter>(items, 2 * buffer.bits, buffer.hashes);
  }

  /// Count-based window: roughly the last `window` items, false-positive rate about `fpr`. With a
  /// non-zero `window_time`, buffers also rotate every window_time/2, and keys older than window_time
  /// are never reported.
  aging_bloom_filter(std::uint64_t window, double fpr, std::chrono::nanoseconds window_time = {},
                     std::uint64_t seed = hasher_type::default_seed, time_point now = Clock::now())
      : window_(window), fpr_(fpr), window_time_(window_time),
        buffers_{make_buffer(window, fpr, seed), make_buffer(window, fpr, seed)} {
    if (window_time.count() < 0)
      throw invalid_argument("aging filter: window time must not be negative, got " +
                             std::to_string(window_time.count()) + " ns");
    set_start(0, now);
    set_start(1, now);
  }

  /// The buffers' hasher: both share the filter's seed.
  const hasher_type& hasher() const noexcept { return buffers_[0].hasher(); }

  /// Records a key. Returns true if the filter had not seen it within the window.
  bool insert(const digest& d, time_point now = Clock::now()) {
    advance(now);
    const bool fresh = !contains(d, now);
    if (meta_[active_] >= share()) rotate(now);
    buffers_[active_].insert(d);
    ++meta_[active_];
    return fresh;
  }

  bool contains(const digest& d, time_point now = Clock::now()) const noexcept {
    for (int b : {active_, 1 - active_})
      if (live(b, now) && buffers_[b].contains(d)) return true;
    return false;
  }

  template <std::ranges::input_range R>
  void insert_many(const R& keys, time_point now = Clock::now()) {
    for (auto&& k : keys) insert(k, now);
  }
  // The bulk lookups read the clock once, so every key of a batch is judged at the same moment.
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys, time_point now = Clock::now()) const noexcept {
    return key_calls::count_contained(keys, now);
  }
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out, time_point now = Clock::now()) const {
    return key_calls::contains_many(keys, out, now);
  }

  /// Clears the older buffer and makes it the active one.
  void rotate(time_point now = Clock::now()) noexcept {
    active_ = 1 - active_;
    buffers_[active_].clear();
    meta_[active_] = 0;
    set_start(active_, now);
  }
  void clear(time_point now = Clock::now()) noexcept {
    for (int b : {0, 1}) {
      buffers_[b].clear();
      meta_[b] = 0;
      set_start(b, now);
    }
  }

  /// Items in the window's two halves.
  std::uint64_t inserted() const noexcept { return meta_[0] + meta_[1]; }
  double estimated_count() const noexcept { return buffers_[0].estimated_count() + buffers_[1].estimated_count(); }
  /// 1 − (1 − ε₀)(1 − ε₁) over the two buffers' current fill.
  double predicted_fpr() const noexcept {
    return 1 - (1 - buffers_[0].predicted_fpr()) * (1 - buffers_[1].predicted_fpr());
  }
  std::size_t size_in_bytes() const noexcept {
    return sizeof(*this) + buffers_[0].storage().size() + buffers_[1].storage().size();
  }
  std::uint64_t window() const noexcept { return window_; }
  std::chrono::nanoseconds window_time() const noexcept { return window_time_; }
  std::uint64_t seed() const noexcept { return buffers_[0].seed(); }
  const Buffer& active_buffer() const noexcept { return buffers_[active_]; }

  friend bool operator==(const aging_bloom_filter& a, const aging_bloom_filter& b) noexcept {
    return a.window_ == b.window_ && a.fpr_ == b.fpr_ && a.window_time_ == b.window_time_ && a.active_ == b.active_ &&
           std::equal(a.meta_, a.meta_ + 4, b.meta_) && a.buffers_[0] == b.buffers_[0] &&
           a.buffers_[1] == b.buffers_[1];
  }

  // ---- serialization hooks (format.hpp): bits = window items, hashes = active buffer (0/1),
  //      layout = the buffers' kind id, extra = {fpr (IEEE-754 bits), window time (ns), buffer bits,
  //      buffer hashes, 0, 0}; payload = count₀, count₁, start₀, start₁ (u64, starts in ns of the clock's
  //      epoch), buffer₀, buffer₁. The buffers' geometry is stored, so a reader never plans it; files
  //      written before it was (buffer bits and hashes 0) get the geometry the planner gave then.
  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = window_;
    p.secondary = static_cast<std::uint32_t>(active_);
    p.layout = static_cast<std::uint32_t>(Buffer::kind);
    p.extra = {std::bit_cast<std::uint64_t>(fpr_),
               static_cast<std::uint64_t>(window_time_.count()),
               buffers_[0].bits(),
               buffers_[0].hashes(),
               0,
               0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::as_bytes(std::span<const std::uint64_t>(meta_, 4)));
    buffers_[0].for_each_payload_segment(fn);
    buffers_[1].for_each_payload_segment(fn);
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    check_parameters(p);
    return 32 + 2 * Buffer::payload_size(buffer_parameters(p));
  }
  static aging_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t,
                                         byte_storage payload) {
    const filter_parameters bp = buffer_parameters(p);
    const std::uint64_t size = Buffer::payload_size(bp);
    std::uint64_t meta[4];
    std::memcpy(meta, payload.data(), sizeof meta);
    // A buffer takes (window + 1) / 2 items before the other takes over; more was never written.
    for (int b : {0, 1})
      if (meta[b] > (p.primary + 1) / 2)
        throw format_error("aging filter: buffer " + std::to_string(b) + " counts " + std::to_string(meta[b]) +
                           " items, more than its share of the window (" + std::to_string((p.primary + 1) / 2) + ")");
    auto buffer_at = [&](int b) {
      byte_storage part = byte_storage::allocate(size);
      if (size != 0) std::memcpy(part.data(), payload.data() + 32 + b * size, size);
      return Buffer::from_payload(bp, seed, meta[b], std::move(part));
    };
    aging_bloom_filter f(p, buffer_at(0), buffer_at(1));
    f.active_ = static_cast<int>(p.secondary);
    std::memcpy(f.meta_, meta, sizeof meta);
    return f;
  }

 private:
  aging_bloom_filter(const filter_parameters& p, Buffer b0, Buffer b1)
      : window_(p.primary), fpr_(std::bit_cast<double>(p.extra[0])),
        window_time_(static_cast<std::int64_t>(p.extra[1])), buffers_{std::move(b0), std::move(b1)} {}

  static Buffer make_buffer(std::uint64_t window, double fpr, std::uint64_t seed) {
    if (window < 2)
      throw invalid_argument("aging filter: the window must hold at least 2 items, got " + std::to_string(window));
    return Buffer((window + 1) / 2, fpr / 2, seed);
  }
  static void check_parameters(const filter_parameters& p) {
    if (p.layout != static_cast<std::uint32_t>(Buffer::kind))
      throw invalid_argument("aging filter: buffer kind " + std::to_string(p.layout) + " is not " +
                             std::string(Buffer::name));
    if (p.secondary > 1)
      throw invalid_argument("aging filter: active buffer " + std::to_string(p.secondary) + " is not 0 or 1");
    if (p.extra[1] > static_cast<std::uint64_t>(INT64_MAX))
      throw invalid_argument("aging filter: window time out of range");
    if ((p.extra[2] == 0) != (p.extra[3] == 0) || p.extra[3] > UINT32_MAX)
      throw invalid_argument("aging filter: buffer geometry " + std::to_string(p.extra[2]) + " bits, " +
                             std::to_string(p.extra[3]) + " hashes is not possible");
    for (std::size_t i = 4; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    if (p.primary < 2)
      throw invalid_argument("aging filter: the window must hold at least 2 items, got " + std::to_string(p.primary));
    detail::check_plan_inputs(p.primary, std::bit_cast<double>(p.extra[0]));
  }
  static filter_parameters buffer_parameters(const filter_parameters& p) {
    filter_parameters bp;
    bp.layout = Buffer::layout_type::block_bits;
    if (p.extra[2] != 0) {
      bp.primary = p.extra[2];
      bp.secondary = static_cast<std::uint32_t>(p.extra[3]);
    } else {  // written before the geometry was stored: frozen by the tests of tests/fixtures (v1, v2-planned)
      const filter_plan plan = Buffer::plan((p.primary + 1) / 2, std::bit_cast<double>(p.extra[0]) / 2);
      bp.primary = plan.bits;
      bp.secondary = plan.hashes;
    }
    return bp;
  }

  std::uint64_t share() const noexcept { return (window_ + 1) / 2; }

  void set_start(int b, time_point t) noexcept {
    meta_[2 + b] =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  }

  /// Nanoseconds from buffer b's start to `now`, saturated at the int64 range: a start read from a file
  /// may be any 64-bit value, and a plain subtraction would overflow (undefined behaviour, and in
  /// practice a wrapped age that keeps a stale buffer live or expires a fresh one).
  std::int64_t age_ns(int b, time_point now) const noexcept {
    const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    const auto start_ns = static_cast<std::int64_t>(meta_[2 + b]);
    std::int64_t age = 0;
    if (__builtin_sub_overflow(now_ns, start_ns, &age))
      age = now_ns < start_ns ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
    return age;
  }

  /// With a time window: rotate once half a window after the active buffer started; after a whole
  /// window both buffers are stale and are cleared. An active buffer that starts in the future (the
  /// clock was set back, or the file came from elsewhere) would never come of age and the window would
  /// freeze, so its start is brought back to now: its keys are kept longer, never dropped early.
  void advance(time_point now) noexcept {
    if (window_time_.count() == 0) return;
    std::int64_t age = age_ns(active_, now);
    if (age < 0) {
      set_start(active_, now);
      age = 0;
    }
    if (age >= window_time_.count()) {
      clear(now);
    } else if (age >= window_time_.count() / 2) {
      rotate(now);
    }
  }
  /// A buffer holds keys inserted since its start; with a time window it is consulted only while its
  /// oldest key is younger than the window (always, if it starts in the future).
  bool live(int b, time_point now) const noexcept {
    return window_time_.count() == 0 || age_ns(b, now) < window_time_.count();
  }

  std::uint64_t window_;
  double fpr_;
  std::chrono::nanoseconds window_time_;
  Buffer buffers_[2];
  std::uint64_t meta_[4] = {};  // items in buffer 0 and 1, then their start times in ns of Clock's epoch
  int active_ = 0;
};

static_assert(serializable_filter<aging_bloom_filter<>>);
static_assert(!can_merge<aging_bloom_filter<>>);

}  // namespace blume
