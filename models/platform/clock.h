// Conversions from the configured clock and rates to simulated time.
#pragma once

#include <cstdint>

#include <systemc>

namespace ars {

// Simulated time has a 1 ps resolution; call before any sc_time exists.
void init_time_resolution();

// Picoseconds to simulated time, rounded to the nearest ps exactly as sc_time(value, SC_PS) does
// at the 1 ps resolution, but inline: that constructor and sc_time::from_value are library
// calls that cost more than the rest of a DMA burst's bookkeeping.
inline sc_core::sc_time ps(double value) {
  static const sc_core::sc_time one_ps = sc_core::sc_time::from_value(1);
  return one_ps * value;
}

// Integer picoseconds to simulated time, exactly: inline below 2^52 ps (about 75 minutes),
// where ps() rounds v + 0.5 back to v, and through the library's sc_time::from_value above.
inline sc_core::sc_time ps_exact(std::uint64_t value) {
  constexpr std::uint64_t kInlineBelow = std::uint64_t{1} << 52;
  return value < kInlineBelow ? ps(static_cast<double>(value))
                              : sc_core::sc_time::from_value(value);
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

// The simulated time now, read inline from the module's context: sc_time_stamp() is a call
// into the library, and the hot paths ask for the time many times per operation.
inline const sc_core::sc_time& current_time(const sc_core::sc_object& module) {
  return module.simcontext()->time_stamp();
}

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
