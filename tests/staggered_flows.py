#!/usr/bin/python3
"""Writes a zionsim flows file of staggered random transfers on standard output.

COUNT flows between distinct GPUs of NODES servers of 8 GPUs, drawn with
Python's random seeded by SEED: sizes log-uniform from 64 KiB to 64 MiB,
starts uniform over WINDOW_NS. The differential test against SimGrid
(tests/simgrid_differential_test.sh) and scripts/compare_simgrid.sh use it.

Usage: staggered_flows.py NODES COUNT SEED WINDOW_NS
"""

import json
import math
import random
import sys


def main(argv):
    nodes, count, seed, window = int(argv[1]), int(argv[2]), int(argv[3]), float(argv[4])
    gpus = nodes * 8
    rng = random.Random(seed)
    flows = []
    for i in range(count):
        src = rng.randrange(gpus)
        dst = rng.randrange(gpus - 1)
        dst += dst >= src
        size = int(round(math.exp(rng.uniform(math.log(64 << 10), math.log(64 << 20)))))
        flows.append({"id": i, "src_rank": src, "dst_rank": dst, "size_bytes": size,
                      "start_ns": round(rng.uniform(0, window), 3)})
    json.dump({"schema_version": 1, "flows": flows}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)
