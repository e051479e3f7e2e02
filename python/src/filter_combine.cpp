// SPDX-License-Identifier: Apache-2.0
// Two filters together: union (merge, |, |=), intersection (intersect, &, &=), the estimates of the union's
// and intersection's sizes and of the Jaccard index that bit-array kinds read off their fill, and the set
// relations of fingerprints (is_subset_of, tanimoto).
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <variant>

#include "bindings.hpp"
#include "blume/kinds.hpp"

namespace blume::python {

namespace {

/// The other filter as this one's type (its kind and hash), or IncompatibleFilters.
template <class F>
const F& same_kind(const py_filter& self, const F&, const py_filter& other, std::string_view what) {
  const F* typed = std::get_if<F>(&other.filter);
  if (typed == nullptr)
    throw incompatible_filters("cannot " + std::string(what) + " a " + std::string(F::name) + " filter with a " +
                               std::string(kind_name(kind_of(other.filter))) +
                               " filter: " + type_mismatch(self.filter, other.filter));
  return *typed;
}

/// fn(this filter, the other) with this one locked for writing and the other for reading, both waited for
/// without the GIL (std::lock takes them in an order that cannot deadlock). A filter combined with itself is
/// combined with a copy of itself.
template <class Fn>
void combine(py_filter& self, const py_filter& other, Fn&& fn) {
  if (&self == &other) {
    const py_filter snapshot(read_filter(other, [](const auto& f) { return any_filter(f); }), other.design);
    combine(self, snapshot, std::forward<Fn>(fn));
    return;
  }
  std::unique_lock mine(self.mutex, std::defer_lock);
  std::shared_lock theirs(other.mutex, std::defer_lock);
  py::gil_scoped_release release;
  std::lock(mine, theirs);
  std::visit(fn, self.filter);
}

void merge_into(py_filter& self, const py_filter& other) {
  combine(self, other, [&](auto& f) {
    using F = std::decay_t<decltype(f)>;
    if constexpr (can_merge<F>) {
      f.merge(same_kind(self, f, other, "merge"));
    } else {
      refuse<F>("merge (its union is not sound)");
    }
  });
}

void intersect_into(py_filter& self, const py_filter& other) {
  combine(self, other, [&](auto& f) {
    using F = std::decay_t<decltype(f)>;
    if constexpr (can_intersect<F>) {
      f.intersect(same_kind(self, f, other, "intersect"));
    } else {
      refuse<F>("intersect");
    }
  });
}

py::object copy_of(const py_filter& self) {
  return wrap(read_filter(self, [](const auto& f) { return any_filter(f); }), self.design);
}

using combination = void (*)(py_filter&, const py_filter&);

/// self op= other, returning self (the same Python object).
template <combination Combine>
py_filter& in_place(py_filter& self, const py_filter& other) {
  Combine(self, other);
  return self;
}

/// self op other, a new filter.
template <combination Combine>
py::object combined(const py_filter& self, const py_filter& other) {
  py::object out = copy_of(self);
  Combine(out.cast<py_filter&>(), other);
  return out;
}

/// fn(a, b) for two filters of one kind for which fn is defined (`refusal` names what the others cannot
/// do), both locked for reading and waited for without the GIL.
template <class Result, class Fn>
Result relate_pair(const py_filter& a, const py_filter& b, std::string_view what, std::string_view refusal, Fn fn) {
  std::shared_lock la(a.mutex, std::defer_lock);
  std::shared_lock lb(b.mutex, std::defer_lock);
  py::gil_scoped_release release;
  if (&a == &b) {
    la.lock();
  } else {
    std::lock(la, lb);
  }
  return std::visit(
      [&](const auto& f) -> Result {
        using F = std::decay_t<decltype(f)>;
        if constexpr (requires { fn(f, f); }) {
          return fn(f, same_kind(a, f, b, what));
        } else {
          refuse<F>(std::string(refusal));
        }
      },
      a.filter);
}

/// Bit-array kinds whose words are plain bits: the set relations of fingerprints.
constexpr std::string_view plain_bits_only =
    "compare bit sets (only the kinds of plain bit arrays: bloom, partitioned, blocked, split-block)";

/// estimate(a, b) for bit-array kinds of the same geometry.
template <class Estimate>
double estimate_pair(const py_filter& a, const py_filter& b, std::string_view what, Estimate estimate) {
  std::shared_lock la(a.mutex, std::defer_lock);
  std::shared_lock lb(b.mutex, std::defer_lock);
  py::gil_scoped_release release;
  if (&a == &b) {
    la.lock();
  } else {
    std::lock(la, lb);
  }
  return std::visit(
      [&](const auto& f) -> double {
        using F = std::decay_t<decltype(f)>;
        if constexpr (bit_array_filter<F>) {
          return estimate(f, same_kind(a, f, b, what));
        } else {
          refuse<F>("estimate " + std::string(what) + " sizes (only bit-array kinds read them off their fill)");
        }
      },
      a.filter);
}

}  // namespace

void bind_combine(py::class_<py_filter>& c) {
  c.def("merge", &in_place<merge_into>, py::arg("other"), py::return_value_policy::reference,
        "Adds every key of `other` (same kind, size, hash count and seed) to this filter in place: the union. "
        "Returns this filter.");
  c.def("__ior__", &in_place<merge_into>, py::is_operator(), py::return_value_policy::reference);
  c.def("__or__", &combined<merge_into>, py::is_operator(), "A new filter holding the keys of both.");
  c.def("intersect", &in_place<intersect_into>, py::arg("other"), py::return_value_policy::reference,
        "Keeps only what both filters answer yes for, in place (bit-array kinds and d-left): every key of both is "
        "still found, with a false-positive rate at most this filter's. Returns this filter.");
  c.def("__iand__", &in_place<intersect_into>, py::is_operator(), py::return_value_policy::reference);
  c.def("__and__", &combined<intersect_into>, py::is_operator(), "A new filter answering yes where both do.");
  c.def("copy", &copy_of, "An independent copy (in memory, even for a filter opened from a file).");
  c.def("__copy__", &copy_of);
  c.def(
      "__deepcopy__", [](const py_filter& self, py::handle) { return copy_of(self); }, py::arg("memo"));

  c.def(
      "estimate_union",
      [](const py_filter& a, const py_filter& b) {
        return estimate_pair(a, b, "union", [](const auto& x, const auto& y) { return estimate_union(x, y); });
      },
      py::arg("other"),
      "The number of distinct keys in both filters together, from the fill of their union: "
      "n* = -(m/k) ln(1 - X/m) with X the union's set bits (bit-array kinds of the same geometry).");
  c.def(
      "estimate_intersection",
      [](const py_filter& a, const py_filter& b) {
        return estimate_pair(a, b, "intersection",
                             [](const auto& x, const auto& y) { return estimate_intersection(x, y); });
      },
      py::arg("other"), "The number of keys the two filters share: n*(A) + n*(B) - n*(A ∪ B).");
  c.def(
      "estimate_jaccard",
      [](const py_filter& a, const py_filter& b) {
        return estimate_pair(a, b, "Jaccard", [](const auto& x, const auto& y) { return estimate_jaccard(x, y); });
      },
      py::arg("other"),
      "The Jaccard index of the two key sets, |A ∩ B| / |A ∪ B|, from the same estimates. On fingerprints this is "
      "the Tanimoto coefficient corrected for bits shared by collision (Swamidass & Baldi 2007).");
  // The fingerprint relations: fn is a generic lambda whose return type names the library call, so that
  // relate_pair sees which kinds it exists for.
  c.def(
      "is_subset_of",
      [](const py_filter& a, const py_filter& b) {
        return relate_pair<bool>(a, b, "compare", plain_bits_only,
                                 [](const auto& x, const auto& y) -> decltype(is_subset_of(x, y)) {
                                   return is_subset_of(x, y);
                                 });
      },
      py::arg("other"),
      "Whether every bit set here is set in `other` (same kind, size, hash count and seed): the substructure "
      "screen. False is certain: these keys are not all in `other`; True may be a false positive.");
  c.def(
      "tanimoto",
      [](const py_filter& a, const py_filter& b) {
        return relate_pair<double>(a, b, "compare", plain_bits_only,
                                   [](const auto& x, const auto& y) -> decltype(tanimoto(x, y)) {
                                     return tanimoto(x, y);
                                   });
      },
      py::arg("other"),
      "The Tanimoto coefficient of the two bit sets, |A ∧ B| / |A ∨ B| (1.0 for two empty filters, as RDKit "
      "answers). estimate_jaccard() corrects it for bits shared by collision.");
}

}  // namespace blume::python
