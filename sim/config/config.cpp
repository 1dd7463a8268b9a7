#include "sim/config/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <type_traits>

#include "kernels/api.h"
#include "kernels/registry.h"
#include "sim/config/suggest.h"

namespace ars {

namespace po = boost::program_options;

namespace {

// Enumerations are read as words and checked in validate-time conversions below.
struct EnumFields {
  std::string topology = "full_mesh";
  std::string forwarding = "cut_through";
};

// One table drives the options, validation and INI output, so no key is listed twice.
struct Key {
  const char* name;
  const char* help;
  std::function<void(po::options_description&, PlatformConfig&)> add;
  std::function<std::string(const PlatformConfig&)> show;
  std::function<void(const PlatformConfig&)> check;
};

// The shortest text that reads back as the same double (0.7, not 0.69999999999999996), with
// whole numbers written out (300000, not the shorter 3e+05) until they grow absurd.
std::string format(double v) {
  char text[32];
  const bool whole = std::abs(v) < 1e15 && v == std::trunc(v);
  const auto end = whole ? std::to_chars(text, text + sizeof text, v, std::chars_format::fixed).ptr
                         : std::to_chars(text, text + sizeof text, v).ptr;
  return std::string(text, end);
}

void require(bool ok, const std::string& key, const std::string& what, const std::string& value) {
  if (!ok) throw InputError("config key '" + key + "' = " + value + ": " + what);
}

// Boost reads "-1" into an unsigned field as 2^64 - 1, which no range check can tell from a
// huge value: a sign on an unsigned key is refused as any other word not of its type is.
template <typename Field>
class NumberValue : public po::typed_value<Field> {
 public:
  explicit NumberValue(Field* field) : po::typed_value<Field>(field) {}
  void xparse(boost::any& value, const std::vector<std::string>& tokens) const override {
    for (const std::string& token : tokens) {
      if (std::is_unsigned_v<Field> && token.find('-') != std::string::npos) {
        throw po::invalid_option_value(token);
      }
    }
    po::typed_value<Field>::xparse(value, tokens);
  }
};

template <typename Field>
Key number(const char* name, const char* help, Field PlatformConfig::*field, double minimum,
           double maximum, bool positive) {
  return {name, help,
          [name, help, field](po::options_description& d, PlatformConfig& c) {
            d.add_options()(name,
                            (new NumberValue<Field>(&(c.*field)))
                                ->default_value(c.*field, format(static_cast<double>(c.*field))),
                            help);
          },
          [field](const PlatformConfig& c) { return format(static_cast<double>(c.*field)); },
          [name, field, minimum, maximum, positive](const PlatformConfig& c) {
            const double v = static_cast<double>(c.*field);
            const std::string shown = format(v);
            require(std::isfinite(v), name, "must be a finite number", shown);
            require(!positive || v > 0, name, "must be greater than zero", shown);
            require(v >= minimum, name, "must be at least " + format(minimum), shown);
            require(v <= maximum, name, "must be at most " + format(maximum), shown);
          }};
}

constexpr double kHuge = 1e12;
// The largest topology: the 8192-NPU clusters users study, with room; a run's memory is
// checked against the machine's by the memory guard, not here.
constexpr int kMaxDevices = 16384;

std::vector<Key> keys() {
  using C = PlatformConfig;
  return {
      {"platform.name", "platform name shown in reports",
       [](po::options_description& d, C& c) {
         d.add_options()("platform.name", po::value<std::string>(&c.name)->default_value(c.name),
                         "platform name shown in reports");
       },
       [](const C& c) { return c.name; }, [](const C&) {}},
      number("platform.clock_GHz", "core clock (cycles below are of this clock)", &C::clock_GHz,
             0.001, 100, true),
      number("platform.devices", "devices in the topology", &C::devices, 1, kMaxDevices, true),
      {"platform.topology", "full_mesh | ring | switch | cluster | superpod",
       [](po::options_description& d, C&) {
         d.add_options()("platform.topology", po::value<std::string>(),
                         "full_mesh | ring | switch | cluster | superpod");
       },
       [](const C& c) { return std::string(to_string(c.topology)); }, [](const C&) {}},
      number("ub.physical_bytes", "unified buffer size of a vector core", &C::ub_physical_bytes, 32,
             1 << 30, true),
      number("ub.usable_bytes", "unified buffer bytes a kernel may allocate", &C::ub_usable_bytes,
             32, 1 << 30, true),
      number("ub.alignment_bytes", "tile alignment", &C::ub_alignment_bytes, 1, 4096, true),
      number("vector.cores", "vector cores of a device: SPMD blocks a rank may run (core_num)",
             &C::vector_cores, 1, 1024, true),
      number("vector.startup_cycles", "vector op start-up (sum, max, min)",
             &C::vector_startup_cycles, 0, kHuge, false),
      number("vector.mul_startup_cycles", "vector multiply start-up (prod)",
             &C::vector_mul_startup_cycles, 0, kHuge, false),
      number("vector.bytes_per_cycle", "vector op throughput", &C::vector_bytes_per_cycle, 1e-6,
             kHuge, true),
      number("gm.read_latency_cycles", "global memory read latency", &C::gm_read_latency_cycles, 0,
             kHuge, false),
      number("gm.write_latency_cycles", "global memory write latency", &C::gm_write_latency_cycles,
             0, kHuge, false),
      number("gm.atomic_ns", "how long a signal atomic holds the device's memory (atomics queue)",
             &C::gm_atomic_ns, 0, kHuge, false),
      number("gm.bandwidth_GBps", "global memory bandwidth of a device", &C::gm_bandwidth_GBps,
             1e-6, kHuge, true),
      number("gm.capacity_GiB",
             "device memory a rank's input, output, windows and signals must fit in",
             &C::gm_capacity_GiB, 0, 1024, true),
      number("dma.queues", "DMA transfers a device drives at once", &C::dma_queues, 1, 1024, true),
      number("dma.setup_cycles", "DMA set-up per transfer", &C::dma_setup_cycles, 0, kHuge, false),
      number("dma.mte2_bytes_per_cycle", "MTE2 rate, own GM -> UB", &C::dma_mte2_bytes_per_cycle,
             1e-6, kHuge, true),
      number("dma.mte3_bytes_per_cycle", "MTE3 rate, UB -> own GM", &C::dma_mte3_bytes_per_cycle,
             1e-6, kHuge, true),
      number("dma.remote_bytes_per_cycle", "rate of one DMA queue to or from a peer window",
             &C::dma_remote_bytes_per_cycle, 1e-6, kHuge, true),
      number("dma.burst_bytes", "bytes per DMA burst (one TLM transaction)", &C::dma_burst_bytes,
             32, 1 << 24, true),
      number("dma.full_rate_alignment", "GM alignment for the full DMA rate",
             &C::dma_full_rate_alignment, 1, 1 << 20, true),
      number("dma.misaligned_rate_factor", "rate factor for GM addresses not so aligned",
             &C::dma_misaligned_rate_factor, 1e-6, 1, true),
      number("dma.posted_stores",
             "1: stores run on MTE3 behind the core until a later operation needs them",
             &C::dma_posted_stores, 0, 1, false),
      number("link.bandwidth_GBps", "bandwidth of each link direction", &C::link_bandwidth_GBps,
             1e-6, kHuge, true),
      number("link.latency_ns", "latency of each link", &C::link_latency_ns, 0, kHuge, false),
      number("link.atomic_ns", "how long a signal atomic holds each link direction it crosses",
             &C::link_atomic_ns, 0, kHuge, false),
      {"switch.forwarding", "cut_through | store_and_forward (switch topology)",
       [](po::options_description& d, C&) {
         d.add_options()("switch.forwarding", po::value<std::string>(),
                         "cut_through | store_and_forward (switch topology)");
       },
       [](const C& c) { return std::string(to_string(c.switch_forwarding)); }, [](const C&) {}},
      number("switch.latency_ns", "latency added by the switch", &C::switch_latency_ns, 0, kHuge,
             false),
      number("cluster.servers", "servers in a cluster (platform.devices follows)",
             &C::cluster_servers, 1, 4096, true),
      number("cluster.npus_per_server", "NPUs of a cluster server, on the HCCS full mesh",
             &C::cluster_npus_per_server, 1, 64, true),
      {"cluster.wiring", "rail (NPU i of every server on leaf i) | leaf (servers_per_leaf each)",
       [](po::options_description& d, C&) {
         d.add_options()("cluster.wiring", po::value<std::string>(),
                         "rail (NPU i of every server on leaf i) | leaf (servers_per_leaf each)");
       },
       [](const C& c) { return std::string(to_string(c.cluster_wiring)); }, [](const C&) {}},
      number("cluster.servers_per_leaf", "whole servers on one leaf switch (leaf wiring)",
             &C::cluster_servers_per_leaf, 1, 4096, true),
      number("cluster.spines", "spine switches; ECMP picks one per (source, destination)",
             &C::cluster_spines, 1, 4096, true),
      number("cluster.oversubscription",
             "leaf down:up bandwidth ratio (1 non-blocking; 2 halves the cross-leaf rate)",
             &C::cluster_oversubscription, 1, 1024, true),
      number("nic.bandwidth_GBps", "RoCE NIC of an NPU, each way", &C::nic_bandwidth_GBps, 1e-6,
             kHuge, true),
      number("nic.latency_ns", "one NIC and its cable, paid at each end of a path",
             &C::nic_latency_ns, 0, kHuge, false),
      number("leaf.latency_ns", "latency through a leaf switch", &C::leaf_latency_ns, 0, kHuge,
             false),
      number("spine.latency_ns", "latency through a spine switch", &C::spine_latency_ns, 0, kHuge,
             false),
      number("superpod.nodes", "nodes of a SuperPod (platform.devices follows)", &C::superpod_nodes,
             1, 4096, true),
      number("superpod.npus_per_node", "NPUs of a SuperPod node", &C::superpod_npus_per_node, 1, 64,
             true),
      number("superpod.bandwidth_GBps", "Unified Bus port of an NPU, each way",
             &C::superpod_bandwidth_GBps, 1e-6, kHuge, true),
      number("superpod.tier1_latency_ns", "one-way latency between NPUs of one node",
             &C::superpod_tier1_latency_ns, 0, kHuge, false),
      number("superpod.tier2_latency_ns", "one-way latency between NPUs of different nodes",
             &C::superpod_tier2_latency_ns, 0, kHuge, false),
      number("sync.notify_cycles", "issue cost of a notify's atomic", &C::notify_cycles, 0, kHuge,
             false),
      number("sync.notify_acknowledged",
             "1: a notify waits until its atomic is applied and acknowledged (a round trip)",
             &C::notify_acknowledged, 0, 1, false),
      number("sync.poll_period_cycles", "period of a wait's polling", &C::poll_period_cycles, 0,
             kHuge, false),
      number("sync.cache_flush_cycles", "cache-line flush before a notify", &C::cache_flush_cycles,
             0, kHuge, false),
      number("sync.cache_invalidate_cycles", "whole-cache invalidate after a wait",
             &C::cache_invalidate_cycles, 0, kHuge, false),
      number("sync.pipe_barrier_cycles", "full pipe barrier before a notify",
             &C::pipe_barrier_cycles, 0, kHuge, false),
      number("sync.drain_cycles",
             "narrower drain (MTE3 only) before a notify, if the codegen emits it",
             &C::drain_cycles, 0, kHuge, false),
      number("sync.dsb_cycles", "a dsb's own cost, after a notify's atomic or in a store fence",
             &C::dsb_cycles, 0, kHuge, false),
      number("launch.offset_cycles", "kernel launch offset per rank (rank r starts r times late)",
             &C::launch_offset_cycles, 0, kHuge, false),
      number("launch.setup_cycles",
             "device-side set-up of a launch, inside each rank's measured time",
             &C::launch_setup_cycles, 0, kHuge, false),
  };
}

Topology parse_topology(const std::string& word) {
  if (word == "full_mesh") return Topology::FullMesh;
  if (word == "ring") return Topology::Ring;
  if (word == "switch") return Topology::Switch;
  if (word == "cluster") return Topology::Cluster;
  if (word == "superpod") return Topology::Superpod;
  throw InputError("config key 'platform.topology' = " + word +
                   ": must be full_mesh, ring, switch, cluster or superpod");
}

Wiring parse_wiring(const std::string& word) {
  if (word == "rail") return Wiring::Rail;
  if (word == "leaf") return Wiring::Leaf;
  throw InputError("config key 'cluster.wiring' = " + word + ": must be rail or leaf");
}

// A cluster's or SuperPod's device count follows from its structure: an explicit
// platform.devices must agree with it.
void derive_devices(PlatformConfig& config, bool explicit_devices) {
  const long long derived = config.structural_devices();
  if (derived <= 0) return;  // not structured, or a count validate() refuses
  const std::string structure = config.topology == Topology::Cluster
                                    ? "cluster.servers x cluster.npus_per_server"
                                    : "superpod.nodes x superpod.npus_per_node";
  if (derived > kMaxDevices) {
    throw InputError(structure + " = " + std::to_string(derived) + " devices: must be at most " +
                     std::to_string(kMaxDevices));
  }
  if (explicit_devices && config.devices != derived) {
    throw InputError("config key 'platform.devices' = " + std::to_string(config.devices) +
                     ": contradicts " + structure + " = " + std::to_string(derived) +
                     " (leave it out: it follows from the structure)");
  }
  config.devices = static_cast<int>(derived);
}

Forwarding parse_forwarding(const std::string& word) {
  if (word == "cut_through") return Forwarding::CutThrough;
  if (word == "store_and_forward") return Forwarding::StoreAndForward;
  throw InputError("config key 'switch.forwarding' = " + word +
                   ": must be cut_through or store_and_forward");
}

}  // namespace

po::options_description platform_options(PlatformConfig& config) {
  po::options_description options("Platform keys (INI sections and keys; also options)");
  for (const Key& key : keys()) key.add(options, config);
  return options;
}

std::string config_dir() {
  const char* dir = std::getenv("ARS_CONFIG_DIR");
  return dir != nullptr ? dir : ARS_CONFIG_DIR;
}

std::vector<std::string> ini_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".ini") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> platform_names() {
  return ini_names(config_dir());
}

std::string resolve_platform_path(const std::string& name_or_path, const std::string& asked_by) {
  namespace fs = std::filesystem;
  if (name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".ini") {
    return name_or_path;
  }
  const std::string name = name_or_path == "a2a3sim" ? "a2a3" : name_or_path;
  const std::vector<std::string> names = platform_names();
  if (names.empty()) {
    throw InputError(asked_by + ": no platform configs in " + config_dir() +
                     " (set ARS_CONFIG_DIR to the project's configs/), or give an INI path");
  }
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw InputError(asked_by + ": unknown platform '" + name + "'" + did_you_mean(name, names) +
                     "; the platforms in configs/ are " + join(names) + ", or give an INI path");
  }
  return config_dir() + "/" + name + ".ini";
}

namespace {

void reject_placeholder(const std::string& text, const std::string& where) {
  const std::size_t first = text.find('%');
  if (first != std::string::npos && text.find('%', first + 1) != std::string::npos) {
    throw InputError(where + " '" + text + "' contains a %...% placeholder, which nothing takes");
  }
}

}  // namespace

std::string read_checked_ini(std::istream& file, const std::string& described) {
  std::ostringstream text;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    // The byte order mark an editor may put first, which Boost would take for part of a key.
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    const std::string where = described + " line " + std::to_string(number);
    // Random bytes or a binary named by mistake would otherwise be echoed back in an error.
    const auto control = std::find_if(line.begin(), line.end(), [](unsigned char c) {
      return (c < 0x20 && c != '\t' && c != '\r') || c == 0x7f;
    });
    if (control != line.end()) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(*control));
      throw InputError(where + " is not text (byte " + byte + " at column " +
                       std::to_string(control - line.begin() + 1) + ")");
    }
    reject_placeholder(line, where);
    text << line << "\n";
  }
  return text.str();
}

// What follows "unrecognised option 'X'": the nearest name, else the keys of X's section
// (`link.`), else the sections there are (every name written `prefix` + name).
std::string unknown_key_hint(const std::string& typed, const po::options_description& options,
                             const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& option : options.options()) names.push_back(option->long_name());
  const std::string nearest = did_you_mean(typed, names, prefix);
  if (!nearest.empty()) return nearest;
  const std::size_t dot = typed.find('.');
  if (dot == std::string::npos) return "; --help lists every option";
  std::vector<std::string> in_section;
  std::vector<std::string> sections;
  for (const std::string& name : names) {
    const std::size_t end = name.find('.');
    if (end == std::string::npos) continue;
    if (name.compare(0, end + 1, typed, 0, dot + 1) == 0) in_section.push_back(prefix + name);
    if (std::find(sections.begin(), sections.end(), name.substr(0, end)) == sections.end())
      sections.push_back(name.substr(0, end));
  }
  if (!in_section.empty()) return "; its section's keys are " + join(in_section);
  return "; the sections are " + join(sections);
}

po::variables_map parse_arguments(int argc, const char* const* argv,
                                  const po::options_description& options) {
  for (int i = 1; i < argc; ++i) reject_placeholder(argv[i], "argument");
  po::variables_map vm;
  try {
    // Full option names only: a cut-short name that Boost would complete could set another key.
    const auto style =
        po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(options).style(style).run();
    // Boost keeps words that belong to no option and store() drops them: refuse them instead.
    for (const po::option& word : parsed.options) {
      if (word.position_key < 0) continue;
      const std::string text = word.original_tokens.empty() ? "" : word.original_tokens.front();
      std::string hint = " (every option takes one word: -d 0,1,2,3)";
      for (const KernelSpec& kernel : kernel_registry()) {
        if (text == kernel.name) hint = " (a kernel is chosen with --kernel " + text + ")";
      }
      throw InputError("unexpected word '" + text + "'" + hint);
    }
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::string typed = e.get_option_name();
    typed = typed.substr(typed.find_first_not_of('-'));
    throw InputError(e.what() + unknown_key_hint(typed, options, "--"));
  } catch (const po::error& e) {
    throw InputError(e.what());
  }
  return vm;
}

namespace {

// A base names a base of its own at most this deep; deeper is a cycle.
constexpr int kMaxBaseDepth = 8;
constexpr const char* kBuiltinTag = "built-in default (the file names no base)";

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// What an INI text says besides its values: the comment after each key (its source tag, by full
// key name; empty when there is none) and the `base` it inherits from.
struct IniNotes {
  std::map<std::string, std::string> tags;
  std::string base;
};

IniNotes read_notes(const std::string& text, const std::string& origin) {
  IniNotes notes;
  std::string section;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = trimmed(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;  // Boost refuses the line
    const std::string key = trimmed(line.substr(0, equals));
    const std::string rest = line.substr(equals + 1);
    const auto hash = rest.find('#');
    const std::string full = section.empty() ? key : section + "." + key;
    if (full == "base") {
      notes.base = trimmed(rest.substr(0, hash));
      if (notes.base.empty()) {
        throw InputError("config file " + origin +
                         ": base = names no platform (a name of configs/ or an INI path)");
      }
    } else {
      notes.tags[full] = hash == std::string::npos ? "" : trimmed(rest.substr(hash + 1));
    }
  }
  return notes;
}

LoadedPlatform load_at_depth(const std::string& path, const po::variables_map& overrides,
                             int depth);

// A base by name is a config of configs/; a relative path is relative to the including file.
std::string base_path(const std::string& base, const std::string& origin) {
  namespace fs = std::filesystem;
  if (base.find('/') == std::string::npos && fs::path(base).extension() != ".ini") {
    return resolve_platform_path(base, "config file " + origin + ": base");
  }
  if (fs::path(base).is_absolute()) return base;
  return (fs::path(origin).parent_path() / base).string();
}

LoadedPlatform parse_at_depth(std::istream& file, const std::string& origin,
                              const po::variables_map& overrides, int depth) {
  const std::string text = read_checked_ini(file, "config file " + origin);
  const IniNotes notes = read_notes(text, origin);
  LoadedPlatform loaded;
  loaded.path = origin;
  loaded.base = notes.base;
  if (!notes.base.empty()) {
    if (depth >= kMaxBaseDepth) {
      throw InputError("config file " + origin + ": base = " + notes.base +
                       ": bases nest deeper than " + std::to_string(kMaxBaseDepth) + " (a cycle?)");
    }
    const LoadedPlatform base =
        load_at_depth(base_path(notes.base, origin), po::variables_map(), depth + 1);
    loaded.config = base.config;
    for (const auto& [key, tag] : base.source) {
      loaded.source[key] = tag.rfind("base ", 0) == 0 ? tag : "base " + notes.base + ": " + tag;
    }
  }
  std::istringstream in(text);
  PlatformConfig& config = loaded.config;
  po::options_description options = platform_options(config);
  po::options_description file_options;
  file_options.add(options).add_options()("base", po::value<std::string>(),
                                          "the config whose values the unset keys take");
  po::variables_map values;
  try {
    po::store(po::parse_config_file(in, file_options, false), values);
    // Command-line values were stored first in `overrides`; they take precedence.
    for (const auto& [key, value] : overrides) {
      if (options.find_nothrow(key, false) == nullptr || value.defaulted()) continue;
      values.erase(key);
      values.insert({key, value});
    }
    po::notify(values);
    // The inserted values still carry the command line's bindings: store them into `config`.
    for (const auto& [key, value] : overrides) {
      const po::option_description* option = options.find_nothrow(key, false);
      if (option != nullptr && !value.defaulted()) option->semantic()->notify(value.value());
    }
  } catch (const po::unknown_option& e) {
    throw InputError("config file " + origin + ": " + e.what() +
                     unknown_key_hint(e.get_option_name(), file_options, ""));
  } catch (const po::error& e) {
    throw InputError("config file " + origin + ": " + e.what());
  }
  if (values.count("platform.topology")) {
    config.topology = parse_topology(values["platform.topology"].as<std::string>());
  }
  if (values.count("switch.forwarding")) {
    config.switch_forwarding = parse_forwarding(values["switch.forwarding"].as<std::string>());
  }
  if (values.count("cluster.wiring")) {
    config.cluster_wiring = parse_wiring(values["cluster.wiring"].as<std::string>());
  }
  derive_devices(config,
                 values.count("platform.devices") && !values["platform.devices"].defaulted());
  const auto set_on_command_line = [&overrides](const char* key) {
    const auto value = overrides.find(key);
    return value != overrides.end() && !value->second.defaulted();
  };
  // A file that does not name itself is not the platform it inherits from.
  if (notes.tags.count("platform.name") == 0 && !set_on_command_line("platform.name")) {
    config.name = std::filesystem::path(origin).stem().string();
    loaded.source["platform.name"] = "the file's name (it sets no platform.name)";
  }
  for (const Key& key : keys()) {
    const auto tag = notes.tags.find(key.name);
    if (set_on_command_line(key.name)) {
      loaded.source[key.name] = "command line";
    } else if (tag != notes.tags.end()) {
      loaded.source[key.name] =
          tag->second.empty()
              ? "set in " + std::filesystem::path(origin).filename().string() + ", untagged"
              : tag->second;
    } else if (loaded.source.count(key.name) == 0) {
      loaded.source[key.name] = kBuiltinTag;
    }
  }
  validate(config);
  return loaded;
}

LoadedPlatform load_at_depth(const std::string& path, const po::variables_map& overrides,
                             int depth) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::exists(path, error)) throw InputError("config file not found: " + path);
  if (fs::is_directory(path, error)) throw InputError("config path is a directory: " + path);
  // A device or a pipe (/dev/zero, a FIFO) would be read forever.
  if (!fs::is_regular_file(path, error)) throw InputError("config path is not a file: " + path);
  std::ifstream in(path);
  if (!in) throw InputError("config file cannot be read: " + path);
  return parse_at_depth(in, path, overrides, depth);
}

}  // namespace

std::string LoadedPlatform::origin() const {
  int inherited = 0;
  for (const auto& [key, tag] : source) {
    inherited += tag.rfind("base ", 0) == 0 || tag == kBuiltinTag ? 1 : 0;
  }
  std::string text = path;
  if (!base.empty()) {
    text += " (base " + base + ", " + std::to_string(inherited) + " keys inherited)";
  } else if (inherited > 0) {
    text += " (no base: " + std::to_string(inherited) + " keys take built-in defaults)";
  }
  return text;
}

LoadedPlatform load_platform_sources(const std::string& path, const po::variables_map& overrides) {
  return load_at_depth(path, overrides, 0);
}

PlatformConfig load_platform(const std::string& path, const po::variables_map& overrides) {
  return load_at_depth(path, overrides, 0).config;
}

PlatformConfig parse_platform(std::istream& in, const std::string& origin,
                              const po::variables_map& overrides) {
  return parse_at_depth(in, origin, overrides, 0).config;
}

void validate(const PlatformConfig& config) {
  for (const Key& key : keys()) key.check(config);
  // Reports, plots and a sweep's points are named after it.
  if (config.name.empty())
    throw InputError("config key 'platform.name' is empty: name the platform");
  if (config.structural_devices() != 0 && config.devices != config.structural_devices()) {
    throw InputError("config key 'platform.devices' = " + std::to_string(config.devices) + ": a " +
                     to_string(config.topology) + " has " +
                     std::to_string(config.structural_devices()) + " devices");
  }
  if (config.ub_usable_bytes > config.ub_physical_bytes) {
    throw InputError("config key 'ub.usable_bytes' = " + std::to_string(config.ub_usable_bytes) +
                     ": must not exceed ub.physical_bytes (" +
                     std::to_string(config.ub_physical_bytes) + ")");
  }
}

bool topology_reads(const std::string& key, Topology topology) {
  const auto starts = [&key](const char* prefix) { return key.rfind(prefix, 0) == 0; };
  if (starts("nic.") || starts("leaf.") || starts("spine.") || starts("cluster."))
    return topology == Topology::Cluster;
  if (starts("superpod.")) return topology == Topology::Superpod;
  if (key == "switch.latency_ns") return topology == Topology::Switch;
  if (key == "switch.forwarding")
    return topology != Topology::FullMesh && topology != Topology::Ring;
  if (key == "link.latency_ns" || key == "link.bandwidth_GBps")
    return topology != Topology::Superpod;
  return true;
}

std::string to_ini(const PlatformConfig& config, const std::map<std::string, std::string>& tags) {
  std::ostringstream out;
  std::string section;
  for (const Key& key : keys()) {
    const std::string name = key.name;
    const std::string head = name.substr(0, name.find('.'));
    if (!topology_reads(name, config.topology)) continue;
    if (name == "platform.devices" && config.structural_devices() != 0) continue;  // derived
    if (head != section) {
      out << (section.empty() ? "" : "\n") << "[" << head << "]\n";
      section = head;
    }
    const auto tag = tags.find(name);
    const std::string line = name.substr(name.find('.') + 1) + " = " + key.show(config);
    // Values and comments in two columns, as the shipped configs write them.
    out << line << std::string(line.size() < 31 ? 31 - line.size() : 1, ' ') << "# "
        << (tag != tags.end() ? tag->second : std::string(key.help)) << "\n";
  }
  return out.str();
}

std::string to_ini(const PlatformConfig& config) {
  return to_ini(config, {});
}

}  // namespace ars
