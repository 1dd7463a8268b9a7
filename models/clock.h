// Conversions from the configured clock and rates to simulated time.
#pragma once

#include <systemc>

namespace ars {

// Simulated time has a 1 ps resolution; call before any sc_time exists.
void init_time_resolution();

// Picoseconds to simulated time, rounded to the nearest ps exactly as sc_time(value, SC_PS) does
// at the 1 ps resolution, without its unit conversion: that constructor cost more than the
// rest of a DMA burst's bookkeeping.
inline sc_core::sc_time ps(double value) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(value + 0.5));
}

class Clock {
 public:
  explicit Clock(double GHz) : ps_per_cycle_(1000.0 / GHz) {}
  sc_core::sc_time cycles(double n) const { return ps(n * ps_per_cycle_); }
  double ps_per_cycle() const { return ps_per_cycle_; }
  // bytes per cycle -> bytes per ps
  double rate(double bytes_per_cycle) const { return bytes_per_cycle / ps_per_cycle_; }

 private:
  double ps_per_cycle_;
};

inline double GBps_to_bytes_per_ps(double GBps) {
  return GBps * 1e-3;
}

inline sc_core::sc_time ns(double value) {
  return ps(value * 1000.0);
}

// Exact for the 1 ps resolution: integer picoseconds to nanoseconds.
inline double to_ns(const sc_core::sc_time& t) {
  return static_cast<double>(t.value()) / 1000.0;
}

}  // namespace ars
