#!/usr/bin/python3
"""busbw per algorithm, P and size from a cost-card sweep, one panel per P.

  plot_cluster_busbw.py OUT.png COSTCARD.csv [COSTCARD.csv ...] [--title TEXT]
                        [--limit LABEL=GBps ...]

Each COSTCARD.csv comes from `allreduce-sim costcard --csv`; every kernel in them gets a line of
busbw (GB/s) against bytes per rank. Each --limit draws a dashed horizontal line, e.g. the
rate of the link that bounds the busbw. Needs Debian's python3-matplotlib; run with Debian's
/usr/bin/python3.
"""
import argparse
import csv
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size // scale}{unit}"
    return f"{size}B"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--title", default="")
    parser.add_argument("--limit", action="append", default=[], help="LABEL=GBps")
    args = parser.parse_args()

    by_p = defaultdict(lambda: defaultdict(list))
    for path in args.csv:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                by_p[int(row["P"])][row["kernel"]].append(
                    (int(row["bytes_per_rank"]), float(row["busbw_GBps"])))
    if not by_p:
        raise SystemExit(f"{' '.join(args.csv)}: no points")
    limits = []
    for item in args.limit:
        label, _, value = item.partition("=")
        limits.append((label, float(value)))

    fig, axes = plt.subplots(1, len(by_p), figsize=(4.6 * len(by_p), 4.2), sharey=True,
                             squeeze=False)
    for ax, (p, kernels) in zip(axes[0], sorted(by_p.items())):
        for kernel, points in sorted(kernels.items()):
            points.sort()
            ax.plot([s for s, _ in points], [b for _, b in points], "o-", markersize=3,
                    label=kernel)
        for i, (label, value) in enumerate(limits):
            ax.axhline(value, linestyle="--", linewidth=1, color=f"C{7 + i}", label=label)
        sizes = sorted({s for points in kernels.values() for s, _ in points})
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes[::2])
        ax.set_xticklabels([human(s) for s in sizes[::2]], rotation=45, fontsize=8)
        ax.set_xlabel("bytes per rank")
        ax.set_title(f"P = {p}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("busbw (GB/s) = algbw x 2(P-1)/P")
    axes[0][0].legend(fontsize=8)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(args.out)


if __name__ == "__main__":
    main()
