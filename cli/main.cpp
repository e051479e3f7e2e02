// SPDX-License-Identifier: Apache-2.0
// The blume command-line tool. A thin surface: it parses arguments, calls the library and prints.
// Every failure is one line on stderr ("blume: ...") and exit status 2; query --quiet answers with 0 / 1.
// Each verb is a file in verbs/ whose register_<verb> adds its subcommand, options and callback;
// cli/CMakeLists.txt lists them, in the order --help shows them.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "blume/error.hpp"
#include "blume/io/format.hpp"
#include "blume/storage.hpp"
#include "blume/version.hpp"
#include "shared.hpp"

namespace {

/// An interrupted write leaves nothing behind: the temporary file goes, then the signal takes its default
/// course (so the shell sees 130 for SIGINT, 143 for SIGTERM). The target is untouched until the rename.
extern "C" void on_terminating_signal(int sig) {
  blume::remove_pending_temp_files();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// The first option on the command line that the chosen verb (or the one above it) does not know. CLI11
/// checks required options before it reports unknown ones, so `build --bogus` would otherwise say that
/// --output is required.
std::string unknown_option(CLI::App& app, int argc, char** argv) {
  CLI::App* verb = &app;
  while (!verb->get_subcommands().empty()) verb = verb->get_subcommands().front();
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    // Not an option: "-" (standard input), and negative numbers or rates given as values.
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) != 0 || arg[1] == '.')
      continue;
    const std::string name(arg[1] == '-' ? arg.substr(0, arg.find('=')) : arg.substr(0, 2));
    bool known = false;
    for (CLI::App* c = verb; c != nullptr && !known; c = c->get_parent())
      known = c->get_option_no_throw(name) != nullptr;
    if (!known) return name;
  }
  return {};
}

/// `status`, or 2 with a message when what was printed could not be written (--help > /dev/full).
int checked_exit(int status) {
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return status;
  std::fprintf(stderr, "blume: cannot write to standard output: %s\n", std::strerror(errno));
  return 2;
}

void install_signal_handlers() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal the parent ignores (nohup, a background job of a script) stays ignored.
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = on_terminating_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  CLI::App app{"blume: probabilistic membership filters (Bloom filters and their family), stored as files", "blume"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("blume ") + blume::version + " (file format " +
                                        std::to_string(blume::format_version) + ")");
  app.footer(
      "Answers: 'no' is certain for every kind except the forgetting ones (stable, aging), which answer "
      "'absent' for keys not seen recently. Exit status: 0 success (query: every key may be present), "
      "1 query: a key is absent (erase: a key was not found), 2 error (one line on stderr, 'blume: ...').");
  int status = 0;
  for (blume::cli::register_verb* add_verb : blume::cli::verbs()) add_verb(app, status);

  try {
    app.parse(argc, argv);  // runs the chosen verb's callback once the whole command line has parsed
    // What a verb printed may still sit in stdio's buffer, or have failed there already (a full disk):
    // success is reported only once it is out.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) blume::cli::output::throw_stdout_error();
  } catch (const CLI::CallForHelp& e) {
    return checked_exit(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return checked_exit(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return checked_exit(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // One line, like every other error (CLI11's own report spans several).
    std::string what = e.what();
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)
      if (const std::string unknown = unknown_option(app, argc, argv); !unknown.empty())
        what = "unknown option '" + unknown + "'";
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::fprintf(stderr, "blume: %s (see blume --help)\n", what.c_str());
    return 2;
  } catch (const blume::error& e) {
    std::fprintf(stderr, "blume: %s\n", e.what());
    return 2;
  } catch (const blume::allocation_error& e) {
    std::fprintf(stderr, "blume: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "blume: out of memory\n");
    return 2;
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "blume: %s\n", e.what());
    return 2;
  }
  return status;
}
