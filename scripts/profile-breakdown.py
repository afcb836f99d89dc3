#!/usr/bin/env python3
"""Where the end-to-end phase of `openrail bench pulls` spends the machine's time.

Reads `perf script -F pid,tid,comm,time,ip,sym,dso` of a system-wide `perf record -g` of
the bench (see README, "Throughput") and prints the share of CPU samples per category
during the last phase (the end-to-end one: from the first sample of the last anvil the
bench started). Each sample of Openrail's process goes to the first category (in the
order below) that one of its frames matches; samples of SQLite's worker threads are
database time whatever their frames. A release build has no frame pointers, so user
stacks are often just their leaf: "other" holds what could not be told apart.
"""
import re
import sys
from collections import Counter

CATEGORIES = [
    ("database (SQLite, sqlx)", re.compile(r"sqlite3|sqlx_|libsqlite")),
    ("signing and hashing (k256, keccak)", re.compile(r"k256|secp256k1|Keccak|keccak|ecdsa|sha2::|sha3")),
    ("HTTP (hyper, axum, reqwest clients)", re.compile(r"hyper::|axum|tower::|reqwest|h2::|http::")),
    ("JSON (serde_json)", re.compile(r"serde_json")),
    ("RPC client to anvil (alloy)", re.compile(r"alloy_(provider|transport|rpc|json_rpc)")),
    ("async runtime and scheduling (tokio, futex)", re.compile(r"tokio::|futex|schedule|finish_task_switch|try_to_wake_up")),
]

def samples(stream):
    header = None
    frames = []
    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if header:
                yield header, frames
            header, frames = None, []
            continue
        if not line.startswith((" ", "\t")):
            if header:
                yield header, frames
            m = re.match(r"\s*(\S.*?)\s+(\d+)/(\d+)\s+([\d.]+):", line)
            if not m:
                header = None
                continue
            header = (m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4)))
            frames = []
        else:
            frames.append(line.strip())
    if header:
        yield header, frames

def main():
    data = list(samples(sys.stdin))
    anvil_pids = {pid for (comm, pid, tid, t), _ in data if comm == "anvil"}
    if not anvil_pids:
        sys.exit("no anvil samples: record the whole bench with perf record -a -g")
    last = max(anvil_pids)
    start = min(t for (comm, pid, tid, t), _ in data if pid == last)
    openrail = {pid for (comm, pid, tid, t), _ in data if comm == "openrail"}
    counts = Counter()
    total = 0
    for (comm, pid, tid, t), frames in data:
        if t < start:
            continue
        total += 1
        if pid == 0:
            counts["idle"] += 1
        elif pid in anvil_pids:
            counts["anvil (the chain)"] += 1
        elif pid in openrail:
            if comm.startswith("sqlx-sqlite"):
                counts["database (SQLite, sqlx)"] += 1
                continue
            for name, pattern in CATEGORIES:
                if any(pattern.search(f) for f in frames):
                    counts[name] += 1
                    break
            else:
                counts["other Openrail code (kernel I/O, allocation, …)"] += 1
        else:
            counts["other processes"] += 1
    print(f"{total} samples over {data[-1][0][3] - start:.1f} s of the end-to-end phase (2 cores)")
    for name, n in counts.most_common():
        print(f"| {name} | {100 * n / total:.1f} % |")

main()
