#!/usr/bin/python3
"""Effective bandwidth against size, one line per core count, simulated and measured.

usage: scripts/plot_corenum.py VALIDATE.csv OUT.png

VALIDATE.csv is what `allreduce-sim validate --csv` writes for data with a core_num column
(data/910b2-host-mesh-corenum-p2.csv). Effective GB/s = payload bytes per rank / time.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def size_label(size):
    """16384 -> '16 KiB', 4194304 -> '4 MiB'."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return "%g %s" % (size / scale, unit)
    return "%d B" % size


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    if not rows or "core_num" not in rows[0]:
        sys.exit("plot_corenum.py: " + sys.argv[1] + " has no core_num column")
    cores = sorted({int(r["core_num"]) for r in rows})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, n in enumerate(cores):
        points = sorted((int(r["payload_bytes"]), float(r["measured_us"]), float(r["simulated_us"]))
                        for r in rows if int(r["core_num"]) == n)
        sizes = [p[0] for p in points]
        color = "C%d" % i
        ax.plot(sizes, [b / (us * 1e3) for b, us, _ in points], "o--", color=color,
                label="%d core%s, measured" % (n, "" if n == 1 else "s"))
        ax.plot(sizes, [b / (us * 1e3) for b, _, us in points], "-", color=color,
                label="%d core%s, simulated" % (n, "" if n == 1 else "s"))
    ax.set_xscale("log", base=2)
    sizes = sorted({int(r["payload_bytes"]) for r in rows})
    ax.set_xticks(sizes)
    ax.set_xticklabels([size_label(s) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("payload per rank")
    ax.set_ylabel("effective GB/s (payload / time)")
    ax.set_title("host mesh allreduce, P = 2, FP32: core_num sweep")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=150)


if __name__ == "__main__":
    main()
