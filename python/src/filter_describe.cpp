// SPDX-License-Identifier: Apache-2.0
// What a filter is: info() (the fields of `blume info --json`, as a dict), len(), repr(), and the few
// properties a program reads often.
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings.hpp"
#include "blume/kinds.hpp"
#include "filter_report.hpp"
#include "number_text.hpp"

namespace blume::python {

namespace {

/// The header saving the filter would write: what `blume info` reads from a file.
file_header header_now(const py_filter& self) {
  return read_filter(self, [&](const auto& f) {
    std::vector<std::span<const std::byte>> segments;
    return detail::header_of(f, segments, self.design);
  });
}

}  // namespace

void bind_describe(py::class_<py_filter>& c) {
  c.def(
      "info",
      [](const py_filter& self) {
        const file_header h = header_now(self);
        std::string json;
        {
          std::shared_lock lock(self.mutex, std::defer_lock);
          lock_releasing_gil(lock);
          json = surface::report_json(surface::describe_filter(self.filter, h));
        }
        return py::module_::import("json").attr("loads")(json);
      },
      "What the filter is, as a dict with the keys of `blume info --json` (kind, planned_capacity, target_FPR, "
      "bits, hashes, inserted, estimated_count, fill_ratio, predicted_FPR_now, size, …).");
  c.def(
      "__len__", [](const py_filter& self) { return read_filter(self, [](const auto& f) { return f.inserted(); }); },
      "The number of keys added (each add counts, as RedisBloom's BF.CARD does); estimate() counts distinct keys "
      "from the fill.");
  c.def(
      "bit_count",
      [](const py_filter& self) {
        return read_filter(self, [](const auto& f) -> std::uint64_t {
          using F = std::decay_t<decltype(f)>;
          if constexpr (bit_array_filter<F>) {
            return f.set_bits();
          } else {
            refuse<F>("count its set bits (only bit-array kinds)");
          }
        });
      },
      "The number of bits set (non-zero counters for the counting kinds): what a fingerprint's density is read "
      "from.");
  c.def(
      "estimate",
      [](const py_filter& self) {
        return read_filter(self, [](const auto& f) -> double {
          using F = std::decay_t<decltype(f)>;
          if constexpr (can_estimate<F>) {
            return f.estimated_count();
          } else {
            refuse<F>("estimate its count");
          }
        });
      },
      "The number of distinct keys it holds, estimated from its fill (n* = -(m/k) ln(1 - X/m) for the Bloom "
      "kinds) or counted exactly where the kind can.");
  c.def_property_readonly(
      "kind", [](const py_filter& self) { return std::string(kind_name(kind_of(self.filter))); },
      "The kind's name, as blume.kinds() lists it.");
  c.def_property_readonly(
      "capacity",
      [](const py_filter& self) -> py::object {
        return self.design.recorded() ? py::object(py::int_(self.design.items)) : py::object(py::none());
      },
      "The capacity it was planned for (None when its file does not record one).");
  c.def_property_readonly(
      "fpr",
      [](const py_filter& self) -> py::object {
        return self.design.recorded() ? py::object(py::float_(self.design.fpr)) : py::object(py::none());
      },
      "The target false-positive rate it was planned for (None when its file does not record one).");
  c.def_property_readonly(
      "predicted_fpr",
      [](const py_filter& self) {
        return read_filter(self, [](const auto& f) -> double {
          if constexpr (requires { f.predicted_fpr(); }) {
            return f.predicted_fpr();
          } else {
            refuse_keys<std::decay_t<decltype(f)>>();
          }
        });
      },
      "The false-positive rate its model predicts for what it holds now.");
  c.def_property_readonly(
      "size_in_bytes",
      [](const py_filter& self) {
        return read_filter(self, [](const auto& f) { return static_cast<std::uint64_t>(f.size_in_bytes()); });
      },
      "Its memory, in bytes.");
  c.def_property_readonly(
      "forgets",
      [](const py_filter& self) {
        return std::visit([](const auto& f) { return forgets_v<std::decay_t<decltype(f)>>; }, self.filter);
      },
      "True for kinds that forget by design (stable, aging): False from them means 'not seen recently', not "
      "'never added'.");
  c.def("__repr__", [](const py::object& obj) {
    const auto& self = obj.cast<const py_filter&>();
    const auto cls = obj.get_type().attr("__name__").cast<std::string>();
    const std::uint64_t bytes =
        read_filter(self, [](const auto& f) { return static_cast<std::uint64_t>(f.size_in_bytes()); });
    std::string out = "<blume." + cls + " kind='" + std::string(kind_name(kind_of(self.filter))) + "'";
    if (self.design.recorded())
      out += " capacity=" + std::to_string(self.design.items) +
             " fpr=" + py::repr(py::float_(self.design.fpr)).cast<std::string>();
    return out + " size=" + text::human_bytes(static_cast<double>(bytes)) + ">";
  });
}

}  // namespace blume::python
