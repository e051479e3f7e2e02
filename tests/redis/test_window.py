#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""WBF.*, the windowed filter type ("seen within the last window"), on real servers: time and item
windows, the primary's clock in replication and AOF replay (WBF.ADDAT), the measured false-positive rate
against the model, files from `blume build --kind aging`, persistence, cluster routing and hostile
chunks."""

import math
import os
import subprocess
import tempfile
import time
import unittest

from common import WRONGTYPE, ModuleTestCase, module_path
from server import Cluster, RedisServer, replica_of


def items(prefix, start, stop):
    return [f"{prefix}{i}@example.com" for i in range(start, stop)]


def server_ms(client):
    seconds, micros = client.execute_command("TIME")
    return int(seconds) * 1000 + int(micros) // 1000


def dump(client, key):
    chunks = [tuple(client.execute_command("WBF.SCANDUMP", key, 0))]
    it = 1
    while True:
        it, data = client.execute_command("WBF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


class Windows(ModuleTestCase):
    def test_a_time_window_forgets_what_is_older(self):
        now = server_ms(self.r)
        # Created 250 s ago with a 100 s window; items added at chosen moments with WBF.ADDAT.
        self.assertEqual(self.cmd("WBF.RESERVE", "w", "0.01", "1000", "WINDOW", "100", "AT", now - 250_000), b"OK")
        self.assertEqual(self.cmd("WBF.ADDAT", "w", now - 250_000, "old"), [1])
        self.assertEqual(self.cmd("WBF.ADDAT", "w", now - 200_000, "older-than-the-window"), [1])
        self.assertEqual(self.cmd("WBF.ADDAT", "w", now - 40_000, "recent"), [1])
        self.assertEqual(self.cmd("WBF.ADDAT", "w", now - 1_000, "new", "recent"), [1, 0])
        self.assertEqual(self.cmd("WBF.MEXISTS", "w", "old", "older-than-the-window", "recent", "new"), [0, 0, 1, 1])
        self.assertEqual(self.cmd3("WBF.MEXISTS", "w", "recent", "old"), [True, False])

    def test_a_time_window_expires_on_the_servers_clock(self):
        self.cmd("WBF.RESERVE", "w", "0.01", "1000", "WINDOW", "1")
        self.assertEqual(self.cmd("WBF.ADD", "w", "a"), 1)
        self.assertEqual(self.cmd("WBF.EXISTS", "w", "a"), 1)
        self.server.wait_for(lambda: self.cmd("WBF.EXISTS", "w", "a") == 0, "the item to leave the window",
                             timeout=5)
        self.assertEqual(self.cmd("WBF.ADD", "w", "a"), 1)  # new again

    def test_an_item_window_keeps_the_last_half_always_and_forgets_past_the_whole(self):
        self.cmd("WBF.RESERVE", "n", "0.01", "1000", "ITEMS", "100")
        seen = items("k", 0, 1000)
        for i in range(0, 1000, 50):
            self.cmd("WBF.MADD", "n", *seen[i:i + 50])
        answers = self.cmd("WBF.MEXISTS", "n", *seen)
        self.assertEqual(answers[-50:], [1] * 50)  # the last half window
        self.assertLess(sum(answers[:-100]), 900 * 0.02)  # older than the window: only false positives

    def test_info(self):
        self.cmd("WBF.RESERVE", "w", "0.01", "1000", "WINDOW", "60")
        self.cmd("WBF.MADD", "w", "a", "b")
        info = self.cmd3("WBF.INFO", "w")
        self.assertEqual(info[b"Capacity"], 1000)
        self.assertEqual(info[b"Error rate"], 0.01)
        self.assertEqual(info[b"Window seconds"], 60)
        self.assertEqual(info[b"Window items"], 1000)
        self.assertEqual(info[b"Number of items in the window"], 2)
        self.assertEqual(info[b"Estimated items"], 2)
        usage = self.cmd("MEMORY", "USAGE", "w")  # Size plus the key's own overhead
        self.assertGreaterEqual(usage, info[b"Size"])
        self.assertLess(usage, info[b"Size"] + 200)
        self.cmd("WBF.RESERVE", "n", "0.01", "1000", "ITEMS", "500")
        self.assertIsNone(self.cmd3("WBF.INFO", "n")[b"Window seconds"])
        self.assertEqual(self.cmd3("WBF.INFO", "n")[b"Window items"], 500)

    def test_errors(self):
        self.assertArity("WBF.RESERVE", "w", "0.01", "100")
        self.assertArity("WBF.RESERVE", "w", "0.01", "100", "WINDOW")
        self.assertError("ERR give exactly one of WINDOW seconds and ITEMS count", "WBF.RESERVE", "w", "0.01",
                         "100", "WINDOW", "5", "ITEMS", "5")
        self.assertError("ERR give exactly one of WINDOW seconds and ITEMS count", "WBF.RESERVE", "w", "0.01",
                         "100", "TTL", "5")
        self.assertError("ERR WINDOW must be an integer in the range [1, 9000000000] seconds", "WBF.RESERVE", "w",
                         "0.01", "100", "WINDOW", "0")
        self.assertError("ERR ITEMS must be an integer in the range [2, capacity]", "WBF.RESERVE", "w", "0.01",
                         "100", "ITEMS", "101")
        self.assertError("ERR syntax error: expected WINDOW, ITEMS, TTL or AT", "WBF.RESERVE", "w", "0.01", "100",
                         "SPAN", "5")
        self.assertError("ERR bad error rate", "WBF.RESERVE", "w", "x", "100", "WINDOW", "5")
        self.assertError("ERR capacity must be in the range [2, 1073741824]", "WBF.RESERVE", "w", "0.01", "1",
                         "WINDOW", "5")
        self.assertEqual(self.cmd("EXISTS", "w"), 0)
        self.assertError("ERR not found", "WBF.ADD", "w", "a")  # no defaults: a window must be chosen
        self.assertEqual(self.cmd("WBF.EXISTS", "w", "a"), 0)
        self.cmd("WBF.RESERVE", "w", "0.01", "100", "WINDOW", "5", "TTL", "30")
        self.assertEqual(self.cmd("TTL", "w"), 30)
        self.assertError("ERR item exists", "WBF.RESERVE", "w", "0.01", "100", "WINDOW", "5")
        self.assertError("ERR the time must be Unix milliseconds", "WBF.ADDAT", "w", "-5", "a")
        self.assertError("ERR the time must be Unix milliseconds", "WBF.ADDAT", "w", "10000000000000", "a")
        self.assertError("ERR WINDOW must be an integer in the range [1, 9000000000] seconds", "WBF.RESERVE", "v",
                         "0.01", "100", "WINDOW", "9500000000")
        self.cmd("SET", "s", "x")
        for args in (("WBF.ADD", "s", "a"), ("WBF.EXISTS", "s", "a"), ("WBF.INFO", "s"),
                     ("WBF.RESERVE", "s", "0.01", "100", "WINDOW", "5")):
            self.assertError(WRONGTYPE, *args)

    def test_the_measured_rate_matches_the_model(self):
        self.cmd("WBF.RESERVE", "w", "0.01", "20000", "ITEMS", "20000")
        added = items("in", 0, 20000)
        for i in range(0, len(added), 2000):
            self.cmd("WBF.MADD", "w", *added[i:i + 2000])
        predicted = float(self.cmd3("WBF.INFO", "w")[b"Predicted error rate"])
        absent = items("out", 0, 50000)
        hits = sum(sum(self.cmd("WBF.MEXISTS", "w", *absent[i:i + 5000])) for i in range(0, len(absent), 5000))
        sigma = math.sqrt(predicted * (1 - predicted) / len(absent))
        self.assertLess(abs(hits / len(absent) - predicted), 4 * sigma + 0.0005, (hits, predicted))
        self.assertLess(predicted, 0.012)


class Files(ModuleTestCase):
    def test_a_file_blume_build_writes_loads(self):
        cli = os.environ.get("BLUME_CLI")
        if not cli:
            self.skipTest("BLUME_CLI is not set")
        keys = items("k", 0, 3000)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "aging.blume")
            subprocess.run([cli, "build", "--kind", "aging", "--items", "10000", "--output", out, "--no-progress"],
                           input="".join(k + "\n" for k in keys).encode(), check=True)
            with open(out, "rb") as f:
                data = f.read()
        self.assertEqual(self.cmd("WBF.LOADCHUNK", "w", 1, data[:192]), b"OK")
        self.assertError("ERR the filter is still being loaded (WBF.LOADCHUNK)", "WBF.EXISTS", "w", "a")
        for start in range(192, len(data), 8192):
            piece = data[start:start + 8192]
            self.assertEqual(self.cmd("WBF.LOADCHUNK", "w", start - 192 + 1 + len(piece), piece), b"OK")
        self.assertEqual(self.cmd("WBF.MEXISTS", "w", *keys), [1] * len(keys))
        self.assertEqual(b"".join(d for _, d in dump(self.r, "w")), data)
        # A CBF's bytes are not a WBF.
        self.cmd("CBF.RESERVE", "c", "0.01", "100")
        self.assertEqual(self.reply("WBF.LOADCHUNK", "x", 1, self.cmd("CBF.SCANDUMP", "c", 0)[1]),
                         b"-ERR received bad data: a WBF holds aging filters (kind 10), not kind 5\r\n")


class Distribution(unittest.TestCase):
    def fill(self, client):
        client.execute_command("WBF.RESERVE", "t", "0.01", "5000", "WINDOW", "3600")
        client.execute_command("WBF.RESERVE", "n", "0.01", "2000", "ITEMS", "1000")
        for i in range(0, 3000, 500):
            client.execute_command("WBF.MADD", "t", *items("t", i, i + 500))
            client.execute_command("WBF.MADD", "n", *items("n", i, i + 500))
            time.sleep(0.01)  # the adds happen at different moments: replicas must use the primary's

    def observe(self, client):
        return {
            "t": dump(client, "t"),
            "n": dump(client, "n"),
            "t-members": client.execute_command("WBF.MEXISTS", "t", *items("t", 0, 3000)),
            "n-members": client.execute_command("WBF.MEXISTS", "n", *items("n", 0, 3000)),
            "digest": client.execute_command("DEBUG", "DIGEST"),
        }

    def test_replica_applies_the_primarys_times(self):
        with RedisServer(module_path()) as primary, replica_of(primary) as replica:
            client = primary.client()
            self.fill(client)
            self.assertEqual(client.execute_command("WAIT", "1", "5000"), 1)
            expected = self.observe(client)
            self.assertEqual(expected["t-members"], [1] * 3000)
            self.assertEqual(expected["n-members"][-500:], [1] * 500)
            self.assertEqual(self.observe(replica.client()), expected)

    def test_aof_replay_applies_the_recorded_times(self):
        config = {"appendonly": "yes", "aof-use-rdb-preamble": "no"}
        with RedisServer(module_path(), config=config) as server:
            self.fill(server.client())
            before = self.observe(server.client())
            time.sleep(0.05)
            for name in os.listdir(server.dir):
                if name.endswith(".rdb"):
                    os.remove(os.path.join(server.dir, name))
            server.restart(save=False)
            self.assertEqual(self.observe(server.client()), before)

    def test_rdb_restart_and_aof_rewrite(self):
        config = {"appendonly": "yes", "aof-use-rdb-preamble": "no"}
        with RedisServer(module_path(), config=config) as server:
            client = server.client()
            self.fill(client)
            client.execute_command("BGREWRITEAOF")
            server.wait_for(lambda: server.info("persistence")["aof_rewrite_in_progress"] == "0"
                            and server.info("persistence")["aof_rewrite_scheduled"] == "0", "the AOF rewrite")
            before = self.observe(client)
            server.restart(save=True)
            self.assertEqual(self.observe(server.client()), before)
            for name in os.listdir(server.dir):
                if name.endswith(".rdb"):
                    os.remove(os.path.join(server.dir, name))
            server.restart(save=False)
            self.assertEqual(self.observe(server.client()), before)

    def test_copy_dump_restore_and_damaged_payloads(self):
        with RedisServer(module_path()) as server:
            client = server.client()
            self.fill(client)
            self.assertEqual(client.execute_command("COPY", "t", "t2"), 1)
            client.execute_command("WBF.ADD", "t2", "only-in-the-copy")
            self.assertEqual(client.execute_command("WBF.EXISTS", "t", "only-in-the-copy"), 0)
            payload = client.execute_command("DUMP", "n")
            self.assertEqual(client.execute_command("RESTORE", "n2", "0", payload), b"OK")
            self.assertEqual(dump(client, "n2"), dump(client, "n"))
            for cut in (20, len(payload) // 2, len(payload) - 11):
                self.assertTrue(server.raw("RESTORE", "bad", "0", payload[:cut])[1].startswith(b"-"))
            self.assertEqual(client.execute_command("EXISTS", "bad"), 0)
            usage = client.execute_command("MEMORY", "USAGE", "t")
            size = client.execute_command("WBF.INFO", "t")[9]
            self.assertGreaterEqual(usage, size)
            self.assertLess(usage, size + 200)

    def test_cluster_routes_every_command(self):
        with Cluster(module_path()) as cluster:
            keys = [f"window:{i}" for i in range(8)]
            for key in keys:
                self.assertEqual(cluster.cli("WBF.RESERVE", key, "0.01", "100", "WINDOW", "60").strip(), "OK")
                self.assertEqual(cluster.cli("WBF.MADD", key, "a", "b").split(), ["1", "1"])
                self.assertEqual(cluster.cli("WBF.MEXISTS", key, "a", "zz").split(), ["1", "0"])
            self.assertGreater(len({cluster.owner(key) for key in keys}), 1)


if __name__ == "__main__":
    unittest.main()
