#include "sim/vcd_writer.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "kernels/api.h"

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

}  // namespace

VcdWriter::VcdWriter(const std::string& path) : path_(path), out_(path, std::ios::trunc) {
  if (!out_) throw InputError("cannot write the VCD file " + path);
}

VcdWriter::~VcdWriter() {
  if (!closed_) close();
}

int VcdWriter::declare(const std::string& scope, const std::string& name, int width, Kind kind) {
  vars_.push_back({scope, name, width, kind, identifier(vars_.size())});
  return static_cast<int>(vars_.size()) - 1;
}

void VcdWriter::record(int var, std::uint64_t time_ps, std::int64_t value) {
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

void VcdWriter::write_scopes(std::ofstream& out) const {
  // Scopes in name order, variables in declaration order within each scope.
  std::map<std::string, std::vector<std::size_t>> by_scope;
  for (std::size_t i = 0; i < vars_.size(); ++i) by_scope[vars_[i].scope].push_back(i);
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
      out << "$var wire " << v.width << " " << v.code << " " << v.name << " $end\n";
    }
  }
  while (!open.empty()) {
    out << "$upscope $end\n";
    open.pop_back();
  }
}

void VcdWriter::close() {
  closed_ = true;
  std::stable_sort(changes_.begin(), changes_.end(), [](const Change& a, const Change& b) {
    return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.sequence < b.sequence;
  });
  out_ << "$version allreduce-sim $end\n$timescale 1 ns $end\n";
  write_scopes(out_);
  out_ << "$enddefinitions $end\n";

  std::vector<std::int64_t> running(vars_.size(), 0);
  std::vector<std::string> shown(vars_.size());
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
    bool stamped = false;
    for (int var : touched) {
      const std::string text = format_value(vars_[var], running[var]);
      if (text == shown[var]) continue;
      if (!stamped) {
        out_ << "#" << ns << "\n";
        stamped = true;
      }
      out_ << text << "\n";
      shown[var] = text;
    }
  }
  out_.close();
}

}  // namespace ars
