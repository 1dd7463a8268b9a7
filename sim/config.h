// Platform configuration: INI files read with Boost.Program_options, where every key is also
// a command-line option (`--link.bandwidth_GBps 10`) and the command line wins over the file.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "models/platform_config.h"

namespace ars {

// The options that describe a platform, each bound to its field of `config`.
boost::program_options::options_description platform_options(PlatformConfig& config);

// Resolves `-p`: a name of configs/ (`a2a3sim` means `a2a3`) or a path to an INI file.
std::string resolve_platform_path(const std::string& name_or_path);

// Reads `path`, then applies `overrides` (parsed command-line values of platform keys), then
// checks every value. Throws InputError naming the file, the key or the value.
PlatformConfig load_platform(const std::string& path,
                             const boost::program_options::variables_map& overrides);

// As load_platform, from INI text already open; `origin` names it in messages.
PlatformConfig parse_platform(std::istream& in, const std::string& origin,
                              const boost::program_options::variables_map& overrides);

// Parses a (sub)command's arguments; every error is an InputError. Arguments holding a %word%
// placeholder are refused first: Boost.Program_options expands those in its error messages and
// loops forever when the expansion holds the placeholder again.
boost::program_options::variables_map parse_arguments(
    int argc, const char* const* argv, const boost::program_options::options_description& options);

// Throws InputError when a parameter is out of range (zero rates, NaN, absurd sizes...).
void validate(const PlatformConfig& config);

// The configuration as INI text (every key, current values), as `allreduce-sim --print-config`
// shows it and as calibration writes it.
std::string to_ini(const PlatformConfig& config);

}  // namespace ars
