#include "sim/outputs/output_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kernels/api.h"

namespace ars {

void check_writable(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  std::error_code error;
  const fs::path parent =
      fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (fs::is_directory(path, error) || !fs::is_directory(parent, error) ||
      ::access(parent.c_str(), W_OK) != 0 ||
      (fs::exists(path, error) && ::access(path.c_str(), W_OK) != 0)) {
    throw InputError(option + ": cannot write " + path);
  }
}

void write_file(const std::string& path, const std::string& text) {
  write_file(path, [&text](std::ostream& out) { out << text; });
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::trunc);
  write(out);
  if (!out) throw InputError("cannot write " + path);
}

}  // namespace ars
