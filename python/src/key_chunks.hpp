// SPDX-License-Identifier: Apache-2.0
// Keys from Python, as digests a chunk at a time: what the bulk calls and build() read. A source hands each
// chunk to a sink without the GIL; Python objects are touched only with it (a list's strings are hashed
// under it), while a NumPy integer array and a key file need no Python objects and are hashed without it.
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bindings.hpp"
#include "key_input.hpp"

namespace blume::python {

/// Keys per chunk: 256 KiB of digests, large enough that the GIL round trip and the lock cost nothing per
/// key, small enough to stay in L2.
inline constexpr std::size_t chunk_keys = std::size_t{1} << 14;

/// A NumPy array whose elements are all integers (any width, signed or not), hashed as the integers they
/// are; nothing for any other object.
inline std::optional<py::array> integer_array(py::handle keys) {
  const auto modules = py::module_::import("sys").attr("modules");
  if (!modules.contains("numpy") || !py::isinstance<py::array>(keys)) return std::nullopt;
  auto a = py::reinterpret_borrow<py::array>(keys);
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'b') return std::nullopt;
  return py::array::ensure(a, py::array::c_style);  // a copy only if it is not C-contiguous
}

template <class T>
std::uint64_t widened(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<std::uint64_t>(
      static_cast<std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>(v));
}

template <class F, class Sink>
void from_integer_array(const F& f, const py::array& a, Sink& sink) {
  const char kind = a.dtype().kind();
  const auto size = static_cast<std::size_t>(a.itemsize());
  const auto* data = static_cast<const unsigned char*>(a.data());
  const auto n = static_cast<std::size_t>(a.size());
  std::uint64_t (*read)(const void*) = nullptr;
  const bool is_signed = kind == 'i';
  switch (size) {
    case 1: read = is_signed ? widened<std::int8_t> : widened<std::uint8_t>; break;
    case 2: read = is_signed ? widened<std::int16_t> : widened<std::uint16_t>; break;
    case 4: read = is_signed ? widened<std::int32_t> : widened<std::uint32_t>; break;
    case 8: read = is_signed ? widened<std::int64_t> : widened<std::uint64_t>; break;
    default: throw key_type_error("integer keys of " + std::to_string(size) + " bytes: keys are at most 64-bit");
  }
  py::gil_scoped_release release;
  std::vector<digest> digests;
  digests.reserve(chunk_keys);
  for (std::size_t i = 0; i < n; ++i) {
    digests.push_back(f.hash(read(data + i * size)));
    if (digests.size() == chunk_keys) {
      sink(std::span<const digest>(digests));
      digests.clear();
    }
  }
  if (!digests.empty()) sink(std::span<const digest>(digests));
}

/// Hashes keys under the GIL as `next` hands them out (false: no more), a chunk at a time.
template <class F, class Next, class Sink>
void from_objects(const F& f, Next&& next, Sink& sink) {
  std::vector<digest> digests;
  digests.reserve(chunk_keys);
  const auto flush = [&] {
    py::gil_scoped_release release;
    sink(std::span<const digest>(digests));
    digests.clear();
  };
  std::uint64_t scratch = 0;
  py::handle key;
  while (next(key)) {
    digests.push_back(f.hash(key_bytes(key, scratch)));
    if (digests.size() == chunk_keys) flush();
  }
  if (!digests.empty()) flush();
}

/// Splits text into keys, skipping empty ones (as `blume build` does) and carrying a key cut by the end of
/// a read into the next.
template <class F, class Sink>
class key_splitter {
 public:
  key_splitter(const F& f, char delimiter, Sink& sink) : f_(f), delimiter_(delimiter), sink_(sink) {
    digests_.reserve(chunk_keys);
  }
  /// Keys of a block that holds only complete ones.
  void block(std::string_view text) {
    surface::for_each_key(text, delimiter_, [&](std::string_view k) {
      if (k.empty()) return;
      digests_.push_back(f_.hash(k));
      if (digests_.size() == chunk_keys) flush();
    });
  }
  /// A piece of a stream: complete keys now, the rest when the next piece (or the end) comes.
  void piece(std::string_view text) {
    const std::size_t last = text.rfind(delimiter_);
    if (last == std::string_view::npos) {
      carry_.append(text);
      return;
    }
    carry_.append(text.substr(0, last + 1));
    block(carry_);
    carry_.assign(text.substr(last + 1));
  }
  void finish() {
    block(carry_);
    carry_.clear();
    flush();
  }
  void flush() {
    if (!digests_.empty()) sink_(std::span<const digest>(digests_));
    digests_.clear();
  }

 private:
  const F& f_;
  char delimiter_;
  Sink& sink_;
  std::vector<digest> digests_;
  std::string carry_;
};

inline char delimiter_of(const std::string& format) {
  if (format == "lines") return '\n';
  if (format == "nul") return '\0';
  throw invalid_argument("format: 'lines' or 'nul', got '" + format + "'");
}

inline bool is_path(py::handle keys) {
  return PyUnicode_Check(keys.ptr()) || PyBytes_Check(keys.ptr()) || py::hasattr(keys, "__fspath__");
}

/// Every key of `keys` as digests, chunk by chunk, to `sink` (called without the GIL): a path or a file
/// object of delimited keys, a NumPy integer array, a list or tuple, or any iterable.
template <class F, class Sink>
void for_each_chunk(const F& f, py::handle keys, const std::string& format, Sink& sink) {
  if (is_path(keys)) {
    const std::string path = py::module_::import("os").attr("fsdecode")(keys).cast<std::string>();
    const char delimiter = delimiter_of(format);
    py::gil_scoped_release release;
    surface::key_source source(path, delimiter == '\0' ? surface::key_format::nul : surface::key_format::lines);
    key_splitter<F, Sink> split(f, source.delimiter(), sink);
    source.for_each_block([&](std::string_view block) { split.block(block); });
    split.flush();
    return;
  }
  if (py::hasattr(keys, "read")) {
    const char delimiter = delimiter_of(format);
    key_splitter<F, Sink> split(f, delimiter, sink);
    const py::object read = keys.attr("read");
    for (;;) {
      const py::object piece = read(1 << 20);
      if (!PyUnicode_Check(piece.ptr()) && !PyBytes_Check(piece.ptr()))
        throw key_type_error("a file object's read() returned " + std::string(Py_TYPE(piece.ptr())->tp_name));
      std::uint64_t unused = 0;
      const std::string_view text = key_bytes(piece, unused);  // bytes, or str from a text file as UTF-8
      if (text.empty()) break;
      // Without the GIL: a full chunk goes to the sink, which may wait for the filter's lock (the text is
      // the piece's own buffer, alive while `piece` is).
      py::gil_scoped_release release;
      split.piece(text);
    }
    py::gil_scoped_release release;
    split.finish();
    return;
  }
  if (const std::optional<py::array> ints = integer_array(keys)) {
    from_integer_array(f, *ints, sink);
    return;
  }
  if (PyList_Check(keys.ptr()) || PyTuple_Check(keys.ptr())) {
    // Indexed afresh each time: the sequence may not change size while the GIL is held, but between chunks
    // another thread may shrink it.
    std::size_t i = 0;
    const auto seq = py::reinterpret_borrow<py::sequence>(keys);
    from_objects(
        f,
        [&](py::handle& key) {
          if (i >= static_cast<std::size_t>(PySequence_Fast_GET_SIZE(seq.ptr()))) return false;
          key = PySequence_Fast_GET_ITEM(seq.ptr(), i++);
          return true;
        },
        sink);
    return;
  }
  const py::iterator it = py::iter(keys);
  py::object held;  // the iterator's item lives until the next one is taken
  from_objects(
      f,
      [&](py::handle& key) {
        held = py::reinterpret_steal<py::object>(PyIter_Next(it.ptr()));
        if (!held) {
          if (PyErr_Occurred() != nullptr) throw py::error_already_set();
          return false;
        }
        key = held;
        return true;
      },
      sink);
}

}  // namespace blume::python
