// SPDX-License-Identifier: Apache-2.0
// Filters as bytes and files, the same bytes the blume tool reads and writes (docs/format.md): save (atomic,
// under the file's writer lock), load (into memory), open (a private mapping: nothing copied, pages shared
// with every process that opens the file), to_bytes/from_bytes and pickling; and build, for the kinds made
// from all their inputs at once.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.hpp"
#include "blume/kinds.hpp"
#include "key_chunks.hpp"

namespace blume::python {

namespace {

std::filesystem::path path_argument(py::handle path) {
  return py::module_::import("os").attr("fsdecode")(path).cast<std::string>();
}

py::bytes to_bytes_of(const py_filter& self) {
  std::vector<std::byte> bytes;
  {
    std::shared_lock lock(self.mutex, std::defer_lock);
    py::gil_scoped_release release;
    lock.lock();
    bytes = std::visit([&](const auto& f) { return to_bytes(f, self.design); }, self.filter);
  }
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

py::object from_bytes_of(const py::buffer& data) {
  const py::buffer_info info = data.request();
  if (info.ndim != 1 || info.strides[0] != info.itemsize)
    throw invalid_argument("from_bytes: a contiguous bytes-like object is needed");
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(info.ptr),
                                         static_cast<std::size_t>(info.size * info.itemsize));
  any_filter f = [&] {
    py::gil_scoped_release release;
    return filter_from_bytes(bytes);
  }();
  return wrap(std::move(f), decode_header(bytes).design);
}

/// Every key of a Python collection as the bytes it is hashed as (what the kinds built from whole sets
/// take, through their key ranges).
std::vector<std::string> key_strings(py::handle keys) {
  std::vector<std::string> out;
  if (py::hasattr(keys, "__len__")) out.reserve(py::len(keys));
  std::uint64_t scratch = 0;
  for (const py::handle k : py::iter(keys)) out.emplace_back(key_bytes(k, scratch));
  return out;
}

/// The digests a kind's default instantiation computes (its hasher, the default seed), for building before the
/// filter exists: the kinds do not all hash alike (split-block's XXH3-64, the others' XXH3-128).
template <hasher H>
struct hashing_as {
  H h = H();
  template <key K>
  digest hash(const K& k) const noexcept {
    return hash_key(h, k);
  }
};

py::object build(const std::string& kind_name_arg, py::object keys, double fpr, py::object values, py::object excluded,
                 std::optional<std::uint32_t> value_bits, std::optional<std::string> cells_arg) {
  const auto kind = parse_kind(kind_name_arg);
  if (!kind) throw invalid_argument("unknown filter kind '" + kind_name_arg + "' (see blume.kinds())");
  if (value_bits && *kind != bloomier_filter<>::kind)
    throw invalid_argument("value_bits is for a bloomier map, not a " + kind_name_arg + " filter");
  std::optional<cell_layout> cells;
  if (cells_arg) {
    cells = parse_cell_layout(*cells_arg);
    if (input_of(*kind) != kind_input::keys_with_values)
      throw invalid_argument("cells is for the spatial and compact kinds, not a " + kind_name_arg + " filter");
  }
  switch (input_of(*kind)) {
    case kind_input::included_and_excluded: {
      if (excluded.is_none())
        throw invalid_argument(
            "a cascade is built from the keys it includes and those it excludes: "
            "build('cascade', included, excluded=...)");
      const std::vector<std::string> in = key_strings(keys), out = key_strings(excluded);
      py::gil_scoped_release release;
      any_filter f = cascade_filter::build(in, out);
      py::gil_scoped_acquire acquire;
      return wrap(std::move(f), {});
    }
    case kind_input::keys_with_values: {
      if (!excluded.is_none()) throw invalid_argument("excluded keys are for a cascade");
      py::object pairs_keys = keys;
      if (values.is_none()) {
        if (!py::isinstance<py::dict>(keys))
          throw invalid_argument("a " + kind_name_arg +
                                 " filter stores a value with each key: give a dict, or keys and values=");
        pairs_keys = keys.attr("keys")();
        values = keys.attr("values")();
      }
      const std::vector<std::string> ks = key_strings(pairs_keys);
      std::vector<std::uint64_t> vs;
      for (const py::handle v : py::iter(values)) vs.push_back(integer_key(v));
      if (ks.size() != vs.size())
        throw invalid_argument(std::to_string(ks.size()) + " keys but " + std::to_string(vs.size()) + " values");
      py::gil_scoped_release release;
      any_filter f = build_map_filter(*kind, ks, vs, fpr, value_bits, cells);
      // Recorded as `blume build` records it: the keys and the rate asked for.
      const filter_design design = ks.empty() ? filter_design{} : filter_design{ks.size(), fpr};
      py::gil_scoped_acquire acquire;
      return wrap(std::move(f), design);
    }
    case kind_input::integers:
      throw invalid_argument("a " + kind_name_arg + " filter is sized by its universe and zone: blume.Filter('" +
                             kind_name_arg + "', universe=U, zone=D), then add_many(keys)");
    case kind_input::vectors:
      throw invalid_argument("a " + kind_name_arg + " filter observes vectors: blume." +
                             "NoveltyFilter(dim=D), then observe(array)");
    case kind_input::keys: break;
  }
  if (!values.is_none() || !excluded.is_none())
    throw invalid_argument("a " + kind_name_arg + " filter is built from one key set (no values, no excluded keys)");
  // Hash everything first: the count sizes the filter, as `blume build` without --items counts its input.
  std::vector<digest> digests;
  auto collect = [&](std::span<const digest> chunk) { digests.insert(digests.end(), chunk.begin(), chunk.end()); };
  visit_kind(*kind, [&](auto type) {
    if constexpr (hasher<typename decltype(type)::type::hasher_type>)
      for_each_chunk(hashing_as<typename decltype(type)::type::hasher_type>{}, keys, "lines", collect);
  });
  const std::uint64_t n = std::max<std::uint64_t>(digests.size(), 1);
  py::gil_scoped_release release;
  any_filter f = [&] {
    if (is_static(*kind)) {
      std::vector<std::uint64_t> lows(digests.size());
      for (std::size_t i = 0; i < digests.size(); ++i) lows[i] = digests[i].low;
      std::vector<digest>().swap(digests);
      return build_static_filter(*kind, std::move(lows), fpr);
    }
    any_filter made = make_filter(*kind, n, fpr);
    std::visit(
        [&](auto& typed) {
          using F = std::decay_t<decltype(typed)>;
          if constexpr (takes_inserts<F>) {
            if constexpr (may_be_full<F>) {
              const std::size_t stored = typed.insert_many(std::span<const digest>(digests));
              if (stored != digests.size())
                throw filter_full("the " + std::string(F::name) + " filter sized for " +
                                  std::to_string(digests.size()) + " keys took only " + std::to_string(stored));
            } else {
              typed.insert_many(std::span<const digest>(digests));
            }
          }
        },
        made);
    return made;
  }();
  py::gil_scoped_acquire acquire;
  return wrap(std::move(f), design_for(*kind, n, fpr));
}

}  // namespace

void bind_files(py::module_& m, py::class_<py_filter>& c) {
  c.def(
      "save",
      [](const py_filter& self, py::handle path, bool wait, bool force) {
        const std::filesystem::path p = path_argument(path);
        std::shared_lock lock(self.mutex, std::defer_lock);
        py::gil_scoped_release release;
        const file_lock writer(p, wait ? file_lock::mode::wait : file_lock::mode::no_wait);
        lock.lock();
        try {
          save_filter(self.filter, p, self.design, write_options{force});
        } catch (const write_refused& e) {
          if (!e.forcible()) throw;
          throw write_refused(std::string(e.what()) + " (force=True writes it anyway)", true);
        }
      },
      py::arg("path"), py::kw_only(), py::arg("wait") = true, py::arg("force") = false,
      "Writes the filter to `path` in blume's file format, atomically (a temporary file, fsync, rename), holding "
      "the file's writer lock as the blume tool does; wait=False raises FileLocked at once if another writer "
      "holds it. The file records the capacity and rate the filter was planned for.\n\n"
      "Through a symbolic link it writes the file the link names, keeping that file's mode and owner. It "
      "raises IoError, changing nothing, for a path that is not a regular file (a directory, device or FIFO) "
      "and, unless force=True, for a read-only file or one with other hard links (force=True replaces the "
      "former and rewrites the latter in place, so that every name sees the new filter).");
  c.def("to_bytes", &to_bytes_of, "The filter's bytes: exactly what save() writes to a file.");
  c.def(
      "__reduce__",
      [](const py_filter& self) {
        return py::make_tuple(py::module_::import("blume").attr("_unpickle"), py::make_tuple(to_bytes_of(self)));
      },
      "Pickles as the file format's bytes.");

  m.def("from_bytes", &from_bytes_of, py::arg("data"),
        "A filter from its bytes (to_bytes(), a file's contents), checked as a file is: a damaged or foreign "
        "buffer raises FormatError.");
  m.def(
      "load",
      [](py::handle path) {
        const std::filesystem::path p = path_argument(path);
        file_header h;
        any_filter f = [&] {
          py::gil_scoped_release release;
          return load_filter(p, &h);
        }();
        return wrap(std::move(f), h.design);
      },
      py::arg("path"),
      "Reads a filter file (of any kind, from blume or `blume build`) into memory, checksums verified.");
  m.def(
      "open",
      [](py::handle path, bool verify_payload) {
        const std::filesystem::path p = path_argument(path);
        file_header h;
        any_filter f = [&] {
          py::gil_scoped_release release;
          return open_filter(p, verify_payload ? verify::full : verify::header_only, &h);
        }();
        return wrap(std::move(f), h.design);
      },
      py::arg("path"), py::kw_only(), py::arg("verify") = true,
      "Opens a filter file as a private memory mapping: nothing is read until a lookup touches it, and processes "
      "that open the same file share its pages. Changes stay in memory until save(). verify=False skips the "
      "payload checksum, so a filter of any size opens in microseconds.");
  m.def("build", &build, py::arg("kind"), py::arg("keys"), py::arg("fpr") = 0.01, py::kw_only(),
        py::arg("values") = py::none(), py::arg("excluded") = py::none(), py::arg("value_bits") = py::none(),
        py::arg("cells") = py::none(),
        "A filter of any kind from all its keys at once, sized for them: the static kinds (xor8, xor16, fuse8, "
        "fuse16, gcs) from keys; bloomier, spatial and compact from a dict (or keys and values=); a cascade from "
        "its included keys and excluded=; every other kind from keys, sized to their count. cells='blocked' puts "
        "each key's cells of a spatial or compact filter in one 64-byte block (one cache miss a lookup, more "
        "cells for the same rate); 'classic' (the default) spreads them.");
}

}  // namespace blume::python
