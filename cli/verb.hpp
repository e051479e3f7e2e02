// SPDX-License-Identifier: Apache-2.0
// A verb of the tool: the registration every file of verbs/ provides, and the table of those this build has.
#pragma once

#include <span>

namespace CLI {
class App;
}

namespace blume::cli {

/// A verb's registration: adds its subcommand to `app`, with its options (bound to an options struct the
/// verb owns) and a callback. CLI11 runs the callback once the whole command line has parsed; it leaves
/// the exit status in `status` and throws blume::error on failure, which main reports (one line on
/// stderr, exit status 2).
using register_verb = void(CLI::App& app, int& status);

/// The verbs this build of the tool has, in the order --help lists them: every verb, or those its
/// BLUME_CLI_VERBS names (generated from cli/CMakeLists.txt's list into verb_table.cpp).
std::span<register_verb* const> verbs();

}  // namespace blume::cli
