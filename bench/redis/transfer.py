#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Filters into Redis from a file of keys, end to end, and BF.MERGE: real redis-server with the module on
loopback, every figure a median of several runs in the same process.

    python3 bench/redis/transfer.py [--items 100M] [--reps 3] [--module ...] [--cli ...]
                                    [--output docs/benchmarks.md | none]

1. Baseline: redis-py reads the key file and sends pipelined BF.MADD of 1000 items per call into a key
   reserved with BF.RESERVE <rate> <items> (what a RedisBloom user does today).
2. blume: `blume build --redisbloom` from the same file, then `blume redis push`. The pushed key must hold
   exactly what BF.MADD made (the same DEBUG DIGEST-VALUE), and `blume redis pull` brings it back.
3. BF.MERGE of two filters of 10M keys each (half of them shared) into a new key and into one of them, and
   BF.ESTIMATE ... UNION over the same two.
"""

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "redis"))

from server import RedisServer  # noqa: E402

BEGIN = "<!-- redis transfer benchmark: begin (written by bench/redis/transfer.py) -->"
END = "<!-- redis transfer benchmark: end -->"


def count(text):
    text = text.strip().upper()
    scale = {"K": 10**3, "M": 10**6, "G": 10**9}.get(text[-1:], 1)
    return int(float(text[:-1] if text[-1:] in "KMG" else text) * scale)


def write_keys(path, start, stop):
    """user<i>@example.com for i in [start, stop), one per line: awk writes 100M lines in about a minute."""
    with open(path, "w") as f:
        subprocess.run(["awk", f"BEGIN {{ for (i = {start}; i < {stop}; i++) print \"user\" i \"@example.com\" }}"],
                       stdout=f, check=True)


def madd_from_file(client, key, path, per_call=1000, depth=20):
    pipe = client.pipeline(transaction=False)
    batch, queued = [], 0
    with open(path, "rb") as f:
        for line in f:
            batch.append(line.rstrip(b"\n"))
            if len(batch) == per_call:
                pipe.execute_command("BF.MADD", key, *batch)
                batch, queued = [], queued + 1
                if queued == depth:
                    pipe.execute()
                    queued = 0
    if batch:
        pipe.execute_command("BF.MADD", key, *batch)
    pipe.execute()


def timed(fn):
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def run_cli(cli, *args):
    subprocess.run([cli, *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", default=os.path.join(ROOT, "build", "release", "redis", "blume_redis.so"))
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "cli", "blume"))
    parser.add_argument("--items", default="100M")
    parser.add_argument("--merge-items", default="10M")
    parser.add_argument("--rate", default="0.01")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = parser.parse_args()
    n, m = count(args.items), count(args.merge_items)
    times = {}

    with tempfile.TemporaryDirectory(dir=os.environ.get("BLUME_BENCH_TMP")) as tmp, \
            RedisServer(args.module, config={"proto-max-bulk-len": "1gb"}) as server:
        keys = os.path.join(tmp, "keys.txt")
        print(f"writing {n:,} keys...", flush=True)
        write_keys(keys, 0, n)
        size = os.path.getsize(keys)
        client = server.client()
        url = f"redis://127.0.0.1:{server.port}"
        built = os.path.join(tmp, "rb.blume")
        pulled = os.path.join(tmp, "pulled.blume")
        for rep in range(args.reps):
            client.flushall()
            client.execute_command("BF.RESERVE", "madd", args.rate, n)
            times.setdefault("BF.MADD from redis-py", []).append(timed(lambda: madd_from_file(client, "madd", keys)))
            times.setdefault("blume build --redisbloom", []).append(timed(lambda: run_cli(
                args.cli, "build", "--redisbloom", "--items", n, "--fpr", args.rate, "--input", keys, "--output",
                built, "--no-progress")))
            times.setdefault("blume redis push", []).append(timed(lambda: run_cli(
                args.cli, "redis", "push", built, "pushed", "--url", url)))
            times.setdefault("blume redis pull", []).append(timed(lambda: run_cli(
                args.cli, "redis", "pull", "pushed", pulled, "--url", url)))
            same = (client.execute_command("DEBUG", "DIGEST-VALUE", "madd")
                    == client.execute_command("DEBUG", "DIGEST-VALUE", "pushed"))
            if not same:
                raise SystemExit("the pushed key differs from the one BF.MADD filled")
            with open(built, "rb") as a, open(pulled, "rb") as b:
                if a.read() != b.read():
                    raise SystemExit("the pulled file differs from the pushed one")
            for name in ("BF.MADD from redis-py", "blume build --redisbloom", "blume redis push", "blume redis pull"):
                print(f"  [run {rep + 1}/{args.reps}] {name:28s} {times[name][-1]:8.2f} s", flush=True)
        card = client.execute_command("BF.CARD", "pushed")
        filter_bytes = os.path.getsize(built)

        # BF.MERGE: two filters of m keys sharing half of them, loaded through push.
        client.flushall()
        for name, start in (("a", 0), ("b", m // 2)):
            part = os.path.join(tmp, f"{name}.txt")
            write_keys(part, start, start + m)
            out = os.path.join(tmp, f"{name}.blume")
            run_cli(args.cli, "build", "--redisbloom", "--items", m, "--fpr", args.rate, "--input", part, "--output",
                    out, "--no-progress")
            run_cli(args.cli, "redis", "push", out, "{m}" + name, "--url", url)
        for rep in range(args.reps):
            client.delete("{m}new")
            times.setdefault("BF.MERGE into a new key", []).append(
                timed(lambda: client.execute_command("BF.MERGE", "{m}new", "{m}a", "{m}b")))
            client.execute_command("COPY", "{m}a", "{m}c", "REPLACE")
            times.setdefault("BF.MERGE into an existing key", []).append(
                timed(lambda: client.execute_command("BF.MERGE", "{m}c", "{m}b")))
            times.setdefault("BF.ESTIMATE a b UNION", []).append(
                timed(lambda: client.execute_command("BF.ESTIMATE", "{m}a", "{m}b", "UNION")))
        union = client.execute_command("BF.ESTIMATE", "{m}a", "{m}b", "UNION")
        merged = client.execute_command("BF.ESTIMATE", "{m}new")

    med = {k: statistics.median(v) for k, v in times.items()}
    ours = med["blume build --redisbloom"] + med["blume redis push"]
    speedup = med["BF.MADD from redis-py"] / ours
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [BEGIN, "", f"## Filters into Redis from a key file, and BF.MERGE (run of {now})", "",
             f"`python3 bench/redis/transfer.py --items {args.items}` ({n:,} keys `user<i>@example.com`, "
             f"{size / 2**30:.2f} GiB; BF.RESERVE {args.rate} {n}; Debian's redis-server 7.0.15 with the module on "
             f"loopback; {args.reps} runs, medians, min – max). Each run checks that the pushed key has the DEBUG "
             "DIGEST-VALUE of the key BF.MADD filled, and that the pulled file is the pushed one byte for byte.", "",
             "| step | seconds (median) | min – max | M keys/s |", "|---|---:|---:|---:|"]
    for name in ("BF.MADD from redis-py", "blume build --redisbloom", "blume redis push", "blume redis pull"):
        v = times[name]
        lines.append(f"| {name} | {med[name]:.2f} | {min(v):.2f} – {max(v):.2f} | {n / med[name] / 1e6:.2f} |")
    lines += ["", f"- File to key, end to end: BF.MADD {med['BF.MADD from redis-py']:.1f} s; build + push "
              f"{ours:.1f} s: **{speedup:.1f}× faster** (target ≥ 5×: {'PASS' if speedup >= 5 else 'MISS'}).",
              f"- The filter: {filter_bytes / 2**20:.1f} MiB on disk, BF.CARD {card:,}.", "",
              f"BF.MERGE and BF.ESTIMATE over two filters of {m:,} keys (BF.RESERVE {args.rate} {m}), "
              f"{m // 2:,} of them shared:", "", "| command | ms (median) | min – max |", "|---|---:|---:|"]
    for name in ("BF.MERGE into a new key", "BF.MERGE into an existing key", "BF.ESTIMATE a b UNION"):
        v = times[name]
        lines.append(f"| {name} | {1000 * med[name]:.1f} | {1000 * min(v):.1f} – {1000 * max(v):.1f} |")
    lines += ["", f"Union estimate {union:,} and the merged filter's BF.ESTIMATE {merged:,}, for "
              f"{m + m // 2:,} distinct keys.", "", END]
    report = "\n".join(lines)
    print(report)
    if args.output != "none":
        text = open(args.output, encoding="utf-8").read() if os.path.exists(args.output) else ""
        if BEGIN in text and END in text:
            text = text[:text.index(BEGIN)] + report + text[text.index(END) + len(END):]
        else:
            text = text.rstrip("\n") + "\n\n" + report + "\n"
        with open(args.output + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(args.output + ".tmp", args.output)


if __name__ == "__main__":
    main()
