// libFuzzer target: the command line and platform INI parsing, everything up to but not
// including the simulation. The input is command-line words, one per line, then optionally a
// NUL byte and INI text for parse_platform. Bad input must end in InputError; any other
// exception, crash or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "kernels/api.h"
#include "sim/cli.h"
#include "sim/config/config.h"

namespace {

void parse_words(const std::string& text) {
  std::vector<std::string> words = {"allreduce-sim"};
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) words.push_back(line);
  std::vector<const char*> argv;
  for (const std::string& word : words) argv.push_back(word.c_str());
  try {
    ars::parse_run_request(static_cast<int>(argv.size()), argv.data());
  } catch (const ars::InputError&) {
  }
}

void parse_ini(const std::string& text) {
  std::istringstream in(text);
  try {
    ars::parse_platform(in, "fuzz.ini", boost::program_options::variables_map());
  } catch (const ars::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  parse_words(input.substr(0, split));
  if (split != std::string::npos) parse_ini(input.substr(split + 1));
  return 0;
}

// libsystemc refers to sc_main; libFuzzer's main() runs instead, so this never does.
extern "C" int sc_main(int, char**) {
  return 0;
}
