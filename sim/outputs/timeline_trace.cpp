#include "sim/outputs/timeline_trace.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "sim/outputs/critical_path.h"

namespace ars {

namespace {

constexpr int kCoreTid = 1;  // tid of the core within a device's process
constexpr int kQueueTid = 10;
constexpr int kLinkTid = 1000;
// With core_num > 1, block b's core and DMA queues: a range of tids each, past the links'.
constexpr int kBlockTid = 1000000;
constexpr int kTidsPerBlock = 2048;  // the core, then dma.queues (at most 1024) queues
constexpr int kCriticalPid = 100000;
constexpr int kSwitchPid = 100001;  // links that start at a switch (leafL, spineS, nodeN)

std::uint64_t to_ns(std::uint64_t ps) {
  return (ps + 500) / 1000;
}

// Microseconds with nanosecond digits, fixed.
std::string us(std::uint64_t ns) {
  std::string frac = std::to_string(ns % 1000);
  return std::to_string(ns / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump();
}

std::string strip_suffix(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() &&
                 name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0
             ? name.substr(0, name.size() - suffix.size())
             : name;
}

// One event with the keys that order it: by track, then time, enclosing slices first.
struct Event {
  int pid;
  int tid;
  int sub;  // counters: the variable, so each counter's samples stay together
  std::uint64_t ts;
  std::uint64_t dur;
  std::string text;
};

class Events {
 public:
  void slice(int pid, int tid, std::uint64_t start_ps, std::uint64_t end_ps,
             const std::string& name, const char* cat, const std::string& args,
             const std::string& flow = "") {
    const std::uint64_t ts = to_ns(start_ps);
    const std::uint64_t dur = to_ns(end_ps) - ts;
    events_.push_back({pid, tid, 0, ts, dur,
                       "{\"ph\":\"X\",\"pid\":" + std::to_string(pid) +
                           ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + us(ts) +
                           ",\"dur\":" + us(dur) + ",\"name\":" + quoted(name) + ",\"cat\":\"" +
                           cat + "\"" + flow + ",\"args\":{" + args + "}}"});
  }
  void counter(int pid, int var, std::uint64_t ns, const std::string& name, const char* field,
               std::int64_t value) {
    events_.push_back({pid, 0, var, ns, 0,
                       "{\"ph\":\"C\",\"pid\":" + std::to_string(pid) + ",\"ts\":" + us(ns) +
                           ",\"name\":" + quoted(name) + ",\"args\":{\"" + field +
                           "\":" + std::to_string(value) + "}}"});
  }
  void metadata(int pid, int tid, const char* what, const std::string& name, int sort) {
    const std::string where =
        "\"pid\":" + std::to_string(pid) + (tid >= 0 ? ",\"tid\":" + std::to_string(tid) : "");
    const std::string kind = tid >= 0 ? "thread" : "process";
    meta_.push_back("{\"ph\":\"M\"," + where + ",\"name\":\"" + kind + "_" + what +
                    "\",\"args\":{\"name\":" + quoted(name) + "}}");
    meta_.push_back("{\"ph\":\"M\"," + where + ",\"name\":\"" + kind +
                    "_sort_index\",\"args\":{\"sort_index\":" + std::to_string(sort) + "}}");
  }
  // Streamed: a large run's trace is hundreds of megabytes, not worth holding twice.
  void write(std::ostream& out, const std::string& other) {
    std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
      return std::tie(a.pid, a.tid, a.sub, a.ts, b.dur) <
             std::tie(b.pid, b.tid, b.sub, b.ts, a.dur);
    });
    out << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << other << ",\"traceEvents\":[\n";
    const char* separator = "";
    for (const std::string& m : meta_) {
      out << separator << m;
      separator = ",\n";
    }
    for (const Event& e : events_) {
      out << separator << e.text;
      separator = ",\n";
    }
    out << "\n]}\n";
  }

 private:
  std::vector<Event> events_;
  std::vector<std::string> meta_;
};

}  // namespace

TimelineTrace::TimelineTrace(std::vector<int> devices, std::vector<std::string> signals)
    : devices_(std::move(devices)), signals_(std::move(signals)) {}

bool TimelineTrace::shows(int device) const {
  return std::find(devices_.begin(), devices_.end(), device) != devices_.end();
}

int TimelineTrace::declare(const std::string& scope, const std::string& name, int, Kind kind) {
  Var var;
  var.kind = kind;
  // Scopes are "devN", "devN.ub", "devN.signal", ...: the device is the process.
  const std::string head = scope.substr(0, scope.find('.'));
  const std::string part = scope.size() > head.size() ? scope.substr(head.size() + 1) : "";
  int device = -1;
  if (head.rfind("dev", 0) == 0 && head.size() > 3 &&
      head.find_first_not_of("0123456789", 3) == std::string::npos) {
    device = std::stoi(head.substr(3));
  }
  // Queues and the cores come from the run's records, which carry more than their flags
  // ("dma", "core", or "dma3", "core3" for block 3 when ranks run several).
  const std::size_t digits = part.find_first_of("0123456789");
  const std::string unit = part.substr(0, digits);
  const bool from_records = unit == "dma" || unit == "core";
  if ((device < 0 || shows(device)) && !from_records) {
    var.pid = device >= 0 ? device : kSwitchPid;
    if (unit == "ub") {
      var.name = "UB bytes in use" +
                 (digits == std::string::npos ? "" : " (block " + part.substr(digits) + ")");
    } else if (part == "signal") {
      var.name = "signal " + name;
    } else if (kind == Kind::Flag) {
      var.name = (device >= 0 ? "" : head + ".") + strip_suffix(name, "_busy");
      var.slices = true;
    } else {
      var.name = (device >= 0 ? "" : head + ".") + strip_suffix(name, "_bytes_in_flight") +
                 " bytes in flight";
    }
  }
  vars_.push_back(var);
  return static_cast<int>(vars_.size()) - 1;
}

void TimelineTrace::record(int var, std::uint64_t time_ps, std::int64_t value) {
  if (vars_[static_cast<std::size_t>(var)].pid >= 0) changes_.push_back({time_ps, var, value});
}

void TimelineTrace::record_text(int, std::uint64_t, const std::string&) {}

void TimelineTrace::write(const RunResult& result, std::ostream& out) const {
  Events events;
  const auto signal_cell = [&](int signal, int row, int col) {
    const std::string name = signal >= 0 && signal < static_cast<int>(signals_.size())
                                 ? signals_[static_cast<std::size_t>(signal)]
                                 : "signal";
    return name + "[" + std::to_string(row) + "," + std::to_string(col) + "]";
  };

  // Flow ids: one per notify that released a blocked wait, both ends shown. Notifies are
  // keyed by the core (RunResult::units) that made them.
  const std::vector<RankStats>& units = result.units();
  const int blocks = result.blocks_per_rank();
  std::map<std::pair<std::size_t, std::uint32_t>, int> flow_of_notify;
  std::vector<std::vector<int>> flow_of_wait(units.size());
  for (std::size_t u = 0; u < units.size(); ++u) {
    const RankStats& s = units[u];
    for (const WaitLink& w : s.wait_links) {
      int id = -1;
      if (w.blocked && w.released_by.rank >= 0 && shows(s.device) &&
          shows(result.ranks[static_cast<std::size_t>(w.released_by.rank)].device)) {
        id = static_cast<int>(flow_of_notify.size()) + 1;
        const std::size_t by =
            static_cast<std::size_t>(w.released_by.rank * blocks + w.released_by.block);
        if (!flow_of_notify.emplace(std::pair{by, w.released_by.index}, id).second)
          id = -1;  // one arrow per notify
      }
      flow_of_wait[u].push_back(id);
    }
  }

  for (std::size_t u = 0; u < units.size(); ++u) {
    const RankStats& s = units[u];
    if (!shows(s.device)) continue;
    const int pid = s.device;
    // One core and its queues, or with blocks each block's apart.
    const int core_tid = blocks == 1 ? kCoreTid : kBlockTid + s.block * kTidsPerBlock;
    const int queue_tid = blocks == 1 ? kQueueTid : core_tid + 1;
    const std::string of_block = blocks == 1 ? "" : " (block " + std::to_string(s.block) + ")";
    if (s.block == 0) {
      events.metadata(
          pid, -1, "name",
          "device " + std::to_string(s.device) + " (rank " + std::to_string(s.rank) + ")", pid);
    }
    events.metadata(pid, core_tid, "name", "core" + of_block, blocks == 1 ? 0 : core_tid);
    const std::uint64_t end_ps = s.finished        ? s.finish_ps
                                 : s.spans.empty() ? s.start_ps
                                                   : s.spans.back().end_ps;
    for (std::size_t i = 0; i < s.rounds.size(); ++i) {
      const RoundRecord& round = s.rounds[i];
      const std::uint64_t round_end = i + 1 < s.rounds.size() ? s.rounds[i + 1].start_ps : end_ps;
      events.slice(pid, core_tid, round.start_ps, round_end, round.phase, "round",
                   "\"round\":" + std::to_string(round.round));
    }
    for (const CoreSpan span : s.spans) {
      if (span.kind == CoreSpan::Kind::Setup) {
        events.slice(pid, core_tid, span.start_ps, span.end_ps, "set-up", "core", "");
      } else if (span.kind == CoreSpan::Kind::Reduce) {
        events.slice(pid, core_tid, span.start_ps, span.end_ps, "reduce", "core", "");
      } else if (span.kind == CoreSpan::Kind::Transfer) {
        events.slice(pid, core_tid, span.start_ps, span.end_ps, "wait for DMA", "core",
                     "\"transfer\":" + std::to_string(span.ref));
      }
    }
    for (std::size_t n = 0; n < s.notify_records.size(); ++n) {
      const NotifyRecord& note = s.notify_records[n];
      const auto flow = flow_of_notify.find({u, static_cast<std::uint32_t>(n)});
      events.slice(pid, core_tid, note.start_ps, note.end_ps, "notify", "sync",
                   "\"peer\":" + std::to_string(note.peer) +
                       ",\"cell\":" + quoted(signal_cell(note.signal, note.row, note.col)) +
                       ",\"value\":" + std::to_string(note.value) +
                       ",\"dropped\":" + (note.dropped ? "true" : "false"),
                   flow == flow_of_notify.end()
                       ? ""
                       : ",\"bind_id\":" + std::to_string(flow->second) + ",\"flow_out\":true");
    }
    for (std::size_t w = 0; w < s.wait_records.size(); ++w) {
      const WaitRecord& wait = s.wait_records[w];
      const WaitLink& link = s.wait_links[w];
      const int flow = flow_of_wait[u][w];
      std::string args = "\"cell\":" + quoted(signal_cell(wait.signal, wait.row, wait.col)) +
                         ",\"expected\":" + std::to_string(wait.expected) +
                         ",\"seen\":" + std::to_string(wait.seen) +
                         ",\"blocked\":" + (link.blocked ? "true" : "false");
      if (link.released_by.rank >= 0) {
        args += ",\"released_by_rank\":" + std::to_string(link.released_by.rank) +
                ",\"landed_us\":" + us(to_ns(wait.landed_ps));
      }
      events.slice(pid, core_tid, wait.start_ps, wait.end_ps, "wait", "sync", args,
                   flow < 0 ? "" : ",\"bind_id\":" + std::to_string(flow) + ",\"flow_in\":true");
    }
    for (const WaitRecord& wait : s.skipped_waits) {
      events.slice(pid, core_tid, wait.start_ps, wait.end_ps, "wait skipped (fault)", "sync",
                   "\"cell\":" + quoted(signal_cell(wait.signal, wait.row, wait.col)) +
                       ",\"expected\":" + std::to_string(wait.expected));
    }
    std::vector<bool> queue_named;
    for (std::size_t t = 0; t < s.transfer_records.size(); ++t) {
      const TransferRecord transfer = s.transfer_records[t];
      if (transfer.queue < 0) continue;  // never started
      const int tid = queue_tid + transfer.queue;
      if (queue_named.size() <= static_cast<std::size_t>(transfer.queue))
        queue_named.resize(static_cast<std::size_t>(transfer.queue) + 1, false);
      if (!queue_named[static_cast<std::size_t>(transfer.queue)]) {
        events.metadata(pid, tid, "name", "DMA queue " + std::to_string(transfer.queue) + of_block,
                        tid);
        queue_named[static_cast<std::size_t>(transfer.queue)] = true;
      }
      events.slice(
          pid, tid, transfer.start_ps, transfer.left_ps, transfer_name(transfer), "transfer",
          "\"transfer\":" + std::to_string(t) + ",\"peer\":" + std::to_string(transfer.peer) +
              ",\"bytes\":" + std::to_string(transfer.bytes) +
              ",\"bound_by\":" + quoted(describe_limit(result, transfer)) +
              ",\"round\":" + std::to_string(transfer.round) + ",\"submitted_us\":" +
              us(to_ns(transfer.submit_ps)) + ",\"landed_us\":" + us(to_ns(transfer.finish_ps)));
    }
  }

  // Counters and link busy periods, from the models' changes in time order (same-time
  // changes in the order they came).
  std::vector<std::vector<Change>> by_var(vars_.size());
  for (const Change& c : changes_) by_var[static_cast<std::size_t>(c.var)].push_back(c);
  for (std::vector<Change>& list : by_var) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Change& a, const Change& b) { return a.time_ps < b.time_ps; });
  }
  if (std::any_of(vars_.begin(), vars_.end(), [](const Var& v) { return v.pid == kSwitchPid; }))
    events.metadata(kSwitchPid, -1, "name", "switches", kSwitchPid);
  for (std::size_t v = 0; v < vars_.size(); ++v) {
    const Var& var = vars_[v];
    if (var.pid < 0 || by_var[v].empty()) continue;
    const bool accumulates = var.kind == Kind::Counter || var.kind == Kind::Flag;
    const int tid = kLinkTid + static_cast<int>(v);
    if (var.slices) events.metadata(var.pid, tid, "name", var.name, tid);
    std::int64_t running = 0;
    std::int64_t shown_value = var.slices ? 0 : -1;
    std::uint64_t busy_since = 0;
    const auto& list = by_var[v];
    for (std::size_t i = 0; i < list.size();) {
      // Changes within one nanosecond merge into one sample.
      const std::uint64_t ns = to_ns(list[i].time_ps);
      std::uint64_t first_ps = list[i].time_ps;
      for (; i < list.size() && to_ns(list[i].time_ps) == ns; ++i)
        running = accumulates ? running + list[i].value : list[i].value;
      if (var.slices) {
        const std::int64_t busy = running > 0 ? 1 : 0;
        if (busy == 1 && shown_value == 0) busy_since = first_ps;
        if (busy == 0 && shown_value == 1) {
          events.slice(var.pid, tid, busy_since, list[i - 1].time_ps, "busy", "link", "");
        }
        shown_value = busy;
      } else if (running != shown_value) {
        events.counter(var.pid, static_cast<int>(v), ns, var.name,
                       var.kind == Kind::Value ? "value" : "bytes", running);
        shown_value = running;
      }
    }
  }

  const CriticalPath path = critical_path(result);
  if (!path.steps.empty()) {
    events.metadata(kCriticalPid, -1, "name", "critical path", -1);
    events.metadata(kCriticalPid, kCoreTid, "name", "critical path", 0);
    for (const PathStep& step : path.steps) {
      std::string args =
          "\"rank\":" + std::to_string(step.rank) + ",\"round\":" + std::to_string(step.round);
      if (step.kind == PathStep::Kind::PeerWait) args += ",\"peer\":" + std::to_string(step.peer);
      if (step.kind == PathStep::Kind::Transfer) {
        args += ",\"bound_by\":" + quoted(describe_limit(result, transfer_of(result, step)));
      }
      events.slice(kCriticalPid, kCoreTid, step.start_ps, step.end_ps,
                   std::string(to_string(step.kind)) + " (rank " + std::to_string(step.rank) + ")",
                   "critical", args);
    }
  }
  const RunRequest& q = result.request;
  const std::string other = "{\"generator\":\"allreduce-sim\",\"kernel\":" + quoted(q.kernel) +
                            ",\"platform\":" + quoted(q.platform.name) +
                            ",\"P\":" + std::to_string(q.problem.ranks) +
                            ",\"bytes_per_rank\":" + std::to_string(q.problem.bytes()) +
                            ",\"device_time_ps\":" + std::to_string(result.device_time_ps) + "}";
  events.write(out, other);
}

TraceTee::TraceTee(std::initializer_list<TraceSink*> sinks) {
  for (TraceSink* sink : sinks) {
    if (sink != nullptr) sinks_.push_back(sink);
  }
}

int TraceTee::declare(const std::string& scope, const std::string& name, int width, Kind kind) {
  std::vector<int> handles;
  for (TraceSink* sink : sinks_) handles.push_back(sink->declare(scope, name, width, kind));
  vars_.push_back(std::move(handles));
  return static_cast<int>(vars_.size()) - 1;
}

bool TraceTee::shows(int device) const {
  return std::any_of(sinks_.begin(), sinks_.end(),
                     [device](const TraceSink* sink) { return sink->shows(device); });
}

void TraceTee::record(int var, std::uint64_t time_ps, std::int64_t value) {
  const auto& handles = vars_[static_cast<std::size_t>(var)];
  for (std::size_t i = 0; i < sinks_.size(); ++i) sinks_[i]->record(handles[i], time_ps, value);
}

void TraceTee::record_text(int var, std::uint64_t time_ps, const std::string& text) {
  const auto& handles = vars_[static_cast<std::size_t>(var)];
  for (std::size_t i = 0; i < sinks_.size(); ++i) sinks_[i]->record_text(handles[i], time_ps, text);
}

}  // namespace ars
