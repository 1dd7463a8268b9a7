// Output files of the command and its subcommands: checked before anything runs, written
// whole at the end, so a refused or failed run leaves no partial file behind.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options/variables_map.hpp>

namespace ars {

// The files a command's output options name, each checked as it is taken: a name given empty,
// a file that cannot be written, one another output of the command writes too (the second
// would overwrite the first), or a file the command reads is an InputError naming the option.
// Paths are compared as the files they reach: through symbolic links, and by inode for a file
// that exists (a hard link).
class OutputPaths {
 public:
  // The path `option` (e.g. "--json") names, or "" when the option is not given.
  std::string take(const boost::program_options::variables_map& vm, const std::string& option);
  // A file the command writes beside another (`what` says which).
  void add(const std::string& what, const std::string& path);
  // A file the command reads (`what` names its option): no output may replace it.
  void read(const std::string& what, const std::string& path);

 private:
  struct File {
    std::string what;
    std::string path;   // absolute, links resolved
    std::string inode;  // "device:inode" of a file that exists, else ""
    bool written;
  };
  File identify(const std::string& what, const std::string& path, bool written) const;
  void check_against_taken(const File& file, const std::string& path) const;
  std::vector<File> taken_;
};

// Removes an output file a failed command leaves; only a regular file (never /dev/null).
void remove_output(const std::string& path);

// Writes `text`, or what `write` puts on the stream, to `path`, replacing it; throws InputError
// when that fails.
void write_file(const std::string& path, const std::string& text);
void write_file(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace ars
