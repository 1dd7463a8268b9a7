// Platform configuration: INI files read with Boost.Program_options, where every key is also
// a command-line option (`--link.bandwidth_GBps 10`) and the command line wins over the file.
#pragma once

#include <istream>
#include <map>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "models/platform/platform_config.h"

namespace ars {

// The options that describe a platform, each bound to its field of `config`.
boost::program_options::options_description platform_options(PlatformConfig& config);

// What follows "unrecognised option 'X'": the nearest name, else the keys of X's section
// (`link.`), else the sections there are (every name written `prefix` + name).
std::string unknown_key_hint(const std::string& typed,
                             const boost::program_options::options_description& options,
                             const std::string& prefix);

// The configs/ directory (ARS_CONFIG_DIR overrides it).
std::string config_dir();

// The *.ini files of `dir` by name, sorted.
std::vector<std::string> ini_names(const std::string& dir);

// The platforms of configs/ by name (its *.ini files), sorted.
std::vector<std::string> platform_names();

// Resolves `-p` (or what `asked_by` names): a name of configs/ (`a2a3sim` means `a2a3`) or a
// path to an INI file. An unknown name is an InputError listing the platforms that exist.
std::string resolve_platform_path(const std::string& name_or_path,
                                  const std::string& asked_by = "-p");

// A platform as read: its values, the file, and where every key's value came from. A file may
// start with `base = NAME` (a config of configs/) or `base = PATH` (relative to the file): every
// key it does not set takes the base's value. Without a base, unset keys take the built-in
// defaults (PlatformConfig's); a file that sets no platform.name is named after itself.
struct LoadedPlatform {
  PlatformConfig config;
  std::string path;  // the INI file
  std::string base;  // as the file names it; empty: none
  // Full key name -> its source: the file's comment on the key (the source tag), the base's
  // ("base a2a3: spec: ..."), "command line" or the built-in default.
  std::map<std::string, std::string> source;
  // The file and what it inherits, as the report and --print-config name it.
  std::string origin() const;
};

// Reads `path` (and its base), then applies `overrides` (parsed command-line values of platform
// keys), then checks every value. Throws InputError naming the file, the key or the value.
LoadedPlatform load_platform_sources(const std::string& path,
                                     const boost::program_options::variables_map& overrides);
PlatformConfig load_platform(const std::string& path,
                             const boost::program_options::variables_map& overrides);

// The text of an INI file, refused (InputError naming `described` and the line) when a line
// holds a control byte or a %word% placeholder, which Boost.Program_options would echo or
// expand forever; a leading byte order mark is dropped.
std::string read_checked_ini(std::istream& file, const std::string& described);

// As load_platform, from INI text already open; `origin` names it in messages.
PlatformConfig parse_platform(std::istream& in, const std::string& origin,
                              const boost::program_options::variables_map& overrides);

// Parses a (sub)command's arguments; every error is an InputError. Options must be spelled in
// full (no completion of a cut-short name; an unknown one is named with the nearest option),
// and a word that belongs to no option is refused. Arguments holding a %word% placeholder are
// refused first: Boost.Program_options expands those in its error messages and loops forever
// when the expansion holds the placeholder again.
boost::program_options::variables_map parse_arguments(
    int argc, const char* const* argv, const boost::program_options::options_description& options);

// Throws InputError when a parameter is out of range (zero rates, NaN, absurd sizes...).
void validate(const PlatformConfig& config);

// Whether a platform of `topology` reads `key` ("nic.bandwidth_GBps"): another topology's keys
// change nothing in a run, and the INI output leaves them out.
bool topology_reads(const std::string& key, Topology topology);

// The configuration as INI text (every key its topology reads, current values), as
// `allreduce-sim --print-config`
// shows it and as calibration writes it: each key commented with its tag in `tags` (a
// LoadedPlatform's sources), or with its help when it has none.
std::string to_ini(const PlatformConfig& config);
std::string to_ini(const PlatformConfig& config, const std::map<std::string, std::string>& tags);

}  // namespace ars
