#include "sim/studies/batch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <deque>

#include <nlohmann/json.hpp>

#include "sim/outputs/report.h"

namespace ars {

namespace {

struct Child {
  pid_t pid;
  std::size_t index;
  int fd;
  std::string output;
};

// Runs in the child: one simulation, its JSON (or the error) down the pipe, then _exit.
[[noreturn]] void run_child(const RunRequest& request, int fd) {
  BatchResult run;
  int status = 0;
  try {
    run.result = run_allreduce(request);
    if (!run.result.refused.empty()) {
      run.error = run.result.refused;
      run.refused = true;
      status = 2;
    }
  } catch (const std::exception& e) {
    run.error = e.what();
    run.refused = true;
    status = 2;
  }
  const std::string message = batch_json(run);
  std::size_t written = 0;
  while (written < message.size()) {
    const ssize_t n = ::write(fd, message.data() + written, message.size() - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(status);
}

void drain(Child& child) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n > 0) {
      child.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(child.fd);
}

}  // namespace

RunResult result_from_json(const std::string& text, const RunRequest& request) {
  const nlohmann::json j = nlohmann::json::parse(text);
  RunResult r;
  r.request = request;
  r.request.problem.ranks = j.at("P").get<int>();
  r.completed = j.at("completed").get<bool>();
  r.checked = j.at("checked").get<bool>();
  r.correct = j.at("correct").get<bool>();
  r.failure = j.value("failure", "");
  r.mismatch_count = j.at("mismatches").get<std::uint64_t>();
  r.device_time_ns = j.at("device_time_ns").get<double>();
  r.wall_seconds = j.value("wall_seconds", 0.0);
  r.simulated_operations = j.value("simulated_operations", std::uint64_t{0});
  auto ps = [](const nlohmann::json& v) {
    return static_cast<std::uint64_t>(v.get<double>() * 1000.0 + 0.5);
  };
  for (const auto& s : j.at("ranks")) {
    RankStats rank;
    rank.rank = s.at("rank").get<int>();
    rank.device = s.at("device").get<int>();
    rank.remote_read_bytes = s.at("remote_read_bytes").get<std::uint64_t>();
    rank.remote_write_bytes = s.at("remote_write_bytes").get<std::uint64_t>();
    rank.local_bytes = s.at("local_bytes").get<std::uint64_t>();
    rank.notifies = s.at("notifies").get<std::uint64_t>();
    rank.waits = s.at("waits").get<std::uint64_t>();
    rank.polls = s.at("polls").get<std::uint64_t>();
    rank.transfers = s.at("transfers").get<std::uint64_t>();
    rank.reduces = s.at("reduces").get<std::uint64_t>();
    rank.ub_peak_bytes = s.value("ub_peak_bytes", std::uint64_t{0});
    rank.start_ps = ps(s.at("start_ns"));
    rank.finish_ps = ps(s.at("finish_ns"));
    rank.finished = s.at("finished").get<bool>();
    r.ranks.push_back(rank);
  }
  for (const auto& s : j.value("blocks", nlohmann::json::array())) {
    RankStats block;
    block.rank = s.at("rank").get<int>();
    block.block = s.at("block").get<int>();
    block.remote_read_bytes = s.at("remote_read_bytes").get<std::uint64_t>();
    block.notifies = s.at("notifies").get<std::uint64_t>();
    block.waits = s.at("waits").get<std::uint64_t>();
    block.polls = s.at("polls").get<std::uint64_t>();
    block.ub_peak_bytes = s.value("ub_peak_bytes", std::uint64_t{0});
    block.start_ps = ps(s.at("start_ns"));
    block.finish_ps = ps(s.at("finish_ns"));
    block.finished = s.at("finished").get<bool>();
    r.blocks.push_back(block);
  }
  for (const auto& o : j.at("rounds")) {
    RoundRecord round;
    round.round = o.at("round").get<int>();
    round.phase = o.at("phase").get<std::string>();
    round.start_ps = ps(o.at("start_ns"));
    round.barrier_ps = ps(o.at("barrier_ns"));
    round.transfer_ps = ps(o.at("transfer_ns"));
    round.reduce_ps = ps(o.at("reduce_ns"));
    round.bytes = o.at("bytes").get<std::uint64_t>();
    round.remote_bytes = o.at("remote_bytes").get<std::uint64_t>();
    const int rank = o.at("rank").get<int>();
    if (!o.contains("block")) {
      r.ranks.at(static_cast<std::size_t>(rank)).rounds.push_back(round);
      continue;
    }
    const auto blocks = r.request.problem.core_num;
    r.blocks.at(static_cast<std::size_t>(rank * blocks + o.at("block").get<int>()))
        .rounds.push_back(round);
  }
  for (RankStats& rank : r.ranks) {
    if (!r.blocks.empty()) rank.rounds = sum_blocks(r.blocks, rank.rank).rounds;
  }
  return r;
}

std::string batch_json(const BatchResult& run) {
  if (!run.error.empty())
    return nlohmann::json{{"error", run.error}, {"refused", run.refused}}.dump();
  nlohmann::json j = nlohmann::json::parse(to_json(run.result));
  j["wall_seconds"] = run.result.wall_seconds;
  j["simulated_operations"] = run.result.simulated_operations;
  return j.dump();
}

BatchResult batch_result_from_json(const std::string& json, const RunRequest& request) {
  BatchResult run;
  const nlohmann::json j = nlohmann::json::parse(json);
  if (j.contains("error")) {
    run.error = j.at("error").get<std::string>();
    run.refused = j.value("refused", false);
    run.result.request = request;
  } else {
    run.result = result_from_json(json, request);
  }
  return run;
}

std::vector<BatchResult> run_batch(const std::vector<RunRequest>& requests, int jobs,
                                   const BatchProgress& progress, const BatchFinished& finished) {
  std::vector<BatchResult> results(requests.size());
  std::deque<Child> running;  // in start order
  std::size_t next = 0;
  std::size_t done = 0;
  jobs = std::max(1, jobs);
  while (done < requests.size()) {
    while (next < requests.size() && static_cast<int>(running.size()) < jobs) {
      int fds[2];
      // Like the memory guard's refusal, a machine out of processes or descriptors is told
      // plainly rather than crashing.
      if (::pipe(fds) != 0) throw InputError("cannot open a pipe for a simulation process");
      std::fflush(nullptr);
      const pid_t pid = ::fork();
      if (pid < 0) throw InputError("cannot start a simulation process");
      if (pid == 0) {
        ::close(fds[0]);
        run_child(requests[next], fds[1]);
      }
      ::close(fds[1]);
      running.push_back(Child{pid, next, fds[0], {}});
      ++next;
    }
    // Children write at most a few hundred KiB; read the oldest to its end, then reap it.
    Child& child = running.front();
    drain(child);
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    BatchResult& out = results[child.index];
    try {
      out = batch_result_from_json(child.output, requests[child.index]);
    } catch (const nlohmann::json::exception&) {
      out.error = "the simulation process ended abnormally (status " + std::to_string(status) + ")";
      out.result.request = requests[child.index];
      child.output = batch_json(out);
    }
    if (finished) finished(child.index, out, child.output);
    running.pop_front();
    ++done;
    if (progress) progress(done, requests.size());
  }
  return results;
}

}  // namespace ars
