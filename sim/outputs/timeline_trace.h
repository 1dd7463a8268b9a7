// The run as a timeline in Chrome's Trace Event Format (JSON), which ui.perfetto.dev and
// chrome://tracing open. One process per device (pid = device), with threads for the core
// (tid 1), each DMA queue (tid 10 + queue) and each link direction the device sends on
// (tid 1000 + link), counters for the UB bytes in use, the bytes in flight on each link and
// the signal cells, flow arrows from every notify to the wait it released, and a "critical
// path" process (pid 100000) laying the path's steps end to end; links that start at a switch
// (cluster, superpod) live in a "switches" process (pid 100001). Timestamps are microseconds
// with three decimals (nanoseconds), written as fixed digits, so the same run gives the same
// bytes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

#include "models/records/trace_sink.h"
#include "sim/run.h"

namespace ars {

class TimelineTrace : public TraceSink {
 public:
  // `devices`: the devices the trace shows; the others' changes are dropped as they come.
  // `signals`: the names of the layout's signals, by id.
  TimelineTrace(std::vector<int> devices, std::vector<std::string> signals);

  int declare(const std::string& scope, const std::string& name, int width, Kind kind) override;
  void record(int var, std::uint64_t time_ps, std::int64_t value) override;
  void record_text(int var, std::uint64_t time_ps, const std::string& text) override;
  bool shows(int device) const override;

  // Writes the whole trace, from the changes recorded during the run and the run's records.
  void write(const RunResult& result, std::ostream& out) const;

 private:
  struct Var {
    int pid = -1;  // -1: not shown
    std::string name;
    Kind kind = Kind::Value;
    bool slices = false;  // a busy flag shown as slices on a thread of its own
  };
  struct Change {
    std::uint64_t time_ps;
    int var;
    std::int64_t value;
  };
  std::vector<int> devices_;
  std::vector<std::string> signals_;
  std::vector<Var> vars_;
  std::vector<Change> changes_;
};

// Hands every change to several sinks (the VCD and the timeline); null sinks are skipped.
class TraceTee : public TraceSink {
 public:
  explicit TraceTee(std::initializer_list<TraceSink*> sinks);
  bool empty() const { return sinks_.empty(); }

  int declare(const std::string& scope, const std::string& name, int width, Kind kind) override;
  void record(int var, std::uint64_t time_ps, std::int64_t value) override;
  void record_text(int var, std::uint64_t time_ps, const std::string& text) override;
  bool shows(int device) const override;  // by any of the sinks

 private:
  std::vector<TraceSink*> sinks_;
  std::vector<std::vector<int>> vars_;  // per declared variable, its handle in each sink
};

}  // namespace ars
