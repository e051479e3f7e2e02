// SPDX-License-Identifier: Apache-2.0
// What the Python module's parts share: the object Python holds, the errors it raises, how a Python key
// becomes the bytes the library hashes, and the locking that lets calls release the GIL. The module has no
// filter logic of its own: every answer comes from the library through any_filter.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "blume/any_filter.hpp"
#include "blume/error.hpp"

namespace blume::python {

namespace py = pybind11;

// ---- errors raised by the bindings themselves (the library's own map to blume.Error's subclasses) ------

/// A key of a type blume does not hash (float, None, a list…): blume.KeyTypeError, a TypeError.
class key_type_error : public error {
 public:
  using error::error;
};
/// A call the filter's kind does not have (erase on a Bloom filter, add on a static filter):
/// blume.UnsupportedOperation, a TypeError.
class unsupported : public error {
 public:
  using error::error;
};
/// A filter that had no room for a key (cuckoo, quotient, d-left, a non-scaling chain): blume.FilterFull.
class filter_full : public error {
 public:
  using error::error;
};

template <class F>
[[noreturn]] void refuse(std::string_view what) {
  throw unsupported("a " + std::string(F::name) + " filter cannot " + std::string(what));
}

/// What a kind of vectors (novelty) says to a call about keys: it has none, it scores inputs.
template <class F>
[[noreturn]] void refuse_keys() {
  refuse<F>("take or look up keys: it scores vectors (observe() and novelty())");
}

class py_filter;
/// Refuses a kind of vectors before a key is read (a NumPy row is not a key type, and the kind is the reason).
void require_keys(const py_filter& f);

// ---- the object ---------------------------------------------------------------------------------------

/// A filter as Python holds it: the filter, the design its file records (capacity and target rate), and
/// a lock. Lookups share it and writers own it, so calls that run without the GIL (bulk calls, save) are
/// safe against each other; the library's own rules (basic_bloom_filter.hpp) are what the lock enforces.
class py_filter {
 public:
  py_filter(any_filter f, filter_design d) : filter(std::move(f)), design(d) {}
  virtual ~py_filter() = default;  // polymorphic: pybind11 returns a typed_filter as its own Python class

  any_filter filter;
  filter_design design;
  mutable std::shared_mutex mutex;
};

/// The C++ type behind a kind's own Python class (blume.SplitBlockBloomFilter …): the same object, one type
/// per kind so pybind11 can give each its class.
template <filter_kind K>
class typed_filter final : public py_filter {
 public:
  using py_filter::py_filter;
};

inline void require_keys(const py_filter& f) {
  std::visit(
      [](const auto& typed) {
        if constexpr (!answers_keys<std::decay_t<decltype(typed)>>) refuse_keys<std::decay_t<decltype(typed)>>();
      },
      f.filter);
}

/// The filter as a Python object of its kind's class.
py::object wrap(any_filter f, filter_design design);

/// The design a filter made for `capacity` keys at `fpr` records; none for kinds a capacity does not size.
filter_design design_for(filter_kind kind, std::uint64_t capacity, double fpr);

// ---- locking without deadlocks -------------------------------------------------------------------------
// A thread that holds the GIL never waits for the lock: a bulk call holding the lock without the GIL would
// need the GIL back to finish. So a lock that is not free at once is waited for with the GIL released.

template <class Lock>
void lock_releasing_gil(Lock& lock) {
  if (lock.try_lock()) return;
  py::gil_scoped_release release;
  lock.lock();
}

/// fn(typed filter) under the shared lock (lookups).
template <class Fn>
decltype(auto) read_filter(const py_filter& self, Fn&& fn) {
  std::shared_lock lock(self.mutex, std::defer_lock);
  lock_releasing_gil(lock);
  return std::visit(std::forward<Fn>(fn), self.filter);
}

/// fn(typed filter) under the exclusive lock (anything that changes it).
template <class Fn>
decltype(auto) write_filter(py_filter& self, Fn&& fn) {
  std::unique_lock lock(self.mutex, std::defer_lock);
  lock_releasing_gil(lock);
  return std::visit(std::forward<Fn>(fn), self.filter);
}

// ---- keys --------------------------------------------------------------------------------------------

/// The bytes a Python key is hashed as, exactly as the C++ library hashes the same key: a str its UTF-8,
/// bytes-like objects their bytes, an int (or anything with __index__, such as NumPy's integers) its value
/// as 8 little-endian bytes of the 64-bit integer (sign-extended, so -1 is 2**64 - 1, as in C++). Integers
/// outside [-2**63, 2**64) raise OverflowError; floats and other types raise KeyTypeError. `scratch`
/// holds an integer's bytes for as long as the view is used. Needs the GIL.
std::string_view key_bytes(py::handle key, std::uint64_t& scratch);

/// The value of an integer key widened to 64 bits, as hash_key widens C++ integers.
std::uint64_t integer_key(py::handle key);

/// Sets the Python error for any C++ exception, as pybind11 would on the way out of a bound function: for
/// the few calls written against the C API for speed.
void raise_as_python(std::exception_ptr p);

// ---- registration (one function per source file, called by the module in this order) ----------------

void register_errors(py::module_& m);
void bind_keys(py::class_<py_filter>& c);                   // filter_keys.cpp: one key at a time
void bind_bulk(py::class_<py_filter>& c);                   // filter_bulk.cpp: many keys, without the GIL
void bind_combine(py::class_<py_filter>& c);                // filter_combine.cpp: merge, intersect, estimates
void bind_describe(py::class_<py_filter>& c);               // filter_describe.cpp: info, len, repr, properties
void bind_files(py::module_& m, py::class_<py_filter>& c);  // filter_files.cpp: save, load, open, pickle, build
void bind_kinds(py::module_& m, py::class_<py_filter>& c);  // module.cpp: the typed classes, plan, kinds

}  // namespace blume::python
