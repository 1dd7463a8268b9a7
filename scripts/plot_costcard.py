#!/usr/bin/python3
"""Plots of a cost-card sweep and of one run's rounds.

  scripts/plot_costcard.py sweep COSTCARD.csv OUTDIR
      time vs size per kernel (simulated points, card as a line) and busbw vs size:
      one PNG per platform, P, dtype and op, named costcard_PLATFORM_PP_DTYPE_OP.png
  scripts/plot_costcard.py rounds RUN.json OUTDIR
      stacked barrier/transfer/reduce bars per round of every rank (from allreduce-sim
      --json), named rounds_PLATFORM_KERNEL_PP_SIZE_DTYPE_OP.png

COSTCARD.csv is written by `allreduce-sim costcard --csv`. Each plot's path is printed.
Needs Debian's python3-matplotlib (apt-get install python3-matplotlib), kept out of
scripts/setup.sh because only plotting uses it; the shebang runs Debian's /usr/bin/python3.
"""
import csv
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

DPI = 150


def human_bytes(size):
    """1024 -> '1 KiB', 4194304 -> '4 MiB'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:g} {unit}"
    return f"{size:g} B"


def size_axis(ax, sizes):
    """A log2 size axis labelled in B/KiB/MiB, at most about eight labels."""
    ax.set_xscale("log", base=2)
    sizes = sorted(set(sizes))
    step = max(1, (len(sizes) + 7) // 8)
    ax.xaxis.set_major_locator(FixedLocator(sizes[::step]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: human_bytes(x)))
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    ax.set_xlabel("size per rank")


def plot_sweep(csv_path, outdir):
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and "platform" not in rows[0]:
        sys.exit(f"{csv_path}: no platform column (write it with allreduce-sim costcard --csv)")
    groups = defaultdict(lambda: defaultdict(list))
    for row in rows:
        key = (row["platform"], int(row["P"]), row["dtype"], row["op"], row["ideal"] == "1")
        groups[key][row["kernel"]].append(row)
    os.makedirs(outdir, exist_ok=True)
    for (platform, p, dtype, op, ideal), kernels in sorted(groups.items()):
        fig, (ax_time, ax_bw) = plt.subplots(1, 2, figsize=(12, 4.8))
        handles = []
        sizes = []
        for kernel, points in sorted(kernels.items()):
            points.sort(key=lambda r: int(r["bytes_per_rank"]))
            size = [int(r["bytes_per_rank"]) for r in points]
            sizes += size
            line = ax_time.plot(size, [float(r["time_ns"]) / 1e3 for r in points], "o",
                                markersize=4, label=kernel)[0]
            ax_time.plot(size, [float(r["card_time_ns"]) / 1e3 for r in points], "-",
                         color=line.get_color(), linewidth=1)
            ax_bw.plot(size, [float(r["busbw_GBps"]) for r in points], "o-", markersize=4,
                       color=line.get_color())
            handles.append(line)
        handles.append(Line2D([], [], color="black", linewidth=1,
                              label="card (line in each kernel's colour)"))
        for ax in (ax_time, ax_bw):
            size_axis(ax, sizes)
            ax.grid(True, which="major", alpha=0.3)
        ax_time.set_yscale("log")
        ax_time.set_ylabel("device time (us): points simulated")
        ax_bw.set_ylabel("busbw (GB/s)")
        setting = " (--ideal)" if ideal else ""
        fig.suptitle(f"allreduce-sim costcard: {platform}{setting}, P = {p}, {dtype} {op}")
        fig.legend(handles=handles, loc="center right", fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0, 0.8, 1))
        suffix = "_ideal" if ideal else ""
        out = os.path.join(outdir, f"costcard_{platform}_P{p}_{dtype}_{op}{suffix}.png")
        fig.savefig(out, dpi=DPI)
        plt.close(fig)
        print(out)


def plot_rounds(json_path, outdir):
    with open(json_path) as f:
        run = json.load(f)
    rounds = run["rounds"]
    labels = [f"r{o['rank']}.{o['round']} {o['phase']}" for o in rounds]
    x = range(len(rounds))
    bottom = [0.0] * len(rounds)
    fig, ax = plt.subplots(figsize=(max(7, 0.3 * len(rounds) + 3), 4.8))
    for key, colour in (("barrier_ns", "tab:red"), ("transfer_ns", "tab:blue"),
                        ("reduce_ns", "tab:green")):
        values = [o[key] / 1e3 for o in rounds]
        ax.bar(x, values, bottom=bottom, color=colour, label=key[:-3])
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=90, fontsize=8)
    ax.set_ylabel("time in the round (us)")
    ax.set_xlabel("rank.round phase")
    size = human_bytes(run["bytes_per_rank"])
    ax.set_title(f"{run['kernel']} on {run['platform']}, P = {run['P']}, {size} per rank, "
                 f"{run['dtype']} {run['op']}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.tight_layout()
    os.makedirs(outdir, exist_ok=True)
    name = (f"rounds_{run['platform']}_{run['kernel']}_P{run['P']}_"
            f"{size.replace(' ', '')}_{run['dtype']}_{run['op']}.png")
    out = os.path.join(outdir, name)
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    print(out)


def main(argv):
    if len(argv) != 4 or argv[1] not in ("sweep", "rounds"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "sweep":
        plot_sweep(argv[2], argv[3])
    else:
        plot_rounds(argv[2], argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
