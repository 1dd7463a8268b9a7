#include "sim/outputs/vcd_writer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "kernels/api.h"
#include "sim/outputs/output_file.h"

namespace ars {

namespace {

std::string identifier(std::size_t index) {
  std::string code;
  do {
    code += static_cast<char>('!' + index % 94);
    index /= 94;
  } while (index > 0);
  return code;
}

std::vector<std::string> split(const std::string& scope) {
  std::vector<std::string> parts;
  std::stringstream in(scope);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  return parts;
}

// The device of a scope "devN..." (-1 for another scope).
int scope_device(const std::string& scope) {
  if (scope.rfind("dev", 0) != 0) return -1;
  std::size_t used = 0;
  try {
    const int device = std::stoi(scope.substr(3), &used);
    const char after = 3 + used < scope.size() ? scope[3 + used] : '.';
    return used > 0 && after == '.' ? device : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

std::string gtkw_path_for(const std::string& vcd_path) {
  std::error_code error;
  if (std::filesystem::exists(vcd_path, error) &&
      !std::filesystem::is_regular_file(vcd_path, error))
    return "";
  const std::string stem =
      vcd_path.size() > 4 && vcd_path.compare(vcd_path.size() - 4, 4, ".vcd") == 0
          ? vcd_path.substr(0, vcd_path.size() - 4)
          : vcd_path;
  return stem + ".gtkw";
}

VcdWriter::VcdWriter(const std::string& path, const std::vector<int>& devices,
                     const std::vector<int>& shown_devices)
    : path_(path), devices_(devices), shown_devices_(shown_devices) {
  // Sorted, for a search per declared variable: a full mesh of many devices declares P^2 links.
  std::sort(devices_.begin(), devices_.end());
  std::sort(shown_devices_.begin(), shown_devices_.end());
}

int VcdWriter::declare(const std::string& scope, const std::string& name, int width, Kind kind) {
  // A device taking part but not shown (--vcd-devices) keeps no changes at all: at thousands
  // of ranks the changes of every device would outgrow the memory.
  const int device = scope_device(scope);
  const bool kept = device < 0 || !among(devices_, device) || among(shown_devices_, device);
  vars_.push_back({scope, name, width, kind, identifier(vars_.size()), kept});
  return static_cast<int>(vars_.size()) - 1;
}

bool VcdWriter::among(const std::vector<int>& sorted, int device) {
  return std::binary_search(sorted.begin(), sorted.end(), device);
}

bool VcdWriter::shows(int device) const {
  return among(shown_devices_, device);
}

void VcdWriter::record(int var, std::uint64_t time_ps, std::int64_t value) {
  if (!vars_[static_cast<std::size_t>(var)].kept) return;
  changes_.push_back({time_ps, changes_.size(), var, value});
}

void VcdWriter::record_text(int var, std::uint64_t time_ps, const std::string& text) {
  texts_.push_back(text);
  record(var, time_ps, static_cast<std::int64_t>(texts_.size()) - 1);
}

std::string VcdWriter::format_value(const Var& var, std::int64_t value) const {
  if (var.kind == Kind::Text) {
    // Up to width/8 ASCII characters, first character in the top byte.
    const std::string& text = texts_[static_cast<std::size_t>(value)];
    std::string bits;
    for (int c = 0; c < var.width / 8; ++c) {
      const unsigned char ch = c < static_cast<int>(text.size()) ? text[c] : 0;
      for (int b = 7; b >= 0; --b) bits += ((ch >> b) & 1) ? '1' : '0';
    }
    const auto first = bits.find('1');
    return "b" + (first == std::string::npos ? "0" : bits.substr(first)) + " " + var.code;
  }
  std::uint64_t shown = value < 0 ? 0 : static_cast<std::uint64_t>(value);
  if (var.kind == Kind::Flag) shown = value > 0 ? 1 : 0;
  if (var.width == 1) return std::to_string(shown & 1) + var.code;
  std::string bits;
  for (int b = var.width - 1; b >= 0; --b) bits += ((shown >> b) & 1) ? '1' : '0';
  const auto first = bits.find('1');
  return "b" + (first == std::string::npos ? "0" : bits.substr(first)) + " " + var.code;
}

void VcdWriter::write_scopes(std::ostream& out) const {
  // Scopes in name order, variables in declaration order within each scope.
  std::map<std::string, std::vector<std::size_t>> by_scope;
  for (std::size_t i = 0; i < vars_.size(); ++i) {
    if (vars_[i].shown) by_scope[vars_[i].scope].push_back(i);
  }
  std::vector<std::string> open;
  for (const auto& [scope, members] : by_scope) {
    const std::vector<std::string> parts = split(scope);
    std::size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) ++common;
    while (open.size() > common) {
      out << "$upscope $end\n";
      open.pop_back();
    }
    for (std::size_t i = common; i < parts.size(); ++i) {
      out << "$scope module " << parts[i] << " $end\n";
      open.push_back(parts[i]);
    }
    for (std::size_t i : members) {
      const Var& v = vars_[i];
      if (!v.shown) continue;
      out << "$var wire " << v.width << " " << v.code << " " << v.name << " $end\n";
    }
  }
  while (!open.empty()) {
    out << "$upscope $end\n";
    open.pop_back();
  }
}

void VcdWriter::settle_vars() {
  for (const Change& c : changes_) {
    Var& var = vars_[c.var];
    if (var.kind == Kind::Text) {
      const std::size_t length = texts_[static_cast<std::size_t>(c.value)].size();
      var.width = std::max(var.width, static_cast<int>(8 * std::max<std::size_t>(1, length)));
    }
    if (c.value != 0) var.changes = true;
  }
  for (Var& var : vars_) {
    const int device = scope_device(var.scope);
    const bool taking_part = device < 0 || among(devices_, device);
    var.shown = var.kept && (taking_part || var.changes);
  }
}

std::string VcdWriter::write() {
  try {
    write_file(path_, [this](std::ostream& out) { write_vcd(out); });
    const std::string gtkw_path = gtkw_path_for(path_);
    if (!gtkw_path.empty()) write_file(gtkw_path, gtkw_text());
  } catch (const InputError& e) {
    remove_output(path_);
    return std::string("--vcd: ") + e.what();
  }
  return "";
}

void VcdWriter::write_vcd(std::ostream& out) {
  // Text variables start narrow; the names they carry decide their width.
  for (Var& var : vars_) {
    if (var.kind == Kind::Text) var.width = 8;
  }
  settle_vars();
  std::stable_sort(changes_.begin(), changes_.end(), [](const Change& a, const Change& b) {
    return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.sequence < b.sequence;
  });
  out << "$version allreduce-sim $end\n$timescale 1 ns $end\n";
  write_scopes(out);
  out << "$enddefinitions $end\n";

  std::vector<std::int64_t> running(vars_.size(), 0);
  // Every variable starts at zero, so a viewer shows no undefined stretch before a first change.
  std::vector<std::string> shown(vars_.size());
  out << "#0\n$dumpvars\n";
  for (std::size_t v = 0; v < vars_.size(); ++v) {
    if (!vars_[v].shown) continue;
    shown[v] = (vars_[v].width == 1 ? "0" : "b0 ") + vars_[v].code;
    out << shown[v] << "\n";
  }
  out << "$end\n";
  std::size_t i = 0;
  while (i < changes_.size()) {
    const std::uint64_t ns = changes_[i].time_ps / 1000;
    std::vector<int> touched;
    for (; i < changes_.size() && changes_[i].time_ps / 1000 == ns; ++i) {
      const Change& c = changes_[i];
      const Kind kind = vars_[c.var].kind;
      const bool accumulates = kind == Kind::Counter || kind == Kind::Flag;
      running[c.var] = accumulates ? running[c.var] + c.value : c.value;
      touched.push_back(c.var);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    bool stamped = ns == 0;
    for (int var : touched) {
      if (!vars_[var].shown) continue;
      const std::string text = format_value(vars_[var], running[var]);
      if (text == shown[var]) continue;
      if (!stamped) {
        out << "#" << ns << "\n";
        stamped = true;
      }
      out << text << "\n";
      shown[var] = text;
    }
  }
}

// GTKWave flags (its savefile format): right-justified binary for a bit, decimal for a number,
// ASCII for text; a blank row opens and closes each device's group.
std::string VcdWriter::gtkw_text() const {
  constexpr const char* kBit = "@28";
  constexpr const char* kDecimal = "@24";
  constexpr const char* kAscii = "@820";
  constexpr const char* kGroupBegin = "@800200";
  constexpr const char* kGroupEnd = "@1000200";
  std::ostringstream out;
  const std::string file = path_.substr(path_.find_last_of('/') + 1);
  // The whole run in view: at zoom z GTKWave 3.3 shows about 3.8 x 2^-z ns in a window of this
  // size (measured), so z = -log2(end / 3.5) leaves a little room after the last change.
  const std::uint64_t end_ns =
      changes_.empty() ? 1 : std::max<std::uint64_t>(1, changes_.back().time_ps / 1000);
  out << "[*] GTKWave save file written by allreduce-sim for " << file << "\n"
      << "[dumpfile] \"" << file << "\"\n[timestart] 0\n[size] 1400 900\n[signals_width] 300\n"
      << std::fixed << std::setprecision(6) << "*" << -std::log2(static_cast<double>(end_ns) / 3.5)
      << " -1";
  for (int marker = 0; marker < 26; ++marker) out << " -1";
  out << "\n";
  for (int device : shown_devices_) {
    const std::string scope = "dev" + std::to_string(device);
    out << "[treeopen] " << scope << ".\n";
  }
  for (int device : shown_devices_) {
    const std::string scope = "dev" + std::to_string(device);
    out << kGroupBegin << "\n-" << scope << "\n";
    const auto name = [](const Var& v) {
      const std::string full = v.scope + "." + v.name;
      return v.width == 1 ? full : full + "[" + std::to_string(v.width - 1) + ":0]";
    };
    // Phase and round first, then the links that carried data, then the signal cells.
    for (const char* what : {"phase", "round"}) {
      for (const Var& v : vars_) {
        if (v.scope == scope + ".core" && v.name == what) {
          out << (v.kind == Kind::Text ? kAscii : kDecimal) << "\n" << name(v) << "\n";
        }
      }
    }
    for (const Var& v : vars_) {
      const bool link = v.scope == scope && v.name.size() > 5 &&
                        v.name.compare(v.name.size() - 5, 5, "_busy") == 0;
      if (link && v.changes) out << kBit << "\n" << name(v) << "\n";
    }
    for (const Var& v : vars_) {
      if (v.scope == scope + ".signal") out << kDecimal << "\n" << name(v) << "\n";
    }
    out << kGroupEnd << "\n-" << scope << "\n";
  }
  return out.str();
}

}  // namespace ars
