#!/usr/bin/env python3
"""Model A on ZionEX from 8 to 128 nodes at two NIC speeds: throughput and where the time goes.

A script to paste into a notebook. With the package built (README, "Python"):

    PYTHONPATH=bazel-bin/python/package /usr/bin/python3 examples/whatif_sweep.py --out sweep.png

It sweeps `zionsim whatif` (nodes x nic_gbit), prints the frame, and draws two
panels to a PNG: samples per second against GPUs, one line per NIC speed; and
the iteration's breakdown (compute, exposed all-to-all, exposed all-reduce,
other) as stacked bars per size at the first NIC speed.
"""

import argparse

import matplotlib

matplotlib.use("Agg")  # headless: a file, no window
import matplotlib.pyplot as plt  # noqa: E402

import zionsim  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="dlrm-a")
    parser.add_argument("--nodes", default="8,16,32,64,128", help="cluster sizes in servers, comma-separated")
    parser.add_argument("--nic-gbit", default="200,400", help="NIC speeds to compare, comma-separated")
    parser.add_argument("--out", default="whatif_sweep.png", help="the picture (PNG)")
    options = parser.parse_args()
    nodes = [int(n) for n in options.nodes.split(",")]
    speeds = [int(s) for s in options.nic_gbit.split(",")]

    frame = zionsim.whatif(model=options.model, nodes=nodes, nic_gbit=speeds, progress=True)
    print(frame[["nic-gbit", "nodes", "gpus", "iteration_time_ms", "samples_per_s", "bottleneck"]])

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for speed, rows in frame.groupby("nic-gbit"):
        left.plot(rows["gpus"], rows["samples_per_s"] / 1e6, marker="o", label=f"{speed} Gb/s NIC")
    left.set_xscale("log", base=2)
    left.set_xlabel("GPUs")
    left.set_ylabel("million samples / s")
    left.set_title(f"{options.model} on ZionEX: throughput")
    left.legend()

    first = frame[frame["nic-gbit"] == speeds[0]]
    bottom = [0.0] * len(first)
    labels = [str(g) for g in first["gpus"]]
    for part, name in [("compute_ms", "compute"), ("exposed_all_to_all_ms", "exposed all-to-all"),
                       ("exposed_all_reduce_ms", "exposed all-reduce"), ("other_ms", "other")]:
        values = list(first[part])
        right.bar(labels, values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    right.set_ylim(0, 1.08 * max(bottom))  # room above the tallest bar
    right.set_xlabel("GPUs")
    right.set_ylabel("ms per iteration")
    right.set_title(f"where the time goes ({speeds[0]} Gb/s NIC)")
    right.legend(fontsize="small", loc="lower right")

    figure.tight_layout()
    figure.savefig(options.out, dpi=110)
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
