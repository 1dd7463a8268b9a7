#!/usr/bin/python3
"""What a rank-round costs as the ring grows, from bench_scale's results.

  plot_scale.py OUT.png BENCH.json [--family NAME] [--target P=SECONDS ...]

BENCH.json is Google Benchmark's JSON output of bench_scale
(`build/bin/bench_scale --benchmark_filter=ring8_quiet --benchmark_out=BENCH.json`). For the
hand ring's family (RingTimingOnly/ring8_quiet by default) the left panel shows the whole
process's wall time for each rank-round (one of a rank's 2(P-1) rounds: the ring's work grows
as P(2P-2) rank-rounds; at small P the process's set-up dominates) and the right one the peak
resident memory, both against P on logarithmic axes. Each --target draws the wall time for
each rank-round that a whole process of SECONDS at P would take. It also prints what it draws,
one line per P. Needs Debian's python3-matplotlib; run with Debian's /usr/bin/python3.
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def refuse(message):
    print(f"plot_scale.py: {message}", file=sys.stderr)
    sys.exit(2)


def rank_rounds(p):
    return p * 2 * (p - 1)


def read_points(path, family):
    """(P, wall, peak) per rank count: the median wall time and the largest peak memory of the
    family's runs at that P (several with --benchmark_repetitions; the aggregates are left out,
    and so are runs that failed)."""
    try:
        with open(path) as f:
            results = json.load(f)
    except (OSError, ValueError) as error:
        refuse(f"{path}: {error}")
    runs = defaultdict(list)
    prefix = family + "/"
    for bench in results.get("benchmarks", []) if isinstance(results, dict) else []:
        name = bench.get("name", "")
        if (not name.startswith(prefix) or bench.get("error_occurred")
                or bench.get("run_type") == "aggregate"):
            continue
        try:
            p = int(name[len(prefix):].split("/")[0])
            if p < 2:
                raise ValueError
            runs[p].append((float(bench["process_wall_s"]), float(bench["peak_rss_MiB"])))
        except (ValueError, KeyError):
            refuse(f"{path}: {name} has no rank count of 2 or more, process_wall_s or "
                   "peak_rss_MiB")
    if len(runs) < 2:
        refuse(f"{path}: fewer than two {family} points to draw")
    return [(p, statistics.median(wall for wall, _ in runs[p]), max(rss for _, rss in runs[p]))
            for p in sorted(runs)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("bench")
    parser.add_argument("--family", default="RingTimingOnly/ring8_quiet")
    parser.add_argument("--target", action="append", default=[], help="P=SECONDS")
    args = parser.parse_args()
    targets = []
    for item in args.target:
        p, _, seconds = item.partition("=")
        try:
            targets.append((int(p), float(seconds)))
        except ValueError:
            refuse(f"--target {item}: expected P=SECONDS, as 4096=60")
        if targets[-1][0] < 2:
            refuse(f"--target {item}: P must be at least 2")

    points = read_points(args.bench, args.family)
    ps = [p for p, _, _ in points]
    per_round_us = [wall / rank_rounds(p) * 1e6 for p, wall, _ in points]
    per_rank_kib = [rss * 1024 / p for p, _, rss in points]

    print("P\twall_s\trank_rounds\tus_per_rank_round\tpeak_MiB\tKiB_per_rank")
    for (p, wall, rss), us, kib in zip(points, per_round_us, per_rank_kib):
        print(f"{p}\t{wall:g}\t{rank_rounds(p)}\t{us:.3f}\t{rss:g}\t{kib:.1f}")

    fig, (time_ax, memory_ax) = plt.subplots(1, 2, figsize=(10, 4.2))
    time_ax.plot(ps, per_round_us, marker="o", label="whole process / P(2P-2)")
    for p, wall, _ in points:
        time_ax.annotate(f"{wall:.3g} s", (p, wall / rank_rounds(p) * 1e6),
                         textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    styles = [("--", "tab:red"), (":", "tab:purple"), ("-.", "tab:orange")]
    for (p, seconds), (style, colour) in zip(targets, styles * len(targets)):
        time_ax.axhline(seconds / rank_rounds(p) * 1e6, linestyle=style, color=colour,
                        label=f"a process of {seconds:g} s at P = {p}")
    time_ax.set_ylabel("wall time per rank-round (us)")
    memory_ax.plot(ps, [rss for _, _, rss in points], marker="o", color="tab:green")
    for p, _, rss in points:
        memory_ax.annotate(f"{rss:.0f} MiB", (p, rss), textcoords="offset points",
                           xytext=(0, 7), ha="center", fontsize=8)
    memory_ax.set_ylabel("peak resident memory (MiB)")
    for ax in (time_ax, memory_ax):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.margins(y=0.15)
        ax.set_xticks(ps)
        ax.set_xticklabels([str(p) for p in ps])
        ax.set_xlabel("ranks P")
        ax.grid(True, alpha=0.3)
    time_ax.legend(fontsize=8, loc="upper right")
    fig.suptitle(f"{args.family}: hand ring, 1 MiB per rank, --timing-only")
    fig.tight_layout()
    fig.savefig(args.out, dpi=150)


if __name__ == "__main__":
    main()
