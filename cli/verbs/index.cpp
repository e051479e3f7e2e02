// SPDX-License-Identifier: Apache-2.0
// `blume index build|query|info`: a bit-sliced signature index of text documents (include/blume/index/),
// one document per file or per line, queried for the documents that may hold every term.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "blume/io/index_format.hpp"
#include "filter_ops.hpp"
#include "progress.hpp"
#include "shared.hpp"

namespace blume::cli {

namespace {

namespace fs = std::filesystem;

struct index_build_args {
  std::vector<std::string> docs;
  std::string output;
  bool lines = false;
  bitsliced_options options;
  bool plain = false;
  bool force = false;
  bool no_wait = false;
  bool progress = true;
};

struct index_query_args {
  std::string index;
  std::vector<std::string> terms;
  bool verify = false;
  bool count = false;
  bool json = false;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error("cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw io_error("cannot read '" + path.string() + "'");
  return std::move(text).str();
}

/// The files of the --docs arguments: a file as it is, a directory's regular files (recursively, following
/// no links out of it), each list in path order so that document numbers do not depend on the file system.
std::vector<fs::path> document_files(const std::vector<std::string>& docs) {
  std::vector<fs::path> files;
  for (const std::string& arg : docs) {
    std::error_code ec;
    const fs::file_status st = fs::status(arg, ec);
    if (ec || !fs::exists(st)) throw io_error("cannot read '" + arg + "': no such file or directory");
    if (fs::is_directory(st)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(arg, fs::directory_options::skip_permission_denied))
        if (entry.is_regular_file()) found.push_back(entry.path());
      std::ranges::sort(found);
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.emplace_back(arg);
    }
  }
  return files;
}

/// The terms of a query's arguments, each split as documents are.
std::vector<std::string> query_terms(const std::vector<std::string>& args) {
  std::vector<std::string> terms;
  for (const std::string& a : args) for_each_term(a, [&](std::string_view t) { terms.emplace_back(t); });
  if (terms.empty()) throw invalid_argument("the query has no terms (terms are runs of letters and digits)");
  return terms;
}

int run_index_build(const index_build_args& a) {
  bitsliced_options options = a.options;
  if (a.plain) {
    options.frequency_conscious = false;
    options.rank = 0;
  }
  bitsliced_builder builder(options);  // bad options are refused before any reading
  check_output(a.output, write_options{a.force});
  const std::vector<fs::path> files = document_files(a.docs);
  std::uint64_t total = 0;
  for (const fs::path& f : files) total += fs::file_size(f);
  progress bar(a.progress && ::isatty(STDERR_FILENO) != 0, total, "documents");
  std::uint64_t done = 0;
  for (const fs::path& f : files) {
    const std::string text = read_text(f);
    if (a.lines) {
      std::size_t line = 0, start = 0;
      while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        ++line;
        builder.add_text(f.string() + ":" + std::to_string(line), std::string_view(text).substr(start, end - start));
        start = end + 1;
      }
    } else {
      builder.add_text(f.string(), text);
    }
    done += text.size();
    bar.update(builder.documents(), done);
  }
  bar.finish(builder.documents());
  const std::uint64_t postings = builder.postings();
  const bitsliced_index index = std::move(builder).finish();
  std::optional<file_lock> lock;
  lock_target(lock, a.output, a.no_wait);
  with_force_hint([&] { save_index(index, a.output, write_options{a.force}); });
  if (::isatty(STDERR_FILENO) != 0)
    std::fprintf(stderr, "wrote %s: %llu documents, %llu postings, %s in %zu shards\n", a.output.c_str(),
                 static_cast<unsigned long long>(index.documents()), static_cast<unsigned long long>(postings),
                 human_bytes(static_cast<double>(fs::file_size(a.output))).c_str(), index.shards().size());
  return 0;
}

/// The candidates that hold every term, read back from their documents (a file, or a line of one).
std::vector<std::uint32_t> verified(const bitsliced_index& index, const std::vector<std::uint32_t>& candidates,
                                    const std::vector<std::string>& terms) {
  const std::set<std::string> wanted(terms.begin(), terms.end());
  std::map<std::string, std::vector<std::string_view>> line_cache;
  std::map<std::string, std::string> file_cache;
  auto holds_all = [&](std::string_view text) {
    std::set<std::string> seen;
    for_each_term(text, [&](std::string_view t) {
      if (wanted.contains(std::string(t))) seen.emplace(t);
    });
    return seen.size() == wanted.size();
  };
  std::vector<std::uint32_t> out;
  for (std::uint32_t d : candidates) {
    const std::string& name = index.document_name(d);
    std::error_code ec;
    if (fs::is_regular_file(name, ec)) {
      if (holds_all(read_text(name))) out.push_back(d);
      continue;
    }
    // "path:line", as --lines names documents.
    const std::size_t colon = name.rfind(':');
    if (colon == std::string::npos) throw io_error("cannot read document '" + name + "'");
    const std::string path = name.substr(0, colon);
    const std::size_t line = std::stoull(name.substr(colon + 1));
    auto [it, fresh] = file_cache.try_emplace(path);
    if (fresh) {
      it->second = read_text(path);
      std::vector<std::string_view>& lines = line_cache[path];
      std::string_view text = it->second;
      for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
      }
    }
    const std::vector<std::string_view>& lines = line_cache[path];
    if (line == 0 || line > lines.size()) throw io_error("'" + path + "' has no line " + std::to_string(line));
    if (holds_all(lines[line - 1])) out.push_back(d);
  }
  return out;
}

int run_index_query(const index_query_args& a) {
  const bitsliced_index index = load_index(a.index);
  const std::vector<std::string> terms = query_terms(a.terms);
  const std::vector<std::uint32_t> candidates = index.candidates(terms);
  std::optional<std::vector<std::uint32_t>> matches;
  if (a.verify) matches = verified(index, candidates, terms);
  const std::vector<std::uint32_t>& shown = matches ? *matches : candidates;
  output out;
  if (a.json) {
    const double expected = bitsliced_model(index).expected_false_candidates(terms);
    std::string s = "{\"terms\": [";
    for (std::size_t i = 0; i < terms.size(); ++i) s += (i ? ", " : "") + json_string(terms[i]);
    s += "], \"candidates\": " + std::to_string(candidates.size());
    if (matches) s += ", \"matches\": " + std::to_string(matches->size());
    s += ", \"expected_false_candidates\": " + json_number(expected);
    if (!a.count) {
      s += ", \"documents\": [";
      for (std::size_t i = 0; i < shown.size(); ++i) s += (i ? ", " : "") + json_string(index.document_name(shown[i]));
      s += "]";
    }
    out.add(s + "}\n");
  } else if (a.count) {
    out.add("candidates\t" + std::to_string(candidates.size()) + "\n");
    if (matches) out.add("matches\t" + std::to_string(matches->size()) + "\n");
  } else {
    for (std::uint32_t d : shown) out.add(index.document_name(d) + "\n");
    if (matches)
      std::fprintf(stderr, "blume: %zu candidates, %zu matches (%zu false positives)\n", candidates.size(),
                   matches->size(), candidates.size() - matches->size());
  }
  out.flush();
  return shown.empty() ? 1 : 0;
}

int run_index_info(const std::string& path, bool json) {
  const bitsliced_index index = load_index(path);
  const bitsliced_options& o = index.options();
  const bitsliced_index::memory m = index.memory_use();
  std::uint64_t shared = 0, higher = 0;
  for (const bitsliced_shard& s : index.shards()) {
    shared += s.shared_rows;
    higher += s.higher_rows;
  }
  const std::uint64_t file = fs::file_size(path);
  output out;
  if (json) {
    out.add("{\"documents\": " + std::to_string(index.documents()) +
            ", \"shards\": " + std::to_string(index.shards().size()) + ", \"density\": " + json_number(o.density) +
            ", \"noise\": " + json_number(o.noise) + ", \"rank\": " + std::to_string(o.rank) +
            ", \"frequency_conscious\": " + (o.frequency_conscious ? "true" : "false") +
            ", \"shard_ratio\": " + json_number(o.shard_ratio) + ", \"seed\": " + std::to_string(o.seed) +
            ", \"term_table\": " + std::to_string(index.term_table().size()) +
            ", \"private_rows\": " + std::to_string(index.private_rows()) +
            ", \"shared_rows\": " + std::to_string(shared) + ", \"higher_rows\": " + std::to_string(higher) +
            ", \"adhoc_rows\": [" + std::to_string(index.adhoc_rows().rank0) + ", " +
            std::to_string(index.adhoc_rows().higher) + "], \"bytes\": {\"shared\": " + std::to_string(m.shared) +
            ", \"private\": " + std::to_string(m.private_rows) + ", \"higher\": " + std::to_string(m.higher) +
            ", \"columns\": " + std::to_string(m.columns) + ", \"term_table\": " + std::to_string(m.term_table) +
            ", \"names\": " + std::to_string(m.names) + "}, \"size\": " + std::to_string(file) + "}\n");
  } else {
    auto row = [&](const char* label, const std::string& value) {
      char line[160];
      std::snprintf(line, sizeof line, "%-22s %s\n", label, value.c_str());
      out.add(line);
    };
    row("documents", std::to_string(index.documents()));
    row("shards", std::to_string(index.shards().size()) + " (documents whose bit counts differ at most " +
                      fixed(o.shard_ratio, 2) + "×)");
    row("row density", fixed(o.density, 2) + " (target)");
    row("noise", fixed(o.noise, 2) + " false candidates per match, per term");
    row("signatures", o.frequency_conscious ? "frequency-conscious" : "classic (one size for every term)");
    row("term table", std::to_string(index.term_table().size()) + " terms");
    row("ad hoc term rows", std::to_string(index.adhoc_rows().rank0) + " at rank 0 + " +
                                std::to_string(index.adhoc_rows().higher) + " at rank " + std::to_string(o.rank));
    row("rows", std::to_string(shared) + " shared, " + std::to_string(index.private_rows()) + " private per shard, " +
                    std::to_string(higher) + " at rank " + std::to_string(o.rank));
    row("memory", human_bytes(static_cast<double>(m.total())) + " (rows " +
                      human_bytes(static_cast<double>(m.shared + m.private_rows + m.higher)) + ", names " +
                      human_bytes(static_cast<double>(m.names)) + ")");
    row("size", human_bytes(static_cast<double>(file)));
  }
  out.flush();
  return 0;
}

}  // namespace

void register_index(CLI::App& app, int& status) {
  CLI::App* index = app.add_subcommand("index", "Bit-sliced signature index of text documents (build, query, info)");
  index->require_subcommand(1);

  const auto b = std::make_shared<index_build_args>();
  CLI::App* build = index->add_subcommand("build", "Index documents: one per file, or one per line with --lines");
  build->add_option("--docs", b->docs, "files and directories of documents (directories recursively)")
      ->required()
      ->expected(1, -1);
  build->add_option("-o,--output", b->output, "the index file")->required();
  build->add_flag("--lines", b->lines, "each line of each file is a document (named FILE:LINE)");
  build->add_option("--density", b->options.density, "target density of the shared rows, (0, 0.5]")
      ->capture_default_str();
  build->add_option("--noise", b->options.noise, "false candidates allowed per match, per term, (0, 1]")
      ->capture_default_str();
  build->add_option("--rank", b->options.rank, "rank of the higher-rank rows, 3 to 6, or 0 for none")
      ->capture_default_str();
  build->add_option("--shard-ratio", b->options.shard_ratio, "largest ratio of bit counts within a shard")
      ->capture_default_str();
  build->add_option("--seed", b->options.seed, "hash seed")->capture_default_str();
  build->add_flag("--classic", b->plain,
                  "one signature size for every term: no term table, private or higher-rank rows");
  add_force_flag(*build, b->force);
  build->add_flag("--no-wait", b->no_wait, "fail at once if another writer holds the output");
  build->add_flag("!--no-progress", b->progress, "no progress line on a terminal");
  build->callback([b, &status] { status = run_index_build(*b); });

  const auto q = std::make_shared<index_query_args>();
  CLI::App* query = index->add_subcommand(
      "query", "Documents that may hold every term (exit status 1 when there are none); --verify reads them");
  query->add_option("index", q->index, "the index file")->required();
  query->add_option("terms", q->terms, "the terms (split as documents are)")->required()->expected(1, -1);
  query->add_flag("--verify", q->verify, "read the candidates and keep those that hold every term");
  query->add_flag("--count", q->count, "print the counts of candidates (and matches) instead of the documents");
  query->add_flag("--json", q->json, "one JSON object, with the model's expected false candidates");
  query->callback([q, &status] { status = run_index_query(*q); });

  const auto info_path = std::make_shared<std::string>();
  const auto info_json = std::make_shared<bool>(false);
  CLI::App* info = index->add_subcommand("info", "What an index holds: documents, shards, rows and memory");
  info->add_option("index", *info_path, "the index file")->required();
  info->add_flag("--json", *info_json, "one JSON object");
  info->callback([info_path, info_json, &status] { status = run_index_info(*info_path, *info_json); });
}

}  // namespace blume::cli
