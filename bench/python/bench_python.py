#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The practitioner's question in Python: n e-mail addresses at 1%, how fast is a lookup and how much memory
does it take? Contestants, each in a fresh process so that its memory is its own:

  post      the post's method: a Bloom filter in pure Python over a bit array (Debian's python3-bitarray)
            with k salted hashes. mmh3 is not packaged by Debian, so hash i is Python's built-in hash()
            (SipHash) of the key with salt i appended: one C call per probe, as mmh3.hash(key, i) is.
            (hash((i, key)) would be cheaper, but a tuple's hash mixes the key's hash linearly, so the k
            positions are correlated: 3.0% measured at a 1% design.)
  set       a Python set of the addresses.
  blume     blume's split-block filter: `key in f` one by one, and contains_many on a list of str.

Lookups are of absent addresses (what a sign-up gate mostly sees); each timing is the median of --reps runs.
Memory is the growth of the process's resident set while the structure is built (keys are generated on the
fly, so they are not counted, except those a set keeps).

  bench_python.py                       # 10M and 100M, every contestant
  bench_python.py --sizes 1M --reps 1   # a quick look
"""

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time

NAMES = ["ann", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar",
         "peggy", "trent", "victor", "walter"]
DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "example.org", "proton.me", "mail.de", "web.de", "icloud.com"]


def address(i):
    """A distinct e-mail-like address for each i (18 to 30 bytes)."""
    return f"{NAMES[i & 15]}.{i:x}@{DOMAINS[(i >> 4) & 7]}"


def addresses(start, stop):
    return (address(i) for i in range(start, stop))


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PostBloom:
    """The post's filter: m bits and k hashes from the classic formulas, one salted hash per probe."""

    def __init__(self, n, fpr):
        from bitarray import bitarray

        self.salts = [f"#{i}" for i in range(64)]
        self.m = math.ceil(-n * math.log(fpr) / math.log(2) ** 2)
        self.k = max(1, round(self.m / n * math.log(2)))
        self.bits = bitarray(self.m)
        self.bits.setall(0)

    def add(self, key):
        for salt in self.salts[: self.k]:
            self.bits[hash(key + salt) % self.m] = 1

    def __contains__(self, key):
        return all(self.bits[hash(key + salt) % self.m] for salt in self.salts[: self.k])

    def size_in_bytes(self):
        return self.bits.buffer_info()[1]


def timed(fn, reps):
    runs = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def child(contestant, n, probes, reps, fpr):
    """Builds one contestant of n keys and measures it; prints one JSON object."""
    absent = [address(i) for i in range(n, n + probes)]  # held before the baseline: not counted
    import bitarray  # noqa: F401 - loaded before the baseline too: their code is not the structure's memory
    import blume  # noqa: F401
    import numpy  # noqa: F401 - contains_many answers in a NumPy array: not its import in the first timed loop

    gc.collect()
    base = rss_bytes()
    start = time.perf_counter()
    result = {"contestant": contestant, "n": n, "probes": probes}
    if contestant == "blume":
        import blume

        f = blume.SplitBlockBloomFilter(n, fpr)
        f.add_many(addresses(0, n))  # a generator: one str alive at a time
        result["bytes"] = f.size_in_bytes
        result["planned_bytes"] = blume.plan(n, fpr, kind="split-block")["bytes"]
    elif contestant == "set":
        f = set(addresses(0, n))
    elif contestant == "post":
        f = PostBloom(n, fpr)
        for key in addresses(0, n):
            f.add(key)
        result["bytes"] = f.size_in_bytes()
        result["k"] = f.k
    else:
        raise SystemExit(f"unknown contestant {contestant}")
    result["build_ns_per_key"] = (time.perf_counter() - start) / n * 1e9
    result["rss_growth"] = rss_bytes() - base

    def one_by_one():
        hits = 0
        for key in absent:
            if key in f:
                hits += 1
        result["hits"] = hits

    result["in_ns"] = timed(one_by_one, reps) / probes * 1e9
    if contestant == "blume":
        result["bulk_ns"] = timed(lambda: f.contains_many(absent), reps) / probes * 1e9
        result["count_ns"] = timed(lambda: f.count_contained(absent), reps) / probes * 1e9
    result["measured_fpr"] = result["hits"] / probes
    print(json.dumps(result))


def parse_count(text):
    scale = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9}
    return int(float(text[:-1]) * scale[text[-1]]) if text[-1] in scale else int(text)


def mib(b):
    return f"{b / 2**20:,.1f} MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10M,100M", help="keys per structure, comma-separated (default 10M,100M)")
    parser.add_argument("--probes", default="1M", help="absent addresses looked up (default 1M)")
    parser.add_argument("--reps", type=int, default=3, help="timed runs of each lookup loop; the median is kept")
    parser.add_argument("--fpr", type=float, default=0.01)
    parser.add_argument("--contestants", default="post,set,blume")
    parser.add_argument("--child", nargs=2, metavar=("CONTESTANT", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    probes = parse_count(args.probes)
    if args.child:
        child(args.child[0], int(args.child[1]), probes, args.reps, args.fpr)
        return
    rows = []
    for n in (parse_count(s) for s in args.sizes.split(",")):
        for contestant in args.contestants.split(","):
            out = subprocess.run([sys.executable, __file__, "--child", contestant, str(n), "--probes", str(probes),
                                  "--reps", str(args.reps), "--fpr", str(args.fpr)],
                                 check=True, capture_output=True, text=True).stdout
            rows.append(json.loads(out))
            print(f"# {contestant} at {n:,}: {out.strip()}", file=sys.stderr, flush=True)
    print(f"Python {sys.version.split()[0]}, {probes:,} absent addresses per lookup loop, median of {args.reps}; "
          f"target rate {args.fpr:.0%}.\n")
    print("| n | structure | memory (RSS growth) | structure bytes | build ns/key | `in` ns/key | bulk ns/key | measured FPR |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        name = {"post": f"the post's method (bitarray, k = {r.get('k')}, hash())", "set": "Python set",
                "blume": "blume split-block"}[r["contestant"]]
        bulk = f"{r['bulk_ns']:.1f} (contains_many), {r['count_ns']:.1f} (count_contained)" if "bulk_ns" in r else "–"
        size = mib(r["bytes"]) if "bytes" in r else "–"
        print(f"| {r['n']:,} | {name} | {mib(r['rss_growth'])} | {size} | {r['build_ns_per_key']:.0f} | "
              f"{r['in_ns']:.0f} | {bulk} | {r['measured_fpr']:.3%} |")
    for r in rows:
        if r["contestant"] == "blume":
            print(f"\nblume at {r['n']:,}: RSS growth / C++ plan bytes = {r['rss_growth'] / r['planned_bytes']:.4f}")


if __name__ == "__main__":
    main()
