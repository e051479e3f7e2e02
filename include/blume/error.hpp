// SPDX-License-Identifier: Apache-2.0
// Error types thrown by blume. Everything derives from blume::error, so a surface (CLI, Redis module)
// can catch one type and turn it into an exit status or an error reply.
#pragma once

#include <stdexcept>
#include <string>

namespace blume {

/// Base of every exception blume throws on purpose (std::bad_alloc may still escape from allocation).
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A parameter is out of range (capacity 0, fpr outside (0,1), k = 0, a size beyond the documented maximum).
/// Thrown before anything is allocated; the message names the bad value.
class invalid_argument : public error {
 public:
  using error::error;
};

/// merge/intersect/estimate between filters that differ in kind, bit count, k, seed or hash function.
class incompatible_filters : public error {
 public:
  using error::error;
};

/// A serialized filter is damaged, truncated, foreign or of an unknown version.
class format_error : public error {
 public:
  using error::error;
};

/// An operating-system call failed (open, write, fsync, rename, mmap); the message carries errno's text.
class io_error : public error {
 public:
  using error::error;
};

/// A file_lock asked not to wait found the file locked by another writer.
class file_locked : public io_error {
 public:
  using io_error::io_error;
};

}  // namespace blume
