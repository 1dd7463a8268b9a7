// Output files of the command and its subcommands: checked before anything runs, written
// whole at the end, so a refused or failed run leaves no partial file behind.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace ars {

// Throws InputError naming `option` when `path` cannot be written; creates nothing.
void check_writable(const std::string& option, const std::string& path);

// Writes `text`, or what `write` puts on the stream, to `path`, replacing it; throws InputError
// when that fails.
void write_file(const std::string& path, const std::string& text);
void write_file(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace ars
