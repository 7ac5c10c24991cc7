// The command line of the tools that read one archive (`perusetrace prv`, `perusetrace
// report`): one declarative table of options, one parser, one way of saying what is wrong.
#pragma once

#include <fmt/core.h>

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "tools/common/analysis_group.hpp"

namespace perusetrace::tools {

struct Option {
  std::string_view short_name;  // may be empty
  std::string_view long_name;
  std::string* value;  // the option takes a value, stored here
  bool* flag;          // or it is a switch, set here
};

// Reads "ARCHIVE [OPTIONS]" in any order. Returns -1 when the command should run, otherwise
// the exit code: 0 after --help, 2 after a usage error (printed with the usage text).
inline int parse_command_line(std::string_view command, const char* usage, int argc, char** argv,
                              std::span<const Option> options, std::string& archive) {
  // In a parallel analysis every rank parses the same line; rank 0 speaks for them.
  const bool speaks = analysis_group().rank() == 0;
  auto fail = [&](const std::string& why) {
    if (speaks) fmt::print(stderr, "perusetrace {}: {}\n\n{}", command, why, usage);
    return 2;
  };
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      if (speaks) fmt::print("{}", usage);
      return 0;
    }
    const Option* match = nullptr;
    for (const Option& o : options)
      if (arg == o.long_name || (!o.short_name.empty() && arg == o.short_name)) match = &o;
    if (match != nullptr && match->value != nullptr) {
      if (i + 1 >= argc) return fail(arg + " needs a value");
      *match->value = argv[++i];
    } else if (match != nullptr) {
      *match->flag = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "'");
    } else if (archive.empty()) {
      archive = arg;
    } else {
      return fail("one archive only, '" + arg + "' is one too many");
    }
  }
  if (archive.empty()) return fail("no archive given");
  return -1;
}

inline int parse_command_line(std::string_view command, const char* usage, int argc, char** argv,
                              std::initializer_list<Option> options, std::string& archive) {
  return parse_command_line(command, usage, argc, argv,
                            std::span<const Option>(options.begin(), options.size()), archive);
}

}  // namespace perusetrace::tools
