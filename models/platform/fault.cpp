#include "models/platform/fault.h"

#include <climits>
#include <cstdint>
#include <sstream>

#include "kernels/api.h"

namespace ars {

namespace {

// Reads the next ':'-separated whole number of `in` within [minimum, maximum].
bool next_number(std::istringstream& in, long long minimum, long long maximum, long long& value) {
  std::string field;
  if (!std::getline(in, field, ':') || field.empty()) return false;
  std::istringstream number(field);
  return number >> value && number.eof() && value >= minimum && value <= maximum;
}

}  // namespace

Fault Fault::parse(const std::string& text) {
  std::istringstream in(text);
  std::string name;
  std::getline(in, name, ':');
  Fault fault;
  long long rank = -1;
  long long index = 0;
  long long value = 0;
  constexpr long long kInt32Max = INT32_MAX;
  bool ok = false;
  if (name == "drop-notify" || name == "notify-value" || name == "skip-wait") {
    fault.kind = name == "drop-notify"    ? Kind::DropNotify
                 : name == "notify-value" ? Kind::NotifyValue
                                          : Kind::SkipWait;
    ok = next_number(in, 0, kInt32Max, rank) && next_number(in, 0, LLONG_MAX, index) &&
         (fault.kind != Kind::NotifyValue || next_number(in, INT32_MIN, kInt32Max, value));
  } else if (name == "stall") {
    fault.kind = Kind::Stall;
    ok = next_number(in, 0, kInt32Max, rank);
  }
  fault.rank = static_cast<int>(rank);
  fault.index = static_cast<std::uint64_t>(index);
  fault.value = static_cast<std::int32_t>(value);
  if (!ok || in.peek() != std::char_traits<char>::eof()) {
    throw InputError("--fault: '" + text +
                     "' is not drop-notify:RANK:INDEX, notify-value:RANK:INDEX:VALUE, "
                     "skip-wait:RANK:INDEX or stall:RANK");
  }
  return fault;
}

std::string to_string(const Fault& fault) {
  const std::string rank = std::to_string(fault.rank);
  const std::string index = std::to_string(fault.index);
  switch (fault.kind) {
    case Fault::Kind::DropNotify:
      return "drop-notify:" + rank + ":" + index;
    case Fault::Kind::NotifyValue:
      return "notify-value:" + rank + ":" + index + ":" + std::to_string(fault.value);
    case Fault::Kind::SkipWait:
      return "skip-wait:" + rank + ":" + index;
    case Fault::Kind::Stall:
      break;
  }
  return "stall:" + rank;
}

}  // namespace ars
