#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What the module offers beyond RedisBloom, on real servers: BF.MERGE, BF.ESTIMATE and BF.INFO ESTIMATE,
BF.QUERY, BF.RESERVE IFNOTEXISTS, and TTL on BF.RESERVE, BF.INSERT and CF.RESERVE; with RESP2 and RESP3
replies, persistence (RDB, AOF), a replica, and Redis Cluster routing."""

import math
import os
import struct
import unittest

import redis
from common import WRONGTYPE, ModuleTestCase, module_path
from server import Cluster, RedisServer, replica_of


def items(prefix, start, stop):
    return [f"{prefix}{i}@example.com" for i in range(start, stop)]


def madd(client, key, values):
    for i in range(0, len(values), 1000):
        client.execute_command("BF.MADD", key, *values[i:i + 1000])


class Estimate(ModuleTestCase):
    def test_the_fill_estimate_follows_distinct_items_not_adds(self):
        self.cmd("BF.RESERVE", "f", "0.01", "20000")
        madd(self.r, "f", items("u", 0, 10000))
        madd(self.r, "f", items("u", 0, 5000))  # duplicates: BF.CARD counts them (bar false positives), the fill not
        estimate = self.cmd("BF.ESTIMATE", "f")
        self.assertIsInstance(estimate, int)
        self.assertLess(abs(estimate - 10000), 10000 * 0.03)
        self.assertEqual(self.cmd("BF.INFO", "f", "ESTIMATE"), [estimate])
        self.assertEqual(self.cmd3("BF.INFO", "f", "ESTIMATE"), {b"Estimated items": estimate})
        self.assertEqual(self.reply("BF.ESTIMATE", "f", protocol=3), f":{estimate}\r\n".encode())
        # The full BF.INFO reply is RedisBloom's, five fields, with no estimate in it.
        self.assertEqual(len(self.cmd("BF.INFO", "f")), 10)

    def test_a_grown_chain_sums_its_layers(self):
        self.cmd("BF.RESERVE", "f", "0.01", "1000")
        madd(self.r, "f", items("u", 0, 6000))
        self.assertEqual(self.cmd("BF.INFO", "f", "FILTERS"), [3])
        self.assertLess(abs(self.cmd("BF.ESTIMATE", "f") - 6000), 6000 * 0.03)

    def test_union_intersection_and_jaccard(self):
        for key in ("a", "b"):
            self.cmd("BF.RESERVE", key, "0.01", "20000")
        madd(self.r, "a", items("u", 0, 8000))
        madd(self.r, "b", items("u", 6000, 14000))  # 2000 shared, 14000 in all
        union = self.cmd("BF.ESTIMATE", "a", "b", "UNION")
        inter = self.cmd("BF.ESTIMATE", "a", "b", "intersection")
        jaccard = float(self.cmd("BF.ESTIMATE", "a", "b", "JACCARD"))
        self.assertLess(abs(union - 14000), 14000 * 0.03)
        self.assertLess(abs(inter - 2000), 2000 * 0.2)
        self.assertLess(abs(jaccard - 2000 / 14000), 0.03)
        self.assertIsInstance(self.cmd3("BF.ESTIMATE", "a", "b", "JACCARD"), float)
        # The union is the estimate of the filter BF.MERGE makes.
        self.cmd("BF.MERGE", "m", "a", "b")
        self.assertEqual(self.cmd("BF.ESTIMATE", "m"), union)

    def test_grown_filters_are_refused_for_pair_estimates_with_their_bounds(self):
        # Shared items land in different layers when the filters are filled in different orders: a
        # layer-by-layer estimate would put the union at about 396k for 300k, so it is refused.
        for key in ("a", "b"):
            self.cmd("BF.RESERVE", key, "0.01", "2000")
        madd(self.r, "a", items("u", 0, 6000))
        madd(self.r, "b", items("u", 3000, 9000))
        self.assertGreater(self.cmd("BF.INFO", "a", "FILTERS")[0], 1)
        for what in ("UNION", "INTERSECTION", "JACCARD"):
            with self.assertRaises(redis.ResponseError) as e:
                self.cmd("BF.ESTIMATE", "a", "b", what)
            self.assertIn("have grown", str(e.exception))
            self.assertIn("bound the union only, between", str(e.exception))

    def test_errors(self):
        self.assertArity("BF.ESTIMATE")
        self.assertArity("BF.ESTIMATE", "a", "b")
        self.assertError("ERR not found", "BF.ESTIMATE", "nothing")
        self.assertError("ERR not found", "BF.INFO", "nothing", "ESTIMATE")
        self.cmd("SET", "s", "x")
        self.assertError(WRONGTYPE, "BF.ESTIMATE", "s")
        self.cmd("BF.RESERVE", "a", "0.01", "1000")
        self.cmd("BF.RESERVE", "other", "0.01", "2000")
        self.assertError("ERR syntax error: expected UNION, INTERSECTION or JACCARD", "BF.ESTIMATE", "a", "other",
                         "XOR")
        self.assertError("ERR not found", "BF.ESTIMATE", "a", "nothing", "UNION")
        self.assertError("ERR cannot estimate the union of scalable filters: capacities differ (1000 vs 2000)",
                         "BF.ESTIMATE", "a", "other", "UNION")

    def test_a_saturated_filter_has_no_estimate(self):
        self.cmd("BF.RESERVE", "full", "0.25", "1", "NONSCALING")  # one 64-bit layer
        it, data = self.cmd("BF.SCANDUMP", "full", "1")
        self.assertEqual(len(data), 8)
        self.cmd("BF.LOADCHUNK", "full", it, b"\xff" * 8)  # every bit set
        self.assertError("ERR the filter is saturated (a layer has every bit set): no estimate", "BF.ESTIMATE",
                         "full")
        self.assertError("ERR the filter is saturated (a layer has every bit set): no estimate", "BF.INFO", "full",
                         "ESTIMATE")


def popcount_estimate(client, key):
    """BF.ESTIMATE as a pass over every bit gives it: each layer's −(m/k)·ln(1 − X/m), from SCANDUMP's bytes,
    summed and rounded as the module rounds (llround)."""
    header = client.execute_command("BF.SCANDUMP", key, 0)[1]
    layers = [struct.unpack_from("<QQQddIQB", header, 20 + 53 * i)
              for i in range(struct.unpack_from("<I", header, 8)[0])]
    data, it = [], 1
    while True:
        it, chunk = client.execute_command("BF.SCANDUMP", key, it)
        if it == 0:
            break
        data.append(chunk)
    data, offset, n = b"".join(data), 0, 0.0
    for nbytes, bits, _, _, _, k, _, _ in layers:
        x = int.from_bytes(data[offset:offset + nbytes], "little").bit_count()
        offset += nbytes
        n += -(bits / k) * math.log1p(-x / bits)
    return math.floor(n + 0.5)


class EstimateFromKeptCounts(ModuleTestCase):
    """BF.ESTIMATE reads set-bit counts the module keeps per layer instead of reading every bit: after each
    path that changes bits, the estimate must still be the one a full pass gives."""

    def assertExact(self, *keys):
        for key in keys:
            self.assertEqual(self.cmd("BF.ESTIMATE", key), popcount_estimate(self.r, key), key)
            self.assertEqual(self.cmd("BF.INFO", key, "ESTIMATE"), [popcount_estimate(self.r, key)], key)

    def test_adds_merge_restore_copy_loadchunk_and_reload(self):
        for key, prefix in (("{e}a", "a"), ("{e}b", "b")):
            self.cmd("BF.RESERVE", key, "0.01", "1000")
            madd(self.r, key, items(prefix, 0, 6000))
            madd(self.r, key, items(prefix, 0, 3000))  # duplicates set no bit
            self.cmd("BF.ADD", key, "one more")
        self.assertGreater(self.cmd("BF.INFO", "{e}a", "FILTERS")[0], 2)
        self.assertExact("{e}a", "{e}b")
        self.cmd("BF.MERGE", "{e}m", "{e}a", "{e}b")  # a new dest
        self.cmd("BF.MERGE", "{e}b", "{e}a")  # an existing one
        self.assertExact("{e}m", "{e}b")
        self.cmd("RESTORE", "{e}r", "0", self.cmd("DUMP", "{e}m"))
        self.cmd("COPY", "{e}m", "{e}c")
        it, chunks = 0, []
        while True:
            it, data = self.cmd("BF.SCANDUMP", "{e}m", it)
            if it == 0:
                break
            chunks.append((it, data))
        # A chunk sent twice, first over other bytes, must not be counted twice.
        self.cmd("BF.LOADCHUNK", "{e}l", *chunks[0])
        self.cmd("BF.LOADCHUNK", "{e}l", chunks[1][0], b"\xff" * len(chunks[1][1]))
        for chunk in chunks[1:]:
            self.cmd("BF.LOADCHUNK", "{e}l", *chunk)
        self.assertExact("{e}r", "{e}c", "{e}l")
        madd(self.r, "{e}c", items("c", 0, 2000))  # a copy counts on its own
        self.assertExact("{e}c", "{e}m")
        before = {k: self.cmd("BF.ESTIMATE", k) for k in ("{e}a", "{e}b", "{e}m", "{e}r", "{e}c", "{e}l")}
        self.assertEqual(self.cmd("DEBUG", "RELOAD"), b"OK")
        self.assertEqual({k: self.cmd("BF.ESTIMATE", k) for k in before}, before)
        self.assertExact(*before)


class Merge(ModuleTestCase):
    def test_dest_is_created_as_the_union(self):
        for key in ("a", "b"):
            self.cmd("BF.RESERVE", key, "0.01", "5000")
        madd(self.r, "a", items("a", 0, 3000))
        madd(self.r, "b", items("b", 0, 3000))
        self.assertEqual(self.cmd("BF.MERGE", "m", "a", "b"), b"OK")
        self.assertEqual(self.cmd("BF.MEXISTS", "m", *items("a", 0, 3000), *items("b", 0, 3000)), [1] * 6000)
        self.assertEqual(self.cmd("BF.CARD", "m"), 6000)
        self.assertEqual(self.cmd("BF.INFO", "m", "CAPACITY"), [5000])
        # The sources are untouched.
        self.assertEqual(self.cmd("BF.CARD", "a"), 3000)
        self.assertEqual(self.cmd("BF.MEXISTS", "a", *items("b", 0, 50)).count(1), 0)

    def test_an_existing_dest_is_one_of_the_sets(self):
        for key in ("a", "b"):
            self.cmd("BF.RESERVE", key, "0.01", "5000")
        madd(self.r, "a", items("a", 0, 1000))
        madd(self.r, "b", items("b", 0, 1000))
        self.assertEqual(self.cmd("BF.MERGE", "a", "b"), b"OK")
        self.assertEqual(self.cmd("BF.MEXISTS", "a", *items("a", 0, 1000), *items("b", 0, 1000)), [1] * 2000)
        self.assertEqual(self.cmd("BF.CARD", "a"), 2000)
        # Naming dest or a source again adds nothing twice.
        self.assertEqual(self.cmd("BF.MERGE", "a", "a", "b", "b"), b"OK")
        self.assertEqual(self.cmd("BF.CARD", "a"), 3000)

    def test_grown_chains_merge_layer_by_layer(self):
        for key in ("a", "b"):
            self.cmd("BF.RESERVE", key, "0.01", "500")
        madd(self.r, "a", items("a", 0, 1200))
        madd(self.r, "b", items("b", 0, 1300))
        self.assertEqual(self.cmd("BF.INFO", "a", "FILTERS"), self.cmd("BF.INFO", "b", "FILTERS"))
        self.cmd("BF.MERGE", "m", "a", "b")
        self.assertEqual(self.cmd("BF.MEXISTS", "m", *items("a", 0, 1200), *items("b", 0, 1300)), [1] * 2500)
        self.assertEqual(self.cmd("BF.INFO", "m", "FILTERS"), self.cmd("BF.INFO", "a", "FILTERS"))

    def test_a_filter_of_another_shape_is_refused_and_nothing_changes(self):
        self.cmd("BF.RESERVE", "a", "0.01", "500")
        self.cmd("BF.RESERVE", "same", "0.01", "500")
        self.cmd("BF.RESERVE", "bigger", "0.01", "600")
        self.cmd("BF.RESERVE", "rate", "0.001", "500")
        self.cmd("BF.RESERVE", "fixed", "0.01", "500", "NONSCALING")
        self.cmd("BF.RESERVE", "grown", "0.01", "500")
        madd(self.r, "a", items("a", 0, 100))
        madd(self.r, "same", items("s", 0, 100))
        madd(self.r, "grown", items("g", 0, 900))
        before = self.cmd("BF.SCANDUMP", "a", "1")
        self.assertError("ERR cannot merge scalable filters: capacities differ (500 vs 600)",
                         "BF.MERGE", "a", "same", "bigger")
        self.assertError("ERR cannot merge scalable filters: rates differ (0.01 vs 0.001)", "BF.MERGE", "a", "rate")
        self.assertError("ERR cannot merge scalable filters: scaling differ (scaling vs non-scaling)",
                         "BF.MERGE", "a", "fixed")
        self.assertError("ERR cannot merge scalable filters: layer counts differ (1 vs 2)", "BF.MERGE", "a", "grown")
        self.assertError("ERR not found", "BF.MERGE", "a", "same", "missing")
        self.assertEqual(self.cmd("BF.SCANDUMP", "a", "1"), before)
        self.assertEqual(self.cmd("BF.CARD", "a"), 100)
        self.assertEqual(self.cmd("EXISTS", "new"), 0)
        self.assertError("ERR not found", "BF.MERGE", "new", "missing")
        self.assertEqual(self.cmd("EXISTS", "new"), 0)

    def test_errors_and_other_types(self):
        self.assertArity("BF.MERGE", "d")
        self.cmd("SET", "s", "x")
        self.cmd("BF.RESERVE", "a", "0.01", "100")
        self.assertError(WRONGTYPE, "BF.MERGE", "s", "a")
        self.assertError(WRONGTYPE, "BF.MERGE", "a", "s")
        self.cmd("CF.RESERVE", "cf", "100")
        self.assertError(WRONGTYPE, "BF.MERGE", "a", "cf")

    def test_a_merged_filter_keeps_its_rate(self):
        for key in ("a", "b"):
            self.cmd("BF.RESERVE", key, "0.01", "20000")
        madd(self.r, "a", items("a", 0, 10000))
        madd(self.r, "b", items("b", 0, 10000))
        self.cmd("BF.MERGE", "m", "a", "b")
        absent = items("absent", 0, 20000)
        hits = sum(self.cmd("BF.MEXISTS", "m", *absent[i:i + 2000]).count(1) for i in range(0, 20000, 2000))
        # Layer 0 of a scaling filter is built for ε/2 = 0.5% at 20000 items; 3 sigma over 20000 trials.
        expected = 0.005
        sigma = math.sqrt(expected * (1 - expected) / len(absent))
        self.assertLess(hits / len(absent), expected + 3 * sigma + 0.001)


class Query(ModuleTestCase):
    def test_items_are_never_options(self):
        self.cmd("BF.RESERVE", "f", "0.01", "100")
        self.cmd("BF.MADD", "f", "STRICT", "ITEMS", "a")
        self.assertEqual(self.cmd("BF.QUERY", "f", "ITEMS", "STRICT", "ITEMS", "a", "b"), [1, 1, 1, 0])
        self.assertEqual(self.cmd("BF.QUERY", "f", "strict", "items", "a"), [1])
        self.assertEqual(self.cmd3("BF.QUERY", "f", "ITEMS", "a", "b"), [True, False])
        self.assertEqual(self.cmd("BF.QUERY", "f", "ITEMS", "a", "b"), self.cmd("BF.MEXISTS", "f", "a", "b"))

    def test_strict_tells_a_missing_key_from_absent_items(self):
        self.assertEqual(self.cmd("BF.QUERY", "missing", "ITEMS", "a", "b"), [0, 0])
        self.assertError("ERR not found", "BF.QUERY", "missing", "STRICT", "ITEMS", "a")
        self.cmd("SET", "s", "x")
        self.assertError(WRONGTYPE, "BF.QUERY", "s", "STRICT", "ITEMS", "a")
        self.assertEqual(self.cmd("BF.QUERY", "s", "ITEMS", "a"), [0])  # as BF.MEXISTS answers

    def test_errors(self):
        self.assertArity("BF.QUERY", "f", "ITEMS")
        self.assertArity("BF.QUERY", "f", "STRICT", "ITEMS")
        self.assertError("ERR syntax error: expected [STRICT] ITEMS", "BF.QUERY", "f", "a", "b")
        self.assertError("ERR syntax error: expected [STRICT] ITEMS", "BF.QUERY", "f", "STRICT", "a")


class Reserve(ModuleTestCase):
    def test_ifnotexists_accepts_the_same_filter_and_refuses_another(self):
        self.assertEqual(self.cmd("BF.RESERVE", "f", "0.01", "1000", "IFNOTEXISTS"), b"OK")
        self.cmd("BF.ADD", "f", "kept")
        self.assertEqual(self.cmd("BF.RESERVE", "f", "0.01", "1000", "IFNOTEXISTS"), b"OK")
        self.assertEqual(self.cmd("BF.EXISTS", "f", "kept"), 1)
        self.assertEqual(self.cmd("BF.RESERVE", "f", "0.01", "1000", "EXPANSION", "2", "IFNOTEXISTS"), b"OK")
        for other in (("0.01", "1001"), ("0.02", "1000"), ("0.01", "1000", "NONSCALING"),
                      ("0.01", "1000", "EXPANSION", "4")):
            self.assertError("ERR a filter with other parameters exists at this key", "BF.RESERVE", "f", *other,
                             "IFNOTEXISTS")
        self.assertError("ERR item exists", "BF.RESERVE", "f", "0.01", "1000")
        self.cmd("SET", "s", "x")
        self.assertError(WRONGTYPE, "BF.RESERVE", "s", "0.01", "1000", "IFNOTEXISTS")
        # A non-scaling filter and a capped rate compare as they were stored.
        self.cmd("BF.RESERVE", "n", "0.9", "100", "NONSCALING", "IFNOTEXISTS")
        self.assertEqual(self.cmd("BF.RESERVE", "n", "0.9", "100", "NONSCALING", "IFNOTEXISTS"), b"OK")

    def test_redisblooms_arity_is_unchanged_without_our_options(self):
        self.assertArity("BF.RESERVE", "f", "0.01", "100", "EXPANSION", "2", "NONSCALING", "x")
        self.assertEqual(self.cmd("BF.RESERVE", "g", "0.01", "100", "EXPANSION", "2", "TTL", "5", "IFNOTEXISTS"),
                         b"OK")
        self.assertError("ERR bad capacity", "BF.RESERVE", "h", "0.01", "TTL", "5")  # RedisBloom's reply too


class Ttl(ModuleTestCase):
    def test_the_creating_command_sets_the_ttl(self):
        self.assertEqual(self.cmd("BF.RESERVE", "bf", "0.01", "100", "TTL", "100"), b"OK")
        self.assertEqual(self.cmd("TTL", "bf"), 100)
        self.assertEqual(self.cmd("CF.RESERVE", "cf", "100", "TTL", "200", "BUCKETSIZE", "4"), b"OK")
        self.assertEqual(self.cmd("TTL", "cf"), 200)
        self.assertEqual(self.cmd("CF.INFO", "cf")[11], 4)  # the bucket size after the TTL option
        self.assertEqual(self.cmd("BF.INSERT", "ins", "CAPACITY", "100", "TTL", "300", "ITEMS", "a", "b"), [1, 1])
        self.assertEqual(self.cmd("TTL", "ins"), 300)

    def test_an_existing_filter_keeps_its_expiry(self):
        self.cmd("BF.INSERT", "ins", "ITEMS", "a")
        self.assertEqual(self.cmd("BF.INSERT", "ins", "TTL", "300", "ITEMS", "b"), [1])
        self.assertEqual(self.cmd("TTL", "ins"), -1)
        self.cmd("BF.RESERVE", "f", "0.01", "100", "TTL", "100")
        self.cmd("BF.RESERVE", "f", "0.01", "100", "TTL", "900", "IFNOTEXISTS")
        self.assertEqual(self.cmd("TTL", "f"), 100)
        self.cmd("BF.ADD", "f", "x")
        self.assertEqual(self.cmd("TTL", "f"), 100)

    def test_the_key_expires(self):
        self.cmd("BF.RESERVE", "f", "0.01", "100", "TTL", "1")
        self.cmd("BF.ADD", "f", "x")
        self.server.wait_for(lambda: self.cmd("EXISTS", "f") == 0, "the key to expire", timeout=5)
        self.assertEqual(self.cmd("BF.EXISTS", "f", "x"), 0)

    def test_bad_ttls(self):
        for bad in ("0", "-1", "x", "1.5", "10000000001"):
            self.assertError("ERR TTL must be an integer in the range [1, 10000000000]", "BF.RESERVE", "f", "0.01",
                             "100", "TTL", bad)
            self.assertError("ERR TTL must be an integer in the range [1, 10000000000]", "CF.RESERVE", "f", "100",
                             "TTL", bad)
            self.assertError("ERR TTL must be an integer in the range [1, 10000000000]", "BF.INSERT", "f", "TTL", bad,
                             "ITEMS", "a")
        self.assertError("ERR TTL needs a number of seconds", "BF.RESERVE", "f", "0.01", "100", "NONSCALING", "TTL")
        self.assertError("Unknown argument received", "BF.INSERT", "f", "TTLX", "5", "ITEMS", "a")
        self.assertEqual(self.cmd("EXISTS", "f"), 0)


class Distribution(unittest.TestCase):
    """The new commands through Redis's own persistence, replication and cluster routing."""

    def fill(self, client):
        for key in ("a", "b"):
            client.execute_command("BF.RESERVE", key, "0.01", "500")
        madd(client, "a", items("a", 0, 800))
        madd(client, "b", items("b", 0, 800))
        client.execute_command("BF.MERGE", "m", "a", "b")
        client.execute_command("BF.RESERVE", "t", "0.01", "100", "TTL", "1000")
        client.execute_command("CF.RESERVE", "ct", "100", "TTL", "2000")
        client.execute_command("BF.INSERT", "it", "TTL", "3000", "ITEMS", "x")

    def observe(self, client):
        return {
            "m": client.execute_command("BF.SCANDUMP", "m", "0"),
            "m-members": client.execute_command("BF.MEXISTS", "m", *items("a", 0, 800), *items("b", 0, 800)),
            "m-card": client.execute_command("BF.CARD", "m"),
            "m-estimate": client.execute_command("BF.ESTIMATE", "m"),
            "expiry": [client.execute_command("PEXPIRETIME", k) for k in ("t", "ct", "it", "m")],
        }

    def test_replica_gets_the_merge_and_the_primarys_expiry(self):
        with RedisServer(module_path()) as primary, replica_of(primary) as replica:
            client = primary.client()
            self.fill(client)
            self.assertEqual(client.execute_command("WAIT", "1", "5000"), 1)
            expected = self.observe(client)
            self.assertEqual(self.observe(replica.client()), expected)
            self.assertEqual(expected["expiry"][3], -1)

    def test_aof_replay_keeps_the_absolute_expiry(self):
        config = {"appendonly": "yes", "aof-use-rdb-preamble": "no"}
        with RedisServer(module_path(), config=config) as server:
            self.fill(server.client())
            before = self.observe(server.client())
            for name in os.listdir(server.dir):
                if name.endswith(".rdb"):
                    os.remove(os.path.join(server.dir, name))
            server.restart(save=False)
            self.assertEqual(self.observe(server.client()), before)

    def test_rdb_restart(self):
        with RedisServer(module_path()) as server:
            self.fill(server.client())
            before = self.observe(server.client())
            server.restart(save=True)
            self.assertEqual(self.observe(server.client()), before)

    def test_cluster_routes_by_every_key(self):
        with Cluster(module_path()) as cluster:
            for key in ("{t}a", "{t}b", "x", "y"):
                self.assertEqual(cluster.cli("BF.RESERVE", key, "0.01", "1000").strip(), "OK")
                self.assertEqual(cluster.cli("BF.MADD", key, "p", key).split(), ["1", "1"])
            self.assertEqual(cluster.cli("BF.MERGE", "{t}m", "{t}a", "{t}b").strip(), "OK")
            self.assertEqual(cluster.cli("BF.QUERY", "{t}m", "STRICT", "ITEMS", "p", "{t}a", "{t}b").split(),
                             ["1", "1", "1"])
            self.assertEqual(cluster.cli("BF.ESTIMATE", "{t}m").strip(), "3")
            self.assertEqual(cluster.cli("BF.ESTIMATE", "x").strip(), "2")
            self.assertEqual(cluster.cli("BF.ESTIMATE", "{t}a", "{t}b", "UNION").strip(), "3")
            if cluster.owner("x") != cluster.owner("y"):
                self.assertIn("CROSSSLOT", cluster.cli("BF.MERGE", "x", "y"))
                self.assertIn("CROSSSLOT", cluster.cli("BF.ESTIMATE", "x", "y", "UNION"))
            self.assertEqual(cluster.cli("BF.RESERVE", "ttl", "0.01", "100", "TTL", "500").strip(), "OK")
            self.assertEqual(cluster.cli("TTL", "ttl").strip(), "500")


if __name__ == "__main__":
    unittest.main()
