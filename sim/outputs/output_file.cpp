#include "sim/outputs/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kernels/api.h"

namespace ars {

namespace {

// Throws InputError naming `option` when `path` cannot be written; creates nothing.
void check_writable(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path parent =
      fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (fs::is_directory(path, error) || !fs::is_directory(parent, error) ||
      ::access(parent.c_str(), W_OK) != 0 ||
      (fs::exists(path, error) && ::access(path.c_str(), W_OK) != 0)) {
    throw InputError(option + ": cannot write " + path);
  }
}

}  // namespace

std::string OutputPaths::take(const boost::program_options::variables_map& vm,
                              const std::string& option) {
  const auto given = vm.find(option.substr(2));
  if (given == vm.end()) return "";
  const std::string path = given->second.as<std::string>();
  if (path.empty()) throw InputError(option + ": needs a file name");
  add(option, path);
  return path;
}

void OutputPaths::add(const std::string& what, const std::string& path) {
  check_writable(what, path);
  const File file = identify(what, path, true);
  check_against_taken(file, path);
  taken_.push_back(file);
}

void OutputPaths::read(const std::string& what, const std::string& path) {
  const File file = identify(what, path, false);
  check_against_taken(file, path);
  taken_.push_back(file);
}

OutputPaths::File OutputPaths::identify(const std::string& what, const std::string& path,
                                        bool written) const {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path reached = fs::absolute(path, error);
  // A link that names a file not made yet still names it: follow the links by hand.
  for (int hops = 0; hops < 40 && fs::is_symlink(reached, error); ++hops) {
    const fs::path target = fs::read_symlink(reached, error);
    if (error) break;
    reached = target.is_absolute() ? target : reached.parent_path() / target;
  }
  File file{what, fs::weakly_canonical(reached, error).string(), "", written};
  if (error) file.path = path;
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0)
    file.inode = std::to_string(status.st_dev) + ":" + std::to_string(status.st_ino);
  return file;
}

void OutputPaths::check_against_taken(const File& file, const std::string& path) const {
  for (const File& other : taken_) {
    const bool same = other.path == file.path || (!file.inode.empty() && other.inode == file.inode);
    if (!same || (!file.written && !other.written)) continue;
    if (file.written && other.written)
      throw InputError(file.what + ": " + path + " is written by " + other.what + " too");
    const File& output = file.written ? file : other;
    const File& input = file.written ? other : file;
    throw InputError(output.what + ": " + path + " is the file " + input.what +
                     " reads; name another file");
  }
}

void remove_output(const std::string& path) {
  std::error_code error;
  if (!path.empty() && std::filesystem::is_regular_file(path, error))
    std::filesystem::remove(path, error);
}

void write_file(const std::string& path, const std::string& text) {
  write_file(path, [&text](std::ostream& out) { out << text; });
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::trunc);
  write(out);
  out.close();  // what is still buffered fails here on a full disk
  if (!out) {
    remove_output(path);
    throw InputError("cannot write " + path);
  }
}

}  // namespace ars
