// SPDX-License-Identifier: Apache-2.0
// The input of blume-mpi: the files a pattern names, the check that every rank sees the same ones, and each
// rank's share of their concatenation.
//
// Every rank expands the pattern and reads its own share, by byte offsets into what it takes to be the
// same concatenation. When the ranks see different files (a path that names another file on another node,
// a node-local copy that differs, a file still being written), the shares no longer add up to one input
// and the answer is silently wrong: some lines are read twice, others never. So before any rank reads its
// share, each describes every input (its name, size and an XXH3-64 checksum), the ranks compare the
// descriptions, and on any difference they all refuse, rank 0 naming the files and the ranks that differ.
// After the read, each rank checks that no file changed under it while it read.
//
// The checksum covers 16 blocks of 64 KiB spread evenly over the file, the first and the last among them
// (a file of at most 1 MiB whole), so describing a file costs at most 1 MiB of reading on each rank,
// whatever its size: the ranks each read only 1/P of the input, and a full checksum would make every one
// read all of it. The size catches a file that grows while it is written, or a copy cut short; the
// blocks catch files of one size with other contents, such as another day's export, and the last block
// a file whose tail is still being filled in. What they can miss, an edit of a few bytes between the
// blocks, the full check (`--input-check full`) catches, at the cost of one more read of every input on
// every rank.
#pragma once

#include <fcntl.h>
#include <glob.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "blume/distributed/duplicates.hpp"

namespace blume_mpi {

using blume::distributed::place;

/// A refusal that every rank reaches together, having seen the outcome of the same collective, so none is
/// left waiting in another: rank 0 prints why, and every rank exits with status 2 (no MPI_Abort).
struct refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class input_check { sampled, full };

/// One input as this rank sees it.
struct input_file {
  std::string path;
  std::string error;  // why it cannot be read; empty when it can
  std::uint64_t size = 0;
  std::uint64_t checksum = 0;  // XXH3-64 of the sampled blocks, or of every byte
  // Compared only on this rank, before and after its read: another node's copy may have another mtime.
  struct ::stat status {};
};

/// The files a pattern names, sorted (the order every rank agrees on); none is not an error yet, since
/// the ranks first compare what they found.
inline std::vector<std::string> expand(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> files;
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  std::sort(files.begin(), files.end());
  return files;
}

namespace detail {

constexpr std::uint64_t sample_block = 64 * 1024;
constexpr std::uint64_t sample_blocks = 16;

struct fd_closer {
  int fd;
  ~fd_closer() {
    if (fd >= 0) ::close(fd);
  }
};

/// Hashes [at, at + n) of `fd` into `state`; false (with errno) when the file ends early or a read fails.
inline bool hash_range(int fd, std::uint64_t at, std::uint64_t n, std::vector<char>& buffer, XXH3_state_t* state) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, buffer.data(), std::min<std::uint64_t>(n, buffer.size()), static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = 0;  // shorter than its size said: it shrank while it was read
      return false;
    }
    XXH3_64bits_update(state, buffer.data(), static_cast<std::size_t>(got));
    at += static_cast<std::uint64_t>(got);
    n -= static_cast<std::uint64_t>(got);
  }
  return true;
}

/// "0-3, 5, 7-8"
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

inline std::string hex(std::uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

/// What a rank saw of one file, as the refusal prints it; equal views are equal inputs.
inline std::string view_of(const input_file& f) {
  if (!f.error.empty()) return f.error;
  return std::to_string(f.size) + " bytes, checksum " + hex(f.checksum);
}

/// Every rank's `items` on rank 0, in rank order (empty elsewhere). Collective.
inline std::vector<std::vector<std::string>> gather_lists(MPI_Comm comm, const std::vector<std::string>& items) {
  std::vector<std::string> framed{std::to_string(items.size())};
  framed.insert(framed.end(), items.begin(), items.end());
  const std::vector<std::string> all =
      blume::distributed::gather_keys(comm, framed, 0, blume::distributed::gathered::in_rank_order);
  std::vector<std::vector<std::string>> lists;
  for (std::size_t i = 0; i < all.size();) {
    const std::size_t n = std::stoull(all[i++]);
    lists.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i), all.begin() + static_cast<std::ptrdiff_t>(i + n));
    i += n;
  }
  return lists;
}

}  // namespace detail

/// This rank's description of the file at `path`: its size and checksum, or why it cannot be read.
inline input_file describe(const std::string& path, input_check check) {
  input_file f;
  f.path = path;
  const auto failed = [&](const char* what) {
    f.error = std::string(what) + (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string());
    return f;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed("cannot be opened");
  const detail::fd_closer closer{fd};
  if (::fstat(fd, &f.status) != 0) return failed("cannot be examined");
  if (!S_ISREG(f.status.st_mode)) {
    errno = 0;
    return failed("is not a regular file");
  }
  f.size = static_cast<std::uint64_t>(f.status.st_size);
  const std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  if (!state) throw std::bad_alloc();
  XXH3_64bits_reset(state.get());
  std::vector<char> buffer(1 << 20);
  const std::uint64_t sampled = detail::sample_block * detail::sample_blocks;
  if (check == input_check::full || f.size <= sampled) {
    if (!detail::hash_range(fd, 0, f.size, buffer, state.get())) return failed("cannot be read (to its size)");
  } else {
    // Offsets from the size alone, so every rank samples the same blocks of the same file.
    for (std::uint64_t i = 0; i < detail::sample_blocks; ++i) {
      const std::uint64_t at = (f.size - detail::sample_block) / (detail::sample_blocks - 1) * i;
      const std::uint64_t start = i + 1 == detail::sample_blocks ? f.size - detail::sample_block : at;
      if (!detail::hash_range(fd, start, detail::sample_block, buffer, state.get()))
        return failed("cannot be read (to its size)");
    }
  }
  f.checksum = XXH3_64bits_digest(state.get());
  return f;
}

/// Every rank describes the inputs `pattern` names (and `also`: files every rank reads whole, such as the
/// filter of `query`), and the ranks compare the descriptions. Returns the inputs when every rank saw the
/// same; throws refusal on every rank when they differ, when a file cannot be read or when the pattern
/// names none. Collective.
inline std::vector<input_file> agree_on_inputs(MPI_Comm comm, const std::string& pattern,
                                               const std::vector<std::string>& also, input_check check) {
  const place where = place::of(comm);
  std::vector<input_file> inputs, others;
  for (const std::string& path : expand(pattern)) inputs.push_back(describe(path, check));
  for (const std::string& path : also) others.push_back(describe(path, check));

  // Pairs of strings, the path then the view, which rank 0 compares only when the digests differ.
  std::vector<std::string> pairs;
  for (const auto* list : {&inputs, &others})
    for (const input_file& f : *list) {
      pairs.push_back(f.path);
      pairs.push_back(detail::view_of(f));
    }
  // The count tells inputs from `also`: the same file may be an input on one rank and the filter on another.
  std::vector<std::uint64_t> packed{inputs.size()};
  for (const std::string& s : pairs) blume::distributed::dedup::pack(s, packed);
  const std::uint64_t mine = XXH3_64bits(packed.data(), packed.size() * 8);
  std::vector<std::uint64_t> digests(static_cast<std::size_t>(where.ranks));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, digests.data(), 1, MPI_UINT64_T, comm);
  if (std::all_of(digests.begin(), digests.end(), [&](std::uint64_t d) { return d == digests[0]; })) {
    for (const auto* list : {&inputs, &others})
      for (const input_file& f : *list)
        if (!f.error.empty()) throw refusal("'" + f.path + "' " + f.error);
    if (inputs.empty()) throw refusal("no input file matches '" + pattern + "'");
    return inputs;
  }

  const std::vector<std::vector<std::string>> lists = detail::gather_lists(comm, pairs);
  if (where.rank != 0) throw refusal("");
  // Each path's view on each rank (a rank whose pattern did not name it: "not found").
  std::map<std::string, std::vector<std::string>> views;
  for (std::size_t r = 0; r < lists.size(); ++r)
    for (std::size_t i = 0; i + 1 < lists[r].size(); i += 2) {
      auto& v = views.try_emplace(lists[r][i], lists.size(), "not found").first->second;
      v[r] = lists[r][i + 1];
    }
  std::string message =
      "the ranks do not see the same input files, so their shares would not add up to one input (a path that "
      "names other files on other nodes, or a file still being written?). Each file that differs, and what each "
      "rank sees of it (size, XXH3-64 of " +
      std::string(check == input_check::full ? "every byte" : "16 blocks of 64 KiB") + "):";
  std::size_t shown = 0, differing = 0;
  for (const auto& [path, per_rank] : views) {
    std::map<std::string, std::vector<int>> by_view;
    for (std::size_t r = 0; r < per_rank.size(); ++r) by_view[per_rank[r]].push_back(static_cast<int>(r));
    if (by_view.size() < 2) continue;
    if (++differing > 20) continue;  // the first twenty say enough
    ++shown;
    std::vector<std::pair<std::vector<int>, std::string>> groups;  // in the order of their first rank
    for (auto& [view, ranks] : by_view) groups.emplace_back(std::move(ranks), view);
    std::sort(groups.begin(), groups.end());
    message += "\n  '" + path + "': ";
    std::string sep;
    for (const auto& [ranks, view] : groups) {
      message += sep + detail::rank_list(ranks) + ": " + view;
      sep = "; ";
    }
  }
  if (differing > shown) message += "\n  and " + std::to_string(differing - shown) + " more files";
  if (differing == 0) message += "\n  (every file alike, but an input on some ranks is the filter on others)";
  throw refusal(message);
}

/// This rank's lines: those whose first byte lies in its share [r·T/P, (r+1)·T/P) of the files'
/// concatenation (T bytes, from the sizes the ranks agreed on). Empty lines are not keys; a final line
/// without a newline is one.
inline std::vector<std::string> read_share(const std::vector<input_file>& files, const place& where) {
  std::uint64_t total = 0;
  for (const input_file& f : files) total += f.size;
  const auto share = [&](int r) {
    return static_cast<std::uint64_t>((static_cast<blume::uint128_t>(total) * static_cast<unsigned>(r)) /
                                      static_cast<unsigned>(where.ranks));
  };
  const std::uint64_t begin = share(where.rank), end = share(where.rank + 1);
  std::vector<std::string> keys;
  std::uint64_t file_start = 0;
  for (std::size_t i = 0; i < files.size(); file_start += files[i].size, ++i) {
    if (file_start + files[i].size <= begin || file_start >= end) continue;
    std::ifstream in(files[i].path, std::ios::binary);
    if (!in) throw blume::io_error("cannot open '" + files[i].path + "'");
    std::uint64_t at = begin > file_start ? begin - file_start : 0;
    if (at > 0) {  // start at the first line that begins at or after `at`
      in.seekg(static_cast<std::streamoff>(at - 1));
      std::string rest;
      std::getline(in, rest);
      at += rest.size();
    }
    std::string line;
    while (file_start + at < end && std::getline(in, line)) {
      at += line.size() + 1;
      if (!line.empty()) keys.push_back(line);
    }
  }
  return keys;
}

/// After the read: every rank checks that no input changed (size, modification time, or the file itself
/// replaced) since it described them, and all refuse if one did on any rank. Collective.
inline void check_unchanged(MPI_Comm comm, const std::vector<input_file>& files) {
  const place where = place::of(comm);
  std::vector<std::string> notes;
  for (const input_file& f : files) {
    struct ::stat now {};
    if (::stat(f.path.c_str(), &now) != 0) {
      notes.push_back("rank " + std::to_string(where.rank) + ": '" + f.path + "' is gone: " + std::strerror(errno));
    } else if (now.st_size != f.status.st_size || now.st_mtim.tv_sec != f.status.st_mtim.tv_sec ||
               now.st_mtim.tv_nsec != f.status.st_mtim.tv_nsec || now.st_ino != f.status.st_ino ||
               now.st_dev != f.status.st_dev) {
      notes.push_back("rank " + std::to_string(where.rank) + ": '" + f.path + "' changed while it was read (" +
                      std::to_string(f.status.st_size) + " bytes, then " + std::to_string(now.st_size) +
                      (now.st_ino != f.status.st_ino || now.st_dev != f.status.st_dev ? "; another file now)" : ")"));
    }
  }
  int changed = notes.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_MAX, comm);
  if (changed == 0) return;
  const std::vector<std::vector<std::string>> lists = detail::gather_lists(comm, notes);
  std::string message = "an input changed while the ranks read it (a file still being written?):";
  for (const auto& list : lists)
    for (const std::string& note : list) message += "\n  " + note;
  throw refusal(where.rank == 0 ? message : "");
}

}  // namespace blume_mpi
