// Runs the allreduce-sim binary (path in ARS_BINARY) as a child process with its own argv,
// separate stdout and stderr, and a wall-clock bound that turns a hang into a failure.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ars::test {

struct ProcessResult {
  int exit_code = -1;  // -1 when the process did not exit normally
  int signal = 0;      // the signal that ended it, or 0
  bool hung = false;   // killed after the wall-clock bound
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh empty directory under the system's temporary directory, removed by its owner.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ars-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// AddressSanitizer warns once when an exception unwinds out of a SystemC thread, whose stack
// it cannot size; that note is the sanitizer's, not the program's output, so a sanitized
// build drops it before tests look at stderr.
inline std::string without_sanitizer_notes(std::string err) {
#if defined(__SANITIZE_ADDRESS__)
  for (const char* line : {"False positive error reports may follow\n",
                           "For details see https://github.com/google/sanitizers/issues/189\n"}) {
    for (auto at = err.find(line); at != std::string::npos; at = err.find(line)) {
      err.erase(at, std::string(line).size());
    }
  }
  for (auto at = err.find("WARNING: ASan is ignoring requested __asan_handle_no_return");
       at != std::string::npos;
       at = err.find("WARNING: ASan is ignoring requested __asan_handle_no_return")) {
    const auto begin = err.rfind('\n', at);
    const auto end = err.find('\n', at);
    const auto start = begin == std::string::npos ? 0 : begin + 1;
    const auto stop = end == std::string::npos ? err.size() : end + 1;
    err.erase(start, stop - start);
  }
#endif
  return err;
}

inline ProcessResult run_binary(const std::vector<std::string>& args, double timeout_seconds = 60) {
  ProcessResult result;
  const char* binary = std::getenv("ARS_BINARY");
  if (binary == nullptr) {
    result.err = "ARS_BINARY is not set";
    return result;
  }
  ScratchDir capture;
  const std::string out_path = capture / "stdout";
  const std::string err_path = capture / "stderr";
  std::vector<std::string> words = {binary};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  const pid_t child = ::fork();
  if (child == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(binary, argv.data());
    ::_exit(127);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      result.hung = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = without_sanitizer_notes(read_file(err_path));
  return result;
}

// The device time of a run: -q's summary line ("device time: ... ns").
inline std::string device_time(std::vector<std::string> args) {
  args.push_back("-q");
  const ProcessResult p = run_binary(args);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  return p.out.substr(0, p.out.find('\n'));
}

}  // namespace ars::test
