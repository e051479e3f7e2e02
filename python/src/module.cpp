// SPDX-License-Identifier: Apache-2.0
// The module blume._blume: errors, keys, the Filter class and one class per kind, and planning. The
// package blume (python/blume/__init__.py) re-exports it.
#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "bindings.hpp"
#include "blume/kinds.hpp"
#include "blume/plan.hpp"
#include "blume/version.hpp"
#include "vectors.hpp"

namespace blume::python {

// ---- errors ---------------------------------------------------------------------------------------------

namespace {

PyObject* new_error(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string full = "blume." + std::string(name);
  PyObject* type = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}

PyObject* tuple_of(PyObject* a, PyObject* b) { return py::make_tuple(py::handle(a), py::handle(b)).release().ptr(); }

}  // namespace

namespace {

/// The Python types of our errors, made once by register_errors.
struct {
  PyObject *base, *invalid, *incompatible, *format, *io, *locked, *key_type, *unsupported_op, *full;
} errors;

/// Sets the Python error for one of blume's exceptions; false for any other.
bool set_blume_error(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const file_locked& e) {
    PyErr_SetString(errors.locked, e.what());
  } catch (const io_error& e) {
    PyErr_SetString(errors.io, e.what());
  } catch (const invalid_argument& e) {
    PyErr_SetString(errors.invalid, e.what());
  } catch (const incompatible_filters& e) {
    PyErr_SetString(errors.incompatible, e.what());
  } catch (const format_error& e) {
    PyErr_SetString(errors.format, e.what());
  } catch (const key_type_error& e) {
    PyErr_SetString(errors.key_type, e.what());
  } catch (const unsupported& e) {
    PyErr_SetString(errors.unsupported_op, e.what());
  } catch (const filter_full& e) {
    PyErr_SetString(errors.full, e.what());
  } catch (const error& e) {
    PyErr_SetString(errors.base, e.what());
  } catch (...) {
    return false;
  }
  return true;
}

}  // namespace

void raise_as_python(std::exception_ptr p) {
  if (!set_blume_error(p)) py::detail::translate_exception(p);  // pybind11's own: std exceptions, Python's
}

void register_errors(py::module_& m) {
  // Each error is also the built-in exception it is a case of, so `except ValueError` keeps working.
  errors.base = new_error(m, "Error", PyExc_Exception, "Base of every error blume raises.");
  errors.invalid = new_error(m, "InvalidArgument", tuple_of(errors.base, PyExc_ValueError),
                             "A parameter out of range: a capacity of 0, a rate outside (0, 1), a size beyond the "
                             "maximum. Raised before anything is allocated.");
  errors.incompatible = new_error(m, "IncompatibleFilters", tuple_of(errors.base, PyExc_ValueError),
                                  "Merge, intersection or estimate between filters that differ in kind, size, hash "
                                  "count, seed or hash function.");
  errors.format = new_error(m, "FormatError", tuple_of(errors.base, PyExc_ValueError),
                            "Bytes or a file that are not a valid blume filter: damaged, truncated, foreign or of an "
                            "unknown version.");
  errors.io = new_error(m, "IoError", tuple_of(errors.base, PyExc_OSError),
                        "An operating-system call failed (open, write, fsync, rename, mmap).");
  errors.locked = new_error(m, "FileLocked", errors.io, "Another writer holds the file's lock.");
  errors.key_type =
      new_error(m, "KeyTypeError", tuple_of(errors.base, PyExc_TypeError), "A key that is not str, bytes-like or int.");
  errors.unsupported_op = new_error(m, "UnsupportedOperation", tuple_of(errors.base, PyExc_TypeError),
                                    "A call the filter's kind does not have (remove on a Bloom filter, add on a static "
                                    "filter, merge on a cuckoo filter).");
  errors.full = new_error(m, "FilterFull", errors.base,
                          "The filter had no room for a key (cuckoo, quotient, d-left, a scalable filter that cannot "
                          "grow). Keys before it were stored.");
  py::register_exception_translator([](std::exception_ptr p) {
    if (!set_blume_error(p)) std::rethrow_exception(p);
  });
}

// ---- keys -----------------------------------------------------------------------------------------------

std::uint64_t integer_key(py::handle key) {
  const auto index = py::reinterpret_steal<py::object>(PyNumber_Index(key.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred() != nullptr) throw py::error_already_set();
  if (overflow == 0) return static_cast<std::uint64_t>(v);
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
    if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred() != nullptr)) return u;
    PyErr_Clear();
  }
  PyErr_SetString(PyExc_OverflowError, "integer key out of range: keys are 64-bit, from -2**63 to 2**64 - 1");
  throw py::error_already_set();
}

std::string_view key_bytes(py::handle key, std::uint64_t& scratch) {
  PyObject* o = key.ptr();
  if (PyUnicode_Check(o)) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(o, &n);   // cached in the str object: no copy after the first
    if (s == nullptr) throw py::error_already_set();  // a lone surrogate: UnicodeEncodeError
    return {s, static_cast<std::size_t>(n)};
  }
  if (PyBytes_Check(o)) return {PyBytes_AS_STRING(o), static_cast<std::size_t>(PyBytes_GET_SIZE(o))};
  if (PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o))) {
    scratch = integer_key(key);
    return {reinterpret_cast<const char*>(&scratch), sizeof scratch};
  }
  if (PyByteArray_Check(o)) return {PyByteArray_AS_STRING(o), static_cast<std::size_t>(PyByteArray_GET_SIZE(o))};
  if (PyMemoryView_Check(o)) {
    const Py_buffer* b = PyMemoryView_GET_BUFFER(o);
    if (PyBuffer_IsContiguous(b, 'C') == 0) throw key_type_error("a memoryview key must be contiguous");
    return {static_cast<const char*>(b->buf), static_cast<std::size_t>(b->len)};
  }
  throw key_type_error("keys are str, bytes-like or int, not " + std::string(Py_TYPE(o)->tp_name));
}

// ---- kinds and their classes ----------------------------------------------------------------------------

namespace {

/// Each kind's Python class name. A kind missing here fails the build (class_name_of's static_assert), so
/// a new kind gets its class at once.
constexpr std::array<std::pair<std::string_view, std::string_view>, 27> class_names{{
    {"bloom", "BloomFilter"},
    {"partitioned", "PartitionedBloomFilter"},
    {"blocked", "BlockedBloomFilter"},
    {"split-block", "SplitBlockBloomFilter"},
    {"counting", "CountingBloomFilter"},
    {"cuckoo", "CuckooFilter"},
    {"quotient", "QuotientFilter"},
    {"scalable", "ScalableBloomFilter"},
    {"stable", "StableBloomFilter"},
    {"aging", "AgingBloomFilter"},
    {"xor8", "Xor8Filter"},
    {"xor16", "Xor16Filter"},
    {"fuse8", "Fuse8Filter"},
    {"fuse16", "Fuse16Filter"},
    {"gcs", "GolombCodedSet"},
    {"bloomier", "BloomierFilter"},
    {"cascade", "CascadeFilter"},
    {"spatial", "SpatialBloomFilter"},
    {"layered", "LayeredBloomFilter"},
    {"attenuated", "AttenuatedBloomFilter"},
    {"compact", "CompactApproximator"},
    {"vi-counting", "VariableIncrementCountingFilter"},
    {"iblt", "InvertibleBloomFilter"},
    {"dleft", "DLeftCountingFilter"},
    {"egh", "EghFilter"},
    {"compaction", "HashCompactionFilter"},
    {"novelty", "NoveltyFilter"},
}};

constexpr std::string_view class_name(std::string_view kind) {
  for (const auto& [name, cls] : class_names)
    if (name == kind) return cls;
  return {};
}
constexpr bool every_kind_has_a_class() {
  bool all = true;
  for_each_kind([&](auto type) { all = all && !class_name(decltype(type)::type::name).empty(); });
  return all && class_names.size() == kind_count;
}
static_assert(every_kind_has_a_class(), "give the new kind its Python class name in class_names");

filter_kind kind_argument(const std::string& name) {
  if (const auto k = parse_kind(name)) return *k;
  std::string known;
  for_each_kind([&](auto type) { known += (known.empty() ? "" : ", ") + std::string(decltype(type)::type::name); });
  throw invalid_argument("unknown filter kind '" + name + "' (known: " + known + ")");
}

/// A universe's size from Python: an int from 2 to 2**64.
integer_universe universe_argument(const py::int_& size) {
  const py::int_ two_to_64 = py::int_(1).attr("__lshift__")(64);
  if (size.equal(two_to_64)) return integer_universe::all_64_bit();
  if (size.attr("__lt__")(py::int_(2)).cast<bool>() || size.attr("__gt__")(two_to_64).cast<bool>())
    throw invalid_argument("universe must be an int from 2 to 2**64, got " +
                           py::str(py::handle(size)).cast<std::string>());
  return integer_universe::of_size(size.cast<std::uint64_t>());
}

/// A kind of integer keys for `universe`, sized by a zone or by a memory budget in bytes (as `blume build
/// --universe U --zone D` or `--memory M`).
template <class F>
any_filter integer_filter(const py::int_& universe, std::optional<std::uint64_t> zone,
                          std::optional<std::uint64_t> memory) {
  const integer_universe u = universe_argument(universe);
  if (zone.has_value() == memory.has_value())
    throw invalid_argument("a " + std::string(F::name) + " filter is sized by zone= or by memory= (bytes): give one");
  py::gil_scoped_release release;
  return F::for_zone(u, zone ? *zone : F::plan_for_budget(u, *memory * 8).zone);
}

template <class F>
constexpr bool sized_by_capacity() {
  return !F::is_static && F::input == kind_input::keys;
}

py::dict plan_dict(const filter_plan& p) {
  py::dict d;
  d["kind"] = std::string(kind_name(p.kind));
  d["capacity"] = p.items;
  // As `blume plan --json`: bits are bits; a kind sized in wider units also gives their count and width.
  const size_unit unit = size_unit_of(p.kind);
  d["bits"] = p.bits * unit.bits;
  if (unit.bits != 1) {
    d[py::str(std::string(unit.name))] = p.bits;
    d[py::str(std::string(unit.one) + "_bits")] = unit.bits;
  }
  d["hashes"] = p.hashes;
  d["bytes"] = p.bytes;
  d["bits_per_key"] = p.bits_per_key();
  d["predicted_fpr"] = p.predicted_fpr;
  return d;
}

}  // namespace

filter_design design_for(filter_kind kind, std::uint64_t capacity, double fpr) {
  return input_of(kind) == kind_input::keys ? filter_design{capacity, fpr} : filter_design{};
}

py::object wrap(any_filter f, filter_design design) {
  return std::visit(
      [&](auto& typed) -> py::object {
        using F = std::decay_t<decltype(typed)>;
        return py::cast(std::make_unique<typed_filter<F::kind>>(std::move(f), design));
      },
      f);
}

void bind_kinds(py::module_& m, py::class_<py_filter>& c) {
  c.def(py::init([](const std::string& kind, std::uint64_t capacity, double fpr) {
          const filter_kind k = kind_argument(kind);
          if (input_of(k) == kind_input::vectors)
            throw unsupported("a " + kind + " filter observes vectors: blume." + std::string(class_name(kind)) +
                              "(dim=D)");
          if (is_static(k) || input_of(k) != kind_input::keys)
            throw unsupported("a " + kind + " filter is built from all its inputs at once: use blume.build('" + kind +
                              "', ...)");
          py::gil_scoped_release release;  // a large filter's allocation
          return std::make_unique<py_filter>(make_filter(k, capacity, fpr), design_for(k, capacity, fpr));
        }),
        py::arg("kind"), py::arg("capacity"), py::arg("fpr") = 0.01,
        "A filter of `kind` (a name from blume.kinds()) for `capacity` keys at false-positive rate `fpr`, as "
        "`blume build --kind KIND --items CAPACITY --fpr FPR` makes it. Static kinds (xor8, xor16, fuse8, fuse16, "
        "gcs) and kinds built from their own inputs (bloomier, cascade, spatial, compact) come from blume.build().");
  c.def(py::init([](const std::string& kind, const py::int_& universe, std::optional<std::uint64_t> zone,
                    std::optional<std::uint64_t> memory) {
          const filter_kind k = kind_argument(kind);
          std::optional<any_filter> made;
          visit_kind(k, [&](auto type) {
            using F = typename decltype(type)::type;
            if constexpr (F::input == kind_input::integers) {
              made.emplace(integer_filter<F>(universe, zone, memory));
            } else {
              throw invalid_argument("universe= and zone= are for the kinds of integer keys (egh), not " + kind);
            }
          });
          return std::make_unique<py_filter>(std::move(*made), filter_design{});
        }),
        py::arg("kind"), py::kw_only(), py::arg("universe"), py::arg("zone") = py::none(),
        py::arg("memory") = py::none(),
        "A filter of a kind of integer keys (egh) for the integers [0, universe), with no false positive while it "
        "holds at most `zone` keys (or the largest zone `memory` bytes buy), as `blume build --kind egh --universe U "
        "--zone D` makes it.");

  for_each_kind([&](auto type) {
    using F = typename decltype(type)::type;
    using T = typed_filter<F::kind>;
    const std::string name(class_name(F::name));
    py::class_<T, py_filter> cls(m, name.c_str());
    cls.attr("kind_name") = std::string(F::name);
    if constexpr (F::input == kind_input::vectors) {
      bind_vectors<F>(cls);
    } else if constexpr (F::input == kind_input::integers) {
      cls.def(py::init([](const py::int_& universe, std::optional<std::uint64_t> zone,
                          std::optional<std::uint64_t> memory) {
                return std::make_unique<T>(integer_filter<F>(universe, zone, memory), filter_design{});
              }),
              py::arg("universe"), py::arg("zone") = py::none(), py::kw_only(), py::arg("memory") = py::none(),
              ("A " + std::string(F::name) +
               " filter of the integers [0, universe): no false positive while it "
               "holds at most `zone` keys (or the largest zone `memory` bytes buy).")
                  .c_str());
    } else if constexpr (sized_by_capacity<F>()) {
      cls.def(py::init([](std::uint64_t capacity, double fpr) {
                py::gil_scoped_release release;
                return std::make_unique<T>(make_filter(F::kind, capacity, fpr), filter_design{capacity, fpr});
              }),
              py::arg("capacity"), py::arg("fpr") = 0.01,
              ("A " + std::string(F::name) + " filter for `capacity` keys at false-positive rate `fpr`.").c_str());
      if constexpr (bit_array_filter<F>) {
        cls.def(py::init([](std::uint64_t bits, std::uint32_t hashes, std::optional<std::uint64_t> seed) {
                  py::gil_scoped_release release;
                  return std::make_unique<T>(
                      F::with_geometry(bits, hashes, seed.value_or(F::hasher_type::default_seed)), filter_design{});
                }),
                py::kw_only(), py::arg("bits"), py::arg("hashes"), py::arg("seed") = py::none(),
                ("A " + std::string(F::name) +
                 " filter of exactly `bits` bits and `hashes` probes per key (and a hash seed): filters "
                 "compared bit by bit, as fingerprints are, need one geometry.")
                    .c_str());
      }
    } else {
      cls.def(py::init([](py::args, py::kwargs) -> std::unique_ptr<T> {
                throw unsupported(std::string("a ") + std::string(F::name) +
                                  " filter is built from all its inputs at once: use blume.build('" +
                                  std::string(F::name) + "', ...)");
              }),
              "Built from all its inputs at once: see blume.build().");
    }
  });

  m.def(
      "kinds",
      [] {
        py::list names;
        for_each_kind([&](auto type) { names.append(std::string(decltype(type)::type::name)); });
        return names;
      },
      "The names of every kind, in file-id order.");
  m.def(
      "class_of",
      [](const std::string& kind) {
        const py::str name(std::string(class_name(kind_name(kind_argument(kind)))));
        return py::object(py::module_::import("blume._blume").attr(name));
      },
      py::arg("kind"), "The class of a kind, by name: class_of('split-block') is SplitBlockBloomFilter.");
  m.def(
      "plan",
      [](std::uint64_t capacity, std::optional<double> fpr, std::optional<std::string> kind,
         std::optional<std::uint64_t> memory) -> py::object {
        if (fpr.has_value() == memory.has_value())
          throw invalid_argument("plan: give a rate (fpr) or a memory budget in bytes (memory), not both");
        const auto plan_one = [&](filter_kind k) {
          if (fpr) return plan_for(capacity, *fpr, k);
          return plan_for_bits(capacity, plan_units_in(*memory, k), k);
        };
        if (kind) return plan_dict(plan_one(kind_argument(*kind)));
        py::list plans;
        for (const filter_kind k : all_kinds) {
          try {
            plans.append(plan_dict(plan_one(k)));
          } catch (const invalid_argument&) {
            // A kind that cannot meet this target (or has no memory planner) is left out, as `blume plan` does.
          }
        }
        return plans;
      },
      py::arg("capacity"), py::arg("fpr") = py::none(), py::kw_only(), py::arg("kind") = py::none(),
      py::arg("memory") = py::none(),
      "The geometry for `capacity` keys at rate `fpr` (or the best rate in `memory` bytes): a dict with kind, "
      "capacity, bits, hashes, bytes, bits_per_key and predicted_fpr; for every kind that can meet it (a list) "
      "when no kind is given. Nothing is allocated.");
}

}  // namespace blume::python

PYBIND11_MODULE(_blume, m) {
  namespace bp = blume::python;
  namespace py = pybind11;
  m.doc() = "blume: Bloom filters and their family, from the blume C++ library.";
  m.attr("__version__") = blume::version;
  bp::register_errors(m);
  py::class_<bp::py_filter> filter(m, "Filter",
                                   "A probabilistic membership filter of any kind: 'no' is certain, 'maybe' is "
                                   "wrong at the kind's false-positive rate. Each kind also has its own class.");
  bp::bind_kinds(m, filter);
  bp::bind_keys(filter);
  bp::bind_bulk(filter);
  bp::bind_combine(filter);
  bp::bind_describe(filter);
  bp::bind_files(m, filter);
}
