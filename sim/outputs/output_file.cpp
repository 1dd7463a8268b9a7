#include "sim/outputs/output_file.h"

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
  std::error_code error;
  std::string compared =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path, error), error).string();
  if (error) compared = path;
  for (const auto& [other, other_path] : taken_) {
    if (other_path == compared)
      throw InputError(what + ": " + path + " is written by " + other + " too");
  }
  taken_.emplace_back(what, compared);
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
