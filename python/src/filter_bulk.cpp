// SPDX-License-Identifier: Apache-2.0
// Many keys at once: add_many, contains_many, count_contained. Keys become digests a chunk at a time
// (key_chunks.hpp) and each chunk goes to the library's pipelined bulk calls with the GIL released, so a
// Python program gets the batched speed and other Python threads run meanwhile.
#include <pybind11/numpy.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings.hpp"
#include "blume/kinds.hpp"
#include "key_chunks.hpp"

namespace blume::python {

namespace {

/// An array of answers: a NumPy bool array where NumPy is installed, a list of bools otherwise.
py::object answers(const std::vector<std::uint8_t>& hits) {
  try {
    py::module_::import("numpy");
  } catch (const py::error_already_set&) {
    py::list out(hits.size());
    for (std::size_t i = 0; i < hits.size(); ++i) out[i] = py::bool_(hits[i] != 0);
    return out;
  }
  py::array_t<bool> out(static_cast<py::ssize_t>(hits.size()));
  if (!hits.empty()) std::memcpy(out.mutable_data(), hits.data(), hits.size());
  return out;
}

}  // namespace

void bind_bulk(py::class_<py_filter>& c) {
  c.def(
      "add_many",
      [](py_filter& self, py::handle keys, const std::string& format) {
        return std::visit(
            [&](auto& f) -> std::uint64_t {
              using F = std::decay_t<decltype(f)>;
              if constexpr (!answers_keys<F>) {
                refuse_keys<F>();
              } else if constexpr (!takes_inserts<F>) {
                refuse<F>(takes_valued_inserts<F> ? "take keys without values: add(key, value) for each"
                                                  : "take keys after it is built (blume.build makes it)");
              } else {
                std::uint64_t added = 0, refused = 0;
                auto sink = [&](std::span<const digest> chunk) {
                  std::unique_lock lock(self.mutex);  // no GIL here: waiting cannot deadlock
                  if constexpr (may_be_full<F>) {
                    refused += chunk.size() - f.insert_many(chunk);
                  } else {
                    f.insert_many(chunk);
                  }
                  added += chunk.size();
                };
                for_each_chunk(f, keys, format, sink);
                if (refused != 0)
                  throw filter_full("the " + std::string(F::name) + " filter is full: " + std::to_string(refused) +
                                    " of " + std::to_string(added) + " keys found no room (build a larger one)");
                return added;
              }
            },
            self.filter);
      },
      py::arg("keys"), py::arg("format") = "lines",
      "Adds many keys at once with the GIL released, as fast as the library's batched inserts: a list or tuple, "
      "any iterable, a NumPy integer array, or a file of keys (a path, or a file object opened in binary or text "
      "mode) with one key per line (format='nul': NUL-separated), empty lines skipped, as `blume build` reads "
      "them. Returns the number of keys read. A filter without room raises FilterFull.");

  c.def(
      "contains_many",
      [](const py_filter& self, py::handle keys, const std::string& format) {
        std::vector<std::uint8_t> hits;
        std::visit(
            [&](const auto& f) {
              using F = std::decay_t<decltype(f)>;
              if constexpr (!answers_keys<F>) {
                refuse_keys<F>();
              } else {
                auto sink = [&](std::span<const digest> chunk) {
                  std::shared_lock lock(self.mutex);
                  const std::size_t at = hits.size();
                  hits.resize(at + chunk.size());
                  f.contains_many(chunk, hits.data() + at);
                };
                for_each_chunk(f, keys, format, sink);
              }
            },
            self.filter);
        return answers(hits);
      },
      py::arg("keys"), py::arg("format") = "lines",
      "One answer per key, in order, as a NumPy bool array (a list without NumPy), looked up in batches with the "
      "GIL released. Takes what add_many takes.");

  c.def(
      "count_contained",
      [](const py_filter& self, py::handle keys, const std::string& format) {
        std::uint64_t hits = 0;
        std::visit(
            [&](const auto& f) {
              using F = std::decay_t<decltype(f)>;
              if constexpr (!answers_keys<F>) {
                refuse_keys<F>();
              } else {
                auto sink = [&](std::span<const digest> chunk) {
                  std::shared_lock lock(self.mutex);
                  hits += f.count_contained(chunk);
                };
                for_each_chunk(f, keys, format, sink);
              }
            },
            self.filter);
        return hits;
      },
      py::arg("keys"), py::arg("format") = "lines",
      "How many of the keys the filter answers True for, without building the array of answers.");
}

}  // namespace blume::python
