// Writes the models' value changes as a VCD waveform (1 ns time unit) with one scope per
// device, and a GTKWave save file beside it. SystemC's own VCD writer stamps the wall-clock
// date into the file; this one keeps the same run byte-identical, and it accepts changes
// reported ahead of simulated time.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "models/records/trace_sink.h"

namespace ars {

// The GTKWave save file written beside a VCD: run.vcd -> run.gtkw; none ("") beside what is
// not a file (/dev/null, a pipe).
std::string gtkw_path_for(const std::string& vcd_path);

class VcdWriter : public TraceSink {
 public:
  // Keeps the changes until write(): a run refused or failed before it leaves `path` as it
  // was. `devices` are those taking part (-d): another device's variables are left out unless
  // they change (a link that relays the participants' traffic). Of those taking part, only
  // `shown_devices` have their variables in the file.
  VcdWriter(const std::string& path, const std::vector<int>& devices,
            const std::vector<int>& shown_devices);

  int declare(const std::string& scope, const std::string& name, int width, Kind kind) override;
  void record(int var, std::uint64_t time_ps, std::int64_t value) override;
  void record_text(int var, std::uint64_t time_ps, const std::string& text) override;
  bool shows(int device) const override;

  // Sorts the changes and writes the VCD and its save file (gtkw_path_for); returns why either
  // could not be written, or "" (neither is left behind then).
  std::string write();

 private:
  struct Var {
    std::string scope;
    std::string name;
    int width;
    Kind kind;
    std::string code;
    bool kept = true;      // its changes are recorded (its device is shown, or takes no part)
    bool changes = false;  // some change sets a non-zero value
    bool shown = true;
  };
  struct Change {
    std::uint64_t time_ps;
    std::uint64_t sequence;
    int var;
    std::int64_t value;
  };
  std::string format_value(const Var& var, std::int64_t value) const;
  void write_scopes(std::ostream& out) const;
  void write_vcd(std::ostream& out);
  // The variables shown, and Text widths wide enough for their longest text.
  void settle_vars();
  std::string gtkw_text() const;

  std::string path_;
  static bool among(const std::vector<int>& sorted, int device);

  std::vector<int> devices_;        // sorted
  std::vector<int> shown_devices_;  // sorted
  std::vector<Var> vars_;
  std::vector<Change> changes_;
  std::vector<std::string> texts_;
};

}  // namespace ars
