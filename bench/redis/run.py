#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark of the Redis module against Redis's own sets, in the same run: redis-benchmark (from
redis-tools) drives a real redis-server on loopback with the module loaded.

    python3 bench/redis/run.py [--module build/release/redis/blume_redis.so] [--reps 3] [--quick]
                               [--output docs/benchmarks.md | none]

The server is pinned to CPU 0 and redis-benchmark to CPU 1, so client and server do not share a core
(the machine has two). Every cell is run --reps times; the tables give the median and the min-max spread.
Items are `item:<12 digits>` drawn at random by redis-benchmark (-r); lookups run against structures
pre-filled with the items 0 .. n-1 and probe 0 .. 2n-1, so about half are present.
"""

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "redis"))

from server import RedisServer  # noqa: E402

BEGIN = "<!-- redis module benchmark: begin (written by bench/redis/run.py) -->"
END = "<!-- redis module benchmark: end -->"


def item(i):
    return b"item:%012d" % i


def fill(client, add, key, count, per_call=1000, depth=20):
    """Adds item(0) .. item(count - 1) with `add` (BF.MADD, SADD, ...), per_call items per command."""
    pipe = client.pipeline(transaction=False)
    queued = 0
    for start in range(0, count, per_call):
        pipe.execute_command(add, key, *[item(i) for i in range(start, min(count, start + per_call))])
        queued += 1
        if queued == depth:
            pipe.execute()
            queued = 0
    if queued:
        pipe.execute()


def redis_benchmark(port, requests, pipeline, clients, keyspace, args):
    """Requests per second of one redis-benchmark run of `args`."""
    command = ["taskset", "-c", "1", "redis-benchmark", "-p", str(port), "-n", str(requests), "-c", str(clients),
               "-P", str(pipeline), "-r", str(keyspace), "--csv", *args]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rows = [line for line in out.splitlines() if line and not line.startswith('"test"')]
    return float(rows[-1].split('","')[1].strip('"'))


def many(n):
    return ["item:__rand_int__"] * n


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", default=os.path.join(ROOT, "build", "release", "redis", "blume_redis.so"))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smoke run: small counts, one repetition, no report")
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = parser.parse_args()
    if args.quick:
        args.reps = 1
        args.output = "none" if args.output == parser.get_default("output") else args.output
    scale = 10 if args.quick else 1
    prefill = 1_000_000 // scale
    single = 1_000_000 // scale
    batched = 20_000 // scale

    results = {}  # name -> list of items per second

    with RedisServer(args.module) as server:
        os.sched_setaffinity(server.pid, {0})
        client = server.client()
        client.execute_command("BF.RESERVE", "bf", "0.01", str(10 * prefill))
        client.execute_command("CF.RESERVE", "cf", str(20 * prefill))
        client.execute_command("CBF.RESERVE", "cbf", "0.01", str(10 * prefill))
        client.execute_command("WBF.RESERVE", "wbf", "0.01", str(10 * prefill), "WINDOW", "3600")
        print(f"pre-filling the filters and the set with {prefill} items...", flush=True)
        fill(client, "BF.MADD", "bf", prefill)
        fill(client, "SADD", "set", prefill)
        fill(client, "CBF.MADD", "cbf", prefill)
        fill(client, "WBF.MADD", "wbf", prefill)
        for start in range(0, prefill, 1000):
            pipe = client.pipeline(transaction=False)
            for i in range(start, min(prefill, start + 1000)):
                pipe.execute_command("CF.ADD", "cf", item(i))
            pipe.execute()

        cells = [
            # name, requests, pipeline, items per request, command
            ("SISMEMBER -P 1", single // 4, 1, 1, ["SISMEMBER", "set", "item:__rand_int__"]),
            ("BF.EXISTS -P 1", single // 4, 1, 1, ["BF.EXISTS", "bf", "item:__rand_int__"]),
            ("SISMEMBER -P 16", single, 16, 1, ["SISMEMBER", "set", "item:__rand_int__"]),
            ("BF.EXISTS -P 16", single, 16, 1, ["BF.EXISTS", "bf", "item:__rand_int__"]),
            ("CF.EXISTS -P 16", single, 16, 1, ["CF.EXISTS", "cf", "item:__rand_int__"]),
            ("SADD -P 1", single // 4, 1, 1, ["SADD", "set", "item:__rand_int__"]),
            ("BF.ADD -P 1", single // 4, 1, 1, ["BF.ADD", "bf", "item:__rand_int__"]),
            ("SADD -P 16", single, 16, 1, ["SADD", "set", "item:__rand_int__"]),
            ("BF.ADD -P 16", single, 16, 1, ["BF.ADD", "bf", "item:__rand_int__"]),
            ("CF.ADD -P 16", single, 16, 1, ["CF.ADD", "cf", "item:__rand_int__"]),
            ("CF.DEL -P 16", single, 16, 1, ["CF.DEL", "cf", "item:__rand_int__"]),
            ("CBF.ADD -P 16", single, 16, 1, ["CBF.ADD", "cbf", "item:__rand_int__"]),
            ("CBF.EXISTS -P 16", single, 16, 1, ["CBF.EXISTS", "cbf", "item:__rand_int__"]),
            ("CBF.DEL -P 16", single, 16, 1, ["CBF.DEL", "cbf", "item:__rand_int__"]),
            ("WBF.ADD -P 16", single, 16, 1, ["WBF.ADD", "wbf", "item:__rand_int__"]),
            ("WBF.EXISTS -P 16", single, 16, 1, ["WBF.EXISTS", "wbf", "item:__rand_int__"]),
            ("SADD 100 items -P 16", batched, 16, 100, ["SADD", "set", *many(100)]),
            ("BF.MADD 100 items -P 16", batched, 16, 100, ["BF.MADD", "bf", *many(100)]),
            ("SMISMEMBER 100 items -P 16", batched, 16, 100, ["SMISMEMBER", "set", *many(100)]),
            ("BF.MEXISTS 100 items -P 16", batched, 16, 100, ["BF.MEXISTS", "bf", *many(100)]),
            ("CF.MEXISTS 100 items -P 16", batched, 16, 100, ["CF.MEXISTS", "cf", *many(100)]),
        ]
        for rep in range(args.reps):
            for name, requests, pipeline, per_request, command in cells:
                rps = redis_benchmark(server.port, requests, pipeline, 50, 2 * prefill, command)
                results.setdefault(name, []).append(rps * per_request)
                print(f"  [run {rep + 1}/{args.reps}] {name:30s} {rps * per_request / 1e6:8.3f} M items/s", flush=True)

    memory = measure_memory(args.module, quick=args.quick)
    report = render(results, memory, args)
    print(report)
    if args.output != "none":
        write_report(args.output, report)
        print(f"report written to {args.output}")


def measure_memory(module, quick):
    """BF.RESERVE f 0.01 100000000: Size, MEMORY USAGE, used_memory and RSS growth. Then 10M items through
    pipelined BF.MADD and the measured false-positive rate on 1M absent items."""
    out = {}
    with RedisServer(module) as server:
        client = server.client()

        def memory_now():
            # INFO's used_memory_rss is the figure serverCron sampled (every 100 ms): let it sample again.
            time.sleep(0.5)
            return server.info("memory")

        before = memory_now()
        client.execute_command("BF.RESERVE", "f", "0.01", "100000000")
        after = memory_now()
        out["size"] = client.execute_command("BF.INFO", "f", "SIZE")[0]
        out["memory usage"] = client.execute_command("MEMORY", "USAGE", "f")
        out["used_memory growth"] = int(after["used_memory"]) - int(before["used_memory"])
        out["rss at reserve"] = int(after["used_memory_rss"]) - int(before["used_memory_rss"])
        # The bits are zero pages the kernel commits only when written; a filled filter has written them all.
        # Writing every chunk back through BF.LOADCHUNK commits each page, as filling the filter would.
        it = 1
        while True:
            it, data = client.execute_command("BF.SCANDUMP", "f", it)
            if it == 0:
                break
            client.execute_command("BF.LOADCHUNK", "f", it, data)
        # The 16 MiB chunks passed through the client's query buffer, which serverCron shrinks within a
        # second: wait for that, then let the allocator return the freed pages.
        time.sleep(1.5)
        client.execute_command("MEMORY", "PURGE")
        written = memory_now()
        out["rss growth"] = int(written["used_memory_rss"]) - int(before["used_memory_rss"])
        n = 1_000_000 if quick else 10_000_000
        absent = 100_000 if quick else 1_000_000
        client.execute_command("BF.RESERVE", "emails", "0.01", str(n))
        start = time.monotonic()
        fill(client, "BF.MADD", "emails", n)
        out["madd seconds"] = time.monotonic() - start
        out["items"] = n
        hits = 0
        for first in range(n, n + absent, 1000):
            hits += sum(client.execute_command("BF.MEXISTS", "emails", *[item(i) for i in range(first, first + 1000)]))
        out["absent"] = absent
        out["fpr"] = hits / absent
        out["card"] = client.execute_command("BF.CARD", "emails")
    return out


def render(results, memory, args):
    def cell(name):
        values = results[name]
        return statistics.median(values), min(values), max(values)

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [BEGIN, "", f"## Redis module (run of {now})", "",
             "`python3 bench/redis/run.py` (redis-benchmark from redis-tools, Debian's redis-server "
             f"7.0.15, 50 clients, server pinned to CPU 0 and redis-benchmark to CPU 1, {args.reps} runs, medians). "
             "Items per second: requests per second times items per request. The baseline is Redis's own set "
             "(SADD / SISMEMBER / SMISMEMBER) on the same items in the same run, and BF.ADD / BF.EXISTS for CBF.* "
             "and WBF.*; ratio = ours / baseline. CBF.DEL deletes random items, half of them never added: it "
             "measures the command, not a sound use of it.", "",
             "| command | M items/s (median) | min – max | baseline | ratio |", "|---|---:|---:|---|---:|"]
    baseline_of = {
        "BF.EXISTS -P 1": "SISMEMBER -P 1", "BF.EXISTS -P 16": "SISMEMBER -P 16", "CF.EXISTS -P 16": "SISMEMBER -P 16",
        "BF.ADD -P 1": "SADD -P 1", "BF.ADD -P 16": "SADD -P 16", "CF.ADD -P 16": "SADD -P 16",
        "CF.DEL -P 16": "SADD -P 16", "BF.MADD 100 items -P 16": "SADD 100 items -P 16",
        # Ours against RedisBloom's own commands: what deleting and expiring cost over BF.ADD / BF.EXISTS.
        "CBF.ADD -P 16": "BF.ADD -P 16", "CBF.EXISTS -P 16": "BF.EXISTS -P 16", "CBF.DEL -P 16": "BF.ADD -P 16",
        "WBF.ADD -P 16": "BF.ADD -P 16", "WBF.EXISTS -P 16": "BF.EXISTS -P 16",
        "BF.MEXISTS 100 items -P 16": "SMISMEMBER 100 items -P 16", "CF.MEXISTS 100 items -P 16": "SMISMEMBER 100 items -P 16",
    }
    for name in results:
        median, low, high = cell(name)
        base = baseline_of.get(name)
        ratio = f"{median / cell(base)[0]:.2f}" if base else "—"
        lines.append(f"| {name} | {median / 1e6:.3f} | {low / 1e6:.3f} – {high / 1e6:.3f} | {base or '(baseline)'} | {ratio} |")

    madd = cell("BF.MADD 100 items -P 16")[0]
    mexists = cell("BF.MEXISTS 100 items -P 16")[0]
    exists_ratio = cell("BF.EXISTS -P 16")[0] / cell("SISMEMBER -P 16")[0]
    within = abs(memory["rss growth"] - memory["size"]) / memory["size"]
    targets = [
        ("BF.MADD, 100 items per call, -P 16", "≥ 3.5M items/s", f"{madd / 1e6:.2f}M items/s", madd >= 3.5e6),
        ("BF.MEXISTS, 100 items per call, -P 16", "≥ 3.5M items/s", f"{mexists / 1e6:.2f}M items/s", mexists >= 3.5e6),
        ("BF.EXISTS against SISMEMBER, -P 16", "within 10%", f"{exists_ratio:.2f}× SISMEMBER's rate", exists_ratio >= 0.9),
        ("BF.RESERVE f 0.01 100000000: Size", "137,847,016 (RedisBloom's)", f"{memory['size']:,}", memory["size"] == 137847016),
        ("its memory once every bit is written (used_memory_rss growth)", "within 1% of Size",
         f"{memory['rss growth']:,} ({100 * within:.2f}% off; {memory['rss at reserve']:,} right after BF.RESERVE, "
         f"whose zero pages are not committed yet); used_memory grew {memory['used_memory growth']:,} "
         "(the allocator's 160 MiB size class, as for RedisBloom)", within <= 0.01),
        (f"{memory['items']:,} items through pipelined BF.MADD, FPR on {memory['absent']:,} absent", "≤ 1%",
         f"{100 * memory['fpr']:.3f}% (MADD took {memory['madd seconds']:.1f} s; BF.CARD {memory['card']:,})",
         memory["fpr"] <= 0.01),
    ]
    lines += ["", "| target | required | measured | result |", "|---|---|---|---|"]
    for what, required, measured, ok in targets:
        lines.append(f"| {what} | {required} | {measured} | {'PASS' if ok else 'MISS'} |")
    lines += ["", f"MEMORY USAGE of that filter: {memory['memory usage']:,} bytes.", "", END]
    return "\n".join(lines)


def write_report(path, report):
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + report + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + report + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
