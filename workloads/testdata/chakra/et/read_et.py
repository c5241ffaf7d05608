#!/usr/bin/python3
"""Reads Chakra .et files with protobuf's own Python runtime, as Chakra's
src/third_party/utils/protolib.py decodeMessage does (a varint32 size, then
the message; gzip when the file starts with gzip's magic number), the
GlobalMetadata first and then Nodes, and prints one line:

  files F nodes N types T=count,... comm_bytes B

where B sums comm_size over the COMM_COLL_NODEs.

Usage: PYTHONPATH=<dir of et_def_pb2.py> read_et.py FILE...
"""

import collections
import gzip
import sys

from google.protobuf.internal.decoder import _DecodeVarint32

import et_def_pb2 as et


def messages(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    pos = 0
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        yield data[pos:pos + size]
        pos += size


def main():
    nodes = 0
    types = collections.Counter()
    comm_bytes = 0
    for path in sys.argv[1:]:
        stream = messages(path)
        meta = et.GlobalMetadata()
        meta.ParseFromString(next(stream))
        assert meta.version, f"{path}: no GlobalMetadata version"
        for body in stream:
            node = et.Node()
            node.ParseFromString(body)
            nodes += 1
            types[et.NodeType.Name(node.type)] += 1
            if node.type == et.COMM_COLL_NODE:
                sizes = [a.int64_val for a in node.attr if a.name == "comm_size"]
                assert len(sizes) == 1, f"{path}: node {node.id} has no comm_size"
                comm_bytes += sizes[0]
    summary = ",".join(f"{t}={c}" for t, c in sorted(types.items()))
    print(f"files {len(sys.argv) - 1} nodes {nodes} types {summary} comm_bytes {comm_bytes}")


if __name__ == "__main__":
    main()
