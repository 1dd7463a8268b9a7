#include "models/rank_stats.h"

#include <cstring>
#include <deque>
#include <mutex>
#include <ostream>
#include <unordered_map>

namespace ars {

namespace {

// Every phase name the process has seen, by index; index 0 is "". A deque keeps the names
// where they are as it grows, so references to them stay valid.
struct PhaseTable {
  std::mutex mutex;
  std::deque<std::string> names{""};
  std::unordered_map<std::string, std::uint32_t> ids{{"", 0}};
  std::uint32_t last = 0;  // consecutive rounds mostly share their phase
};

PhaseTable& phase_table() {
  static PhaseTable table;
  return table;
}

}  // namespace

PhaseName::PhaseName(const char* name) {
  PhaseTable& table = phase_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (std::strcmp(table.names[table.last].c_str(), name) != 0) {
    const auto [entry, fresh] =
        table.ids.try_emplace(name, static_cast<std::uint32_t>(table.names.size()));
    if (fresh) table.names.emplace_back(name);
    table.last = entry->second;
  }
  id_ = table.last;
}

const std::string& PhaseName::str() const {
  PhaseTable& table = phase_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  return table.names[id_];
}

bool operator==(const PhaseName& phase, const char* name) {
  return phase.str() == name;
}

std::ostream& operator<<(std::ostream& out, const PhaseName& phase) {
  return out << phase.str();
}

}  // namespace ars
