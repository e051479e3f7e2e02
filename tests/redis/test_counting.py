#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""CBF.*, the counting Bloom filter type, on real servers: replies (RESP2 and RESP3), deletes and their
hazard, counter saturation, the measured false-positive rate against the model, the value as blume's
file bytes (the same bytes `blume build` writes), persistence, replication, cluster routing and hostile
chunks and payloads."""

import math
import os
import subprocess
import tempfile
import unittest

import redis
from common import WRONGTYPE, ModuleTestCase, module_path
from server import Cluster, RedisServer, replica_of


def items(prefix, start, stop):
    return [f"{prefix}{i}@example.com" for i in range(start, stop)]


def madd(client, key, values):
    for i in range(0, len(values), 1000):
        client.execute_command("CBF.MADD", key, *values[i:i + 1000])


def dump(client, key):
    """The SCANDUMP stream: [(iterator, bytes), ...], header first."""
    chunks = [tuple(client.execute_command("CBF.SCANDUMP", key, 0))]
    it = 1
    while True:
        it, data = client.execute_command("CBF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def load(client, key, chunks):
    for it, data in chunks:
        client.execute_command("CBF.LOADCHUNK", key, it, data)


class Commands(ModuleTestCase):
    def test_add_count_delete(self):
        self.assertEqual(self.cmd("CBF.RESERVE", "c", "0.01", "1000"), b"OK")
        self.assertEqual(self.cmd("CBF.ADD", "c", "a"), 1)
        self.assertEqual(self.cmd("CBF.ADD", "c", "a"), 0)  # there already: a second occurrence
        self.assertEqual(self.cmd("CBF.MADD", "c", "b", "c"), [1, 1])
        self.assertEqual(self.cmd("CBF.COUNT", "c", "a"), 2)
        self.assertEqual(self.cmd("CBF.DEL", "c", "a"), 1)
        self.assertEqual(self.cmd("CBF.COUNT", "c", "a"), 1)
        self.assertEqual(self.cmd("CBF.EXISTS", "c", "a"), 1)
        self.assertEqual(self.cmd("CBF.DEL", "c", "a"), 1)
        self.assertEqual(self.cmd("CBF.EXISTS", "c", "a"), 0)
        self.assertEqual(self.cmd("CBF.DEL", "c", "a"), 0)  # certainly absent: nothing changes
        self.assertEqual(self.cmd("CBF.MEXISTS", "c", "a", "b", "c"), [0, 1, 1])
        self.assertEqual(self.cmd3("CBF.MEXISTS", "c", "a", "b"), [False, True])
        self.assertEqual(self.cmd("CBF.COUNT", "missing", "a"), 0)
        self.assertEqual(self.cmd("CBF.EXISTS", "missing", "a"), 0)

    def test_info(self):
        self.cmd("CBF.RESERVE", "c", "0.01", "1000")
        self.cmd("CBF.MADD", "c", "a", "b", "a")
        info = self.cmd3("CBF.INFO", "c")
        self.assertEqual(info[b"Capacity"], 1000)
        self.assertEqual(info[b"Error rate"], 0.01)
        self.assertEqual(info[b"Counter width"], 4)
        self.assertEqual(info[b"Number of hash functions"], 7)
        self.assertEqual(info[b"Number of counters"], 9586)
        self.assertEqual(info[b"Number of items inserted"], 3)
        self.assertEqual(info[b"Estimated items"], 2)
        usage = self.cmd("MEMORY", "USAGE", "c")  # Size plus the key's own overhead
        self.assertGreaterEqual(usage, info[b"Size"])
        self.assertLess(usage, info[b"Size"] + 200)
        flat = self.cmd("CBF.INFO", "c")
        self.assertEqual(flat[0::2], list(info.keys()))
        self.cmd("CBF.RESERVE", "w", "0.01", "1000", "WIDTH", "8")
        self.assertEqual(self.cmd3("CBF.INFO", "w")[b"Counter width"], 8)
        # The header, then the counters in whole 64-bit words: 9586 of 4 bits, or of 8.
        self.assertEqual(info[b"Size"], 192 + math.ceil(9586 * 4 / 64) * 8)
        self.assertEqual(self.cmd3("CBF.INFO", "w")[b"Size"], 192 + math.ceil(9586 * 8 / 64) * 8)

    def test_add_creates_a_missing_filter_with_the_defaults(self):
        self.assertEqual(self.cmd("CBF.ADD", "auto", "x"), 1)
        info = self.cmd3("CBF.INFO", "auto")
        self.assertEqual(info[b"Capacity"], 100)
        self.assertEqual(info[b"Error rate"], 0.01)
        self.assertEqual(info[b"Counter width"], 4)

    def test_errors(self):
        self.assertArity("CBF.RESERVE", "c", "0.01")
        self.assertArity("CBF.ADD", "c")
        self.assertArity("CBF.DEL", "c", "a", "b")
        self.assertError("ERR bad error rate", "CBF.RESERVE", "c", "x", "100")
        self.assertError("ERR error rate must be in the range (0.000000, 1.000000)", "CBF.RESERVE", "c", "1", "100")
        self.assertError("ERR bad capacity", "CBF.RESERVE", "c", "0.01", "1.5")
        self.assertError("ERR capacity must be in the range [1, 1073741824]", "CBF.RESERVE", "c", "0.01", "0")
        self.assertError("ERR WIDTH must be 4 or 8 (bits per counter)", "CBF.RESERVE", "c", "0.01", "100", "WIDTH",
                         "2")
        self.assertError("ERR WIDTH must be 4 or 8 (bits per counter)", "CBF.RESERVE", "c", "0.01", "100", "WIDTH")
        self.assertError("ERR syntax error: expected WIDTH or TTL", "CBF.RESERVE", "c", "0.01", "100", "DEPTH", "2")
        self.assertEqual(self.cmd("EXISTS", "c"), 0)
        self.cmd("CBF.RESERVE", "c", "0.01", "100")
        self.assertError("ERR item exists", "CBF.RESERVE", "c", "0.01", "100")
        self.assertError("ERR not found", "CBF.DEL", "missing", "a")
        self.assertError("ERR not found", "CBF.INFO", "missing")
        self.cmd("SET", "s", "x")
        self.cmd("BF.ADD", "bf", "x")
        for key in ("s", "bf"):
            for args in (("CBF.ADD", key, "a"), ("CBF.EXISTS", key, "a"), ("CBF.DEL", key, "a"),
                         ("CBF.COUNT", key, "a"), ("CBF.INFO", key), ("CBF.RESERVE", key, "0.01", "100")):
                self.assertError(WRONGTYPE, *args)
        self.assertError(WRONGTYPE, "BF.ADD", "c", "a")

    def test_ttl(self):
        self.cmd("CBF.RESERVE", "c", "0.01", "100", "TTL", "50", "WIDTH", "8")
        self.assertEqual(self.cmd("TTL", "c"), 50)


class Counters(ModuleTestCase):
    def test_a_saturated_counter_sticks(self):
        self.cmd("CBF.RESERVE", "c", "0.01", "100")
        for _ in range(20):
            self.cmd("CBF.ADD", "c", "hot")
        self.assertEqual(self.cmd("CBF.COUNT", "c", "hot"), 15)  # 4-bit counters stop at 15
        for _ in range(20):
            self.assertEqual(self.cmd("CBF.DEL", "c", "hot"), 1)
        # The counters no longer know their true value, so they never come down: still there, no false no.
        self.assertEqual(self.cmd("CBF.EXISTS", "c", "hot"), 1)
        self.cmd("CBF.RESERVE", "w", "0.01", "100", "WIDTH", "8")
        for _ in range(300):
            self.cmd("CBF.ADD", "w", "hot")
        self.assertEqual(self.cmd("CBF.COUNT", "w", "hot"), 255)

    def test_deleting_what_was_added_never_loses_another_item(self):
        self.cmd("CBF.RESERVE", "c", "0.01", "5000")
        kept, dropped = items("kept", 0, 3000), items("dropped", 0, 3000)
        madd(self.r, "c", kept)
        madd(self.r, "c", dropped)
        pipe = self.r.pipeline(transaction=False)
        for item in dropped:
            pipe.execute_command("CBF.DEL", "c", item)
        self.assertEqual(pipe.execute(), [1] * len(dropped))
        self.assertEqual(self.cmd("CBF.MEXISTS", "c", *kept), [1] * len(kept))
        still = sum(self.cmd("CBF.MEXISTS", "c", *dropped))
        self.assertLess(still, 3000 * 0.02)  # false positives among the deleted, at about the design rate

    def test_the_false_delete_hazard(self):
        # Deleting an item that was never added but is a false positive decrements counters that belong to
        # added items, so one of them can turn into a false "no": why CBF.DEL is for added items only.
        self.cmd("CBF.RESERVE", "c", "0.2", "50")
        added = items("added", 0, 50)
        madd(self.r, "c", added)
        impostor = next(x for x in items("never", 0, 10000) if self.cmd("CBF.EXISTS", "c", x) == 1)
        self.assertEqual(self.cmd("CBF.DEL", "c", impostor), 1)  # accepted: the filter cannot tell
        lost = [x for x in added if self.cmd("CBF.EXISTS", "c", x) == 0]
        self.assertEqual(self.cmd3("CBF.INFO", "c")[b"Number of items inserted"], 49)
        # Usually an added item is now missing; in any case the counters no longer match the adds.
        self.assertLessEqual(len(lost), 50)

    def test_the_measured_rate_matches_the_model(self):
        self.cmd("CBF.RESERVE", "c", "0.01", "20000")
        madd(self.r, "c", items("in", 0, 20000))
        predicted = float(self.cmd3("CBF.INFO", "c")[b"Predicted error rate"])
        absent = items("out", 0, 50000)
        hits = sum(sum(self.cmd("CBF.MEXISTS", "c", *absent[i:i + 5000])) for i in range(0, len(absent), 5000))
        sigma = math.sqrt(predicted * (1 - predicted) / len(absent))
        self.assertLess(abs(hits / len(absent) - predicted), 4 * sigma, (hits, predicted))
        self.assertLess(abs(predicted - 0.01), 0.002)


class FileBytes(ModuleTestCase):
    """A CBF's SCANDUMP stream is a blume file: `blume build --kind counting` writes the same bytes, and a
    file it writes loads through CBF.LOADCHUNK."""

    def cli(self):
        path = os.environ.get("BLUME_CLI")
        if not path:
            self.skipTest("BLUME_CLI is not set")
        return path

    def build(self, keys, *options):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "f.blume")
            subprocess.run([self.cli(), "build", "--kind", "counting", "--output", out, "--no-progress", *options],
                           input="".join(k + "\n" for k in keys).encode(), check=True)
            with open(out, "rb") as f:
                return f.read()

    def test_the_stream_is_the_file_blume_build_writes(self):
        keys = items("k", 0, 700)
        self.cmd("CBF.RESERVE", "c", "0.01", "1000")
        madd(self.r, "c", keys)
        stream = b"".join(data for _, data in dump(self.r, "c"))
        self.assertEqual(stream, self.build(keys, "--items", "1000", "--fpr", "0.01"))

    def test_a_built_file_loads_and_answers(self):
        keys = items("k", 0, 5000)
        data = self.build(keys, "--items", "5000", "--fpr", "0.001")
        self.assertEqual(self.cmd("CBF.LOADCHUNK", "c", 1, data[:192]), b"OK")
        step = 4096
        for start in range(192, len(data), step):
            piece = data[start:start + step]
            self.assertEqual(self.cmd("CBF.LOADCHUNK", "c", start - 192 + 1 + len(piece), piece), b"OK")
        self.assertEqual(self.cmd("CBF.MEXISTS", "c", *keys), [1] * len(keys))
        self.assertEqual(self.cmd3("CBF.INFO", "c")[b"Error rate"], 0.001)


class Hostile(ModuleTestCase):
    def header(self):
        self.cmd("CBF.RESERVE", "src", "0.01", "1000")
        self.cmd("CBF.ADD", "src", "a")
        return dump(self.r, "src")

    def test_bad_headers_are_refused_before_allocating(self):
        chunks = self.header()
        head = chunks[0][1]
        self.assertTrue(self.reply("CBF.LOADCHUNK", "c", 1, b"junk").startswith(b"-ERR received bad data"))
        self.assertTrue(self.reply("CBF.LOADCHUNK", "c", 1, head[:100]).startswith(b"-ERR received bad data"))
        flipped = bytearray(head)
        flipped[40] ^= 1
        self.assertTrue(self.reply("CBF.LOADCHUNK", "c", 1, bytes(flipped)).startswith(b"-ERR received bad data"))
        self.cmd("BF.RESERVE", "bf", "0.01", "100")
        self.assertEqual(self.cmd("EXISTS", "c"), 0)
        # A header of another kind: a blume split-block file is not a CBF.
        cli = os.environ.get("BLUME_CLI")
        if cli:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "f.blume")
                subprocess.run([cli, "build", "--kind", "split-block", "--output", out, "--no-progress"],
                               input=b"a\nb\n", check=True)
                with open(out, "rb") as f:
                    other = f.read()[:192]
            self.assertEqual(self.reply("CBF.LOADCHUNK", "c", 1, other),
                             b"-ERR received bad data: a CBF holds counting filters (kind 5), not kind 4\r\n")

    def test_a_header_over_the_memory_limit_is_refused(self):
        self.cmd("CONFIG", "SET", "bf.max-filter-memory", str(1 << 30))
        self.cmd("CBF.RESERVE", "big", "0.0001", "100000000")  # 959 MB of counters
        head = self.cmd("CBF.SCANDUMP", "big", 0)[1]
        self.cmd("CONFIG", "SET", "bf.max-filter-memory", "1000000")
        try:
            self.assertTrue(self.reply("CBF.LOADCHUNK", "c", 1, head).startswith(b"-ERR"))
            self.assertEqual(self.cmd("EXISTS", "c"), 0)
            self.assertTrue(self.reply("CBF.RESERVE", "c", "0.01", "10000000").startswith(b"-ERR"))
        finally:
            self.cmd("CONFIG", "SET", "bf.max-filter-memory", str(256 << 20))

    def test_chunks_must_come_in_order_and_fit(self):
        chunks = self.header()
        (h_it, head), (it, data) = chunks
        self.cmd("CBF.LOADCHUNK", "c", 1, head)
        self.assertEqual(self.reply("CBF.LOADCHUNK", "c", it + 8, data),
                         b"-ERR invalid chunk: it does not start where the loaded bytes end\r\n")
        self.assertEqual(self.reply("CBF.LOADCHUNK", "c", it + 1, data + b"x"),
                         b"-ERR invalid chunk - Too big for current filter\r\n")
        self.assertError("ERR the filter is still being loaded (CBF.LOADCHUNK)", "CBF.EXISTS", "c", "a")
        self.assertError("ERR the filter is still being loaded (CBF.LOADCHUNK)", "CBF.ADD", "c", "a")
        self.assertError("ERR the filter is still being loaded (CBF.LOADCHUNK)", "CBF.SCANDUMP", "c", "0")
        self.cmd("CBF.LOADCHUNK", "c", it, data)
        self.assertEqual(self.cmd("CBF.EXISTS", "c", "a"), 1)
        self.assertError("ERR the filter is complete: nothing to load", "CBF.LOADCHUNK", "c", it, data)

    def test_a_corrupt_payload_deletes_the_key(self):
        (_, head), (it, data) = self.header()
        self.cmd("CBF.LOADCHUNK", "c", 1, head)
        bad = bytes([data[0] ^ 1]) + data[1:]
        self.assertEqual(self.reply("CBF.LOADCHUNK", "c", it, bad),
                         b"-ERR received bad data: payload checksum mismatch: the filter's bits are corrupt; "
                         b"the key was deleted\r\n")
        self.assertEqual(self.cmd("EXISTS", "c"), 0)

    def test_restore_of_a_damaged_payload_is_bad_data(self):
        self.header()
        payload = self.cmd("DUMP", "src")
        for cut in (20, len(payload) // 2, len(payload) - 11):
            self.assertTrue(self.reply("RESTORE", "r", "0", payload[:cut]).startswith(b"-"))
        self.assertEqual(self.cmd("RESTORE", "r", "0", payload), b"OK")
        self.assertEqual(self.cmd("CBF.EXISTS", "r", "a"), 1)


class Distribution(unittest.TestCase):
    def fill(self, client):
        client.execute_command("CBF.RESERVE", "c", "0.01", "5000")
        madd(client, "c", items("a", 0, 3000))
        for item in items("a", 0, 1000):
            client.execute_command("CBF.DEL", "c", item)
        client.execute_command("CBF.RESERVE", "w", "0.001", "2000", "WIDTH", "8")
        madd(client, "w", items("b", 0, 1000))
        # A value still being loaded is kept as it is, and completes after the restart.
        chunks = dump(client, "w")
        load(client, "pending", chunks[:1])
        return chunks

    def observe(self, client):
        return {
            "c": dump(client, "c"),
            "c-members": client.execute_command("CBF.MEXISTS", "c", *items("a", 0, 3000)),
            "w-info": client.execute_command("CBF.INFO", "w"),
            "usage": client.execute_command("MEMORY", "USAGE", "c"),
            "digest": client.execute_command("DEBUG", "DIGEST"),
        }

    def check_pending(self, client, chunks):
        self.assertEqual(client.execute_command("TYPE", "pending"), b"blume-CBF")
        load(client, "pending", chunks[1:])
        self.assertEqual(client.execute_command("CBF.MEXISTS", "pending", *items("b", 0, 1000)), [1] * 1000)

    def test_rdb_restart(self):
        with RedisServer(module_path()) as server:
            chunks = self.fill(server.client())
            before = self.observe(server.client())
            self.assertEqual(before["c-members"][1000:], [1] * 2000)
            server.restart(save=True)
            self.assertEqual(self.observe(server.client()), before)
            self.check_pending(server.client(), chunks)

    def test_aof_rewrite_and_restart_from_the_aof_alone(self):
        config = {"appendonly": "yes", "aof-use-rdb-preamble": "no"}
        with RedisServer(module_path(), config=config) as server:
            client = server.client()
            chunks = self.fill(client)
            client.execute_command("BGREWRITEAOF")
            server.wait_for(lambda: server.info("persistence")["aof_rewrite_in_progress"] == "0"
                            and server.info("persistence")["aof_rewrite_scheduled"] == "0", "the AOF rewrite")
            client.execute_command("CBF.ADD", "c", "after-the-rewrite")
            before = self.observe(client)
            for name in os.listdir(server.dir):
                if name.endswith(".rdb"):
                    os.remove(os.path.join(server.dir, name))
            server.restart(save=False)
            self.assertEqual(self.observe(server.client()), before)
            self.check_pending(server.client(), chunks)

    def test_replica_copy_and_restore(self):
        with RedisServer(module_path()) as primary, replica_of(primary) as replica:
            client = primary.client()
            chunks = self.fill(client)
            self.assertEqual(client.execute_command("WAIT", "1", "5000"), 1)
            self.assertEqual(self.observe(replica.client()), self.observe(client))
            self.assertEqual(client.execute_command("COPY", "c", "c2"), 1)
            client.execute_command("CBF.DEL", "c2", items("a", 0, 3000)[2000])
            self.assertEqual(client.execute_command("CBF.COUNT", "c", items("a", 0, 3000)[2000]), 1)
            self.assertEqual(client.execute_command("RESTORE", "c3", "0", client.execute_command("DUMP", "c")), b"OK")
            self.assertEqual(dump(client, "c3"), dump(client, "c"))
            self.check_pending(client, chunks)
            self.assertEqual(client.execute_command("WAIT", "1", "5000"), 1)
            self.assertEqual(replica.client().execute_command("CBF.MEXISTS", "pending", *items("b", 0, 1000)),
                             [1] * 1000)

    def test_cluster_routes_every_command(self):
        with Cluster(module_path()) as cluster:
            keys = [f"counting:{i}" for i in range(8)]
            for key in keys:
                self.assertEqual(cluster.cli("CBF.RESERVE", key, "0.01", "100").strip(), "OK")
                self.assertEqual(cluster.cli("CBF.MADD", key, "a", "b").split(), ["1", "1"])
                self.assertEqual(cluster.cli("CBF.DEL", key, "a").strip(), "1")
                self.assertEqual(cluster.cli("CBF.MEXISTS", key, "a", "b").split(), ["0", "1"])
            self.assertGreater(len({cluster.owner(key) for key in keys}), 1)


if __name__ == "__main__":
    unittest.main()
