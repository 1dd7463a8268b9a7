#include "sim/config/codegen.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <boost/program_options.hpp>

#include "kernels/api.h"
#include "sim/config/config.h"
#include "sim/config/suggest.h"

namespace ars {

namespace po = boost::program_options;

namespace {

int flag(const po::variables_map& values, const std::string& key, const std::string& origin) {
  const int value = values[key].as<int>();
  if (value != 0 && value != 1) {
    throw InputError("codegen profile " + origin + ": key '" + key +
                     "' = " + std::to_string(value) + ": must be 0 or 1");
  }
  return value;
}

// The choice whose name (to_string) is `word`; InputError listing the names otherwise.
template <typename Choice>
Choice choose(const std::string& origin, const std::string& key, const std::string& word,
              const std::vector<Choice>& choices) {
  std::string names;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (word == to_string(choices[i])) return choices[i];
    names += i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", ");
    names += to_string(choices[i]);
  }
  throw InputError("codegen profile " + origin + ": key '" + key + "' = " + word + ": must be " +
                   names);
}

}  // namespace

std::string resolve_codegen_path(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  if (name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".ini") {
    return name_or_path;
  }
  const std::string dir = (fs::path(config_dir()) / "codegen").string();
  const std::vector<std::string> names = ini_names(dir);
  if (std::find(names.begin(), names.end(), name_or_path) == names.end()) {
    throw InputError("--codegen: unknown profile '" + name_or_path + "'" +
                     did_you_mean(name_or_path, names) + "; the profiles in configs/codegen/ are " +
                     join(names) + ", or give an INI path");
  }
  return (fs::path(dir) / (name_or_path + ".ini")).string();
}

void load_codegen(const std::string& path, PlatformConfig& config) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    throw InputError("--codegen: no such profile file: " + path);
  }
  std::ifstream file(path);
  std::istringstream in(read_checked_ini(file, "codegen profile " + path));
  Codegen& c = config.codegen;
  std::string barrier = to_string(c.notify_barrier);
  std::string invalidate = to_string(c.wait_invalidate);
  po::options_description options;
  options.add_options()("codegen.name", po::value<std::string>(&c.name)->default_value(""))(
      "codegen.notify_barrier", po::value<std::string>(&barrier)->default_value(barrier))(
      "codegen.notify_flush", po::value<int>()->default_value(c.notify_flush))(
      "codegen.notify_dsb", po::value<int>()->default_value(c.notify_dsb))(
      "codegen.wait_invalidate", po::value<std::string>(&invalidate)->default_value(invalidate))(
      "codegen.store_fence", po::value<int>()->default_value(c.store_fence));
  po::variables_map values;
  try {
    po::store(po::parse_config_file(in, options, false), values);
    po::notify(values);
  } catch (const po::error& e) {
    throw InputError("codegen profile " + path + ": " + e.what());
  }
  c.notify_barrier =
      choose<Codegen::NotifyBarrier>(path, "codegen.notify_barrier", barrier,
                                     {Codegen::NotifyBarrier::PipeAll,
                                      Codegen::NotifyBarrier::Drain, Codegen::NotifyBarrier::None});
  c.wait_invalidate = choose<Codegen::WaitInvalidate>(
      path, "codegen.wait_invalidate", invalidate,
      {Codegen::WaitInvalidate::EveryWait, Codegen::WaitInvalidate::WaitAll,
       Codegen::WaitInvalidate::None});
  c.notify_flush = flag(values, "codegen.notify_flush", path);
  c.notify_dsb = flag(values, "codegen.notify_dsb", path);
  c.store_fence = flag(values, "codegen.store_fence", path);
  if (c.name.empty()) c.name = fs::path(path).stem().string();
}

Codegen runtime_kernel_sync() {
  Codegen sync;
  sync.notify_barrier = Codegen::NotifyBarrier::Drain;
  sync.wait_invalidate = Codegen::WaitInvalidate::None;
  return sync;
}

}  // namespace ars
