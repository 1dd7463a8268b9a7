#!/usr/bin/python3
"""Plots of a cost-card sweep and of one run's rounds.

  plot_costcard.py sweep COSTCARD.csv OUTDIR   time vs size per kernel (card as a line) and
                                               busbw vs size, one PNG each per P
  plot_costcard.py rounds RUN.json OUT.png     stacked barrier/transfer/reduce bars per round
                                               of every rank (from allreduce-sim --json)

Needs Debian's python3-matplotlib (apt-get install python3-matplotlib), kept out of
scripts/setup.sh because only plotting uses it; run with Debian's /usr/bin/python3.
"""
import csv
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_sweep(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    by_p = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_p[int(row["P"])][row["kernel"]].append(row)
    return by_p


def plot_sweep(csv_path, outdir):
    os.makedirs(outdir, exist_ok=True)
    for p, kernels in sorted(read_sweep(csv_path).items()):
        fig, (ax_time, ax_bw) = plt.subplots(1, 2, figsize=(11, 4.2))
        for kernel, rows in sorted(kernels.items()):
            rows.sort(key=lambda r: int(r["bytes_per_rank"]))
            size = [int(r["bytes_per_rank"]) for r in rows]
            line = ax_time.plot(size, [float(r["time_ns"]) / 1e3 for r in rows], "o",
                                markersize=3, label=kernel)[0]
            ax_time.plot(size, [float(r["card_time_ns"]) / 1e3 for r in rows], "-",
                         color=line.get_color(), linewidth=1)
            ax_bw.plot(size, [float(r["busbw_GBps"]) for r in rows], "o-", markersize=3,
                       label=kernel)
        for ax in (ax_time, ax_bw):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("bytes per rank")
            ax.grid(True, which="both", alpha=0.3)
        ax_time.set_yscale("log")
        ax_time.set_ylabel("time (us): points simulated, lines card")
        ax_bw.set_ylabel("busbw (GB/s)")
        ax_time.legend(fontsize=7)
        fig.suptitle(f"P = {p}")
        fig.tight_layout()
        out = os.path.join(outdir, f"costcard_P{p}.png")
        fig.savefig(out, dpi=80)
        plt.close(fig)
        print(out)


def plot_rounds(json_path, out):
    with open(json_path) as f:
        run = json.load(f)
    rounds = run["rounds"]
    labels = [f"r{o['rank']}.{o['round']} {o['phase']}" for o in rounds]
    x = range(len(rounds))
    bottom = [0.0] * len(rounds)
    fig, ax = plt.subplots(figsize=(max(6, 0.25 * len(rounds)), 4))
    for key, colour in (("barrier_ns", "tab:red"), ("transfer_ns", "tab:blue"),
                        ("reduce_ns", "tab:green")):
        values = [o[key] / 1e3 for o in rounds]
        ax.bar(x, values, bottom=bottom, color=colour, label=key[:-3])
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=90, fontsize=6)
    ax.set_ylabel("us")
    ax.set_title(f"{run['kernel']}, P = {run['P']}, {run['bytes_per_rank']} B per rank")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=80)
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
