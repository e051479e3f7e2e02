// SPDX-License-Identifier: Apache-2.0
// `blume info`: what a filter file holds (kind, parameters, design, fill, predicted rates, size), as text
// or one JSON object, after verifying its checksums.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "blume/any_filter.hpp"
#include "filter_report.hpp"
#include "shared.hpp"

namespace blume::cli {

namespace {

struct info_args {
  std::string file;
  bool json = false;
};

int run_info(const std::string& file, bool json) {
  file_header h;
  const any_filter filter = open_filter(file, verify::full, &h);  // verifies the checksums: a damaged file is an error
  std::vector<surface::report_field> fields = surface::describe_filter(filter, h);
  fields.push_back({"checksum", "ok (header and payload)", json_string("ok")});
  if (json) {
    std::printf("%s\n", surface::report_json(fields).c_str());
  } else {
    for (const surface::report_field& f : fields) std::printf("%-26s %s\n", (f.name + ":").c_str(), f.text.c_str());
  }
  return 0;
}

}  // namespace

void register_info(CLI::App& app, int& status) {
  const auto a = std::make_shared<info_args>();
  CLI::App* info = app.add_subcommand("info", "Describe a filter file: kind, parameters, fill, predicted FPR, size");
  info->add_option("file", a->file, "filter file")->required();
  info->add_flag("--json", a->json, "one JSON object");
  info->callback([a, &status] { status = run_info(a->file, a->json); });
}

}  // namespace blume::cli
