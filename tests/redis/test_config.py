#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Module configuration: RedisBloom's load-time arguments and bf-*/cf-* configs (CONFIG GET/SET bf.<name>),
and blume's max-capacity, which lifts the 2^30 capacity limit but still refuses what memory cannot hold."""

import unittest

import redis

from common import ModuleTestCase, module_path
from server import RedisServer, ServerError


class LoadArguments(unittest.TestCase):
    def test_new_and_legacy_names(self):
        for args in (("bf-error-rate", "0.001", "bf-initial-size", "1000", "cf-max-expansions", "3"),
                     ("ERROR_RATE", "0.001", "INITIAL_SIZE", "1000", "CF_MAX_EXPANSIONS", "3")):
            with RedisServer(module_path(), module_args=args) as server:
                client = server.client()
                client.execute_command("BF.ADD", "f", "x")
                self.assertIn(b"capacity:1000", client.execute_command("BF.DEBUG", "f")[1])
                self.assertIn(b"ratio:0.0005", client.execute_command("BF.DEBUG", "f")[1])
                self.assertEqual(client.execute_command("CONFIG", "GET", "bf.cf-max-expansions"),
                                 [b"bf.cf-max-expansions", b"3"])

    def test_rates_above_a_quarter_are_capped(self):
        with RedisServer(module_path(), module_args=("ERROR_RATE", "0.5")) as server:
            client = server.client()
            client.execute_command("BF.ADD", "f", "x")
            self.assertIn(b"ratio:0.125", client.execute_command("BF.DEBUG", "f")[1])

    def test_bad_arguments_stop_the_load(self):
        for args in (("FOO", "1"), ("bf-expansion-factor", "4"), ("ERROR_RATE",), ("INITIAL_SIZE", "0"),
                     ("ERROR_RATE", "abc"), ("max-capacity", "0")):
            server = RedisServer(module_path(), module_args=args)
            with self.assertRaises(ServerError, msg=args):
                server.start()
            server.stop() if server.alive() else None


class Configs(ModuleTestCase):
    def tearDown(self):
        for name, value in (("bf-error-rate", "0.01"), ("bf-initial-size", "100"), ("bf-expansion-factor", "2"),
                            ("cf-bucket-size", "2"), ("cf-initial-size", "1024"), ("cf-max-iterations", "20"),
                            ("cf-expansion-factor", "1"), ("cf-max-expansions", "32"), ("max-capacity", "1073741824"),
                            ("max-filter-memory", str(256 << 20))):
            self.cmd("CONFIG", "SET", "bf." + name, value)

    def test_defaults(self):
        got = dict(zip(*[iter(self.cmd("CONFIG", "GET", "bf.*"))] * 2))
        self.assertEqual(got, {b"bf.bf-error-rate": b"0.01", b"bf.bf-initial-size": b"100",
                               b"bf.bf-expansion-factor": b"2", b"bf.cf-bucket-size": b"2",
                               b"bf.cf-initial-size": b"1024", b"bf.cf-max-iterations": b"20",
                               b"bf.cf-expansion-factor": b"1", b"bf.cf-max-expansions": b"32",
                               b"bf.max-capacity": b"1073741824", b"bf.max-filter-memory": b"268435456"})

    def test_module_list_shows_the_projects_version(self):
        # MODULE LIST's ver is major * 10000 + minor * 100 + patch of CMake's project(VERSION).
        import os
        import re
        cmake = open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt"), encoding="utf-8").read()
        major, minor, patch = map(int, re.search(r"project\(blume VERSION (\d+)\.(\d+)\.(\d+)", cmake).groups())
        modules = {m[b"name"]: m[b"ver"] for m in self.r.module_list()}
        self.assertEqual(modules[b"bf"], major * 10000 + minor * 100 + patch)

    def test_set_changes_what_add_creates(self):
        self.cmd("CONFIG", "SET", "bf.bf-error-rate", "0.001")
        self.cmd("CONFIG", "SET", "bf.bf-initial-size", "500")
        self.cmd("CONFIG", "SET", "bf.bf-expansion-factor", "0")
        self.cmd("BF.ADD", "f", "x")
        self.assertIn(b"capacity:500", self.cmd("BF.DEBUG", "f")[1])
        self.assertIn(b"ratio:0.001", self.cmd("BF.DEBUG", "f")[1])  # non-scaling: the whole rate
        self.assertEqual(self.cmd("BF.INFO", "f", "EXPANSION"), [None])
        self.cmd("CONFIG", "SET", "bf.cf-bucket-size", "4")
        self.cmd("CONFIG", "SET", "bf.cf-initial-size", "4096")
        self.cmd("CONFIG", "SET", "bf.cf-max-iterations", "7")
        self.cmd("CF.ADD", "c", "x")
        self.assertEqual(self.cmd("CF.DEBUG", "c"),
                         b"bktsize:4 buckets:1024 items:1 deletes:0 filters:1 max_iterations:7 expansion:1")

    def test_expansion_factor_zero_makes_reserve_and_insert_nonscaling_as_redisbloom_8(self):
        self.cmd("CONFIG", "SET", "bf.bf-expansion-factor", "0")
        # RedisBloom 8 (src/rebloom.c): the config's 0 counts as NONSCALING, so a non-zero EXPANSION is refused.
        self.assertError("Nonscaling filters cannot expand", "BF.RESERVE", "r", "0.01", "100", "EXPANSION", "3")
        self.assertEqual(self.cmd("EXISTS", "r"), 0)
        self.assertEqual(self.cmd("BF.RESERVE", "r", "0.01", "100", "EXPANSION", "0"), b"OK")
        self.assertEqual(self.cmd("BF.INFO", "r", "EXPANSION"), [None])
        # BF.INSERT accepts the option but the filter stays non-scaling; the growth is still recorded.
        self.assertEqual(self.cmd("BF.INSERT", "i", "CAPACITY", "10", "EXPANSION", "3", "ITEMS", "a"), [1])
        self.assertEqual(self.cmd("BF.INFO", "i", "EXPANSION"), [None])
        header = self.cmd("BF.SCANDUMP", "i", "0")[1]
        self.assertEqual(int.from_bytes(header[12:16], "little") & 8, 8)  # BLOOM_OPT_NO_SCALING
        self.assertEqual(int.from_bytes(header[16:20], "little"), 3)
        items = [f"k{n}" for n in range(40)]
        replies = self.r.execute_command("BF.INSERT", "i", "ITEMS", *items)
        self.assertIsInstance(replies[-1], redis.ResponseError)
        self.assertEqual(self.cmd("BF.INFO", "i", "FILTERS"), [1])

    def test_refusals_carry_redisblooms_wording(self):
        def refused(name, value, message):
            with self.assertRaises(redis.ResponseError) as caught:
                self.cmd("CONFIG", "SET", "bf." + name, value)
            self.assertIn(message, str(caught.exception))

        refused("bf-error-rate", "1", "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)")
        refused("bf-error-rate", "x", "Invalid value for `bf-error-rate`")
        refused("bf-initial-size", "0", "Value for `bf-initial-size` must be in the range [1, 1073741824]")
        refused("cf-max-iterations", "0", "Value for `cf-max-iterations` must be in the range [1, 65535]")
        refused("cf-max-expansions", "65537", "Value for `cf-max-expansions` must be in the range [1, 65536]")
        # cf-bucket-size and cf-initial-size bound each other.
        self.cmd("CONFIG", "SET", "bf.cf-initial-size", "8")
        refused("cf-bucket-size", "5", "Value for `cf-bucket-size` must be in the range [1, 4]")
        self.cmd("CONFIG", "SET", "bf.cf-bucket-size", "4")
        refused("cf-initial-size", "7", "Value for `cf-initial-size` must be in the range [8, 1073741824]")
        self.cmd("CONFIG", "SET", "bf.bf-error-rate", "0.5")
        self.assertEqual(self.cmd("CONFIG", "GET", "bf.bf-error-rate"), [b"bf.bf-error-rate", b"0.25"])

    def test_max_capacity_lifts_the_limit_but_memory_still_decides(self):
        big = str(2 ** 30 + 1)
        self.assertError("ERR capacity must be in the range [1, 1073741824]", "BF.RESERVE", "f", "0.25", big)
        self.cmd("CONFIG", "SET", "bf.max-capacity", str(2 ** 34))
        self.cmd("CONFIG", "SET", "bf.max-filter-memory", str(4 << 30))  # over the 256 MiB default
        self.assertEqual(self.cmd("BF.RESERVE", "f", "0.25", big), b"OK")  # 387 MB of bits
        self.cmd("DEL", "f")
        self.cmd("CONFIG", "SET", "maxmemory", "50mb")
        try:
            self.assertError("ERR Insufficient memory to create filter", "BF.RESERVE", "f", "0.01", "100000000")
            self.assertError("ERR Insufficient memory to create filter", "CF.RESERVE", "c", "100000000")
            self.assertEqual(self.cmd("EXISTS", "f", "c"), 0)
        finally:
            self.cmd("CONFIG", "SET", "maxmemory", "0")
        # 2^34 items at 10^-6 (halved: scaling) is 65 GB: over bf.max-filter-memory, and once that is raised, over the machine.
        self.assertError("ERR filter needs 64849432504 bytes, more than bf.max-filter-memory (4294967296)",
                         "BF.RESERVE", "f", "0.000001", str(2 ** 34))
        self.cmd("CONFIG", "SET", "bf.max-filter-memory", str(2 ** 50))
        self.assertError("ERR Insufficient memory to create filter", "BF.RESERVE", "f", "0.000001", str(2 ** 34))


if __name__ == "__main__":
    unittest.main()
