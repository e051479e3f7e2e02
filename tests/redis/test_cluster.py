#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Sharded filters (docs/redis.md, "Sharded filters on Redis Cluster") on a 3-primary, 3-replica Redis
Cluster on loopback, every node loading the module.

- Load: `blume redis reserve/add` of BLUME_CLUSTER_KEYS keys (10M unless told), then `exists` on every key
  (no false negatives) and on a tenth as many never-added keys (the false-positive rate is within the
  99.9% binomial interval of `info`'s predicted rate). Prints the times and rates.
- A reshard of a few hundred slots (a shard's among them) and a failover while `blume redis add --wait 1`
  runs: it still succeeds and every key of both loads answers maybe.
- The migration limit: one ordinary filter whose DUMP is longer than proto-max-bulk-len cannot move to
  another node; a sharded filter of the same capacity moves slot by slot.
- The redis-py recipe, run exactly as docs/redis.md prints it, on filters it made and filters the CLI made.
- `blume redis reserve`'s rules (the default shard count, refusals that leave nothing behind) on one server
  without cluster mode.

The tests that drive `blume redis` need BLUME_CLI (ctest sets it to the built tool) and are skipped
without it; the others (the harness's failover and reshard, the single-key limit, the recipe on its own
filters) run with the module alone. Run with /usr/bin/python3 (Debian's python3-redis and python3-xxhash):

    BLUME_CLI=build/release/cli/blume BLUME_REDIS_MODULE=build/release/redis/blume_redis.so \\
        BLUME_CLUSTER_KEYS=1000000 /usr/bin/python3 tests/redis/test_cluster.py
"""

import itertools
import json
import math
import os
import re
import subprocess
import tempfile
import threading
import time
import unittest
from binascii import crc_hqx

from common import module_path
from server import Cluster, RedisServer

import xxhash  # python3-xxhash

CLI = os.environ.get("BLUME_CLI") or None
KEYS = int(os.environ.get("BLUME_CLUSTER_KEYS", "10000000").replace("_", ""))
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "redis.md")
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
DEFAULT_SEED = 0x626C756D65
CONFIDENCE = 0.999

needs_cli = unittest.skipUnless(CLI, "BLUME_CLI is not set (ctest sets it to the built blume tool): "
                                     "the parts that drive `blume redis` are skipped")


def report(text):
    """Measurements go to stdout (docs/redis.md quotes them); unittest's own output is on stderr."""
    print(text, flush=True)


# ---- the contract, computed here from its text (not from the recipe or the CLI) ----------------------


def slot_of(data):
    """Redis's CRC16 (XMODEM: polynomial 0x1021, initial 0) of a key without a hash tag, mod 16384."""
    return crc_hqx(data, 0) % 16384


def contract_tags(name, shards):
    """tags[i] = the first string over ALPHABET, by length then alphabetically, on slot_i."""
    slots = [(slot_of(name.encode()) + (i * 16384) // shards) % 16384 for i in range(shards)]
    first = {}
    for length in range(1, 5):
        for chars in itertools.product(ALPHABET, repeat=length):
            tag = "".join(chars)
            first.setdefault(slot_of(tag.encode()), tag)
        if all(slot in first for slot in slots):
            break
    return [first[slot] for slot in slots]


def contract_shard_capacity(capacity, shards):
    """ceil(C/S + 5 sqrt((C/S)(1 - 1/S))), in doubles as the C++ computes it."""
    share = capacity / shards
    return math.ceil(share + 5 * math.sqrt(share * (1 - 1 / shards)))


def contract_shard(item, seed, shards):
    low = xxhash.xxh3_128_intdigest(item.encode() if isinstance(item, str) else item, seed=seed) & (2**64 - 1)
    return (low * shards) >> 64


def binomial_interval(n, p, confidence=CONFIDENCE):
    """The central `confidence` interval [lo, hi] of Binomial(n, p), summed exactly around its mean."""
    tail = (1 - confidence) / 2
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    lo_k, hi_k = max(0, int(mean - 12 * sd) - 10), min(n, int(mean + 12 * sd) + 10)
    log_pmf = lambda k: (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)  # noqa: E731
                         + k * math.log(p) + (n - k) * math.log1p(-p))
    cumulative, lo, hi = 0.0, lo_k, hi_k
    for k in range(lo_k, hi_k + 1):
        below = cumulative
        cumulative += math.exp(log_pmf(k))
        if below < tail <= cumulative and lo == lo_k:
            lo = k
        if cumulative >= 1 - tail:
            hi = k
            break
    return lo, hi


# ---- the recipe from docs/redis.md -------------------------------------------------------------------


def recipe():
    """The first ```python block after "### From redis-py" in docs/redis.md, executed as it is."""
    with open(DOCS, encoding="utf-8") as f:
        text = f.read()
    heading = text.index("### From redis-py")
    block = re.search(r"```python\n(.*?)```", text[heading:], re.S).group(1)
    namespace = {"__name__": "recipe"}
    exec(compile(block, "docs/redis.md (From redis-py)", "exec"), namespace)
    return namespace


# ---- keys and the blume CLI --------------------------------------------------------------------------


def key(prefix, i):
    return f"{prefix}{i}@example.com"


def write_keys(path, prefix, count, start=0):
    with open(path, "w", encoding="ascii") as f:
        step = 1 << 16
        for first in range(start, start + count, step):
            last = min(first + step, start + count)
            f.write("".join(f"{prefix}{i}@example.com\n" for i in range(first, last)))
    return path


def blume(cluster, verb, *args, check=True, node=None, timeout=3600, **run):
    """`blume redis VERB --cluster 127.0.0.1:PORT args...`; PORT is nodes[0]'s unless told (after a
    failover that node may be a replica: the CLI must find the primaries from any node)."""
    port = (node or cluster.nodes[0]).port
    argv = [CLI, "redis", verb, "--cluster", f"127.0.0.1:{port}", *map(str, args)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **run)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited with {result.returncode}\n"
                             f"stdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-2000:]}")
    return result


def info(cluster, name):
    return json.loads(blume(cluster, "info", name, "--json").stdout)


def timed(what, count, function):
    start = time.monotonic()
    result = function()
    seconds = time.monotonic() - start
    report(f"{what}: {count:,} keys in {seconds:.2f} s ({count / seconds:,.0f} keys/s)")
    return result


class ClusterCase(unittest.TestCase):
    """One cluster of 3 primaries and 3 replicas per test class, and a directory for key files."""

    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster(module_path(), masters=3, replicas=1, timeout=60.0).start()
        cls.tmp = tempfile.TemporaryDirectory(prefix="blume-cluster-test-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
        cls.cluster.stop()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def shard_nodes(self, keys):
        """Port -> how many of `keys` the primaries serve, as the cluster says."""
        counts = {}
        for k in keys:
            port = self.cluster.owner(k).port
            counts[port] = counts.get(port, 0) + 1
        return counts


# ---- reserve's rules, on one server without cluster mode (the contract allows it: all slots on it) ----


@needs_cli
class ReserveOnOneServer(unittest.TestCase):
    def setUp(self):
        self.server = RedisServer(module_path()).start()
        self.r = self.server.client()

    def tearDown(self):
        self.server.stop()

    def blume(self, verb, *args):
        return blume(None, verb, *args, check=False, node=self.server)

    def first_layer_bytes(self, capacity):
        self.r.execute_command("BF.RESERVE", "scratch", "0.01", capacity)
        fields = dict(f.split(b":") for f in self.r.execute_command("BF.DEBUG", "scratch")[1].split())
        self.r.delete("scratch")
        return int(fields[b"bytes"])

    def test_the_default_shard_count_is_the_smallest_that_fits(self):
        result = self.blume("reserve", "fits", "0.01", 100_000_000, "--max-shard-bytes", "1MiB")
        self.assertEqual(result.returncode, 0, result.stderr)
        report(f"reserve with --max-shard-bytes 1MiB: {result.stdout.strip()}")
        shards = int(self.r.hget("fits", "shards"))
        self.assertLessEqual(self.first_layer_bytes(contract_shard_capacity(100_000_000, shards)), 1 << 20)
        self.assertGreater(self.first_layer_bytes(contract_shard_capacity(100_000_000, shards - 1)), 1 << 20)
        first_shard = f"fits:0{{{self.r.hget('fits', 'tags').split()[0].decode()}}}"
        self.assertEqual(self.r.execute_command("BF.INFO", first_shard, "CAPACITY"),
                         [contract_shard_capacity(100_000_000, shards)])

        self.assertEqual(self.blume("add", "fits", "a", "b").stdout, "added 2 keys to fits (2 new)\n")
        result = self.blume("exists", "fits", "a", "b", "c")
        self.assertEqual((result.returncode, result.stdout), (1, "a\tmaybe\nb\tmaybe\nc\tno\n"))
        status = json.loads(self.blume("info", "fits", "--json").stdout)
        self.assertEqual((status["items"], status["nodes"]), (2, {f"127.0.0.1:{self.server.port}": shards}))

    def test_refusals_leave_nothing_behind(self):
        self.assertEqual(self.blume("reserve", "taken", "0.01", 1000).returncode, 0)
        keys = sorted(self.r.keys())
        for args in (("taken", "0.01", 1000), ("a{b", "0.01", 1000), ("a}b", "0.01", 1000), ("ok", "2", 1000),
                     ("ok", "0.01", 0)):
            result = self.blume("reserve", *args)
            self.assertEqual(result.returncode, 2, args)
            self.assertRegex(result.stderr, "^blume: ", args)
        self.assertEqual(sorted(self.r.keys()), keys)
        # One of the shards exists already: the shards made before it are deleted again.
        self.r.execute_command("BF.RESERVE", f"clash:5{{{contract_tags('clash', 16)[5]}}}", "0.01", 10)
        self.assertEqual(self.blume("reserve", "clash", "0.01", 1000).returncode, 2)
        self.assertEqual(len(self.r.keys()), len(keys) + 1)


# ---- a: loading, no false negatives, the false-positive rate -----------------------------------------


@needs_cli
class LoadAndRate(ClusterCase):
    def test_load_then_every_key_answers_maybe_at_the_predicted_rate(self):
        cluster, name = self.cluster, "load:emails"
        absent = max(KEYS // 10, 1000)
        keys = write_keys(self.path("keys"), "user", KEYS)
        probes = write_keys(self.path("absent"), "absent", absent)

        made = blume(cluster, "reserve", name, "0.01", KEYS)
        report(f"reserve: {made.stdout.strip()}")
        again = blume(cluster, "reserve", name, "0.01", KEYS, check=False)
        self.assertNotEqual(again.returncode, 0, "reserving over an existing filter must fail")

        meta = {k.decode(): v.decode() for k, v in cluster.client().hgetall(name).items()}
        shards = int(meta["shards"])
        self.assertEqual(meta["format"], "blume-sharded-bloom/1")
        self.assertEqual(shards, 16)  # the smallest S >= 16: 10M keys at 1% fit 256 MiB shards easily
        self.assertEqual(int(meta["capacity"]), KEYS)
        self.assertEqual(int(meta["shard_capacity"]), contract_shard_capacity(KEYS, shards))
        self.assertEqual(float(meta["error_rate"]), 0.01)
        self.assertEqual((meta["expansion"], meta["nonscaling"], int(meta["seed"])), ("2", "0", DEFAULT_SEED))
        self.assertEqual(meta["tags"].split(" "), contract_tags(name, shards))

        added = timed("blume redis add", KEYS, lambda: blume(cluster, "add", name, "--input", keys))
        report(f"add: {added.stdout.strip()}")
        summary = re.fullmatch(rf"added {KEYS} keys to {re.escape(name)} \((\d+) new\)", added.stdout.strip())
        new = int(summary.group(1))

        status = info(cluster, name)
        report(f"info: items {status['items']:,}, bytes {status['bytes']:,} (largest shard "
               f"{status['largest_shard_bytes']:,}), predicted FPR {status['predicted_fpr']:.6f}, "
               f"nodes {status['nodes']}")
        self.assertEqual(status["items"], new)
        self.assertGreater(new, KEYS * 0.99)  # the rest looked present already: false positives during the load
        self.assertEqual(status["shard_keys"],
                         [f"{name}:{i}{{{tag}}}" for i, tag in enumerate(contract_tags(name, shards))])
        # Evenly spaced slots on a fresh cluster's three equal ranges: 5 or 6 shards on each primary.
        by_node = {int(address.rsplit(":", 1)[1]): count for address, count in status["nodes"].items()}
        self.assertEqual(by_node, self.shard_nodes(status["shard_keys"]))
        self.assertEqual(sorted(by_node), sorted(node.port for node in cluster.primaries()))
        self.assertTrue(all(count in (5, 6) for count in by_node.values()), by_node)

        # Each key sits in the shard the contract names (sampled: BF.MEXISTS on that shard alone).
        client, sample = cluster.client(), [key("user", i) for i in range(0, KEYS, max(KEYS // 5000, 1))]
        per_shard = {}
        for item in sample:
            per_shard.setdefault(status["shard_keys"][contract_shard(item, DEFAULT_SEED, shards)], []).append(item)
        for shard_key, items in per_shard.items():
            self.assertEqual(client.execute_command("BF.MEXISTS", shard_key, *items), [1] * len(items), shard_key)

        present = timed("blume redis exists (added keys)", KEYS,
                        lambda: blume(cluster, "exists", name, "--input", keys, "--quiet", check=False))
        self.assertEqual(present.returncode, 0, "a key that was added answered no")
        self.assertEqual(present.stdout, "")

        answers = timed("blume redis exists (never-added keys)", absent,
                        lambda: blume(cluster, "exists", name, "--input", probes, check=False))
        lines = answers.stdout.splitlines()
        self.assertEqual(len(lines), absent)
        self.assertEqual(lines[:2], [f"{key('absent', 0)}\t{lines[0].split(chr(9))[1]}",
                                     f"{key('absent', 1)}\t{lines[1].split(chr(9))[1]}"])
        maybes = sum(line.endswith("\tmaybe") for line in lines)
        self.assertEqual(maybes + sum(line.endswith("\tno") for line in lines), absent)
        self.assertEqual(answers.returncode, 1 if maybes < absent else 0)
        lo, hi = binomial_interval(absent, status["predicted_fpr"])
        report(f"false positives: {maybes:,} of {absent:,} never-added keys = {maybes / absent:.6f} "
               f"(predicted {status['predicted_fpr']:.6f}; {CONFIDENCE:.1%} interval {lo:,}..{hi:,})")
        self.assertTrue(lo <= maybes <= hi, (maybes, lo, hi))


# ---- b: a reshard and a failover under load ----------------------------------------------------------


class PacedKeys(threading.Thread):
    """Writes keys into a process's standard input a chunk at a time, so that the load is still going
    while the test changes the cluster: at least `minimum` keys, then more until `done` is set (at most
    `maximum`), then `tail` more after it, so batches are also sent to the cluster as it is afterwards."""

    def __init__(self, stream, prefix, minimum, maximum, tail, chunk=16384, pause=0.02):
        super().__init__(daemon=True)
        self.stream, self.prefix = stream, prefix
        self.minimum, self.maximum, self.tail, self.chunk, self.pause = minimum, maximum, tail, chunk, pause
        self.written, self.error = 0, None
        self.started_enough = threading.Event()  # `minimum` keys are written
        self.done = threading.Event()

    def _write(self, count):
        lines = "".join(f"{self.prefix}{i}@example.com\n" for i in range(self.written, self.written + count))
        self.stream.write(lines)
        self.stream.flush()
        self.written += count

    def run(self):
        try:
            while self.written < self.minimum or (not self.done.is_set() and self.written < self.maximum):
                self._write(self.chunk)
                if self.written >= self.minimum:
                    self.started_enough.set()
                time.sleep(self.pause)
            self.started_enough.set()
            self.done.wait()
            self._write(self.tail)
        except BaseException as error:  # noqa: BLE001 (reported by the test)
            self.error = error
        finally:
            self.started_enough.set()
            try:
                self.stream.close()
            except OSError:
                pass


@needs_cli
class ReshardAndFailoverDuringLoad(ClusterCase):
    SHARDS = 16

    def pick_name(self):
        """A name one of whose shards sits among the first 400 slots of some primary, so a reshard of a
        few hundred slots (redis-cli moves the source's lowest) takes it along."""
        ranges = {node.port: self.cluster.slots_of(node) for node in self.cluster.primaries()}
        for n in itertools.count():
            name = f"during-load-{n}"
            base = slot_of(name.encode())
            for port, slots in ranges.items():
                for i in range(self.SHARDS):
                    slot = (base + (i * 16384) // self.SHARDS) % 16384
                    if slot in slots[:400]:
                        return name, port, slots.index(slot) + 1 + 100

    def test_an_add_with_wait_survives_a_reshard_and_a_failover(self):
        cluster = self.cluster
        name, source_port, slots = self.pick_name()
        first_count = min(300_000, KEYS)
        first = write_keys(self.path("first"), "first", first_count)
        blume(cluster, "reserve", name, "0.01", 4_000_000, "--shards", self.SHARDS)
        blume(cluster, "add", name, "--input", first, "--wait", "1")

        source = cluster.node_at(source_port)
        target = next(node for node in cluster.primaries() if node is not source)
        shard_keys = info(cluster, name)["shard_keys"]
        leaving = set(cluster.slots_of(source)[:slots])
        moving = [k for k in shard_keys if cluster.call(source, "CLUSTER", "KEYSLOT", k) in leaving]
        self.assertTrue(moving)

        argv = [CLI, "redis", "add", "--cluster", f"127.0.0.1:{cluster.nodes[0].port}", name, "--input", "-",
                "--wait", "1", "--timeout", "120"]
        start = time.monotonic()
        out_path, err_path = self.path("adder.out"), self.path("adder.err")
        with open(out_path, "w") as out_file, open(err_path, "w") as err_file:
            adder = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out_file, stderr=err_file, text=True)
        feeder = PacedKeys(adder.stdin, "second", minimum=300_000, maximum=3_000_000, tail=300_000)
        feeder.start()
        try:
            feeder.started_enough.wait(120)
            items_before = info(cluster, name)["items"]
            report(f"reshard: moving {slots} slots (with {len(moving)} shard(s): {moving}) from "
                   f"{source.port} to {target.port} while {feeder.written:,} keys are written")
            t = time.monotonic()
            cluster.reshard(source, target, slots)
            report(f"reshard done in {time.monotonic() - t:.1f} s; {feeder.written:,} keys written")
            for k in moving:
                self.assertIs(cluster.owner(k), target)
            promoted = cluster.replicas(of=target)[0]
            t = time.monotonic()
            cluster.failover(promoted)
            items_after = info(cluster, name)["items"]
            report(f"failover of {target.port} to {promoted.port} done in {time.monotonic() - t:.1f} s; "
                   f"{feeder.written:,} keys written; the filter's items grew from {items_before:,} to "
                   f"{items_after:,} meanwhile")
            self.assertGreater(items_after, items_before, "no batch was acknowledged during the changes")
        finally:
            feeder.done.set()
            feeder.join(180)
            try:
                adder.wait(timeout=300)
            except subprocess.TimeoutExpired:
                adder.kill()
                adder.wait()
            with open(out_path) as out_file, open(err_path) as err_file:
                out, err = out_file.read(), err_file.read()
        seconds = time.monotonic() - start
        self.assertIsNone(feeder.error)
        second_count = feeder.written
        report(f"add --wait 1 during the reshard and the failover: {second_count:,} keys in {seconds:.1f} s; "
               f"{out.strip()}")
        self.assertEqual(adder.returncode, 0, f"stdout: {out}\nstderr: {err[-3000:]}")
        self.assertRegex(out.strip(), rf"^added {second_count} keys to {re.escape(name)} \(\d+ new\)$")
        for k in moving:
            self.assertIs(cluster.owner(k), promoted)

        everything = self.path("both")
        with open(everything, "w") as out_file:
            for path in (first, write_keys(self.path("second"), "second", second_count)):
                with open(path) as part:
                    out_file.write(part.read())
        present = blume(cluster, "exists", name, "--input", everything, "--quiet", check=False)
        self.assertEqual(present.returncode, 0, "a key of one of the loads answered no")
        # Read through a replica too: the CLI must find the primaries from any node's address.
        present = blume(cluster, "exists", name, "--input", everything, "--quiet", check=False,
                        node=cluster.replicas()[0])
        self.assertEqual(present.returncode, 0)

        status = info(cluster, name)
        by_node = {int(address.rsplit(":", 1)[1]): count for address, count in status["nodes"].items()}
        report(f"shards per primary after the reshard and the failover: {by_node}")
        self.assertEqual(by_node, self.shard_nodes(status["shard_keys"]))
        self.assertEqual(sorted(by_node), sorted(node.port for node in cluster.primaries()))
        self.assertTrue(all(count >= 1 for count in by_node.values()))
        self.assertEqual(sum(by_node.values()), self.SHARDS)
        self.assertGreaterEqual(status["items"], (first_count + second_count) * 0.99)


# ---- c: the migration limit --------------------------------------------------------------------------

# Redis refuses a bulk string longer than proto-max-bulk-len (512 MB by default), and MIGRATE sends a key
# as one: its DUMP, which the target RESTOREs. Rather than build a filter of more than 512 MB, the test
# lowers the limit to Redis's minimum, 1 MB, on every node, and makes a filter of 1M keys (1.2 MB). A DUMP is
# compressed, so the filter must be filled to be that large: with all 1M keys, or (BLUME_CLUSTER_LIMIT_FILL, the
# sanitized build) a quarter of them, which already leaves too few runs of equal bytes to compress.
BULK_LIMIT = 1 << 20
LIMIT_KEYS = 1_000_000
LIMIT_FILL = int(os.environ.get("BLUME_CLUSTER_LIMIT_FILL", str(LIMIT_KEYS)))


class MigrationLimit(ClusterCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cluster.set_config("proto-max-bulk-len", "1mb")

    def fill(self, shard_keys, items):
        """BF.MADD each item into its shard (one key: all of them), in batches."""
        client = self.cluster.client()
        shards = len(shard_keys)
        groups = {}
        for item in items:
            shard = contract_shard(item, DEFAULT_SEED, shards) if shards > 1 else 0
            groups.setdefault(shard_keys[shard], []).append(item)
        for shard_key, group in groups.items():
            for i in range(0, len(group), 10_000):
                client.execute_command("BF.MADD", shard_key, *group[i:i + 10_000])

    def test_one_filter_over_the_limit_cannot_move(self):
        cluster = self.cluster
        for node in cluster.nodes:
            self.assertEqual(cluster.call(node, "CONFIG", "GET", "proto-max-bulk-len")[1], str(BULK_LIMIT).encode())
        client = cluster.client()
        client.execute_command("BF.RESERVE", "big", "0.01", LIMIT_KEYS)
        self.fill(["big"], [key("big", i) for i in range(LIMIT_FILL)])
        source = cluster.owner("big")
        dump = len(cluster.call(source, "DUMP", "big"))
        report(f"one filter of {LIMIT_KEYS:,} keys at 1%: DUMP {dump:,} bytes; proto-max-bulk-len {BULK_LIMIT:,}")
        self.assertGreater(dump, BULK_LIMIT)

        slot = cluster.call(source, "CLUSTER", "KEYSLOT", "big")
        target = next(node for node in cluster.primaries() if node is not source)
        cluster.begin_slot_migration(slot, source, target)
        try:
            with self.assertRaises(Exception) as refused:
                cluster.migrate_slot_keys(slot, source, target)
            report(f"MIGRATE of that key: {refused.exception}")
            self.assertEqual(cluster.call(source, "EXISTS", "big"), 1)  # still on its source ...
            self.assertEqual(cluster.call(target, "DBSIZE"), 0)  # ... and nothing arrived
            # The target refuses the RESTORE's bulk string and closes the connection: MIGRATE reports its
            # "Protocol error: invalid bulk length", or the write that failed when the socket closed.
            self.assertRegex(str(refused.exception), "Protocol error: invalid bulk length|IOERR")
        finally:
            cluster.abort_slot_migration(slot, source, target)
        self.assertIs(cluster.owner("big"), source)
        sample = [key("big", i) for i in range(0, LIMIT_FILL, 997)]
        self.assertEqual(client.execute_command("BF.MEXISTS", "big", *sample), [1] * len(sample))

    def test_recipe_filter_of_the_same_capacity_moves_slot_by_slot(self):
        # The same test as the CLI's below, on a filter the redis-py recipe reserves (no CLI needed).
        rc = self.cluster.client()
        sharded = recipe()["reserve"](rc, "small:recipe", 0.01, LIMIT_KEYS)
        self.move_every_shard(sharded.keys, "small:recipe", lambda: self.fill(sharded.keys, self.items("recipe")),
                              lambda items: sharded.mexists(items))

    @needs_cli
    def test_sharded_filter_of_the_same_capacity_moves_slot_by_slot(self):
        cluster, name = self.cluster, "small:cli"
        blume(cluster, "reserve", name, "0.01", LIMIT_KEYS)
        keys = write_keys(self.path("limit-keys"), "cli", LIMIT_FILL)
        shard_keys = info(cluster, name)["shard_keys"]

        def answers(items):
            path = self.path("limit-sample")
            with open(path, "w") as f:
                f.write("".join(item + "\n" for item in items))
            result = blume(cluster, "exists", name, "--input", path, check=False)
            return [1 if line.endswith("\tmaybe") else 0 for line in result.stdout.splitlines()]

        self.move_every_shard(shard_keys, name, lambda: blume(cluster, "add", name, "--input", keys), answers)
        self.assertEqual(blume(cluster, "exists", name, "--input", keys, "--quiet", check=False).returncode, 0)

    def items(self, prefix):
        return [key(prefix, i) for i in range(LIMIT_FILL)]

    def move_every_shard(self, shard_keys, name, load, mexists):
        cluster = self.cluster
        load()
        prefix = "recipe" if "recipe" in name else "cli"
        sample = [key(prefix, i) for i in range(0, LIMIT_FILL, 97)]
        dumps = [len(cluster.call(cluster.owner(k), "DUMP", k)) for k in shard_keys]
        report(f"{name}: {len(shard_keys)} shards of {LIMIT_KEYS:,} keys in all: DUMP {min(dumps):,}.."
               f"{max(dumps):,} bytes each ({sum(dumps):,} in all)")
        self.assertLess(max(dumps), BULK_LIMIT // 4)
        primaries = cluster.primaries()
        for k in shard_keys:
            source = cluster.owner(k)
            target = primaries[(primaries.index(source) + 1) % len(primaries)]
            slot = cluster.call(source, "CLUSTER", "KEYSLOT", k)
            self.assertGreaterEqual(cluster.move_slot(slot, source, target), 1)
            self.assertIs(cluster.owner(k), target)
        self.assertIs(cluster.owner(name), cluster.owner(shard_keys[0]))  # the meta key shares shard 0's slot
        self.assertEqual(mexists(sample), [1] * len(sample))


# ---- d: the redis-py recipe --------------------------------------------------------------------------


class RedisPyRecipe(ClusterCase):
    def test_recipe_reserves_by_the_contract(self):
        rc = self.cluster.client()
        ns = recipe()
        made = ns["reserve"](rc, "recipe:own", 0.01, 200_000, shards=16)
        meta = {k.decode(): v.decode() for k, v in rc.hgetall("recipe:own").items()}
        tags = contract_tags("recipe:own", 16)
        self.assertEqual(meta, {"format": "blume-sharded-bloom/1", "shards": "16", "capacity": "200000",
                                "shard_capacity": str(contract_shard_capacity(200_000, 16)),
                                "error_rate": "0.01", "expansion": "2",
                                "nonscaling": "0", "seed": str(DEFAULT_SEED), "tags": " ".join(tags)})
        self.assertEqual(made.keys, [f"recipe:own:{i}{{{t}}}" for i, t in enumerate(tags)])
        base, node = slot_of(b"recipe:own"), self.cluster.nodes[0]
        self.assertEqual([self.cluster.call(node, "CLUSTER", "KEYSLOT", k) for k in made.keys],
                         [(base + i * 1024) % 16384 for i in range(16)])
        for k in made.keys:
            self.assertEqual(rc.execute_command("BF.INFO", k, "CAPACITY"), [contract_shard_capacity(200_000, 16)])

        items = [key("own", i) for i in range(20_000)]
        self.assertEqual(made.madd(items[:10_000]), [1] * 10_000)  # at 5% fill a false "present" is unlikely
        self.assertEqual(made.add(items[10_000]), 1)
        self.assertEqual(made.exists(items[10_000]), 1)
        self.assertEqual(made.mexists(items[:10_001]), [1] * 10_001)
        self.assertEqual(made.card(), 10_001)
        for item in items[:200]:
            shard_key = made.keys[contract_shard(item, DEFAULT_SEED, 16)]
            self.assertEqual(rc.execute_command("BF.EXISTS", shard_key, item), 1)
        self.assertLess(sum(made.mexists(items[10_001:])), 30)  # ~0 expected at this fill

        opened = ns["ShardedBloom"](rc, "recipe:own")
        self.assertEqual(opened.keys, made.keys)
        self.assertEqual(opened.mexists(items), made.mexists(items))
        with self.assertRaises(Exception):  # the name is taken
            ns["reserve"](rc, "recipe:own", 0.01, 1000)
        with self.assertRaises(ValueError):
            ns["ShardedBloom"](rc, "no-such-filter")
        for bad in ("", "a{b", "a}b"):
            with self.assertRaises(ValueError):
                ns["reserve"](rc, bad, 0.01, 1000)

        # A lost shard is an error, not a filter that answers "no" (or a new 100-item shard).
        broken = ns["reserve"](rc, "recipe:broken", 0.01, 1000)
        rc.delete(broken.keys[broken.keys.index(broken.shard("x"))])
        with self.assertRaises(KeyError):
            broken.mexists(["x"])
        with self.assertRaises(Exception):
            broken.madd(["x"])
        self.assertEqual(rc.exists(broken.shard("x")), 0)

    @needs_cli
    def test_recipe_and_cli_read_each_others_filters(self):
        cluster, rc, ns = self.cluster, self.cluster.client(), recipe()
        count = 200_000
        added = write_keys(self.path("recipe-cli"), "cli", count)
        probes = write_keys(self.path("recipe-absent"), "nope", count)
        blume(cluster, "reserve", "by:cli", "0.01", count)
        blume(cluster, "add", "by:cli", "--input", added)
        status = info(cluster, "by:cli")

        opened = ns["ShardedBloom"](rc, "by:cli")
        self.assertEqual(opened.keys, status["shard_keys"])
        self.assertEqual(opened.card(), status["items"])
        items = [key("cli", i) for i in range(count)]
        self.assertEqual(opened.mexists(items), [1] * count)
        cli_answers = blume(cluster, "exists", "by:cli", "--input", probes, check=False).stdout.splitlines()
        absent = [key("nope", i) for i in range(count)]
        self.assertEqual([1 if line.endswith("\tmaybe") else 0 for line in cli_answers], opened.mexists(absent))
        # The recipe's adds land where the CLI looks.
        extra = [key("extra", i) for i in range(1000)]
        opened.madd(extra)
        self.assertEqual(blume(cluster, "exists", "by:cli", *extra, "--quiet", check=False).returncode, 0)
        self.assertEqual(info(cluster, "by:cli")["items"], opened.card())

        made = ns["reserve"](rc, "by:recipe", 0.001, 50_000, shards=20, expansion=4)
        made.madd(items[:5000])
        theirs = info(cluster, "by:recipe")
        self.assertEqual((theirs["shards"], theirs["capacity"], theirs["shard_capacity"], theirs["expansion"],
                          theirs["nonscaling"], theirs["seed"]),
                         (20, 50_000, contract_shard_capacity(50_000, 20), 4, False, DEFAULT_SEED))
        self.assertEqual(theirs["error_rate"], 0.001)
        self.assertEqual(theirs["shard_keys"], made.keys)
        self.assertEqual(theirs["items"], made.card())
        in_recipe_filter = blume(cluster, "exists", "by:recipe", *items[:5000], "--quiet", check=False)
        self.assertEqual(in_recipe_filter.returncode, 0)
        blume(cluster, "add", "by:recipe", *items[5000:6000])
        self.assertEqual(made.mexists(items[:6000]), [1] * 6000)
        self.assertEqual(info(cluster, "by:recipe")["items"], made.card())

        # The CLI refuses a filter that lost a shard, rather than answering "no" or recreating it small.
        lost = made.shard(items[0])
        rc.delete(lost)
        for verb in ("exists", "add"):
            result = blume(cluster, verb, "by:recipe", items[0], check=False)
            self.assertEqual(result.returncode, 2, (verb, result.stdout, result.stderr))
            self.assertIn(lost, result.stderr)
        self.assertEqual(rc.exists(lost), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
