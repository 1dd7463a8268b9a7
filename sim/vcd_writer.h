// Writes the models' value changes as a VCD waveform (1 ns time unit) with one scope per
// device. SystemC's own VCD writer stamps the wall-clock date into the file; this one keeps
// the same run byte-identical, and it accepts changes reported ahead of simulated time.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "models/trace_sink.h"

namespace ars {

class VcdWriter : public TraceSink {
 public:
  // Opens `path` at once so that an unwritable path fails before the simulation runs.
  explicit VcdWriter(const std::string& path);
  ~VcdWriter() override;

  int declare(const std::string& scope, const std::string& name, int width, Kind kind) override;
  void record(int var, std::uint64_t time_ps, std::int64_t value) override;
  void record_text(int var, std::uint64_t time_ps, const std::string& text) override;

  // Sorts the changes and writes the file.
  void close();

 private:
  struct Var {
    std::string scope;
    std::string name;
    int width;
    Kind kind;
    std::string code;
  };
  struct Change {
    std::uint64_t time_ps;
    std::uint64_t sequence;
    int var;
    std::int64_t value;
  };
  std::string format_value(const Var& var, std::int64_t value) const;
  void write_scopes(std::ofstream& out) const;

  std::string path_;
  std::ofstream out_;
  std::vector<Var> vars_;
  std::vector<Change> changes_;
  std::vector<std::string> texts_;
  bool closed_ = false;
};

}  // namespace ars
