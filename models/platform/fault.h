// Faults a run can inject on purpose, so that users and tests can provoke the failures a
// broken protocol would show (a lost notify, a wrong value, a dead core) and see how the
// simulator reports them. No SystemC here: the command line parses them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ars {

struct Fault {
  enum class Kind {
    DropNotify,   // drop-notify:RANK:INDEX      the rank's INDEX-th notify never arrives
    NotifyValue,  // notify-value:RANK:INDEX:V   the rank's INDEX-th notify carries V instead
    SkipWait,     // skip-wait:RANK:INDEX        the rank's INDEX-th wait returns at once
    Stall,        // stall:RANK                  the rank's core never starts its kernel
  };
  Kind kind = Kind::DropNotify;
  int rank = 0;
  std::uint64_t index = 0;  // 0-based count of the rank's notifies or waits
  std::int32_t value = 0;   // NotifyValue only

  // Parses the forms above; throws InputError naming the text otherwise.
  static Fault parse(const std::string& text);
};
// The form parse() reads: drop-notify:1:2.
std::string to_string(const Fault& fault);

using Faults = std::vector<Fault>;

}  // namespace ars
