// SPDX-License-Identifier: Apache-2.0
// Writing filter files safely: the atomic save every surface uses, the writer lock, and the rules for what
// a save may replace. A save changes the file a path names, never the path: through symbolic links it
// writes the final target, it keeps the target's mode and owner, and it refuses what it cannot replace
// without losing something (a device or FIFO, a read-only file, a file other hard links share), because
// a save that silently replaced the wrong thing would leave a filter answering "no" for keys it was given.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "blume/error.hpp"

namespace blume {

/// A save refused to replace what its path names (not a regular file, read-only, shared by hard links).
/// The message says what would have been lost; a surface adds how to override it when write_options::force
/// would (forcible()).
class write_refused : public io_error {
 public:
  write_refused(const std::string& what, bool forcible) : io_error(what), forcible_(forcible) {}
  bool forcible() const noexcept { return forcible_; }

 private:
  bool forcible_;
};

/// How a save treats an existing target it would otherwise refuse.
struct write_options {
  /// Replace a file whose mode forbids writing (as `cp -f` does), and rewrite a file with several hard
  /// links in place, so that every name sees the new filter (after a complete copy beside it is durable;
  /// a reader that opens the file during the rewrite may find it damaged, and says so by its checksum).
  /// Never replaces something that is not a regular file.
  bool force = false;
};

namespace detail {

inline std::string errno_text(const std::string& what, const std::filesystem::path& path) {
  return what + " '" + path.string() + "': " + std::generic_category().message(errno);
}

/// Closes a file descriptor on scope exit.
struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

inline void write_all(int fd, const void* data, std::size_t len, const std::filesystem::path& path) {
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    const ssize_t n = ::write(fd, p, std::min<std::size_t>(len, std::size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error(errno_text("cannot write", path));
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
}

inline std::string file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

inline std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

/// The temporary files being written right now, for remove_pending_temp_files: a fixed table a signal
/// handler can read without locks or allocation. A slot's path is written before it is marked in use.
struct pending_temp {
  std::atomic<bool> used{false};
  char path[4096] = {};
};
inline constexpr std::size_t pending_temp_slots = 8;
inline pending_temp pending_temps[pending_temp_slots];

/// Claims a slot holding `name`, or null when all are taken (the write still works; only an interruption
/// could then leave the temporary behind).
inline pending_temp* claim_pending_temp(const std::string& name) noexcept {
  if (name.size() >= sizeof(pending_temp::path)) return nullptr;
  static std::atomic<bool> claiming{false};
  while (claiming.exchange(true, std::memory_order_acquire)) {
  }
  pending_temp* slot = nullptr;
  for (pending_temp& t : pending_temps) {
    if (!t.used.load(std::memory_order_relaxed)) {
      slot = &t;
      std::memcpy(t.path, name.c_str(), name.size() + 1);
      t.used.store(true, std::memory_order_release);
      break;
    }
  }
  claiming.store(false, std::memory_order_release);
  return slot;
}

/// The prefix of every temporary file a save of `target` creates: ".NAME.tmp." (at most 200 bytes of the
/// name, so the whole stays within NAME_MAX). The writer's process id and a random suffix follow.
inline std::string temp_prefix(const std::filesystem::path& target) {
  return "." + target.filename().string().substr(0, 200) + ".tmp.";
}

/// Removes temporary files an earlier save of the same target left behind when it was killed (kill -9
/// runs no handler). One is stale only when its writer is gone: no process holds its flock (every writer
/// holds one on its temporary until the rename), and the process its name records no longer exists, or,
/// for a name without one (older writers), it has not changed for a minute. Best effort: a failure here
/// never fails the save.
inline void remove_stale_temps(const std::filesystem::path& dir, const std::filesystem::path& target) {
  const std::string prefix = temp_prefix(target);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const int dfd = ::dirfd(d);
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    const std::string_view rest = name.substr(prefix.size());
    const std::size_t dot = rest.find('.');
    const int fd = ::openat(dfd, e->d_name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    fd_guard guard{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (dot != std::string_view::npos) {
      long pid = 0;
      for (const char c : rest.substr(0, dot)) {
        if (c < '0' || c > '9' || pid > (1L << 31)) {
          pid = -1;
          break;
        }
        pid = pid * 10 + (c - '0');
      }
      if (pid <= 0) continue;
      if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to tell
    } else {
      const auto age = std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtime);
      if (age < std::chrono::minutes(1)) continue;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) continue;  // a writer still holds it
    ::unlinkat(dfd, e->d_name, 0);
  }
  ::closedir(d);
}

/// Creates the temporary file beside `target`, named temp_prefix + pid + random, and claims a pending_temp
/// slot for it before it exists (so a signal handler finds the name from then on; `slot` is null when all
/// are taken). Mode 0666 before the umask, as any new file, until write_file_atomically gives it the
/// target's.
inline int create_temp(const std::filesystem::path& dir, const std::filesystem::path& target, pending_temp*& slot,
                       std::string& name) {
  static thread_local std::mt19937_64 random{std::random_device{}() ^ static_cast<std::uint64_t>(::getpid()) << 32};
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = (dir / temp_prefix(target)).string() + std::to_string(::getpid()) + ".";
    for (int i = 0; i < 8; ++i) name += alphabet[random() % (sizeof alphabet - 1)];
    slot = claim_pending_temp(name);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::flock(fd, LOCK_EX | LOCK_NB);  // marks it live for remove_stale_temps
      return fd;
    }
    const int saved = errno;
    if (slot != nullptr) slot->used.store(false, std::memory_order_release);  // the name is not ours
    slot = nullptr;
    errno = saved;
    if (errno != EEXIST) break;
  }
  throw io_error(errno_text("cannot create a temporary file in", dir));
}

}  // namespace detail

/// Removes the temporary files of writes in progress. Async-signal-safe: a program's handler for SIGINT,
/// SIGTERM or SIGHUP calls it before exiting so that an interrupted save leaves nothing behind (the target
/// itself is untouched until the final rename). Library code never installs signal handlers itself.
inline void remove_pending_temp_files() noexcept {
  for (detail::pending_temp& t : detail::pending_temps)
    if (t.used.load(std::memory_order_acquire)) ::unlink(t.path);
}

/// The file a save of `path` writes: `path` itself, or, when it is a symbolic link, the file at the end of
/// its chain of links (relative links resolve against their own directory). A dangling link yields the
/// path it names, which the save creates. Throws io_error past 40 links, as the kernel does.
inline std::filesystem::path resolve_write_target(std::filesystem::path path) {
  for (int links = 0;; ++links) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return path;
      throw io_error(detail::errno_text("cannot stat", path));
    }
    if (!S_ISLNK(st.st_mode)) return path;
    if (links == 40) throw io_error("cannot write '" + path.string() + "': too many levels of symbolic links");
    std::string target(static_cast<std::size_t>(std::max<off_t>(st.st_size, 0)) + 256, '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) throw io_error(detail::errno_text("cannot read the link", path));
    target.resize(static_cast<std::size_t>(n));
    const std::filesystem::path next(target);
    path = next.is_absolute() || !path.has_parent_path() ? next : path.parent_path() / next;
  }
}

namespace detail {

/// What a save of `path` would replace, checked as write_file_atomically checks it.
struct write_target {
  std::filesystem::path path;  // through symbolic links, the final one
  bool exists = false;
  struct stat st {};
  bool in_place = false;  // forced onto a file with other hard links
};

inline write_target inspect_write_target(const std::filesystem::path& path, const write_options& options) {
  write_target t;
  t.path = resolve_write_target(path);
  const std::string shown = t.path == path ? "'" + path.string() + "'"
                                           : "'" + path.string() + "' (a link to '" + t.path.string() + "')";
  t.exists = ::stat(t.path.c_str(), &t.st) == 0;
  if (!t.exists && errno != ENOENT) throw io_error(errno_text("cannot stat", t.path));
  if (!t.exists) return t;
  if (!S_ISREG(t.st.st_mode))
    throw write_refused("cannot write " + shown + ": it is " + file_type_name(t.st.st_mode) +
                            "; a filter is written to a regular file or a new path",
                        false);
  if (!options.force) {
    if ((t.st.st_mode & 0222) == 0 || ::faccessat(AT_FDCWD, t.path.c_str(), W_OK, AT_EACCESS) != 0)
      throw write_refused("cannot write " + shown + ": it is read-only to this user (mode " + octal_mode(t.st.st_mode) +
                              "); it was left as it was",
                          true);
    if (t.st.st_nlink > 1)
      throw write_refused("cannot write " + shown + ": it has " + std::to_string(t.st.st_nlink) +
                              " hard links, and replacing it would leave the other names with the old filter; "
                              "copy it to give this name its own file (cp F F.new && mv F.new F)",
                          true);
  }
  t.in_place = t.st.st_nlink > 1;
  return t;
}

}  // namespace detail

/// Throws what write_file_atomically(path, ..., options) would refuse with, before a long computation
/// whose result would then be refused. The save checks again.
inline void check_write_target(const std::filesystem::path& path, const write_options& options = {}) {
  (void)detail::inspect_write_target(path, options);
}

/// Writes `parts` to the file `path` names, atomically: a temporary file beside the target (through
/// symbolic links, the final one), fsync, rename over the target, fsync of the directory. Readers see the
/// old file or the new one, never a mix; on failure the old file is untouched and the temporary removed
/// (on a signal, see remove_pending_temp_files; after kill -9, the next save of the same target removes
/// it). The new file keeps the target's mode, and its owner and group where the writer may set them; a
/// new file gets 0666 less the umask.
///
/// Refused with write_refused, leaving everything as it was: a target that is not a regular file (a
/// directory, device, FIFO or socket); unless options.force, one whose mode forbids the writer to write
/// it, or that has other hard links (replacing it would leave them with the old filter; with force it is
/// rewritten in place).
///
/// Concurrent writers: each write is atomic, but two read-modify-write cycles on one file race and the
/// last rename wins. Hold a file_lock on the target across the cycle to serialise them.
inline void write_file_atomically(const std::filesystem::path& path, std::span<const std::span<const std::byte>> parts,
                                  const write_options& options = {}) {
  const detail::write_target checked = detail::inspect_write_target(path, options);
  const std::filesystem::path& target = checked.path;
  const struct stat& st = checked.st;
  const bool exists = checked.exists, in_place = checked.in_place;
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  detail::remove_stale_temps(dir, target);

  std::string tmp;
  struct release_slot {
    detail::pending_temp* slot = nullptr;
    void release() noexcept {
      if (slot != nullptr) slot->used.store(false, std::memory_order_release);
      slot = nullptr;
    }
    ~release_slot() { release(); }
  } release;
  detail::fd_guard fd;
  fd.fd = detail::create_temp(dir, target, release.slot, tmp);
  std::uint64_t total = 0;
  try {
    for (auto part : parts) {
      detail::write_all(fd.fd, part.data(), part.size(), tmp);
      total += part.size();
    }
    if (exists) {
      // The owner first: changing it clears set-user-ID bits, which the mode then restores. A writer that
      // may not give the file away keeps the group where it can, and otherwise owns the new file.
      if (::fchown(fd.fd, st.st_uid, st.st_gid) != 0) (void)::fchown(fd.fd, static_cast<uid_t>(-1), st.st_gid);
      ::fchmod(fd.fd, st.st_mode & 07777);
    }
    if (::fsync(fd.fd) != 0) throw io_error(detail::errno_text("cannot fsync", tmp));
    if (!in_place) {
      if (::close(fd.fd) != 0) {
        fd.fd = -1;
        throw io_error(detail::errno_text("cannot close", tmp));
      }
      fd.fd = -1;
      if (::rename(tmp.c_str(), target.c_str()) != 0) throw io_error(detail::errno_text("cannot rename onto", target));
      release.release();  // the name is no longer ours: a signal from here on must not unlink it
    }
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (in_place) {
    // The complete copy is durable; from here an interruption leaves it (not removed by a signal) beside a
    // target whose checksum then fails, so nothing is lost.
    release.release();
    detail::fd_guard out;
    out.fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (out.fd < 0) throw io_error(detail::errno_text("cannot open for rewriting", target));
    for (auto part : parts) detail::write_all(out.fd, part.data(), part.size(), target);
    if (::ftruncate(out.fd, static_cast<off_t>(total)) != 0 || ::fsync(out.fd) != 0)
      throw io_error(detail::errno_text("cannot finish rewriting", target));
    ::unlink(tmp.c_str());
  }
  detail::fd_guard dfd;
  dfd.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd.fd >= 0) ::fsync(dfd.fd);  // best effort: the rename is already visible
}

/// An exclusive advisory lock (flock) on a filter file, held for a read-modify-write cycle: writers that
/// all take it serialise, so no update is lost. Readers take nothing and never block: saves replace the
/// file by rename, so a reader sees a whole old or whole new file.
///
/// The lock is on the file's inode (through symbolic links, the final target's, which is what a save
/// replaces); after waiting, the lock checks that the path still names the inode it locked and otherwise
/// locks the new one. A path that does not exist yet is not locked (there is nothing to lose: the first
/// complete write wins).
class file_lock {
 public:
  enum class mode { wait, no_wait };

  /// Locks `path`; with mode::no_wait throws file_locked at once if another writer holds it.
  explicit file_lock(const std::filesystem::path& path, mode m = mode::wait) {
    for (;;) {
      // Writable where it can be: on NFS, flock is emulated with fcntl locks, and an exclusive one needs
      // a descriptor open for writing. Read-only otherwise (the lock works the same on local files).
      // Non-blocking, so that a FIFO given as the path cannot hang here before the save refuses it.
      int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EISDIR || errno == ETXTBSY))
        fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT) return;
        throw io_error(detail::errno_text("cannot open for locking", path));
      }
      detail::fd_guard guard{fd};
      struct stat locked = {}, now = {};
      if (::fstat(fd, &locked) != 0) throw io_error(detail::errno_text("cannot stat", path));
      if (!S_ISREG(locked.st_mode)) return;  // nothing a save will write: it refuses with a message
      int rc;
      do {
        rc = ::flock(fd, LOCK_EX | (m == mode::no_wait ? LOCK_NB : 0));
      } while (rc != 0 && errno == EINTR);
      if (rc != 0) {
        if (errno == EWOULDBLOCK) throw file_locked("'" + path.string() + "' is locked by another writer");
        throw io_error(detail::errno_text("cannot lock", path));
      }
      if (::stat(path.c_str(), &now) == 0 && now.st_ino == locked.st_ino && now.st_dev == locked.st_dev) {
        fd_ = guard.fd;
        guard.fd = -1;
        return;
      }
      // Replaced (or removed) while we waited: lock what the path names now.
    }
  }
  ~file_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;

  bool owns_lock() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace blume
