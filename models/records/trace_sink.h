// Where models report value changes for waveforms. Changes may be reported ahead of the
// current simulated time (a reserved link is busy in the future), so the sink orders them.
#pragma once

#include <cstdint>
#include <string>

namespace ars {

class TraceSink {
 public:
  enum class Kind {
    Value,    // record() sets the value
    Counter,  // record() adds a (signed) delta to the running value
    Flag,     // like Counter, shown as 1 while the running value is above zero
    Text,     // record_text() sets a short label, shown as ASCII
  };
  virtual ~TraceSink() = default;
  // `scope` is a dotted hierarchy such as "dev0.dma"; returns the variable's handle.
  virtual int declare(const std::string& scope, const std::string& name, int width, Kind kind) = 0;
  virtual void record(int var, std::uint64_t time_ps, std::int64_t value) = 0;
  virtual void record_text(int var, std::uint64_t time_ps, const std::string& text) = 0;
  // Whether a device taking part is shown at all: one that is not gets no variables, so a
  // waveform of a few devices out of thousands costs what those few record.
  virtual bool shows(int device) const = 0;
};

}  // namespace ars
