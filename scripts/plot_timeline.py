#!/usr/bin/python3
"""Timeline of one run: ranks on the y axis, time on the x axis, every round coloured by its
phase, and the critical path drawn over it (a black line along the rank it runs on, a red
arrow where a peer's notify hands it to the rank that waited for it).

  plot_timeline.py RUN.json OUT.png [--from US] [--to US]

RUN.json is allreduce-sim's --json output (it carries the rounds and `critical_path`).
--from/--to zoom into a window of microseconds. Needs Debian's python3-matplotlib; run with
Debian's /usr/bin/python3.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402


def round_spans(run):
    """(rank, phase, start_us, end_us) of every round; a round ends where the next begins."""
    finish = {r["rank"]: r["finish_ns"] for r in run["ranks"]}
    by_rank = {}
    for r in run["rounds"]:
        by_rank.setdefault(r["rank"], []).append(r)
    spans = []
    for r in run["ranks"]:  # the launch set-up, before the first round
        first = by_rank.get(r["rank"], [{"start_ns": r["finish_ns"]}])[0]["start_ns"]
        if first > r["start_ns"]:
            spans.append((r["rank"], "set-up", r["start_ns"] / 1e3, first / 1e3))
    for rank, rounds in by_rank.items():
        for i, r in enumerate(rounds):
            end = rounds[i + 1]["start_ns"] if i + 1 < len(rounds) else finish[rank]
            spans.append((rank, r["phase"], r["start_ns"] / 1e3, end / 1e3))
    return spans


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_json")
    parser.add_argument("out_png")
    parser.add_argument("--from", dest="start", type=float, default=None, help="us")
    parser.add_argument("--to", dest="end", type=float, default=None, help="us")
    args = parser.parse_args()
    with open(args.run_json) as f:
        run = json.load(f)
    if "critical_path" not in run:
        raise SystemExit(f"{args.run_json}: no critical_path (the run did not complete)")

    ranks = sorted(r["rank"] for r in run["ranks"])
    spans = round_spans(run)
    phases = list(dict.fromkeys(phase for _, phase, _, _ in spans))
    palette = [c for i, c in enumerate(plt.get_cmap("tab10").colors) if i != 7]  # 7 is grey
    colours = dict(zip([p for p in phases if p != "set-up"], palette))
    colours["set-up"] = "0.75"

    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.55 * len(ranks)))
    for rank, phase, start, end in spans:
        ax.broken_barh([(start, end - start)], (rank - 0.35, 0.7), facecolors=colours[phase],
                       edgecolor="white", linewidth=0.3)

    steps = run["critical_path"]["steps"]
    for step in steps:
        start, end = step["start_ps"] / 1e6, step["end_ps"] / 1e6
        if step["kind"] == "waiting for a peer":
            ax.annotate("", xy=(end, step["rank"]), xytext=(start, step["peer"]),
                        arrowprops=dict(arrowstyle="->", color="red", lw=1.2))
        elif step["kind"] != "launch offset":
            ax.plot([start, end], [step["rank"], step["rank"]], color="black", lw=2.2,
                    solid_capstyle="butt")
        else:
            ax.plot([start, end], [step["rank"], step["rank"]], color="black", lw=1.2,
                    linestyle=":")

    device_us = run["critical_path"]["device_time_ps"] / 1e6
    ax.set_yticks(ranks)
    ax.set_yticklabels([f"rank {r}" for r in ranks])
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    ax.set_xlim(args.start if args.start is not None else 0,
                args.end if args.end is not None else device_us)
    ax.set_title(f"{run['kernel']} on {run['platform']}, P = {run['P']}, "
                 f"{run['bytes_per_rank']} B per rank: device time {device_us:.3f} us "
                 f"(critical path ends on rank {run['critical_path']['end_rank']})", fontsize=10)
    handles = [Patch(facecolor=colours[p], label=p) for p in phases]
    handles += [Line2D([0], [0], color="black", lw=2.2, label="critical path"),
                Line2D([0], [0], color="red", lw=1.2, label="notify that releases the path's wait")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18),
              ncol=min(len(handles), 4), fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(args.out_png, dpi=120)


if __name__ == "__main__":
    main()
