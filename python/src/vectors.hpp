// SPDX-License-Identifier: Apache-2.0
// The class of a kind of vectors (blume.NoveltyFilter): its constructor and the calls that take NumPy arrays,
// one input (1-D) or many (2-D, one per row), scored with the GIL released.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings.hpp"

namespace blume::python {

/// x as contiguous doubles: one input (1-D, `dim` values) or rows of inputs (2-D, `dim` columns).
inline py::array_t<double, py::array::c_style | py::array::forcecast> vector_rows(py::handle x, std::uint32_t dim,
                                                                                  bool& batched) {
  auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(x);
  if (!a) throw invalid_argument("inputs are arrays of numbers (a NumPy array, or a list NumPy can convert)");
  if (a.ndim() != 1 && a.ndim() != 2)
    throw invalid_argument("an input is a 1-D array, many inputs a 2-D array (one per row); got " +
                           std::to_string(a.ndim()) + " dimensions");
  batched = a.ndim() == 2;
  const auto width = static_cast<std::uint64_t>(a.shape(a.ndim() - 1));
  if (width != dim)
    throw invalid_argument("inputs of " + std::to_string(width) + " values, the filter takes " + std::to_string(dim));
  return a;
}

template <class F, class T>
void bind_vectors(py::class_<T, py_filter>& cls) {
  const auto typed = [](auto& self) -> auto& { return std::get<F>(self.filter); };
  cls.def(
      py::init([](std::uint32_t dim, std::uint32_t units, std::optional<std::uint32_t> samples,
                  std::optional<std::uint32_t> tag, double depression, double recovery,
                  std::optional<std::uint64_t> seed) {
        return std::make_unique<T>(F(novelty_geometry{dim, units, samples.value_or(0), tag.value_or(0)},
                                     novelty_rules{depression, recovery}, seed.value_or(F::hasher_type::default_seed)),
                                   filter_design{});
      }),
      py::arg("dim"), py::kw_only(), py::arg("units") = 2000, py::arg("samples") = py::none(),
      py::arg("tag") = py::none(), py::arg("depression") = 0.4, py::arg("recovery") = 0.01,
      py::arg("seed") = py::none(),
      "A novelty filter for inputs of `dim` numbers: `units` weights, each unit summing `samples` inputs (None: 6, "
      "or dim when smaller), tags of `tag` units (None: 5% of the units), an observation multiplying its tag's weights by `depression`, every "
      "weight recovering by `recovery` of what it lacks at each step.");
  // One input gives a float, rows give an array, as NumPy's own functions of one value or many. `run(filter,
  // rows, out)` runs with the GIL released under `Lock` (shared for reads, unique for observations).
  const auto per_row = [typed]<class Lock>(std::type_identity<Lock>, auto& self, py::handle x, auto run) {
    bool batched = false;
    const auto a = vector_rows(x, typed(self).dim(), batched);
    const std::span<const double> rows(a.data(), static_cast<std::size_t>(a.size()));
    std::vector<double> out(rows.size() / typed(self).dim());
    {
      py::gil_scoped_release release;
      Lock lock(self.mutex);
      run(typed(self), rows, std::span<double>(out));
    }
    if (!batched) return py::object(py::float_(out[0]));
    py::array_t<double> answers(static_cast<py::ssize_t>(out.size()));
    if (!out.empty()) std::memcpy(answers.mutable_data(), out.data(), out.size() * sizeof(double));
    return py::object(answers);
  };
  cls.def(
      "novelty",
      [per_row](const T& self, py::handle x) {
        return per_row(std::type_identity<std::shared_lock<std::shared_mutex>>{}, self, x,
                       [](const F& f, auto rows, auto out) { f.novelty_many(rows, out); });
      },
      py::arg("x"),
      "How novel x is now, in [0, 1]: the mean weight of its tag. 1 for an input unlike anything observed, near 0 "
      "for one just observed. A 2-D array gives one value per row.");
  cls.def(
      "observe",
      [per_row](T& self, py::handle x) {
        return per_row(std::type_identity<std::unique_lock<std::shared_mutex>>{}, self, x,
                       [](F& f, auto rows, auto out) { f.observe_many(rows, out); });
      },
      py::arg("x"),
      "Observes x (a 2-D array: each row, in order) and returns its novelty just before: the tag's weights are "
      "multiplied by the depression and the clock advances one step per input.");
  cls.def(
      "elapse",
      [typed](T& self, std::uint64_t steps) {
        std::unique_lock lock(self.mutex, std::defer_lock);
        lock_releasing_gil(lock);
        typed(self).elapse(steps);
      },
      py::arg("steps"), "Lets `steps` steps pass without an observation: every weight recovers.");
  cls.def(
      "tag",
      [typed](const T& self, py::handle x) {
        bool batched = false;
        const auto a = vector_rows(x, typed(self).dim(), batched);
        if (batched) throw invalid_argument("tag takes one input (a 1-D array)");
        return typed(self).tag(std::span<const double>(a.data(), typed(self).dim()));
      },
      py::arg("x"), "The units x reads (and an observation of it depresses), increasing.");
  cls.def(
      "weights",
      [typed](const T& self) {
        std::shared_lock lock(self.mutex, std::defer_lock);
        lock_releasing_gil(lock);
        const F& f = typed(self);
        py::array_t<double> a(static_cast<py::ssize_t>(f.units()));
        for (std::uint32_t u = 0; u < f.units(); ++u) a.mutable_at(u) = f.weight(u);
        return a;
      },
      "Every unit's weight now, as an array.");
  cls.def_property_readonly("dim", [typed](const T& self) { return typed(self).dim(); });
  cls.def_property_readonly("units", [typed](const T& self) { return typed(self).units(); });
  cls.def_property_readonly("samples", [typed](const T& self) { return typed(self).samples(); });
  cls.def_property_readonly("tag_size", [typed](const T& self) { return typed(self).tag_size(); });
  cls.def_property_readonly("depression", [typed](const T& self) { return typed(self).rules().depression; });
  cls.def_property_readonly("recovery", [typed](const T& self) { return typed(self).rules().recovery; });
  // The clock moves under observe, which runs without the GIL: it is read under the filter's lock.
  const auto locked = [typed](const T& self, auto read) {
    std::shared_lock lock(self.mutex, std::defer_lock);
    lock_releasing_gil(lock);
    return read(typed(self));
  };
  cls.def_property_readonly(
      "clock", [locked](const T& self) { return locked(self, [](const F& f) { return f.clock(); }); },
      "Steps so far: one per observation, plus those elapsed.");
  cls.def_property_readonly(
      "observed", [locked](const T& self) { return locked(self, [](const F& f) { return f.observed(); }); },
      "Observations so far.");
}

}  // namespace blume::python
