// SPDX-License-Identifier: Apache-2.0
#include "key_input.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "blume/error.hpp"

namespace blume::surface {

namespace {

std::string describe(const std::string& path) { return path == "-" ? std::string("standard input") : "'" + path + "'"; }

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw io_error("cannot " + what + " " + describe(path) + ": " + std::strerror(errno));
}

constexpr std::size_t block_size = std::size_t{16} << 20;

}  // namespace

key_source::key_source(const std::string& path, key_format format)
    : path_(path), delimiter_(format == key_format::nul ? '\0' : '\n') {
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail("open", path);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail("read", path);
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    fail("read", path);
  }
  if (S_ISREG(st.st_mode)) {
    regular_ = true;
    total_ = static_cast<std::uint64_t>(st.st_size);
    if (total_ != 0) {
      void* p = ::mmap(nullptr, total_, PROT_READ, MAP_PRIVATE, fd_, 0);
      if (p == MAP_FAILED) fail("map", path);
      ::madvise(p, total_, MADV_SEQUENTIAL);
      mapped_ = static_cast<const char*>(p);
    }
  }
}

key_source::~key_source() {
  if (mapped_ != nullptr && mapped_ != held_.data()) ::munmap(const_cast<char*>(mapped_), total_);
  if (fd_ >= 0 && fd_ != STDIN_FILENO) ::close(fd_);
}

void key_source::for_each_block(const std::function<void(std::string_view)>& fn, bool gather) {
  if (mapped_ != nullptr || regular_) {
    // A regular file: hand out block_size pieces of the mapping, each cut after a delimiter.
    std::string_view rest(mapped_ == nullptr ? "" : mapped_, total_);
    while (!rest.empty()) {
      std::size_t cut = std::min(rest.size(), block_size);
      if (cut < rest.size()) {
        const std::size_t d = rest.find(delimiter_, cut);
        cut = d == std::string_view::npos ? rest.size() : d + 1;
      }
      fn(rest.substr(0, cut));
      rest.remove_prefix(cut);
    }
    return;
  }
  // A pipe or terminal: read blocks, carrying a partial key over to the next block.
  std::vector<char> buffer(block_size * 2);
  std::size_t held = 0;
  for (;;) {
    if (held == buffer.size()) buffer.resize(buffer.size() * 2);  // one key longer than a block
    const ssize_t n = ::read(fd_, buffer.data() + held, buffer.size() - held);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("read", path_);
    }
    if (n == 0) {
      if (held != 0) fn(std::string_view(buffer.data(), held));
      return;
    }
    held += static_cast<std::size_t>(n);
    const std::string_view data(buffer.data(), held);
    const std::size_t last = data.rfind(delimiter_);
    if (last == std::string_view::npos || (gather && held < block_size)) continue;
    fn(data.substr(0, last + 1));
    const std::size_t rest = held - (last + 1);
    std::memmove(buffer.data(), buffer.data() + last + 1, rest);
    held = rest;
  }
}

std::uint64_t key_source::count_keys() {
  // Anything not mapped (standard input, a pipe, a FIFO, /dev/fd/N) can be read once only: hold it.
  if (mapped_ == nullptr && held_.empty()) {
    for_each_block([&](std::string_view block) { held_.append(block); });
    if (!held_.empty()) {
      mapped_ = held_.data();  // later passes read the held copy like a mapped file
      total_ = held_.size();
    }
  }
  std::uint64_t keys = 0;
  if (mapped_ == nullptr) return 0;
  for_each_block([&](std::string_view block) {
    for_each_key(block, delimiter_, [&](std::string_view k) { keys += !k.empty(); });
  });
  return keys;
}

}  // namespace blume::surface
