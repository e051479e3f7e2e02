// SPDX-License-Identifier: Apache-2.0
// One key at a time: add, in, discard/remove, count, find. Each call hashes the key once with the filter's
// own hasher and asks the kind's digest call; a kind without the call raises UnsupportedOperation.
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>

#include "bindings.hpp"
#include "blume/kinds.hpp"

namespace blume::python {

namespace {

template <class F>
[[noreturn]] void full(const F& f) {
  std::string why;
  if constexpr (requires { f.growth_refusal(); }) why = f.growth_refusal();
  throw filter_full("the " + std::string(F::name) + " filter is full: no room for the key (build a larger one)" +
                    (why.empty() ? "" : ": " + why));
}

/// Inserts one digest; true when the filter changed (the key was new to it), None where the kind does not
/// say. A kind that may be full raises FilterFull instead of dropping the key.
template <class F>
py::object insert_one(F& f, const digest& d) {
  if constexpr (requires { f.try_insert(d) == insert_result::full; }) {
    const insert_result r = f.try_insert(d);
    if (r == insert_result::full) full(f);
    return py::bool_(r == insert_result::added);
  } else if constexpr (may_be_full<F>) {
    if (!f.insert(d)) full(f);  // these kinds' false is "no room"
    return py::bool_(true);
  } else if constexpr (std::is_same_v<decltype(f.insert(d)), bool>) {
    return py::bool_(f.insert(d));
  } else {
    f.insert(d);
    return py::none();
  }
}

template <class F>
std::uint64_t value_argument(const py::object& value) {
  const std::uint64_t v = integer_key(value);
  if (v > F::max_value)
    throw invalid_argument("a " + std::string(F::name) + " filter's values are at most " +
                           std::to_string(F::max_value) + ", got " + std::to_string(v));
  return v;
}

/// The filter behind `self`, an instance of Filter or a subclass (the method descriptor checked the type):
/// pybind11 keeps the C++ object's address in the instance, and each class's object begins with its
/// py_filter (single inheritance), so the address is the py_filter's.
py_filter* filter_of(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  void* value = inst->simple_layout ? inst->simple_value_holder[0] : inst->get_value_and_holder().value_ptr();
  return static_cast<py_filter*>(value);
}

PyObject* contains(PyObject* self, PyObject* key) noexcept {
  try {
    const py_filter* f = filter_of(self);
    if (f == nullptr) {
      PyErr_SetString(PyExc_TypeError, "the filter was never initialised (its __init__ was not called)");
      return nullptr;
    }
    require_keys(*f);
    std::uint64_t scratch = 0;
    const std::string_view bytes = key_bytes(key, scratch);
    return PyBool_FromLong(read_filter(*f, [&](const auto& typed) -> bool {
      if constexpr (answers_keys<std::decay_t<decltype(typed)>>) {
        return typed.contains(typed.hash(bytes));
      } else {
        refuse_keys<std::decay_t<decltype(typed)>>();
      }
    }));
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    raise_as_python(std::current_exception());
  }
  return nullptr;
}

PyMethodDef contains_def = {"contains", contains, METH_O, "The same as `key in filter`."};
PyMethodDef dunder_contains_def = {
    "__contains__", contains, METH_O,
    "False means certainly absent (for kinds that forget, stable and aging: not seen recently); True means present "
    "or a false positive."};

}  // namespace

void bind_keys(py::class_<py_filter>& c) {
  c.def(
      "add",
      [](py_filter& self, py::handle key, py::object value) {
        require_keys(self);
        std::uint64_t scratch = 0;
        const std::string_view bytes = key_bytes(key, scratch);
        return write_filter(self, [&](auto& f) -> py::object {
          using F = std::decay_t<decltype(f)>;
          if constexpr (!answers_keys<F>) {
            refuse_keys<F>();
          } else if constexpr (takes_valued_inserts<F>) {
            if (value.is_none())
              throw invalid_argument("a " + std::string(F::name) +
                                     " filter stores a value with each key: add(key, value)");
            f.insert(f.hash(bytes), value_argument<F>(value));
            return py::none();
          } else if constexpr (takes_inserts<F>) {
            if (!value.is_none()) refuse<F>("store a value with a key");
            return insert_one(f, f.hash(bytes));
          } else {
            refuse<F>(F::is_static ? "take keys after it is built (it is static: blume.build makes it)"
                                   : "take keys after it is built (blume.build makes it)");
          }
        });
      },
      py::arg("key"), py::arg("value") = py::none(),
      "Adds `key` (str, bytes-like or int). Returns True when the filter changed (the key was new to it), False "
      "when it already answered yes. Kinds that store a value with each key (spatial, compact) take add(key, "
      "value). A filter without room raises FilterFull.");

  // `key in f` is the call a gate makes per request: written against the C API (a METH_O method, ~25 ns of
  // call) rather than through pybind11's dispatcher (~115 ns), which would cost more than the lookup.
  for (PyMethodDef* def : {&contains_def, &dunder_contains_def}) {
    const auto method =
        py::reinterpret_steal<py::object>(PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(c.ptr()), def));
    if (!method) throw py::error_already_set();
    c.attr(def->ml_name) = method;  // setting __contains__ also fills the sq_contains slot, in subclasses too
  }

  const auto erase = [](py_filter& self, py::handle key) {
    std::uint64_t scratch = 0;
    const std::string_view bytes = key_bytes(key, scratch);
    return write_filter(self, [&](auto& f) -> bool {
      using F = std::decay_t<decltype(f)>;
      if constexpr (can_erase<F>) {
        return f.erase(f.hash(bytes));
      } else {
        refuse<F>("remove keys");
      }
    });
  };
  c.def("discard", erase, py::arg("key"),
        "Removes one copy of `key` where the kind can (counting, cuckoo, quotient, vi-counting, iblt, dleft); "
        "returns whether the filter held it.\n\n"
        "Remove only keys you added. A key the filter answers no for returns False and changes nothing. A key "
        "never added that is a false positive cannot be told from an added one: it returns True, and what it "
        "removes belonged to added keys, which then answer no (false negatives). With 100,000 keys at 1%, "
        "discarding 100,000 keys never added made about 4.5% of the added keys answer no in a counting, "
        "vi-counting or iblt filter (about 0.69 x k keys per false positive), and 0.19% in cuckoo, 0.69% in "
        "quotient and 0.58% in dleft (one key per false positive).");
  c.def(
      "remove",
      [erase](py_filter& self, py::handle key) {
        if (!erase(self, key)) throw py::key_error(py::repr(key).cast<std::string>());
      },
      py::arg("key"),
      "Like discard, but raises KeyError when the filter does not hold `key` (and then changes nothing). The "
      "same hazard: a key never added that is a false positive is removed without an error, and added keys "
      "then answer no (see discard for the rates). Remove only keys you added.");

  c.def(
      "count",
      [](const py_filter& self, py::handle key) {
        std::uint64_t scratch = 0;
        const std::string_view bytes = key_bytes(key, scratch);
        return read_filter(self, [&](const auto& f) -> std::uint64_t {
          using F = std::decay_t<decltype(f)>;
          if constexpr (can_count<F>) {
            return static_cast<std::uint64_t>(f.count(f.hash(bytes)));
          } else {
            refuse<F>("count keys");
          }
        });
      },
      py::arg("key"),
      "How many times `key` was added, at most (counting kinds, layered up to its layer count): never fewer "
      "than the true count, more by a false positive.");

  c.def(
      "find",
      [](const py_filter& self, py::handle key) {
        std::uint64_t scratch = 0;
        const std::string_view bytes = key_bytes(key, scratch);
        return read_filter(self, [&](const auto& f) -> py::object {
          using F = std::decay_t<decltype(f)>;
          if constexpr (can_find<F>) {
            const auto found = f.find(f.hash(bytes));
            if (!found.has_value()) return py::none();
            return py::int_(static_cast<std::uint64_t>(*found));
          } else {
            refuse<F>("find values");
          }
        });
      },
      py::arg("key"),
      "The value the filter holds for `key`, or None: a bloomier map's value, a spatial filter's set, a compact "
      "approximator's bound, an attenuated filter's nearest level.");
}

}  // namespace blume::python
