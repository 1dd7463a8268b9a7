// The bad-input catalogue: every row runs the allreduce-sim binary with one bad command line,
// config file or size and expects exit code 2, one line on stderr naming the offending value,
// no crash and no output file left behind.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/run_process.h"

namespace ars {
namespace {

using test::ProcessResult;
using test::ScratchDir;

struct BadInput {
  const char* name;
  std::vector<std::string> args;  // "{dir}" is the scratch directory, "{ini}" the config file
  const char* ini;                // content of {ini}, or nullptr for no file
  const char* names;              // stderr must contain this
  bool add_outputs = true;        // also ask for --json/--vcd/--dump-schedule in {dir}
};

std::ostream& operator<<(std::ostream& out, const BadInput& row) {
  return out << row.name;
}

const BadInput kRows[] = {
    // The command line.
    {"UnknownOption", {"--bogus"}, nullptr, "'--bogus'"},
    {"OptionWithoutValue", {"--size"}, nullptr, "'--size'", false},
    {"UnknownKernel", {"-k", "tree_reduce"}, nullptr, "'tree_reduce'"},
    {"UnknownOp", {"--op", "xor"}, nullptr, "'xor'"},
    {"UnknownDtype", {"--dtype", "int8"}, nullptr, "'int8'"},
    {"UnknownMode", {"--mode", "tree"}, nullptr, "'tree'"},
    {"DevicesEmpty", {"-d", ""}, nullptr, "-d: no devices given"},
    {"DevicesEmptyItem", {"-d", "0,,1"}, nullptr, "'' is not a device number (in '0,,1')"},
    {"DevicesDuplicate", {"-d", "0,1,1"}, nullptr, "device 1 is listed twice"},
    {"DevicesNonNumeric", {"-d", "0,x"}, nullptr, "'x' is not a device number"},
    {"DevicesNegative", {"-d", "-1,0"}, nullptr, "'-1' is not a device number"},
    {"DevicesOutsideTopology", {"-d", "0,8"}, nullptr, "device 8 is not in the topology of 8"},
    {"DevicesOutsideSwitch16", {"-p", "switch16", "-d", "0,16"}, nullptr, "device 16"},
    {"DevicesTrailingComma", {"-d", "0,1,2,"}, nullptr, "'' is not a device number (in '0,1,2,')"},
    {"DevicesReversedRange", {"-d", "7-3"}, nullptr, "-d: range '7-3' is reversed"},
    {"DevicesOverlappingRanges", {"-d", "0-5,4-7"}, nullptr, "device 4 is listed twice in -d"},
    {"DevicesRangeOutsideTopology", {"-d", "0-8"}, nullptr, "device 8 is not in the topology of 8"},
    {"DevicesOpenRange", {"-d", "3-"}, nullptr, "'3-' is not a device number"},
    {"DevicesAllAmongOthers", {"-d", "all,3"}, nullptr, "'all' is not a device number"},
    {"DevicesOutsideCluster",
     {"-p", "a2a3-cluster", "-d", "120-128"},
     nullptr,
     "device 128 is not in the topology of 128 devices"},
    {"CoreNumZero", {"-k", "host_mesh", "--core-num", "0"}, nullptr, "--core-num 0: must be 1..48"},
    {"CoreNumBeyondVectorCores",
     {"-k", "host_mesh", "--core-num", "64"},
     nullptr,
     "--core-num 64: must be 1..48 (vector.cores of a2a3)"},
    {"CoreNumForTheInCoreBuiltin",
     {"--core-num", "2"},
     nullptr,
     "pld.tensor.allreduce is an InCore composite"},
    {"CodegenUnknownName",
     {"--codegen", "nightly"},
     nullptr,
     "--codegen: unknown profile 'nightly'; the profiles in configs/codegen/ are after, before, or "
     "give an INI path"},
    {"CodegenTypoSuggestsTheNearest", {"--codegen", "befor"}, nullptr, "(did you mean 'before'?)"},
    {"CodegenFileMissing",
     {"--codegen", "{dir}/none.ini"},
     nullptr,
     "--codegen: no such profile file: "},
    {"CodegenOnHostKernel",
     {"--kernel", "host_ring", "--codegen", "before"},
     nullptr,
     "host_ring is the runtime's own kernel"},
    {"CodegenBadBarrier",
     {"--codegen", "{ini}"},
     "[codegen]\nnotify_barrier = sometimes\n",
     "'codegen.notify_barrier' = sometimes: must be pipe_all, drain or none"},
    {"CodegenBadFlag",
     {"--codegen", "{ini}"},
     "[codegen]\nstore_fence = 2\n",
     "'codegen.store_fence' = 2: must be 0 or 1"},
    {"CodegenUnknownKey", {"--codegen", "{ini}"}, "[codegen]\nfence = 1\n", "codegen.fence"},
    {"CodegenKeyWithPlaceholder",
     {"--codegen", "{ini}"},
     "[codegen]\n%canonical_option% = 1\n",
     "line 2 '%canonical_option% = 1' contains a %...% placeholder"},
    {"CodegenSectionWithPlaceholder",
     {"--codegen", "{ini}"},
     "[%canonical_option%]\nname = x\n",
     "line 1 '[%canonical_option%]' contains a %...% placeholder"},
    {"CodegenControlByte",
     {"--codegen", "{ini}"},
     "[codegen]\nname = a\x01"
     "b\n",
     "line 2 is not text (byte 0x01 at column 9)"},
    {"SizeZero", {"--size", "0"}, nullptr, "'0'"},
    {"SizeNegative", {"--size", "-5"}, nullptr, "'-5'"},
    {"SizeNonNumeric", {"--size", "lots"}, nullptr, "'lots'"},
    {"SizeFraction", {"--size", "1.5"}, nullptr, "'1.5'"},
    {"SizeNan", {"--size", "nan"}, nullptr, "'nan'"},
    {"SizeUnknownUnit", {"--size", "4MB"}, nullptr, "'4MB'"},
    {"SizeNotWholeElements", {"--size", "6B"}, nullptr, "6B is not a whole number of fp32"},
    {"SizeAbsurd", {"--size", "1e300"}, nullptr, "'1e300'"},
    {"SizeBeyondMemoryGuard", {"--size", "1e14"}, nullptr, "100000000000000 elements per rank"},
    {"SizeBeyondMemoryLimit",
     {"--size", "64MiB", "--memory-limit", "256MiB"},
     nullptr,
     "more than the memory limit of 256.00 MiB"},
    // The builtin ring's full-mesh barriers write all 2(P-1) x P cells of every rank's signal:
    // 384 ranks need 113 M cells, counted until they pass what the device models (384 x (12 +
    // 72) KiB = 31.5 MiB) leave of the limit.
    {"SignalCellsBeyondMemoryLimit",
     {"-p", "a3-superpod", "-d", "all", "-k", "builtin_ring", "--size", "384KiB", "--timing-only",
      "-q", "--memory-limit", "1GiB"},
     nullptr,
     "(global memory 0.00 B, signal cells more than 988.75 MiB, routes more than 3.75 MiB, "
     "device models 31.50 MiB), more than the memory limit of "
     "1.00 GiB; use fewer ranks (-d), or a larger --memory-limit",
     false},
    // The barrier on a full mesh of 1024 devices crosses every pair: 1023 x 1024 paths and
    // links at 1.25 KiB (a run took 1.07 GB), where the device models are 84 MiB.
    {"FullMeshPairsBeyondMemoryLimit",
     {"--platform.devices", "1024", "-d", "all", "-k", "barrier", "--size", "1", "--timing-only",
      "-q", "--memory-limit", "1000MiB"},
     nullptr,
     "routes more than 893.66 MiB, device models 84.00 MiB), more than the memory limit of "
     "1000.00 MiB; use fewer ranks (--platform.devices), or a larger --memory-limit",
     false},
    // The ranks are the platform's devices, sized by the option given.
    {"SignalCellsOfTheNodesGivenBeyondMemoryLimit",
     {"-p", "a3-superpod", "--superpod.nodes", "48", "-d", "all", "-k", "builtin_ring", "--size",
      "384KiB", "--timing-only", "-q", "--memory-limit", "1GiB"},
     nullptr,
     "use fewer ranks (--superpod.nodes), or a larger --memory-limit",
     false},
    // The quiet ring's device models alone, 256 x (12 + 72) KiB = 21 MiB, pass the limit.
    {"DeviceModelsBeyondMemoryLimit",
     {"-p", "ring8", "--platform.devices", "256", "-d", "all", "-k", "ring", "--size", "64KiB",
      "--timing-only", "-q", "--memory-limit", "16MiB"},
     nullptr,
     "256 ranks needs more than 21.00 MiB of host memory (global memory 0.00 B, device models "
     "21.00 MiB), more than the memory limit of 16.00 MiB; use fewer ranks (--platform.devices), "
     "or a larger --memory-limit",
     false},
    // Devices taking no part cost their models (4096 x 12 KiB, and 2 x 72 KiB for the ranks):
    // fewer ranks would not help.
    // The refusal names what grows most, and only remedies that shrink it.
    {"RepeatBeyondMemoryLimit",
     {"--repeat", "100000", "--memory-limit", "64MiB"},
     nullptr,
     "--repeat: 64 elements per rank on 4 ranks needs more than 64.00 MiB",
     false},
    {"RepeatBeyondMemoryLimitIsNotHelpedBySize",
     {"--repeat", "100000", "--memory-limit", "64MiB"},
     nullptr,
     "; use -q (no records), fewer calls (--repeat), or a larger --memory-limit",
     false},
    {"IdleDevicesBeyondMemoryLimit",
     {"-p", "ring8", "--platform.devices", "4096", "-d", "0-1", "-q", "--memory-limit", "32MiB"},
     nullptr,
     "--platform.devices: 64 elements per rank on 2 ranks needs more than 48.52 MiB of host "
     "memory (global memory 9.00 KiB, unified buffers 384.00 KiB, staging 256.00 B, device models "
     "48.14 MiB), more than the memory limit of 32.00 MiB; use a smaller platform "
     "(--platform.devices), or a larger --memory-limit",
     false},
    {"MemoryLimitNonNumeric", {"--memory-limit", "plenty"}, nullptr, "'plenty'"},
    {"MemoryLimitZero", {"--memory-limit", "0"}, nullptr, "--memory-limit: '0'"},
    {"MemoryLimitUnknownUnit",
     {"--memory-limit", "1GB"},
     nullptr,
     "--memory-limit: '1GB' is not a positive number of bytes (bare, or with B, K/KiB, M/MiB, "
     "G/GiB or T/TiB)"},
    // Timing only, the memory guard has no payload to refuse: the device's memory does.
    {"SizeBeyondDeviceMemory",
     {"--size", "30GiB", "--timing-only", "-q"},
     nullptr,
     "a rank's input, output, windows and signals take 90.00 GiB of its device's memory, more "
     "than the 64.00 GiB it has (gm.capacity_GiB); use a smaller --size",
     false},
    // Past 1 TiB a window's addresses would be the next device's.
    {"SizeBeyondTheDeviceAddresses",
     {"--size", "2TiB", "--timing-only", "-q"},
     nullptr,
     "take 6.00 TiB of its device's memory",
     false},
    // x, y and the builtin mesh's window of 1 MiB each, against 1.02 MiB.
    {"SizeBeyondAGivenDeviceMemory",
     {"--size", "1MiB", "--gm.capacity_GiB", "0.001"},
     nullptr,
     "take 3.00 MiB of its device's memory, more than the 1.02 MiB it has (gm.capacity_GiB)"},
    {"RepeatZero", {"--repeat", "0"}, nullptr, "--repeat: must be at least 1"},
    {"RepeatNonNumeric", {"--repeat", "twice"}, nullptr, "'twice'"},
    {"SignalShapeMalformed", {"--signal-shape", "3"}, nullptr, "'3'"},
    {"RepeatOnAHandKernel",
     {"-k", "ring", "--repeat", "3"},
     nullptr,
     "--repeat: ring runs one allreduce per launch"},
    {"SignalShapeOnAHandKernel",
     {"-k", "mesh", "--signal-shape", "1,1"},
     nullptr,
     "--signal-shape: mesh allocates its own signal"},
    {"MaxSimTimeNegative", {"--max-sim-time", "-1"}, nullptr, "--max-sim-time"},
    {"MaxSimTimeNan", {"--max-sim-time", "nan"}, nullptr, "--max-sim-time"},
    {"MaxSimTimeUnderAPicosecond",
     {"--max-sim-time", "1e-9"},
     nullptr,
     "--max-sim-time: must be a number of ns from 0.001 (1 ps) up to 1e15"},
    {"PlatformNameEmpty",
     {"-p", "{ini}"},
     "base = a2a3\n[platform]\nname =\n",
     "'platform.name' is empty"},
    {"CostcardRanksTrailingComma",
     {"costcard", "--ranks", "2,"},
     nullptr,
     "--ranks: '' is not",
     false},
    {"CostcardKernelsTrailingComma",
     {"costcard", "--kernels", "mesh,"},
     nullptr,
     "--kernels: ",
     false},
    {"FaultUnknown", {"--fault", "explode:1"}, nullptr, "'explode:1'"},
    {"FaultNegativeIndex", {"--fault", "drop-notify:0:-1"}, nullptr, "'drop-notify:0:-1'"},
    {"FaultTrailingField", {"--fault", "stall:1:2"}, nullptr, "'stall:1:2'"},
    {"FaultRankOutside", {"--fault", "stall:4"}, nullptr, "rank 4 is not a rank (P = 4)"},
    // Found only once the rank has finished: the barrier's ranks make 3 notifies and 3 waits.
    {"FaultNotifyNeverReached",
     {"-k", "barrier", "--fault", "drop-notify:1:3"},
     nullptr,
     "--fault drop-notify:1:3: rank 1 made 3 notifies (INDEX counts them from 0), so the fault "
     "never applied"},
    {"FaultWaitNeverReached",
     {"-k", "barrier", "--fault", "skip-wait:2:7"},
     nullptr,
     "--fault skip-wait:2:7: rank 2 made 3 waits"},
    {"FaultNotifyOfABlockNeverReached",
     {"-p", "a2a3-910b2", "-k", "host_mesh", "--core-num", "2", "--fault", "notify-value:0:40:5"},
     nullptr,
     "--fault notify-value:0:40:5: rank 0's blocks each made at most "},
    {"JsonInMissingDirectory",
     {"--json", "{dir}/missing/run.json"},
     nullptr,
     "missing/run.json",
     false},
    {"VcdIsADirectory", {"--vcd", "{dir}"}, nullptr, "--vcd: cannot write", false},
    {"TraceIsADirectory", {"--trace", "{dir}"}, nullptr, "--trace: cannot write", false},
    {"TraceDevicesWithoutTrace", {"--trace-devices", "0"}, nullptr, "needs --trace FILE"},
    {"TraceDeviceNotInRun",
     {"-d", "0,1", "--trace", "{dir}/t.json", "--trace-devices", "0,5"},
     nullptr,
     "--trace-devices: device 5 does not take part in the run (-d 0,1)"},
    {"TraceDevicesNotANumber",
     {"--trace", "{dir}/t.json", "--trace-devices", "x"},
     nullptr,
     "--trace-devices: 'x' is not a device number (in 'x')"},
    {"JsonNamedEmpty", {"--json", ""}, nullptr, "--json: needs a file name", false},
    {"TwoOutputsNameOneFile",
     {"--json", "{dir}/run.out", "--trace", "{dir}/run.out"},
     nullptr,
     "--trace: ",
     false},
    {"JsonNamesTheWaveformsSaveFile",
     {"--json", "{dir}/wave.gtkw", "--vcd", "{dir}/wave.vcd"},
     nullptr,
     "--vcd (its GTKWave save file): ",
     false},
    // A full disk fails the write, which the run reports and leaves the device alone.
    {"VcdOnAFullDisk",
     {"-q", "--vcd", "/dev/full"},
     nullptr,
     "--vcd: cannot write /dev/full",
     false},
    {"VcdDevicesListedTwice",
     {"--vcd", "{dir}/a.vcd", "--vcd-devices", "0,0"},
     nullptr,
     "device 0 is listed twice in --vcd-devices '0,0'",
     false},
    {"ScheduleInMissingDirectory",
     {"--dump-schedule", "{dir}/missing/s.txt"},
     nullptr,
     "missing/s.txt",
     false},
    // Words that used to be dropped, or taken for something else, without a word.
    {"StrayWordsAfterDevices",
     {"-d", "0", "1", "2", "3", "--kernel", "mesh"},
     nullptr,
     "unexpected word '1'"},
    {"KernelGivenAsAWord", {"mesh", "-d", "0,1"}, nullptr, "use --kernel mesh"},
    {"UnknownSubcommand",
     {"costcrd"},
     nullptr,
     "unknown subcommand 'costcrd' (did you mean 'costcard'?)"},
    {"CutShortPlatformKey",
     {"--link.bandwidth", "56"},
     nullptr,
     "'--link.bandwidth' (did you mean '--link.bandwidth_GBps'?)"},
    {"CutShortDmaKey", {"--dma.q", "4"}, nullptr, "(did you mean '--dma.queues'?)"},
    {"MistypedCutShortKey",
     {"--link.bandwith", "56"},
     nullptr,
     "'--link.bandwith' (did you mean '--link.bandwidth_GBps'?)"},
    {"UnknownKeyListsItsSection",
     {"--link.speed", "56"},
     nullptr,
     "'--link.speed'; its section's keys are --link.bandwidth_GBps, --link.latency_ns, "
     "--link.atomic_ns"},
    {"UnknownSectionListsTheSections",
     {"--fabric.speed", "56"},
     nullptr,
     "'--fabric.speed'; the sections are platform, ub, vector, gm, dma, link, switch, cluster"},
    {"ConfigKeyTypoSuggestsTheNearest",
     {"-p", "{ini}"},
     "[link]\nbandwith_GBps = 3\n",
     "unrecognised option 'link.bandwith_GBps' (did you mean 'link.bandwidth_GBps'?)"},
    {"CutShortRunOption", {"--kern", "mesh"}, nullptr, "(did you mean '--kernel'?)"},
    {"ModeOnAHandKernel",
     {"-k", "mesh", "--mode", "ring"},
     nullptr,
     "--mode: only the builtin has a mode; mesh has none"},
    {"ModeContradictsTheBuiltinNamed",
     {"-k", "builtin_ring", "--mode", "mesh"},
     nullptr,
     "--mode mesh contradicts --kernel builtin_ring"},
    {"KernelTypoSuggestsTheNearest",
     {"-k", "builtin_rign"},
     nullptr,
     "(did you mean 'builtin_ring'?)"},
    {"UnknownKernelListsEveryName",
     {"-k", "tree_reduce"},
     nullptr,
     "host_mesh, rhd, hierarchical, builtin"},
    {"UnknownPlatformListsThePlatforms",
     {"-p", "a2a4"},
     nullptr,
     "unknown platform 'a2a4' (did you mean 'a2a3'?); the platforms in configs/ are a2a3, "
     "a2a3-910b2"},
    {"SizeDecimalKilobytes", {"--size", "4KB"}, nullptr, "--size: '4KB'"},
    {"SizeHexadecimal", {"--size", "0x10"}, nullptr, "--size: '0x10'"},
    {"SizeLeadingBlank", {"--size", " 64"}, nullptr, "--size: ' 64'"},
    {"RanksShownZero", {"--ranks-shown", "0"}, nullptr, "--ranks-shown: '0'"},
    {"ScheduleTimesWithoutADump",
     {"--dump-schedule-times"},
     nullptr,
     "--dump-schedule-times: needs --dump-schedule FILE",
     false},
    {"ConfigBaseUnknown",
     {"-p", "{ini}"},
     "base = nowhere\n",
     "platform.ini: base: unknown platform 'nowhere'; the platforms in configs/ are a2a3"},
    {"ConfigBaseEmpty",
     {"-p", "{ini}"},
     "base =\n[link]\nlatency_ns = 5\n",
     "platform.ini: base = names no platform"},
    {"ConfigBaseIsItself", {"-p", "{ini}"}, "base = platform.ini\n", "bases nest deeper than 8"},
    {"CostcardMaxBytesNamesItsOption",
     {"costcard", "-e", "128MB"},
     nullptr,
     "-e/--maxbytes: '128MB'",
     false},
    {"CostcardMinBytesNamesItsOption",
     {"costcard", "--minbytes", "0"},
     nullptr,
     "-b/--minbytes: '0'",
     false},
    {"CostcardKernelTypo",
     {"costcard", "--kernels", "mesh,rign"},
     nullptr,
     "--kernels: unknown kernel 'rign' (did you mean 'ring'?)",
     false},
    {"CostcardStrayWord", {"costcard", "extra"}, nullptr, "unexpected word 'extra'", false},
    {"CostcardCutShortKey",
     {"costcard", "--link.latency", "5"},
     nullptr,
     "(did you mean '--link.latency_ns'?)",
     false},
    {"ValidateCutShortOption",
     {"validate", "--dat", "x.csv"},
     nullptr,
     "(did you mean '--data'?)",
     false},
    {"CalibrateStrayWord",
     {"calibrate", "--data", "x.csv", "more.csv"},
     nullptr,
     "unexpected word 'more.csv'",
     false},
    // Found by fuzzing: Boost expands %...% in its messages and looped forever on these.
    {"OptionNameWithPlaceholder", {"--x%canonical_option%"}, nullptr, "'--x%canonical_option%'"},
    {"CostcardOptionWithPlaceholder",
     {"costcard", "--x%canonical_option%"},
     nullptr,
     "'--x%canonical_option%'",
     false},
    {"CostcardShardOutOfRange", {"costcard", "--shard", "4/3"}, nullptr, "--shard: '4/3'", false},
    // An output naming a file the command reads would replace what it reads.
    {"ValidateCsvIsItsData",
     {"validate", "--data", "{ini}", "-p", "a2a3", "--csv", "{ini}"},
     "kernel,P,payload_bytes,device_us\nbuiltin_mesh,2,1024,100\n",
     "is the file --data reads; name another file",
     false},
    {"CalibrateWriteIsItsData",
     {"calibrate", "--data", "{ini}", "--fit", "link.latency_ns", "--write", "{ini}"},
     "kernel,P,payload_bytes,device_us\nbuiltin_mesh,2,1024,100\n",
     "is the file --data reads; name another file",
     false},
    {"CostcardCsvIsAMergedFile",
     {"costcard", "--merge", "{ini}", "--csv", "{ini}"},
     "",
     "is the file --merge reads; name another file",
     false},
    {"JsonIsThePlatformConfig",
     {"-p", "{ini}", "--json", "{ini}"},
     "base = a2a3\n",
     "is the file -p reads; name another file",
     false},
    {"CostcardResumeWithoutPoints",
     {"costcard", "--resume"},
     nullptr,
     "--resume: needs the --points FILE",
     false},
    {"CostcardPointsFileExists",
     {"costcard", "--points", "{ini}"},
     "{}\n",
     "exists; add --resume",
     false},
    {"CostcardMergeWithShard",
     {"costcard", "--merge", "{ini}", "--shard", "1/2"},
     "{}\n",
     "--merge: prints shards already run",
     false},
    {"CostcardMergeUnreadable",
     {"costcard", "--merge", "{dir}/none.jsonl"},
     nullptr,
     "cannot read the points file",
     false},
    {"CostcardMergeNotAPoint",
     {"costcard", "--merge", "{ini}"},
     "not json\n",
     "line 1 is not a point",
     false},
    {"CostcardCsvOnAFullDisk",
     {"costcard", "--kernels", "mesh", "--ranks", "2", "-b", "1K", "-e", "1K", "--csv",
      "/dev/full"},
     nullptr,
     "cannot write /dev/full",
     false},
    {"CostcardCsvAndPointsOneFile",
     {"costcard", "--csv", "{dir}/sweep", "--points", "{dir}/sweep"},
     nullptr,
     "--points: ",
     false},
    // A device would be read forever (/dev/zero) or is no file to resume (/dev/null).
    {"CostcardMergeADevice",
     {"costcard", "--merge", "/dev/zero"},
     nullptr,
     "the points file '/dev/zero' is not a regular file",
     false},
    {"CostcardResumeADevice",
     {"costcard", "--points", "/dev/null", "--resume"},
     nullptr,
     "the points file '/dev/null' is not a regular file",
     false},
    {"CostcardMergeARunThatIsNone",
     {"costcard", "--kernels", "mesh", "--ranks", "2", "-b", "1K", "-e", "1K", "--merge", "{ini}"},
     "{\"point\":\"mesh P=2 1024B fp32 sum on a2a3\",\"run\":null}\n",
     "platform.ini' line 1 is not a point",
     false},
    {"CostcardShardOfANegativeCount",
     {"costcard", "--shard", "1/-3"},
     nullptr,
     "--shard: '1/-3' is not K/N",
     false},
    {"CostcardRanksListedTwice",
     {"costcard", "--ranks", "2,4,2"},
     nullptr,
     "--ranks: 2 is listed twice",
     false},
    {"CostcardKernelListedTwice",
     {"costcard", "--kernels", "builtin,builtin_mesh"},
     nullptr,
     "--kernels: builtin_mesh is listed twice",
     false},
    {"CostcardInterWithoutHierarchical",
     {"costcard", "--kernels", "ring", "--inter", "rhd"},
     nullptr,
     "--inter: only the hierarchical kernel takes it",
     false},
    {"CalibrateOptionWithPlaceholder",
     {"calibrate", "--x%canonical_option%"},
     nullptr,
     "'--x%canonical_option%'",
     false},
    {"ConfigKeyWithPlaceholder",
     {"-p", "{ini}"},
     "[link]\n%canonical_option% = 1\n",
     "line 2 '%canonical_option% = 1'"},
    // Platform keys on the command line.
    {"KeyNan", {"--link.bandwidth_GBps", "nan"}, nullptr, "'link.bandwidth_GBps' = nan"},
    {"KeyNegative", {"--link.bandwidth_GBps", "-3"}, nullptr, "'link.bandwidth_GBps' = -3"},
    {"KeyZero", {"--gm.bandwidth_GBps", "0"}, nullptr, "'gm.bandwidth_GBps' = 0"},
    {"KeyAtomicHoldNegative",
     {"--gm.atomic_ns", "-1"},
     nullptr,
     "config key 'gm.atomic_ns' = -1: must be at least 0"},
    {"KeyAbsurd", {"--link.latency_ns", "1e300"}, nullptr, "'link.latency_ns' = 1e+300"},
    {"KeyDevicesBeyondLimit",
     {"-p", "ring8", "--platform.devices", "300000"},
     nullptr,
     "config key 'platform.devices' = 300000: must be at most 16384"},
    {"KeyOverflowsDouble", {"--link.latency_ns", "1e400"}, nullptr, "'1e400'"},
    {"KeySwitchNotZeroOrOne",
     {"--sync.notify_acknowledged", "2"},
     nullptr,
     "'sync.notify_acknowledged' = 2: must be at most 1"},
    {"KeyNegativeLaunchSetup",
     {"--launch.setup_cycles", "-5"},
     nullptr,
     "'launch.setup_cycles' = -5: must be at least 0"},
    {"KeyClusterDevicesContradict",
     {"-p", "a2a3-cluster", "--platform.devices", "100"},
     nullptr,
     "'platform.devices' = 100: contradicts cluster.servers x cluster.npus_per_server = 128"},
    {"KeySuperpodDevicesContradict",
     {"-p", "a3-superpod", "--platform.devices", "8"},
     nullptr,
     "'platform.devices' = 8: contradicts superpod.nodes x superpod.npus_per_node = 384"},
    {"KeyClusterBeyondDeviceLimit",
     {"-p", "a2a3-cluster", "--cluster.servers", "4096"},
     nullptr,
     "cluster.servers x cluster.npus_per_server = 32768 devices: must be at most 16384"},
    {"KeyClusterWiringUnknown",
     {"-p", "a2a3-cluster", "--cluster.wiring", "torus"},
     nullptr,
     "'cluster.wiring' = torus: must be rail or leaf"},
    {"KeyClusterServersZero", {"--cluster.servers", "0"}, nullptr, "'cluster.servers' = 0"},
    {"KeyClusterSpinesZero", {"--cluster.spines", "0"}, nullptr, "'cluster.spines' = 0"},
    {"KeyClusterOversubscriptionBelowOne",
     {"--cluster.oversubscription", "0.5"},
     nullptr,
     "'cluster.oversubscription' = 0.5: must be at least 1"},
    {"KeyNicBandwidthZero", {"--nic.bandwidth_GBps", "0"}, nullptr, "'nic.bandwidth_GBps' = 0"},
    {"KeyLeafLatencyNegative", {"--leaf.latency_ns", "-1"}, nullptr, "'leaf.latency_ns' = -1"},
    {"KeySuperpodNodesZero",
     {"-p", "a3-superpod", "--superpod.nodes", "0"},
     nullptr,
     "'superpod.nodes' = 0"},
    {"KeySuperpodTierLatencyNan",
     {"--superpod.tier2_latency_ns", "nan"},
     nullptr,
     "'superpod.tier2_latency_ns' = nan"},
    // Config files.
    {"ConfigMissing", {"-p", "{dir}/absent.ini"}, nullptr, "absent.ini"},
    {"ConfigIsADirectory", {"-p", "{dir}"}, nullptr, "config path is a directory"},
    {"ConfigIsADevice", {"-p", "/dev/zero"}, nullptr, "config path is not a file: /dev/zero"},
    {"ConfigUnknownKey", {"-p", "{ini}"}, "[link]\nspeed = 3\n", "link.speed"},
    {"ConfigLineWithoutEquals", {"-p", "{ini}"}, "[link]\nbandwidth_GBps\n", "'bandwidth_GBps'"},
    {"ConfigDuplicateKey",
     {"-p", "{ini}"},
     "[link]\nbandwidth_GBps = 1\nbandwidth_GBps = 2\n",
     "link.bandwidth_GBps"},
    {"ConfigNonNumeric", {"-p", "{ini}"}, "[link]\nbandwidth_GBps = fast\n", "'fast'"},
    {"ConfigZero", {"-p", "{ini}"}, "[dma]\nqueues = 0\n", "'dma.queues' = 0"},
    {"ConfigNegative", {"-p", "{ini}"}, "[link]\nbandwidth_GBps = -25\n", "= -25"},
    {"ConfigNan", {"-p", "{ini}"}, "[gm]\nbandwidth_GBps = nan\n", "'gm.bandwidth_GBps' = nan"},
    {"ConfigAbsurdDevices", {"-p", "{ini}"}, "[platform]\ndevices = 99999999999\n", "99999999999"},
    {"ConfigAbsurdBurst", {"-p", "{ini}"}, "[dma]\nburst_bytes = 1e15\n", "'dma.burst_bytes'"},
    {"ConfigUnsignedNegative",
     {"-p", "{ini}"},
     "[dma]\nburst_bytes = -1\n",
     "the argument ('-1') for option 'dma.burst_bytes' is invalid"},
    {"UnsignedKeyNegative",
     {"--ub.usable_bytes=-4096"},
     nullptr,
     "the argument ('-4096') for option '--ub.usable_bytes' is invalid"},
    {"ConfigNotText",
     {"-p", "{ini}"},
     "[dma]\nburst\x01_bytes = 512\n",
     "line 2 is not text (byte 0x01 at column 6)"},
    {"ConfigUnknownTopology", {"-p", "{ini}"}, "[platform]\ntopology = torus\n", "torus"},
    {"ConfigUsableAbovePhysical",
     {"-p", "{ini}"},
     "[ub]\nphysical_bytes = 1024\nusable_bytes = 2048\n",
     "'ub.usable_bytes' = 2048"},
    {"ConfigOpenSection", {"-p", "{ini}"}, "[link\nbandwidth_GBps = 1\n", "[link"},
    // Kernel contracts.
    {"TwoPhaseSizeNotDivisible", {"-k", "two_phase", "--size", "66"}, nullptr, "size 66"},
    {"RingSizeNotDivisible", {"-k", "ring", "--size", "66"}, nullptr, "size 66"},
    {"HostRingOpOutsideContract", {"-k", "host_ring", "--op", "max"}, nullptr, "op max"},
    {"HostRingDtypeOutsideContract", {"-k", "host_ring", "--dtype", "fp16"}, nullptr, "fp16"},
    {"InterUnknown",
     {"-k", "hierarchical", "--inter", "tree"},
     nullptr,
     "--inter: unknown algorithm 'tree'"},
    {"InterOnAFlatKernel",
     {"-k", "ring", "--inter", "rhd"},
     nullptr,
     "--inter: ring has no inter-server phase"},
    {"InterOnTheBuiltin",
     {"--inter", "ring"},
     nullptr,
     "--inter: builtin_mesh has no inter-server phase"},
    {"HierarchicalUnequalServers",
     {"-p", "a2a3-cluster", "-d", "0-8", "-k", "hierarchical"},
     nullptr,
     "hierarchical: servers hold unequal rank counts (server 0 has 8, server 1 has 1)"},
    {"MeshSignalShapeWrong", {"--signal-shape", "2,2"}, nullptr, "got [2,2]"},
    {"RingSignalShapeWrong", {"--mode", "ring", "--signal-shape", "4,1"}, nullptr, "got [4,1]"},
    // Found while the simulation runs: a rank touches a cell outside a too-short signal.
    {"MeshSignalTooShortForItsRanks",
     {"--signal-shape", "2,1"},
     nullptr,
     "signal cell [2,0] is outside the signal 'signal' of shape [2,1]"},
};

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, ExitsTwoWithOneLineNamingTheValueAndLeavesNoOutput) {
  const BadInput& row = GetParam();
  ScratchDir dir;
  const std::string ini = dir / "platform.ini";
  if (row.ini != nullptr) std::ofstream(ini) << row.ini;
  std::vector<std::string> args;
  for (std::string arg : row.args) {
    for (const auto& [key, value] :
         {std::pair<std::string, std::string>{"{dir}", dir.path()}, {"{ini}", ini}}) {
      if (const auto at = arg.find(key); at != std::string::npos)
        arg.replace(at, key.size(), value);
    }
    args.push_back(arg);
  }
  if (row.add_outputs) {
    args.insert(args.end(), {"--json", dir / "run.json", "--vcd", dir / "run.vcd",
                             "--dump-schedule", dir / "schedule.txt"});
  }

  const ProcessResult run = test::run_binary(args);

  EXPECT_FALSE(run.hung);
  EXPECT_EQ(run.signal, 0) << run.err;
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  // "allreduce-sim: error: ...", or "allreduce-sim costcard: error: ..." for a subcommand.
  const bool subcommand =
      !args.empty() && (args[0] == "costcard" || args[0] == "calibrate" || args[0] == "validate");
  const std::string command = subcommand ? " " + args[0] : "";
  EXPECT_EQ(run.err.rfind("allreduce-sim" + command + ": error: ", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.out, "") << "nothing but the error is printed";
  EXPECT_NE(run.err.find(row.names), std::string::npos)
      << "stderr does not name '" << row.names << "': " << run.err;
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path() != ini) left.push_back(entry.path().filename().string());
  }
  EXPECT_TRUE(left.empty()) << "left behind: " << ::testing::PrintToString(left);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInputTest, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<BadInput>& info) {
                           return std::string(info.param.name);
                         });

// A run refused before or after it simulates writes none of its outputs: the files already at
// those names keep what they held (the waveform was made at start-up and removed before).
TEST(BadInput, ARefusedRunLeavesTheFilesAtItsOutputNamesAsTheyWere) {
  ScratchDir dir;
  const std::vector<std::string> outputs = {dir / "run.vcd", dir / "run.gtkw", dir / "run.json"};
  for (const std::string& path : outputs) std::ofstream(path) << "kept\n";
  for (const std::vector<std::string>& refused :
       {std::vector<std::string>{"-k", "ring", "--size", "66"},
        std::vector<std::string>{"-k", "barrier", "--fault", "drop-notify:1:3"}}) {
    std::vector<std::string> args = refused;
    args.insert(args.end(), {"--vcd", outputs[0], "--json", outputs[2]});
    const ProcessResult run = test::run_binary(args);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    for (const std::string& path : outputs) {
      std::ifstream in(path);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_EQ(text, "kept\n") << path << " after " << args[1] << " " << args[3];
    }
  }
}

// Two outputs are one file when a link joins them, symbolic (to a file not made yet) or hard;
// an output that is the file an input option reads is refused the same way.
TEST(BadInput, OutputsJoinedByALinkAreOneFile) {
  ScratchDir dir;
  std::filesystem::create_symlink("run.json", dir / "link.json");
  const ProcessResult symbolic =
      test::run_binary({"--json", dir / "run.json", "--trace", dir / "link.json"});
  EXPECT_EQ(symbolic.exit_code, 2);
  EXPECT_EQ(symbolic.err,
            "allreduce-sim: error: --trace: " + dir / "link.json" + " is written by --json too\n");
  const std::string data = dir / "measured.csv";
  std::ofstream(data) << "kernel,P,payload_bytes,device_us\nbuiltin_mesh,2,1024,100\n";
  std::filesystem::create_hard_link(data, dir / "same.csv");
  const ProcessResult hard =
      test::run_binary({"validate", "--data", data, "-p", "a2a3", "--csv", dir / "same.csv"});
  EXPECT_EQ(hard.exit_code, 2);
  EXPECT_EQ(hard.err, "allreduce-sim validate: error: --csv: " + dir / "same.csv" +
                          " is the file --data reads; name another file\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "run.json"));
}

// chmod 000 does not stop root from reading, so the row only means something for other users.
TEST(BadInput, UnreadableConfigIsNamed) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: chmod 000 does not prevent reading";
  ScratchDir dir;
  const std::string ini = dir / "locked.ini";
  std::ofstream(ini) << "[link]\nbandwidth_GBps = 25\n";
  ::chmod(ini.c_str(), 0);
  const ProcessResult run = test::run_binary({"-p", ini});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "allreduce-sim: error: config file cannot be read: " + ini + "\n");
}

// The scripts check their arguments before they install, build or run anything: what they
// cannot read is refused with exit code 2 and a line that says why.
TEST(BadInput, TheScriptsRefuseArgumentsTheyCannotRead) {
  ScratchDir dir;
  const std::string source = ARS_SOURCE_DIR;
  const std::pair<std::string, std::string> cases[] = {
      {"bench/peers/simgrid_ring.sh 256 1MiX",
       "simgrid_ring.sh: BYTES_PER_RANK '1MiX' must be a whole number of bytes"},
      {"bench/peers/simgrid_ring.sh 0",
       "simgrid_ring.sh: P '0' must be a positive whole number of ranks"},
      {"scripts/costcard_shards.sh x " + (dir / "out"),
       "costcard_shards.sh: N (a positive whole number of shards) and OUTDIR come first"},
      {"scripts/costcard_shards.sh 3", "costcard_shards.sh: N (a positive whole number"},
      {"scripts/costcard_slurm.sh", "costcard_slurm.sh: no OUTDIR"},
      {"env -u SLURM_ARRAY_TASK_ID scripts/costcard_slurm.sh " + (dir / "out"),
       "costcard_slurm.sh: not a Slurm array task"},
      {"scripts/plot_scale.py " + (dir / "out") + " " + (dir / "missing.json"),
       "plot_scale.py: " + (dir / "missing.json") + ": [Errno 2]"},
      {"scripts/plot_scale.py " + (dir / "out") + " " + (dir / "none.json"),
       "plot_scale.py: " + (dir / "none.json") +
           ": fewer than two RingTimingOnly/ring8_quiet points to draw"},
      {"scripts/plot_scale.py " + (dir / "out") + " x.json --target 4096",
       "plot_scale.py: --target 4096: expected P=SECONDS, as 4096=60"},
  };
  std::ofstream(dir / "none.json") << R"({"benchmarks": []})";
  for (const auto& [command, message] : cases) {
    const std::string err = dir / "err.txt";
    const int status =
        std::system(("cd " + source + " && " + command + " > /dev/null 2> " + err).c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command;
    EXPECT_EQ(WEXITSTATUS(status), 2) << command;
    EXPECT_EQ(test::read_file(err).rfind(message, 0), 0u)
        << command << ": " << test::read_file(err);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

}  // namespace
}  // namespace ars
