// SPDX-License-Identifier: Apache-2.0
// Planning math, all in one place: how many bits and probes a filter needs for n items at a target
// false-positive rate, what rate a given geometry delivers, and how many items a filter holds judging by
// its fill. Every formula names its source; tests hold the filters to these formulas and the formulas to
// measurement.
#pragma once

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blume/error.hpp"
#include "blume/kind.hpp"

namespace blume {

/// Largest bit array blume will allocate: 2^40 bits (128 GiB). Larger requests are refused up front.
inline constexpr std::uint64_t max_filter_bits = std::uint64_t{1} << 40;
/// Largest number of probes per key. The optimal k is (m/n)·ln 2, so 64 covers fpr down to ~1e-19.
inline constexpr std::uint32_t max_hashes = 64;
/// Smallest false-positive rate a plan accepts, 2^-64 (5.4e-20): down to it the optimal k, log2(1/ε),
/// is within max_hashes, so a key costs at most about 1.44·64 ≈ 92 bits. Below it k stays at 64 and a key
/// costs 64·ε^(−1/64) bits (4 million at 1e-308): no measurement could tell such a rate from zero, and a
/// file recording one made a single insert allocate 117 MB. Files are held to it as plans are.
inline constexpr double min_fpr = 0x1p-64;
/// Bits per block of blocked_bloom_filter: one 64-byte cache line.
inline constexpr std::uint32_t blocked_block_bits = 512;
/// Bits per block of split_block_bloom_filter, and its fixed probe count (one bit in each 32-bit word).
inline constexpr std::uint32_t split_block_bits = 256;
inline constexpr std::uint32_t split_block_hashes = 8;
/// Counter width of counting_bloom_filter unless chosen otherwise; plans of the counting kind assume it.
inline constexpr std::uint32_t default_counter_bits = 4;
/// Blocked kinds are planned to this fraction of the requested rate (see detail::plan_blocked).
inline constexpr double blocked_plan_margin = 0.99;
/// Slots per bucket that plans of the cuckoo kind assume, and the load they plan for: with b = 4 and 500
/// relocations, inserts start failing at about 95% load (Fan, Andersen, Kaminsky & Mitzenmacher 2014, §5).
inline constexpr std::uint32_t cuckoo_default_bucket_size = 4;
inline constexpr double cuckoo_design_load = 0.95;
/// Quotient filter (Bender et al. 2012) in the rank-and-select layout (Pandey, Bender, Johnson & Patro 2017):
/// slots in blocks of 64, each block with two 64-bit metadata words (occupieds, runends) and an 8-bit offset,
/// 136 bits per 64 slots (2.125 bits a slot), and quotient_overflow_blocks blocks past the last quotient for
/// the runs pushed beyond it. Plans take s = 64·⌈n / (0.90·64)⌉ slots: (r + 2.125)/0.9 bits per key plus the
/// overflow, e.g. 10.1 at r = 7 (0.70%) and 12.4 at r = 9 (0.18%), 0.98× a cuckoo filter with 12-bit
/// fingerprints at 0.19%. A higher design load saves at most 5% but makes runs, and with them insert, longer
/// (~1/(1 − α)² slots shifted), and 0.95 would leave a filter at its planned capacity refusing inserts.
inline constexpr std::uint64_t quotient_block_slots = 64;
inline constexpr std::uint64_t quotient_block_metadata_bits = 136;
/// 256 slots past the last quotient: with random fingerprints at 95% load the run pushed past the end
/// outgrows them with probability about e^−26 (the queue behind the last slot decays like e^−0.103·x).
inline constexpr std::uint64_t quotient_overflow_blocks = 4;
/// Blocks of a table of s slots: the blocks holding the quotients, then the overflow blocks.
inline constexpr std::uint64_t quotient_blocks(std::uint64_t slots) noexcept {
  return (slots + quotient_block_slots - 1) / quotient_block_slots + quotient_overflow_blocks;
}
/// Bits of one block of 64 slots of r-bit remainders.
inline constexpr std::uint64_t quotient_block_bits(std::uint32_t remainder_bits) noexcept {
  return quotient_block_slots * remainder_bits + quotient_block_metadata_bits;
}
/// The table of s slots: what a quotient plan's `bits` holds.
inline double quotient_table_bits(double slots, std::uint32_t remainder_bits) noexcept {
  return (std::ceil(slots / quotient_block_slots) + quotient_overflow_blocks) *
         static_cast<double>(quotient_block_bits(remainder_bits));
}
/// Bits per key a Golomb-coded set takes beyond P: 1.54 for its Rice code and 0.14 for its bucket index.
inline constexpr double gcs_overhead_bits = 1.7;
inline constexpr std::uint32_t quotient_max_remainder_bits = 32;
inline constexpr double quotient_max_load = 0.95;
inline constexpr double quotient_plan_load = 0.90;
/// d-left counting filter (Bonomi, Mitzenmacher, Panigrahy, Singh & Varghese 2006): d subtables of buckets
/// of c cells, each cell an r-bit remainder and a counter. Plans use the paper's shape, 4 subtables of
/// 8-cell buckets filled to 6 cells on average (load 0.75), where d-left's tight load balance makes a full
/// bucket rare; counters of 4 bits (the paper's 2 saturate at the third insert of one key, after which the
/// key can never be erased) cost 2 bits per cell, 21.3 bits per key at r = 12 instead of 18.7.
inline constexpr std::uint32_t dleft_default_subtables = 4;
inline constexpr std::uint32_t dleft_default_bucket_cells = 8;
inline constexpr std::uint32_t dleft_default_counter_bits = 4;
inline constexpr double dleft_design_load = 0.75;
/// A cell holds remainder and counter in at most 32 bits.
inline constexpr std::uint32_t dleft_max_cell_bits = 32;

/// What a kind's size counts. Most arrays are of single bits; a kind whose array is of wider units (a
/// counting filter's counters, a spatial filter's cells) declares `static constexpr size_unit unit`, and
/// its plan's `bits` and its file header's primary field are then a number of those units.
struct size_unit {
  std::string_view name = "bits";  // plural, as a size is shown: "8865953 cells"
  std::string_view one = "bit";    // singular: "cell_bits" in JSON
  std::uint32_t bits = 1;          // the width of one unit
};

/// The unit of kind (or layout) K's size.
template <class K>
constexpr size_unit size_unit_of() noexcept {
  if constexpr (requires { K::unit; }) {
    return K::unit;
  } else {
    return {};
  }
}

/// The geometry chosen for a filter and what it is predicted to deliver.
struct filter_plan {
  filter_kind kind{};        // 0: none
  std::uint64_t items = 0;   // the capacity n the plan is for
  std::uint64_t bits = 0;    // m, after rounding to the kind's granularity: bits, or its size_unit's counters or cells
  std::uint32_t hashes = 0;  // k
  std::uint64_t bytes = 0;   // memory of the array
  double predicted_fpr = 0;  // at n items, under the kind's own model
  double bits_per_key() const noexcept { return items == 0 ? 0.0 : static_cast<double>(bytes) * 8.0 / items; }
};

namespace math {

inline constexpr double ln2 = std::numbers::ln2;

/// Bloom (1970) / the classic approximation: after n insertions into m bits with k probes each, a bit is
/// still zero with probability (1 − 1/m)^{kn} ≈ e^{−kn/m}, so a lookup of an absent key hits k set bits with
/// probability ε ≈ (1 − e^{−kn/m})^k.
inline double bloom_fpr(double n, double m, double k) noexcept {
  if (n <= 0) return 0.0;
  return std::pow(-std::expm1(-k * n / m), k);
}

/// Goel & Gupta (2010): an upper bound on the classic filter's false-positive rate,
/// ε ≤ (1 − e^{−k(n + 0.5)/(m − 1)})^k, valid for every m > 1.
inline double goel_gupta_bound(double n, double m, double k) noexcept {
  return std::pow(-std::expm1(-k * (n + 0.5) / (m - 1)), k);
}

/// The k that minimises bloom_fpr for m bits and n items: (m/n)·ln 2 (real-valued).
inline double optimal_hashes(double m, double n) noexcept { return m / n * ln2; }

/// The integer k to use: round((m/n)·ln 2), clamped to [1, max_hashes].
inline std::uint32_t optimal_hash_count(double m, double n) noexcept {
  const double k = std::round(optimal_hashes(m, n));
  return static_cast<std::uint32_t>(std::clamp(k, 1.0, static_cast<double>(max_hashes)));
}

/// Bits for n items at rate ε with the optimal k: m = −n·ln ε / (ln 2)². Per key that is 1.44·log2(1/ε),
/// 44% above the information-theoretic minimum log2(1/ε).
inline double optimal_bits(double n, double fpr) noexcept { return -n * std::log(fpr) / (ln2 * ln2); }

/// Partitioned filter (k slices of s = m/k bits, one probe per slice): a slice bit is zero with
/// probability (1 − 1/s)^n, so ε = (1 − (1 − 1/s)^n)^k. Slightly above bloom_fpr for the same m and k.
inline double partitioned_fpr(double n, double m, double k) noexcept {
  if (n <= 0) return 0.0;
  const double s = m / k;
  return std::pow(-std::expm1(n * std::log1p(-1.0 / s)), k);
}

/// E[f(J)] for J ~ Poisson(λ), summed outward from the mode until the terms vanish; f is monotone in j (every
/// rate here is), which lets a large λ skip the sum where f is flat over all but e^{−800} of J's mass (a
/// hostile file's key count can make λ 10^17, and the sum takes ~√λ terms).
template <class F>
double poisson_expectation(double lambda, F f) noexcept {
  if (lambda <= 0) return f(0.0);
  const double mode = std::floor(lambda);
  if (lambda > 1e4) {
    const double spread = 40 * std::sqrt(lambda), lo = f(std::floor(lambda - spread)),
                 hi = f(std::ceil(lambda + spread));
    if (std::fabs(hi - lo) <= 1e-15 * std::max(std::fabs(lo), std::fabs(hi))) return f(mode);
  }
  const double log_pmf_mode = -lambda + mode * std::log(lambda) - std::lgamma(mode + 1);
  double sum = 0.0;
  double p = std::exp(log_pmf_mode);
  for (double j = mode; p > 1e-300; ++j) {  // upward
    sum += p * f(j);
    p *= lambda / (j + 1);
    if (j > mode + 20 && p * 1e17 < sum) break;
  }
  p = std::exp(log_pmf_mode);
  for (double j = mode; j > 0;) {  // downward
    p *= j / lambda;
    --j;
    sum += p * f(j);
    if (p * 1e17 < sum || p < 1e-300) break;
  }
  return sum;
}

/// Blocked filter (Putze, Sanders & Singler 2007): every key's k probes fall in one block of B bits, and
/// keys per block follow Poisson(λ = nB/m). Averaging the classic rate for j keys in B bits over that
/// distribution (the paper's formula) still underestimates: within a block the fill varies around its
/// mean and E[fill^k] > E[fill]^k. This computes the rate exactly for independent uniform probes:
///   * a lookup's k probes cover s distinct bits with probability P(s) = S(k,s)·B^(s)/B^k
///     (S: Stirling numbers of the second kind, B^(s) the falling factorial);
///   * s given bits are all set after t probes with probability Σ_i (−1)^i C(s,i) (1 − i/B)^t;
///   * with t = Jk and J ~ Poisson(λ), E[(1 − i/B)^{Jk}] = e^{−λ(1 − r_i)} with r_i = (1 − i/B)^k.
/// Hence ε = Σ_i c_i·e^{−λ(1 − r_i)} with c_i = (−1)^i Σ_{s≥i} P(s)·C(s,i): O(k²) work. The alternating
/// sum is evaluated in long double; where cancellation would swamp the result (k near 32 at rates below
/// ~1e−12) the Poisson-averaged classic formula, within a few percent there, is returned instead.
inline double blocked_fpr(double n, double m, double k_real, double block_bits) noexcept {
  if (n <= 0) return 0.0;
  using real = long double;
  const int k = static_cast<int>(k_real);
  const real B = block_bits;
  const real lambda = static_cast<real>(n) * B / static_cast<real>(m);
  // Stirling numbers S(k, s) by the recurrence S(n, s) = s·S(n−1, s) + S(n−1, s−1).
  real stirling[65] = {1};
  for (int row = 1; row <= k; ++row) {
    for (int s = row; s >= 1; --s) stirling[s] = s * stirling[s] + stirling[s - 1];
    stirling[0] = 0;
  }
  real p_distinct[65] = {};
  real falling = 1;  // B^(s) / B^s
  for (int s = 1; s <= k; ++s) {
    falling *= 1 - static_cast<real>(s - 1) / B;
    p_distinct[s] = stirling[s] * falling * std::pow(B, static_cast<real>(s - k));
  }
  real sum = 0, magnitude = 0;
  for (int i = 0; i <= k; ++i) {
    real c = 0;
    real binom = 1;  // C(s, i) for s = i, i+1, ...
    for (int s = i; s <= k; ++s) {
      if (s > i) binom = binom * s / (s - i);
      c += p_distinct[s] * binom;
    }
    const real r = std::pow(1 - static_cast<real>(i) / B, static_cast<real>(k));
    const real term = (i % 2 ? -c : c) * std::exp(-lambda * (1 - r));
    sum += term;
    magnitude += std::fabs(term);
  }
  if (!(sum > magnitude * 1e-15L)) {
    const double log_zero = k_real * std::log1p(-1.0 / block_bits);
    return poisson_expectation(static_cast<double>(lambda),
                               [&](double j) { return std::pow(-std::expm1(j * log_zero), k_real); });
  }
  return static_cast<double>(sum);
}

/// Split-block filter: blocks of eight 32-bit words, each key sets one bit in each word of its block.
/// With j keys in the block a word bit is zero with probability (31/32)^j, and a lookup tests 8 bits.
inline double split_block_fpr(double n, double m) noexcept {
  if (n <= 0) return 0.0;
  const double lambda = n * split_block_bits / m;
  const double log_zero = std::log1p(-1.0 / 32.0);
  return poisson_expectation(lambda, [&](double j) { return std::pow(-std::expm1(j * log_zero), 8.0); });
}

/// Stable Bloom filter (Deng & Rafiei 2006): m cells of d bits (Max = 2^d − 1); each insert decrements P
/// random cells, then sets the key's k cells to Max. Per insert a given cell is set with probability
/// a = k/m and otherwise decremented with probability b = (1 − k/m)·P/m; on an endless stream it is zero
/// exactly when its last Max events were all decrements, so the stable fraction of zeros is
///   z = (b/(a + b))^Max = (1 / (1 + 1/(P·(1/k − 1/m))))^Max,
/// and an absent key is a false positive when all its k cells are non-zero: ε = (1 − z)^k.
inline double stable_zero_fraction(double m, double k, double p, double max_value) noexcept {
  return std::pow(1.0 / (1.0 + 1.0 / (p * (1.0 / k - 1.0 / m))), max_value);
}
inline double stable_fpr(double m, double k, double p, double max_value) noexcept {
  return std::pow(1.0 - stable_zero_fraction(m, k, p, max_value), k);
}
/// The stable filter's false negatives: the probability that a key inserted t inserts ago is still found.
/// Its cells started at Max; per later insert a cell is set again with probability a = k/m, and otherwise
/// decremented with probability β = (1 − k/m)·P/m (as in stable_zero_fraction). Looking back from now, the cell's last setting lies x inserts ago with
/// density a·e^{−a·x} (or before the key's own insert, probability e^{−a·t}); it is non-zero if fewer than
/// Max decrements, Poisson(β·x), came since. So a cell survives with probability
///   s(t) = e^{−a·t}·F(t) + ∫₀ᵗ a·e^{−a·x}·F(x) dx,   F(x) = P[Poisson(β·x) < Max],
/// and the key is found when all its k cells survive: recall ≈ s(t)^k (cells taken as independent).
inline double stable_recall(double m, double k, double p, double max_value, double t) noexcept {
  if (!(t > 0)) return 1.0;
  const double a = k / m, beta = (1.0 - a) * p / m;  // set; decremented and not set (as in stable_zero_fraction)
  const auto survive = [&](double x) {               // F(x)
    const double lambda = beta * x;
    double term = std::exp(-lambda), sum = 0;
    for (int j = 0; j < static_cast<int>(max_value); ++j) {
      sum += term;
      term *= lambda / (j + 1);
    }
    return std::min(1.0, sum);
  };
  // With u = 1 − e^{−a·x} the weight a·e^{−a·x} dx becomes du: Simpson's rule on a smooth integrand.
  constexpr int steps = 512;
  const double top = -std::expm1(-a * t), h = top / steps;
  double integral = 0;
  for (int i = 0; i <= steps; ++i) {
    // The last node is x = t itself: computed from u it could round to u = 1, x = ∞.
    const double x = i == steps ? t : -std::log1p(-std::min(i * h, top)) / a;
    const double w = (i == 0 || i == steps) ? 1 : (i % 2 == 1 ? 4 : 2);
    integral += w * survive(x);
  }
  integral *= h / 3;
  return std::pow(std::min(1.0, (1.0 - top) * survive(t) + integral), k);
}

/// The P that gives rate ε: solve z = 1 − ε^{1/k} for P, P = 1 / ((1/k − 1/m)·(z^{−1/Max} − 1)).
inline double stable_decrements_for(double m, double k, double max_value, double fpr) noexcept {
  const double z = 1.0 - std::pow(fpr, 1.0 / k);
  return 1.0 / ((1.0 / k - 1.0 / m) * (std::pow(z, -1.0 / max_value) - 1.0));
}

/// Quotient filter (Bender et al. 2012, §2): n fingerprints uniform in [0, s·2^r) for s slots of r-bit
/// remainders, load α = n/s. An absent key is a false positive when its fingerprint equals a stored one,
/// each with probability 1/(s·2^r): ε = 1 − (1 − 1/(s·2^r))^n ≈ 1 − e^{−α/2^r} ≤ α·2^−r (the paper's bound).
inline double quotient_fpr(double n, double slots, double remainder_bits) noexcept {
  if (n <= 0) return 0.0;
  return -std::expm1(-n / (slots * std::exp2(remainder_bits)));
}

/// d-left counting filter (Bonomi et al. 2006, §4): a key's fingerprint is uniform in [0, B·2^r) (B
/// buckets per subtable, r-bit remainders), and the subtables' permutations let each fingerprint be stored
/// in one cell at most, where every lookup of it looks. So an absent key is a false positive exactly when
/// its fingerprint is one of the ≈ n stored: the quotient filter's rate over the range B·2^r,
/// ε = 1 − (1 − 1/(B·2^r))^n ≈ n/(B·2^r) = d·c·α/2^r at load α.
inline double dleft_fpr(double n, double buckets, double remainder_bits) noexcept {
  return quotient_fpr(n, buckets, remainder_bits);
}
/// Bits of a d-left plan's table (the `bits` of its filter_plan): d·B buckets of c cells of r + C bits.
inline double dleft_table_bits(double buckets, double remainder_bits) noexcept {
  return dleft_default_subtables * buckets * dleft_default_bucket_cells * (remainder_bits + dleft_default_counter_bits);
}

/// Cuckoo filter (Fan et al. 2014, §5.1): a lookup compares the key's f-bit fingerprint with the slots of
/// its two buckets of b; at load α they hold 2b·α fingerprints on average, each equal to it with
/// probability 1/(2^f − 1) (fingerprints are uniform over the non-zero values; 0 marks an empty slot), so
///   ε = 1 − (1 − 1/(2^f − 1))^{2b·α} ≈ 2b·α/2^f.
/// Fan et al. write 2^−f; the exact non-zero range is used here, a 0.4% difference at f = 8.
inline double cuckoo_fpr(double load, double bucket_size, double fingerprint_bits) noexcept {
  if (load <= 0) return 0.0;
  const double per_slot = 1.0 / (std::exp2(fingerprint_bits) - 1.0);
  return -std::expm1(2.0 * bucket_size * load * std::log1p(-per_slot));
}

/// The rate of a filter cascade's first level (CRLite, Larisch et al. 2017): |R|·√p / |S| with p = ½, the
/// rate of every deeper level, clamped to [1e−9, ½]; ½ when S is empty.
inline double cascade_first_level_rate(std::uint64_t included, std::uint64_t excluded) noexcept {
  if (excluded == 0) return 0.5;
  return std::clamp(static_cast<double>(included) * std::sqrt(0.5) / static_cast<double>(excluded), 1e-9, 0.5);
}

/// Slots of an xor filter for n keys (Graf & Lemire 2020): 1.23·n + 32, rounded up to three equal blocks,
/// below which the 3-hypergraph rarely peels.
inline std::uint64_t xor_slots(std::uint64_t n) noexcept {
  std::uint64_t slots = 32 + static_cast<std::uint64_t>(std::ceil(1.23 * static_cast<double>(n)));
  return slots + (3 - slots % 3) % 3;
}

/// A binary fuse filter's segments for n keys (Graf & Lemire 2022, arity 3): about
/// max(1.125, 0.875 + 0.25·ln 10^6 / ln n)·n slots, as segment_count + 2 segments of length L (a key's
/// three positions fall in three consecutive segments). Graf & Lemire take L = 2^⌊ln n / ln 3.33 + 2.25⌋
/// (at most 2^18). We take at most 2^15 while that leaves no more than 4096 segments (n up to about
/// 119M), because construction peels inside a window of about five segments, and five segments of 2^15
/// slots (9 bytes of peeling state each) fit in a 1 MiB L2 where five of 2^17 do not. At 100M keys that
/// halved the peeling time (28 against 53 ns/key) and failed the first seed in 1 build out of 8, against
/// 1 in 7 with 2^17; 2^14 failed in 2 out of 8. Longer segments make a stall of the peeling less likely
/// and more segments more likely, so beyond 4096 segments L grows again, up to Graf & Lemire's.
struct fuse_shape {
  std::uint64_t segment_length = 4;
  std::uint64_t segment_count = 1;
  std::uint64_t slots() const noexcept { return (segment_count + 2) * segment_length; }
};
inline fuse_shape fuse_shape_for(std::uint64_t n) noexcept {
  const double size = static_cast<double>(std::max<std::uint64_t>(n, 2));
  fuse_shape f;
  const double factor = std::max(1.125, 0.875 + 0.25 * std::log(1e6) / std::log(size));
  const auto capacity = static_cast<std::uint64_t>(std::llround(size * factor));
  const int graf_lemire = std::clamp(static_cast<int>(std::floor(std::log(size) / std::log(3.33) + 2.25)), 2, 18);
  const int at_most_4096_segments = static_cast<int>(std::bit_width((capacity - 1) / 4096));
  f.segment_length = std::uint64_t{1} << std::min(graf_lemire, std::max(15, at_most_4096_segments));
  const std::uint64_t segments = (capacity + f.segment_length - 1) / f.segment_length;
  f.segment_count = segments <= 2 ? 1 : segments - 2;
  return f;
}

/// Layered Bloom filter (L layers of one geometry, one digest probing all; derived here), with ε_j the
/// false-positive rate of layer j at the n_j keys whose count reached j (bloom_fpr for the classic layout,
/// the layout's model in general). A key inserted c < L times is over-counted (count ≥ c + 1) when
///  * layer c + 1 answers "maybe" for it at the end, probability ε_{c+1}: the key's probes are independent
///    of the n_{c+1} keys' there. This is the whole story for a key never inserted: the layers share its
///    probe positions and a layer is written only where the one above answers "maybe", so layer j's bits
///    lie within layer j − 1's and P(count ≥ j) = ε_j exactly; or
///  * one of its own inserts, the j-th, found layer j already answering "maybe" for it and went a layer
///    deeper, probability at most ε_j (layer j's rate when that insert came, never above its final rate).
/// So ε_{c+1} ≤ P(count ≥ c + 1) ≤ Σ_{j ≤ c+1} ε_j; which end a stream sits at depends on when a key's
/// inserts come (at 1M keys with multiplicities 1..5 in shuffled order: 0.59% for c = 1 between 0.38% and
/// 1.37%). `layer_rates` holds ε_1 … ε_L; this is the upper end.
inline double layered_overcount_bound(std::span<const double> layer_rates, std::size_t c) noexcept {
  double bound = 0.0;
  for (std::size_t j = 0; j <= c && j < layer_rates.size(); ++j) bound += layer_rates[j];
  return std::min(bound, 1.0);
}

/// Items estimated from the number of set bits X (Swamidass & Baldi 2007): inverting E[X] gives
/// n* = −(m/k)·ln(1 − X/m) for the classic filter; the other bit-array kinds invert their own E[X] (below).
/// A completely full filter gives +infinity.
inline double classic_items(double set_bits, double m, double k) noexcept {
  if (set_bits >= m) return std::numeric_limits<double>::infinity();
  return -(m / k) * std::log1p(-set_bits / m);
}
/// Partitioned: E[X/m] = 1 − (1 − k/m)^n, so n* = ln(1 − X/m) / ln(1 − k/m).
inline double partitioned_items(double set_bits, double m, double k) noexcept {
  if (set_bits >= m) return std::numeric_limits<double>::infinity();
  return std::log1p(-set_bits / m) / std::log1p(-k / m);
}
/// Blocked: E[X/m] = 1 − e^{−λ(1 − (1 − 1/B)^k)} with λ = nB/m (Poisson keys per block).
inline double blocked_items(double set_bits, double m, double k, double block_bits) noexcept {
  if (set_bits >= m) return std::numeric_limits<double>::infinity();
  const double per_key = -std::expm1(k * std::log1p(-1.0 / block_bits));
  return (m / block_bits) * -std::log1p(-set_bits / m) / per_key;
}
/// Split-block: E[X/m] = 1 − e^{−λ/32}, each key setting one bit in each of its block's 32-bit words.
inline double split_block_items(double set_bits, double m) noexcept {
  if (set_bits >= m) return std::numeric_limits<double>::infinity();
  return (m / split_block_bits) * 32.0 * -std::log1p(-set_bits / m);
}

/// The expected share of m cells that n keys, each probing k of them, leave unreached: (1 − 1/m)^{kn}
/// with probes anywhere; with all of a key's probes in one block of `block` cells, e^{−λ(1 − (1 − 1/B)^k)}
/// over the Poisson number λ = nB/m of keys a block. A spatial set's emersion is this share for the keys
/// of the later sets; a lattice filter's count estimate inverts it.
inline double unreached_share(double n, double m, double k, double block = 0) noexcept {
  if (block == 0) return std::exp(k * n * std::log1p(-1.0 / m));
  return std::exp(n * block / m * std::expm1(k * std::log1p(-1.0 / block)));
}

/// Spatial Bloom filter (Palmieri, Calderoni & Maio 2014; the model of Calderoni, Palmieri & Maio 2018,
/// "Probabilistic properties of the spatial Bloom filters"): m cells, k probes, sets 1..s of n_1..n_s keys,
/// a cell holding the largest set number that reached it. With N_{≥i} = Σ_{j≥i} n_j, a cell is at least i
/// with probability p_{≥i} = 1 − (1 − 1/m)^{k·N_{≥i}}, and all k cells of a key are with p_{≥i}^k. An
/// absent key is reported as set i at p_{≥i}^k − p_{≥i+1}^k (summed over i, the classic rate of the
/// union); a member of set i is reported as a later set when every one of its cells was overwritten (the
/// paper's inter-set error), at p_{>i}^k.
inline double spatial_all_at_least(double keys_from_i, double m, double k) noexcept {
  return std::pow(-std::expm1(k * keys_from_i * std::log1p(-1.0 / m)), k);
}

/// Compact approximator (Boldi & Vigna 2005) over a lattice: a lookup's answer is the meet of the key's k
/// cells, each the join of the values of every key that probed it. The answer can exceed the key's own
/// value v only if each of the k cells was also reached by a key whose value is not below v; with
/// `others` such keys that happens with probability (1 − e^{−k·others/m})^k. On a chain (the max lattice)
/// that is the exact rate of an answer strictly above v; on other lattices an upper bound, since cells
/// raised by different values can meet back at v.
inline double compact_overestimate(double others, double m, double k) noexcept { return bloom_fpr(others, m, k); }

/// Variable-increment counting filter: the chance that one probe of an absent key passes, given the
/// distribution of a counter's value (weight[c] for c = 0 … saturated, summing to `total`). The probe's
/// increment g is uniform in [L, 2L), and it passes when the counter is g, at least g + L, or saturated.
/// The weights may be a model's probabilities or the counts of a filter's own counters.
template <class Weight>
double vi_probe_pass(std::span<const Weight> weight, double total, unsigned L) noexcept {
  if (!(total > 0) || weight.empty()) return 0.0;
  const std::size_t top = weight.size() - 1;
  double pass = 0.0;
  for (unsigned g = L; g < 2 * L; ++g) {
    double pg = static_cast<double>(weight[top]) + (g < top ? static_cast<double>(weight[g]) : 0.0);
    for (std::size_t c = g + L; c < top; ++c) pg += static_cast<double>(weight[c]);
    pass += pg / L;
  }
  return std::min(pass / total, 1.0);
}

/// Variable-increment counting filter (Rottenstreich, Kanizo & Keslassy 2012): m counters capped at
/// `saturated`, k probes, each key adding at each probe an increment uniform in [L, 2L). A counter holds
/// the increments of J ~ Poisson(kn/m) keys (summed, capped at `saturated`); an absent key's probe with
/// increment g passes when the counter is g, at least g + L, or saturated. The rate is the mean pass
/// probability over g, to the power k (probes taken as independent, as in the classic approximation).
/// This holds for n keys inserted; after erases, counters that saturated while more keys were in stay
/// saturated, so a filter's rate then is vi_fpr_of_counters over its own counters, not this at fewer keys.
inline double vi_fpr(double n, double m, double k, unsigned L, std::uint64_t saturated) {
  if (n <= 0) return 0.0;
  const double lambda = k * n / m;
  const auto top = static_cast<std::size_t>(saturated);
  // Every increment is at least L, so ⌈top / L⌉ keys or more always saturate: only fewer keys need their
  // sums, and the rest of the Poisson mass goes to the saturated value (pmf in log space: λ may be huge).
  const std::size_t always = (top + L - 1) / L;
  std::vector<double> sum(top + 1, 0.0), next(top + 1), counter(top + 1, 0.0);
  sum[0] = 1.0;  // the distribution of j increments' capped sum, from j = 0
  double mass = 0.0;
  for (std::size_t j = 0; j < always; ++j) {
    const double p =
        std::exp(-lambda + static_cast<double>(j) * std::log(lambda) - std::lgamma(static_cast<double>(j) + 1));
    for (std::size_t c = 0; c <= top; ++c) counter[c] += p * sum[c];
    mass += p;
    std::fill(next.begin(), next.end(), 0.0);
    for (std::size_t c = 0; c <= top; ++c) {
      if (sum[c] == 0.0) continue;
      for (unsigned g = L; g < 2 * L; ++g) next[std::min<std::size_t>(c + g, top)] += sum[c] / L;
    }
    sum.swap(next);
  }
  counter[top] += std::max(0.0, 1.0 - mass);
  return std::pow(vi_probe_pass(std::span<const double>(counter), 1.0, L), k);
}

/// A variable-increment filter's rate read off its counters: `histogram[c]` counters hold c (c = 0 …
/// saturated). The same pass rule and independence of probes as vi_fpr, with the counters' actual
/// distribution in place of the Poisson one, so it stays right after erases: a counter that saturated while
/// more keys were in is never decremented and passes every probe, which no load of fewer keys predicts.
inline double vi_fpr_of_counters(std::span<const std::uint64_t> histogram, double k, unsigned L) noexcept {
  double total = 0.0;
  for (const std::uint64_t h : histogram) total += static_cast<double>(h);
  return std::pow(vi_probe_pass(histogram, total, L), k);
}

/// The load at which k probes are the best choice for m counters under vi_fpr: where the rate's slope in k
/// (k taken as real) is zero, as it is at m·ln 2 / k for the classic filter. A counter passes fewer absent
/// keys than a set bit does, so more probes pay at a given load: the load for a given k lies well above
/// m·ln 2 / k (about 1.6 times at k = 5, L = 4, W = 4).
inline double vi_optimal_load(double m, double k, unsigned L, std::uint64_t saturated) {
  const double h = 1e-3 * k;
  // Negative below the load (more probes would lower the rate), positive above it.
  const auto slope = [&](double n) {
    return std::log(vi_fpr(n, m, k + h, L, saturated)) - std::log(vi_fpr(n, m, k - h, L, saturated));
  };
  double lo = m * ln2 / k, hi = lo;
  while (lo > 1e-9 * m && slope(lo) > 0) lo /= 2;
  while (hi < 1e9 * m && slope(hi) < 0) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (slope(mid) < 0) lo = mid;
    else hi = mid;
  }
  return lo + (hi - lo) / 2;
}

/// Invertible Bloom lookup tables. Peeling a table of m cells in k subtables holding n entries lists them
/// all, as n → ∞, exactly when m/n is above the 2-core threshold of a random k-uniform hypergraph, 1/c*_k
/// with c*_k = 0.818, 0.772, 0.702, 0.637, 0.581 for k = 3 … 7 (Molloy 2004; the table of Goodrich &
/// Mitzenmacher 2011, §4): 1.222, 1.295, 1.425, 1.570 and 1.721 cells per entry.
inline double iblt_peeling_threshold(std::uint32_t k) noexcept {
  constexpr double c[] = {0.818, 0.772, 0.702, 0.637, 0.581};
  return k >= 3 && k <= 7 ? 1.0 / c[k - 3] : 2.0;  // k = 2: a 2-core (a cycle) appears from m/n = 2 down
}
/// The hash counts the membership planner tries: those with a published threshold.
inline constexpr std::uint32_t iblt_min_planned_hashes = 3;
inline constexpr std::uint32_t iblt_max_planned_hashes = 7;
/// Tables sized for a difference use k = 4 below 1000 entries and k = 3 from there: k = 3 has the lower
/// threshold, but two entries that share all their k cells stop peeling with probability about
/// C(d, 2)·(k/m)^k, which for k = 3 keeps a small table failing at several times the cells k = 4 needs
/// (measured: 1% of decodes fail at 4.8·d cells for d = 10 with k = 3, 3.2·d with k = 4; at d = 1000 k = 3
/// needs 1.305·d, k = 4 1.352·d).
inline std::uint32_t iblt_difference_hashes(std::uint64_t d) noexcept { return d < 1000 ? 4 : 3; }

/// The cells that decode a difference of d entries with at most 1% of decodes failing, with
/// iblt_difference_hashes(d) subtables: cells per entry measured at the 1% point (2000 tables per d up to
/// 1000, 500 above; docs/benchmarks.md, "Set reconciliation") and rounded up by about 3%, interpolated in
/// log d between the measured d, and 1.25 from 10^5 on (the threshold is 1.222; a larger d at the same
/// ratio fails less often). Rounded up to a multiple of k; d = 0 gets the table of d = 1.
inline std::uint64_t iblt_cells_for_difference(std::uint64_t d) noexcept {
  struct point {
    double d, cells_per_entry;
  };
  constexpr point measured[] = {{1, 4.0},     {2, 8.0},     {3, 7.0},     {5, 5.0},      {10, 3.4},
                                {20, 2.5},    {50, 1.85},   {100, 1.6},   {200, 1.5},    {500, 1.42},
                                {1000, 1.35}, {2000, 1.31}, {5000, 1.29}, {10000, 1.27}, {100000, 1.25}};
  const double x = static_cast<double>(std::max<std::uint64_t>(d, 1));
  double ratio = measured[std::size(measured) - 1].cells_per_entry;
  for (std::size_t i = 1; i < std::size(measured); ++i) {
    if (x > measured[i].d) continue;
    const point lo = measured[i - 1], hi = measured[i];
    const double t = std::log(x / lo.d) / std::log(hi.d / lo.d);
    ratio = lo.cells_per_entry + t * (hi.cells_per_entry - lo.cells_per_entry);
    break;
  }
  const std::uint64_t k = iblt_difference_hashes(d);
  const double cells = std::min(std::ceil(ratio * x), static_cast<double>(max_filter_bits / 128));
  return (static_cast<std::uint64_t>(cells) + k - 1) / k * k;
}

/// The least FP + FN of any duplicate detector with m bits of state on a stream of items drawn uniformly
/// from an alphabet of L ≥ m items, at its n-th item (n > m): 1 − (1 − (1 − 1/L)^m) / (1 − (1 − 1/L)^n).
/// FP is the share of items seen for the first time that it calls duplicates, FN the share of duplicates it
/// calls new. Its reason: m bits remember at most m of the items seen, and a duplicate of one of the others
/// cannot be told from a new item. It grows with n towards (1 − 1/L)^m, which is near 1, a random detector's
/// sum, when L ≫ m. (Géraud, Lombard-Platet & Naccache, "Quotient Hash Tables: Efficiently Detecting
/// Duplicates in Streaming Data", ACM SAC 2019; stated in the Bloom filter article's section on streams.)
inline double streaming_error_floor(double n, double m, double alphabet) noexcept {
  if (!(n > m) || !(alphabet > 1)) return 0.0;
  const double per_item = std::log1p(-1.0 / alphabet);
  return 1.0 - std::expm1(m * per_item) / std::expm1(n * per_item);
}

}  // namespace math

/// What the planners need of a kind: its id and name, the memory a plan's `bits` take, and its model
/// false-positive rate for n items in m bits with k probes (each kind says what m and k mean for it).
template <class K>
concept kind_model = requires(std::uint64_t bits, double x) {
  { K::kind } -> std::convertible_to<filter_kind>;
  { K::name } -> std::convertible_to<std::string_view>;
  { K::plan_bytes(bits) } -> std::same_as<std::uint64_t>;
  { K::model_fpr(x, x, x) } -> std::same_as<double>;
};

namespace detail {

/// The shortest text that reads back as exactly `x` (1e-09, not 0.000000).
inline std::string format_number(double x) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, result.ptr);
}

/// `smallest` is min_fpr but for formats of other libraries (RedisBloom takes any rate above 0).
inline void check_plan_inputs(std::uint64_t items, double fpr, double smallest = min_fpr) {
  if (items == 0) throw invalid_argument("capacity must be at least 1 item, got 0");
  if (!(fpr > 0.0 && fpr < 1.0))  // also rejects NaN
    throw invalid_argument("false-positive rate must be in (0, 1), got " + format_number(fpr));
  if (fpr < smallest)
    throw invalid_argument("false-positive rate " + format_number(fpr) + " is below the smallest a plan accepts, " +
                           format_number(smallest) + (smallest == min_fpr ? " (2^-64)" : ""));
}

inline void check_bits(double bits, std::uint64_t items, double fpr) {
  if (!(bits <= static_cast<double>(max_filter_bits)))
    throw invalid_argument("a filter for " + std::to_string(items) + " items at false-positive rate " +
                           format_number(fpr) + " needs " + format_number(std::ceil(bits)) +
                           " bits, more than the maximum of 2^40 bits (128 GiB)");
}

/// The classic filter's bits for the request, after refusing what no kind can plan: every planner starts
/// here, so a request beyond 2^40 classic bits is refused the same way whatever the kind.
inline double checked_ideal_bits(std::uint64_t items, double fpr) {
  check_plan_inputs(items, fpr);
  const double ideal = math::optimal_bits(static_cast<double>(items), fpr);
  check_bits(ideal, items, fpr);
  return ideal;
}

/// The inputs of every budget planner.
inline void check_budget(std::uint64_t items, std::uint64_t bits) {
  if (items == 0) throw invalid_argument("capacity must be at least 1 item, got 0");
  if (bits == 0 || bits > max_filter_bits)
    throw invalid_argument("bit budget must be in [1, 2^40], got " + std::to_string(bits));
}

/// Smallest count in [lo, hi] for which ok(count) holds (ok is monotone); hi + 1 if none.
template <class Ok>
std::uint64_t smallest_satisfying(std::uint64_t lo, std::uint64_t hi, Ok ok) {
  if (!ok(hi)) return hi + 1;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/// Bytes of `bits` bits in whole 64-bit words.
constexpr std::uint64_t word_bytes(std::uint64_t bits) noexcept { return (bits + 63) / 64 * 8; }

template <kind_model K>
filter_plan make_plan(std::uint64_t items, std::uint64_t bits, std::uint32_t k) {
  filter_plan p;
  p.kind = K::kind;
  p.items = items;
  p.bits = bits;
  p.hashes = k;
  p.bytes = K::plan_bytes(bits);
  p.predicted_fpr = K::model_fpr(static_cast<double>(items), static_cast<double>(bits), k);
  return p;
}

/// The textbook sizing: m = ⌈−n·ln ε/(ln 2)²⌉ and k = round((m/n)·ln 2) (at n = 10^8 and ε = 1% that is
/// 958,505,838 bits = 114.3 MiB and k = 7; the predicted rate is then 1.0039%, since k is rounded).
template <kind_model K>
filter_plan plan_classic(std::uint64_t items, double fpr) {
  const double ideal = checked_ideal_bits(items, fpr);
  const auto m = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(ideal)));
  return make_plan<K>(items, m, math::optimal_hash_count(static_cast<double>(m), static_cast<double>(items)));
}
/// All of the budget, with the k that minimises the rate.
template <kind_model K>
filter_plan plan_classic_for_bits(std::uint64_t items, std::uint64_t bits) {
  check_budget(items, bits);
  return make_plan<K>(items, bits, math::optimal_hash_count(static_cast<double>(bits), static_cast<double>(items)));
}

/// Partitioned: for k around the optimum, the smallest slice size s with (1 − (1 − 1/s)^n)^k ≤ ε.
template <kind_model K>
filter_plan plan_partitioned(std::uint64_t items, double fpr) {
  const double ideal = checked_ideal_bits(items, fpr);
  const double n = static_cast<double>(items);
  filter_plan best;
  const std::uint32_t k0 = math::optimal_hash_count(ideal, n);
  for (std::uint32_t k = std::max<std::uint32_t>(1, k0 - std::min<std::uint32_t>(k0, 2));
       k <= std::min(max_hashes, k0 + 2); ++k) {
    // Per slice fill p = ε^{1/k}; (1 − 1/s)^n = 1 − p  ⇒  s = 1 / (1 − (1 − p)^{1/n}).
    const double p = std::pow(fpr, 1.0 / k);
    const double s = std::ceil(-1.0 / std::expm1(std::log1p(-p) / n));
    check_bits(s * k, items, fpr);
    const auto m = static_cast<std::uint64_t>(std::max(1.0, s)) * k;
    if (best.bits == 0 || m < best.bits) best = make_plan<K>(items, m, k);
  }
  return best;
}

/// The lowest rate in a budget for kinds whose size comes in granules (blocks; 1 for partitioned, whose k
/// slices must be equal): for each k in [k_lo, k_hi], as many granules as fit.
template <kind_model K>
filter_plan plan_granular_for_bits(std::uint64_t items, std::uint64_t bits, std::uint32_t granule, std::uint32_t k_lo,
                                   std::uint32_t k_hi, bool sliced) {
  check_budget(items, bits);
  if (bits < granule)
    throw invalid_argument("bit budget " + std::to_string(bits) + " is smaller than one " + std::string(K::name) +
                           " block (" + std::to_string(granule) + " bits)");
  filter_plan best;
  for (std::uint32_t k = k_lo; k <= k_hi; ++k) {
    if (sliced && k > bits) break;  // every slice needs at least one bit
    std::uint64_t m = bits / granule * granule;
    if (sliced) m = std::max<std::uint64_t>(m / k, 1) * k;
    const filter_plan p = make_plan<K>(items, m, k);
    if (best.bits == 0 || p.predicted_fpr < best.predicted_fpr) best = p;
  }
  return best;
}

/// Blocked kinds: for each candidate k the fewest blocks whose real rate is at most blocked_plan_margin ×
/// the target; the k that needs the least memory wins. A blocked filter needs somewhat more memory than
/// the classic one and its best k is at or a little below the classic k, so the search brackets both
/// (`fixed_k`, when not 0, is the only k: split-block's 8).
/// The margin: the model is exact, so a filter planned at exactly the target measures above it half the
/// time; 1% below it, a measurement over 10M absent keys (relative standard deviation ≈ 0.3% at ε = 1%)
/// lands at or under the target with high probability, for about 0.03 bits per key.
template <kind_model K>
filter_plan plan_blocked(std::uint64_t items, double fpr, std::uint32_t block_bits, std::uint32_t fixed_k = 0) {
  const double classic_bits = checked_ideal_bits(items, fpr);
  const double n = static_cast<double>(items);
  const std::uint64_t max_blocks = max_filter_bits / block_bits;
  const auto lo = static_cast<std::uint64_t>(std::clamp(std::floor(classic_bits / block_bits), 1.0,
                                                        static_cast<double>(max_blocks)));
  const auto hi = static_cast<std::uint64_t>(std::clamp(std::ceil(2 * classic_bits / block_bits) + 1, 1.0,
                                                        static_cast<double>(max_blocks)));
  const std::uint32_t k0 = math::optimal_hash_count(classic_bits, n);
  const std::uint32_t k_lo = fixed_k != 0 ? fixed_k : std::max<std::uint32_t>(1, k0 - std::min<std::uint32_t>(k0, 4));
  const std::uint32_t k_hi = fixed_k != 0 ? fixed_k : std::min<std::uint32_t>(32, k0 + 3);
  filter_plan best;
  for (std::uint32_t k = k_lo; k <= k_hi; ++k) {
    auto meets = [&](std::uint64_t b) {
      return K::model_fpr(n, static_cast<double>(b) * block_bits, k) <= blocked_plan_margin * fpr;
    };
    std::uint64_t blocks = smallest_satisfying(lo, hi, meets);
    if (blocks > hi) blocks = smallest_satisfying(hi, max_blocks, meets);  // far off the classic size: widen
    if (blocks > max_blocks) continue;
    if (best.bits == 0 || blocks * block_bits < best.bits) best = make_plan<K>(items, blocks * block_bits, k);
  }
  if (best.bits == 0) check_bits(static_cast<double>(max_filter_bits) * 2, items, fpr);
  return best;
}

/// Static filters: the size follows from n (math::xor_slots, math::fuse_shape_for) and the rate from the
/// fingerprint width f, 2^−f; a target below that rate is refused, naming the kind that would meet it
/// (`wider`, empty for the widest).
template <kind_model K>
filter_plan plan_static(std::uint64_t items, double fpr, std::uint32_t f, bool fuse, std::string_view wider) {
  checked_ideal_bits(items, fpr);
  const double rate = std::ldexp(1.0, -static_cast<int>(f));
  if (fpr < rate)
    throw invalid_argument("a " + std::string(K::name) + " filter's false-positive rate is 2^-" + std::to_string(f) +
                           " = " + format_number(rate) + ", above the target " + format_number(fpr) +
                           (wider.empty() ? "" : ": use " + std::string(wider)));
  const double slots = fuse ? static_cast<double>(math::fuse_shape_for(items).slots())
                            : static_cast<double>(math::xor_slots(items));
  check_bits(slots * f, items, fpr);
  return make_plan<K>(items, static_cast<std::uint64_t>(slots) * f, f);
}
/// The size is fixed by n; the budget either holds it or not.
template <kind_model K>
filter_plan plan_static_for_bits(std::uint64_t items, std::uint64_t bits, std::uint32_t f, bool fuse) {
  check_budget(items, bits);
  const filter_plan p = plan_static<K>(items, 0.5, f, fuse, {});
  if (p.bits > bits)
    throw invalid_argument("a " + std::string(K::name) + " filter of " + std::to_string(items) + " keys needs " +
                           std::to_string(p.bits) + " bits, more than the budget of " + std::to_string(bits));
  return p;
}

/// A Golomb-coded set at rate 2^−P: about P + 1.7 bits per key (the gaps' Rice code, about P + 1.54, plus
/// its bucket index), rounded up to whole words.
inline std::uint64_t gcs_expected_bits(std::uint64_t items, int p) {
  return (static_cast<std::uint64_t>(std::ceil(static_cast<double>(items) * (p + gcs_overhead_bits))) + 63) / 64 * 64;
}
template <kind_model K>
filter_plan plan_gcs(std::uint64_t items, int p) {
  check_bits(static_cast<double>(items) * (p + gcs_overhead_bits), items, std::ldexp(1.0, -p));
  return make_plan<K>(items, gcs_expected_bits(items, p), static_cast<std::uint32_t>(p));
}
/// The largest 2^−P at or below the target.
template <kind_model K>
filter_plan plan_gcs_for_rate(std::uint64_t items, double fpr) {
  checked_ideal_bits(items, fpr);
  return plan_gcs<K>(items, std::clamp(static_cast<int>(std::ceil(-std::log2(fpr))), 1, 32));
}
/// The largest P whose expected size fits the budget.
template <kind_model K>
filter_plan plan_gcs_for_bits(std::uint64_t items, std::uint64_t bits) {
  check_budget(items, bits);
  // Clamped before the cast: a budget of up to 2^40 bits for a few keys is far beyond any int.
  int p = static_cast<int>(std::min(32.0, std::floor(static_cast<double>(bits) / static_cast<double>(items) -
                                                     gcs_overhead_bits)));
  while (p >= 1 && gcs_expected_bits(items, p) > bits) --p;  // whole words may take it past a small budget
  if (p < 1)
    throw invalid_argument("a Golomb-coded set of " + std::to_string(items) + " keys needs more than " +
                           std::to_string(bits) + " bits");
  return plan_gcs<K>(items, p);
}

/// Quotient filter: s = ⌈items / quotient_plan_load⌉ slots rounded up to whole blocks of 64, then the fewest
/// remainder bits r whose rate at load items/s meets the target. When even r = 32 misses it, r stays 32 and
/// s grows to the fewest blocks that meet it (a lower load). The plan's `bits` is the table,
/// (s/64 + quotient_overflow_blocks)·(64r + 136); `hashes` is r.
template <kind_model K>
filter_plan plan_quotient(std::uint64_t items, double fpr) {
  checked_ideal_bits(items, fpr);
  const double n = static_cast<double>(items);
  auto whole_blocks = [](double slots) { return std::ceil(slots / quotient_block_slots) * quotient_block_slots; };
  const double design_slots = whole_blocks(std::max(2.0, std::ceil(n / quotient_plan_load)));
  check_bits(quotient_table_bits(design_slots, 1), items, fpr);  // also keeps the table below 2^64 bits
  auto s = static_cast<std::uint64_t>(design_slots);
  while (s * 19 / 20 < items) s += quotient_block_slots;  // the integer capacity, should rounding fall short
  std::uint32_t r = 1;
  while (r < quotient_max_remainder_bits && math::quotient_fpr(n, static_cast<double>(s), r) > fpr) ++r;
  if (math::quotient_fpr(n, static_cast<double>(s), r) > fpr) {
    // ε = 1 − e^{−n/(s·2^r)} ≤ fpr ⟺ s ≥ n / (2^r·(−ln(1 − fpr))); step up past rounding.
    const double needed = whole_blocks(std::ceil(n / (std::exp2(r) * -std::log1p(-fpr))));
    check_bits(quotient_table_bits(needed, r), items, fpr);
    s = std::max(s, static_cast<std::uint64_t>(needed));
    while (math::quotient_fpr(n, static_cast<double>(s), r) > fpr) s += quotient_block_slots;
  }
  check_bits(quotient_table_bits(static_cast<double>(s), r), items, fpr);
  if (s > (std::uint64_t{1} << (64 - r)))  // the fingerprint range s·2^r must fit in 64 bits: ε ≥ ~n/2^64
    throw invalid_argument("a quotient filter for " + std::to_string(items) +
                           " items cannot reach false-positive rate " + format_number(fpr) +
                           ": it would need more than 2^64 distinct fingerprints");
  return make_plan<K>(items, quotient_blocks(s) * quotient_block_bits(r), r);
}

/// Quotient filter in a budget: for each r, the most whole blocks the bits hold, all but the overflow
/// blocks carrying quotients (load at most quotient_plan_load, s·2^r ≤ 2^64); the lowest rate wins.
template <kind_model K>
filter_plan plan_quotient_for_bits(std::uint64_t items, std::uint64_t bits) {
  check_budget(items, bits);
  const double n = static_cast<double>(items);
  const double fewest_slots = std::max(2.0, std::ceil(n / quotient_plan_load));
  filter_plan best;
  for (std::uint32_t r = 1; r <= quotient_max_remainder_bits; ++r) {
    const std::uint64_t blocks = bits / quotient_block_bits(r);
    if (blocks <= quotient_overflow_blocks) continue;
    const std::uint64_t s =
        std::min((blocks - quotient_overflow_blocks) * quotient_block_slots, std::uint64_t{1} << (64 - r));
    if (static_cast<double>(s) < fewest_slots || s * 19 / 20 < items) continue;
    const filter_plan p = make_plan<K>(items, quotient_blocks(s) * quotient_block_bits(r), r);
    if (best.bits == 0 || p.predicted_fpr < best.predicted_fpr) best = p;
  }
  if (best.bits == 0)
    throw invalid_argument("bit budget " + std::to_string(bits) + " cannot hold " + std::to_string(items) +
                           " items in a quotient filter (blocks of 64 slots of at least 1 remainder bit at load at "
                           "most " +
                           format_number(quotient_plan_load) + ", and " + std::to_string(quotient_overflow_blocks) +
                           " overflow blocks)");
  return best;
}

/// Whether `buckets` buckets of the planning size hold `items` keys at or below the design load.
inline bool cuckoo_holds(std::uint64_t items, std::uint64_t buckets) noexcept {
  return static_cast<double>(items) <= static_cast<double>(buckets) * cuckoo_default_bucket_size * cuckoo_design_load;
}

/// Cuckoo plans: b = cuckoo_default_bucket_size, ⌈n/(b·α)⌉ buckets at the design load α, and the smallest
/// fingerprint f ∈ {8, 12, 16} whose rate at n items (math::cuckoo_fpr, about 2b·α/2^f: 2.97%, 0.186%,
/// 0.0116%) meets the target. bits = buckets·b·f; hashes carries f.
template <kind_model K>
filter_plan plan_cuckoo(std::uint64_t items, double fpr) {
  checked_ideal_bits(items, fpr);
  const double n = static_cast<double>(items);
  auto buckets = static_cast<std::uint64_t>(std::ceil(n / (cuckoo_default_bucket_size * cuckoo_design_load)));
  while (!cuckoo_holds(items, buckets)) ++buckets;  // guard the rounding of the division
  filter_plan best;
  for (const std::uint32_t f : {8u, 12u, 16u}) {
    check_bits(static_cast<double>(buckets) * cuckoo_default_bucket_size * f, items, fpr);
    best = make_plan<K>(items, buckets * cuckoo_default_bucket_size * f, f);
    if (best.predicted_fpr <= fpr) return best;
  }
  throw invalid_argument("a cuckoo filter cannot reach false-positive rate " + format_number(fpr) +
                         ": 16-bit fingerprints give " + format_number(best.predicted_fpr) + " at " +
                         format_number(cuckoo_design_load * 100) + "% load");
}

/// The cuckoo plan with the lowest rate in `bits` bits: for each f, as many whole buckets as fit, if they
/// hold `items` at the design load. Larger fingerprints win whenever they fit (16× lower rate per 4 bits).
template <kind_model K>
filter_plan plan_cuckoo_for_bits(std::uint64_t items, std::uint64_t bits) {
  check_budget(items, bits);
  filter_plan best;
  for (const std::uint32_t f : {8u, 12u, 16u}) {
    const std::uint64_t buckets = bits / (std::uint64_t{cuckoo_default_bucket_size} * f);
    if (buckets == 0 || !cuckoo_holds(items, buckets)) continue;
    const filter_plan p = make_plan<K>(items, buckets * cuckoo_default_bucket_size * f, f);
    if (best.bits == 0 || p.predicted_fpr < best.predicted_fpr) best = p;
  }
  if (best.bits == 0) {
    const double needed = std::ceil(static_cast<double>(items) / (cuckoo_default_bucket_size * cuckoo_design_load)) *
                          cuckoo_default_bucket_size * 8;
    throw invalid_argument("bit budget " + std::to_string(bits) + " cannot hold " + std::to_string(items) +
                           " items in a cuckoo filter: 8-bit fingerprints at " +
                           format_number(cuckoo_design_load * 100) + "% load need " + format_number(needed) + " bits");
  }
  return best;
}

/// The d-left plan with the least memory: for each remainder width r, the buckets B that keep the load at
/// most dleft_design_load and the rate at most `fpr` (B·2^r ≥ n / −ln(1 − fpr)). Memory is d·B·c·(r + C)
/// bits, so a wider remainder at full load usually beats a narrower one at a lower load, but not always:
/// every r is tried. bits = the table's bits, hashes = r.
template <kind_model K>
filter_plan plan_dleft(std::uint64_t items, double fpr) {
  checked_ideal_bits(items, fpr);
  const double n = static_cast<double>(items);
  const double cells_per_bucket_row = double{dleft_default_subtables} * dleft_default_bucket_cells;
  const double loaded = std::max(1.0, std::ceil(n / (cells_per_bucket_row * dleft_design_load)));
  filter_plan best;
  for (std::uint32_t r = 1; r + dleft_default_counter_bits <= dleft_max_cell_bits; ++r) {
    const double range_needed = n / -std::log1p(-fpr);
    double buckets = std::max(loaded, std::ceil(range_needed / std::exp2(r)));
    if (!(math::dleft_table_bits(buckets, r) <= static_cast<double>(max_filter_bits))) continue;
    if (buckets * std::exp2(r) > 0x1p64) continue;           // the fingerprint range must fit in 64 bits
    while (math::dleft_fpr(n, buckets, r) > fpr) ++buckets;  // guard the rounding of the division
    const auto bits = static_cast<std::uint64_t>(math::dleft_table_bits(buckets, r));
    if (best.bits == 0 || bits < best.bits) best = make_plan<K>(items, bits, r);
  }
  if (best.bits == 0)
    throw invalid_argument("a d-left counting filter for " + std::to_string(items) +
                           " items cannot reach false-positive rate " + format_number(fpr) +
                           " within 2^40 bits and 2^64 fingerprints");
  return best;
}

/// d-left in a budget of `bits`: for each r, as many buckets as fit, if they hold `items` at the design
/// load; the lowest rate wins.
template <kind_model K>
filter_plan plan_dleft_for_bits(std::uint64_t items, std::uint64_t bits) {
  check_budget(items, bits);
  const double n = static_cast<double>(items);
  filter_plan best;
  for (std::uint32_t r = 1; r + dleft_default_counter_bits <= dleft_max_cell_bits; ++r) {
    const auto buckets = static_cast<std::uint64_t>(static_cast<double>(bits) / math::dleft_table_bits(1, r));
    if (buckets == 0 ||
        n > static_cast<double>(buckets) * dleft_default_subtables * dleft_default_bucket_cells * dleft_design_load)
      continue;
    if (static_cast<double>(buckets) * std::exp2(r) > 0x1p64) continue;
    const filter_plan p =
        make_plan<K>(items, static_cast<std::uint64_t>(math::dleft_table_bits(static_cast<double>(buckets), r)), r);
    if (best.bits == 0 || p.predicted_fpr < best.predicted_fpr) best = p;
  }
  if (best.bits == 0)
    throw invalid_argument(
        "bit budget " + std::to_string(bits) + " cannot hold " + std::to_string(items) +
        " items in a d-left counting filter at " + format_number(dleft_design_load * 100) +
        "% load: 1-bit remainders need " +
        format_number(std::ceil(n / (dleft_default_subtables * dleft_default_bucket_cells * dleft_design_load)) *
                      math::dleft_table_bits(1, 1)) +
        " bits");
  return best;
}

/// A Bloomier map of `items` distinct keys to values of `value_bits` bits (1 … 32) that reports an absent
/// key absent except at a rate of at most `fpr`: f = ⌈log2(1/fpr)⌉ check bits (1 … 32), rate 2^−f, and the
/// binary fuse layout's slots for the keys, each f + v bits wide. bits = slots·(f + v), hashes = f; bytes
/// is the table with its 8 bytes of slack, what the filter allocates.
template <kind_model K>
filter_plan plan_bloomier(std::uint64_t items, double fpr, std::uint32_t value_bits) {
  check_plan_inputs(items, fpr);
  if (value_bits == 0 || value_bits > 32)
    throw invalid_argument("Bloomier filter: value bits must be in [1, 32], got " + std::to_string(value_bits));
  const int f = std::clamp(static_cast<int>(std::ceil(-std::log2(fpr))), 1, 32);
  const std::uint64_t slots = math::fuse_shape_for(items).slots();
  const double bits = static_cast<double>(slots) * (f + value_bits);
  check_bits(bits, items, fpr);
  filter_plan p = make_plan<K>(items, static_cast<std::uint64_t>(bits), static_cast<std::uint32_t>(f));
  p.bytes = (p.bits + 7) / 8 + 8;
  return p;
}

/// The expected shape of a cascade (CRLite, Larisch et al. 2017) for `included` = |R| and `excluded` = |S|
/// distinct keys. Level 1 holds R at CRLite's rate |R|·√½ / |S| (clamped to [1e−9, ½]; ½ when S is empty),
/// and every later level, at rate ½, the keys of the other set that the level before it admitted:
/// expected n₂ = |S|·ε₁, n₃ = |R|·ε₂, n_{i+1} = n_{i−1}·ε_i, each level a classic filter (`Level`), until
/// fewer than one key is expected. bits = the levels' bits, hashes = the number of levels, bytes = the
/// payload (the levels' words and 24 bytes of parameters each), predicted_fpr = 0: the cascade is exact on
/// R ∪ S (keys outside it get no guarantee). An estimate: the real levels follow the real false positives.
template <kind_model K, kind_model Level>
filter_plan plan_cascade(std::uint64_t included, std::uint64_t excluded) {
  if (included == 0) throw invalid_argument("a cascade needs at least one included key, got 0");
  filter_plan p;
  p.kind = K::kind;
  p.items = included;
  double keys = static_cast<double>(included), other = static_cast<double>(excluded);
  for (std::uint32_t level = 0; keys >= 1.0; ++level) {
    if (level == 64) throw invalid_argument("a cascade of these sets would need more than 64 levels");
    const double rate = level == 0 ? math::cascade_first_level_rate(included, excluded) : 0.5;
    const filter_plan l = plan_classic<Level>(static_cast<std::uint64_t>(std::llround(keys)), rate);
    p.bits += l.bits;
    p.bytes += l.bytes + 24;
    ++p.hashes;
    const double admitted = other * l.predicted_fpr;  // the other set's keys this level lets through
    other = keys;
    keys = admitted;
  }
  return p;
}

/// What a spatial plan predicts for one set (math::spatial_all_at_least, math::unreached_share).
struct spatial_set_rates {
  double false_positive = 0;  // an absent key reported as this set
  double misreport = 0;       // a member reported as a later set
  double emersion = 1;        // expected share of the set's cells that no later set overwrote
  double worst() const noexcept { return std::max(false_positive, misreport); }
};

/// Each set's predicted rates in m cells with k probes, the sets holding `sizes` keys in priority order.
/// `block` is the cells of a block when every key's cells lie in one (0: anywhere). Blocked, the cells
/// at least i in a key's block are those N_{≥i}'s keys reached there, so an absent key's cells are all at
/// least i at the blocked rate of N_{≥i} keys (math::blocked_fpr), a member of set i has all its cells
/// raised by a later set at the blocked rate of N_{>i}, and a cell set i wrote escapes the later sets as a
/// cell escapes N_{>i} keys in blocks (math::unreached_share).
inline std::vector<spatial_set_rates> spatial_rates(std::span<const std::uint64_t> sizes, double m, double k,
                                                    std::uint32_t block = 0) {
  // The rate at which n keys leave all k cells of another key at least their own set's number.
  const auto all_at_least = [&](double n) {
    return block == 0 ? math::spatial_all_at_least(n, m, k) : math::blocked_fpr(n, m, k, block);
  };
  std::vector<spatial_set_rates> rates(sizes.size());
  double after = 0, all_after = 0;  // N_{>i}, and the rate at which they cover a key
  for (std::size_t i = sizes.size(); i-- > 0;) {
    const double from = after + static_cast<double>(sizes[i]), all_from = all_at_least(from);
    rates[i] = {std::max(0.0, all_from - all_after), all_after, math::unreached_share(after, m, k, block)};
    after = from;
    all_after = all_from;
  }
  return rates;
}

/// Spatial: for each k, the fewest cells at which the worst set (the larger of its two error rates) meets
/// ε; the k that needs the fewest cells wins. Near the optimum the worst rate is the first set's misreport
/// or the union's false positives shared out, both classic-like in N, so the search starts from the classic
/// size for N keys. bits = cells; predicted_fpr = the worst set's rate. With `block` cells to a block (0: the
/// classic layout) the cells come in whole blocks, and the blocked model's best k is lower.
template <kind_model K>
filter_plan plan_spatial(std::span<const std::uint64_t> sizes, double fpr, std::uint32_t block = 0) {
  if (sizes.empty()) throw invalid_argument("a spatial filter needs at least one set");
  std::uint64_t total = 0;
  for (const std::uint64_t n : sizes) {
    if (n > max_filter_bits - total) throw invalid_argument("the sets hold more than 2^40 keys");
    total += n;
  }
  const double ideal = checked_ideal_bits(std::max<std::uint64_t>(total, 1), fpr);
  const auto worst = [&](std::uint64_t m, std::uint32_t k) {
    double w = 0;
    for (const spatial_set_rates& r : spatial_rates(sizes, static_cast<double>(m), k, block))
      w = std::max(w, r.worst());
    return w;
  };
  filter_plan best;
  const std::uint32_t k0 = math::optimal_hash_count(ideal, static_cast<double>(std::max<std::uint64_t>(total, 1)));
  const std::uint64_t granule = block != 0 ? block : 1;
  const std::uint64_t hi =
      std::min<std::uint64_t>(max_filter_bits, static_cast<std::uint64_t>(4 * ideal) + 64) / granule;
  const std::uint32_t below = block != 0 ? 5 : 3;
  for (std::uint32_t k = std::max<std::uint32_t>(1, k0 > below ? k0 - below : 1); k <= std::min(max_hashes, k0 + 3);
       ++k) {
    const std::uint64_t units =
        smallest_satisfying(1, hi, [&](std::uint64_t u) { return worst(u * granule, k) <= fpr; });
    if (units > hi) continue;
    const std::uint64_t m = units * granule;
    if (best.bits == 0 || m < best.bits) {
      best = make_plan<K>(total, m, k);
      best.predicted_fpr = worst(m, k);
    }
  }
  if (best.bits == 0)
    throw invalid_argument("no spatial filter within 2^40 cells keeps every set under false-positive rate " +
                           format_number(fpr));
  return best;
}

/// A kind whose rate has no closed-form inverse (its model_fpr is computed numerically): for each k from 1
/// up, the fewest cells whose model rate meets ε, until more probes stop paying; the k needing the fewest
/// wins. The model is monotone in m for a fixed k, so each search is a bisection.
template <kind_model K>
filter_plan plan_by_model(std::uint64_t items, double fpr) {
  const double ideal = checked_ideal_bits(items, fpr);
  const double n = static_cast<double>(items);
  const std::uint64_t hi = std::min<std::uint64_t>(max_filter_bits, static_cast<std::uint64_t>(2 * ideal) + 64);
  filter_plan best;
  for (std::uint32_t k = 1; k <= max_hashes; ++k) {
    const std::uint64_t m = smallest_satisfying(1, hi, [&](std::uint64_t cells) {
      return K::model_fpr(n, static_cast<double>(cells), k) <= fpr;
    });
    if (m > hi) continue;
    if (best.bits == 0 || m < best.bits) best = make_plan<K>(items, m, k);
    else if (static_cast<double>(m) > 1.2 * static_cast<double>(best.bits)) break;  // past the best k
  }
  if (best.bits == 0)
    throw invalid_argument("no filter within 2^40 bits holds " + std::to_string(items) + " items at rate " +
                           format_number(fpr));
  return best;
}
/// All of a budget of `cells` cells, with the k that minimises the kind's model rate.
template <kind_model K>
filter_plan plan_by_model_for_bits(std::uint64_t items, std::uint64_t cells) {
  check_budget(items, cells);
  const double n = static_cast<double>(items), m = static_cast<double>(cells);
  std::uint32_t best_k = 1;
  double best_rate = K::model_fpr(n, m, 1);
  for (std::uint32_t k = 2; k <= max_hashes; ++k) {
    const double rate = K::model_fpr(n, m, k);
    if (rate < best_rate) {
      best_rate = rate;
      best_k = k;
    } else if (rate > 1.5 * best_rate) {
      break;
    }
  }
  return make_plan<K>(items, cells, best_k);
}

/// An invertible table as a membership filter: for each k with a published peeling threshold, the fewest
/// cells whose partitioned rate (K::model_fpr) is at most ε and that still list the n entries back
/// (math::iblt_cells_for_difference's cells scaled to k's threshold), the k with the fewest cells winning.
template <kind_model K>
filter_plan plan_iblt(std::uint64_t items, double fpr) {
  checked_ideal_bits(items, fpr);
  const double n = static_cast<double>(items);
  filter_plan best;
  for (std::uint32_t k = math::iblt_min_planned_hashes; k <= math::iblt_max_planned_hashes; ++k) {
    const double p = std::pow(fpr, 1.0 / k);
    const double slice = std::ceil(-1.0 / std::expm1(std::log1p(-p) / n));
    const double listing = static_cast<double>(math::iblt_cells_for_difference(items)) *
                           math::iblt_peeling_threshold(k) /
                           math::iblt_peeling_threshold(math::iblt_difference_hashes(items));
    const double cells = std::max(slice, std::ceil(listing / k)) * k;
    check_bits(cells * 8 * static_cast<double>(K::plan_bytes(1)), items, fpr);
    const auto m = static_cast<std::uint64_t>(cells);
    if (best.bits == 0 || m < best.bits) best = make_plan<K>(items, m, k);
  }
  return best;
}

}  // namespace detail

}  // namespace blume
