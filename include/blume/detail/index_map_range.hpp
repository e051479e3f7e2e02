// SPDX-License-Identifier: Apache-2.0
// f(i) for i in [first, last), computed as it is read: millions of generated keys for tests and benchmarks
// without holding them. Written out rather than std::views::iota | std::views::transform, which clang 14
// cannot compile against GCC 12's standard library (iota_view fails its own range concept there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace blume::detail {

template <class F>
class index_map_range {
 public:
  class iterator {
   public:
    using value_type = std::remove_cvref_t<std::invoke_result_t<const F&, std::uint64_t>>;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    iterator(const F* f, std::uint64_t i) noexcept : f_(f), i_(i) {}
    value_type operator*() const { return (*f_)(i_); }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++i_;
      return before;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }

   private:
    const F* f_ = nullptr;  // the range's own function: a range outlives its iterators
    std::uint64_t i_ = 0;
  };

  index_map_range(std::uint64_t first, std::uint64_t last, F f) : first_(first), last_(last), f_(std::move(f)) {}
  iterator begin() const noexcept { return {&f_, first_}; }
  iterator end() const noexcept { return {&f_, last_}; }
  std::size_t size() const noexcept { return static_cast<std::size_t>(last_ - first_); }

 private:
  std::uint64_t first_, last_;
  F f_;
};

}  // namespace blume::detail
