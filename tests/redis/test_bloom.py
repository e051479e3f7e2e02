#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""BF.* on a real redis-server: RedisBloom's replies, defaults and error strings, RESP2 and RESP3."""

import os
import unittest

from common import WRONGTYPE, ModuleTestCase


class Reserve(ModuleTestCase):
    def test_reserve_then_info(self):
        self.assertEqual(self.cmd("BF.RESERVE", "f", "0.001", "20"), b"OK")
        self.assertEqual(self.cmd("BF.INFO", "f"),
                         [b"Capacity", 20, b"Size", 136, b"Number of filters", 1, b"Number of items inserted", 0,
                          b"Expansion rate", 2])

    def test_the_practitioners_filter_has_redisblooms_size(self):
        before = self.server.info("memory")
        self.cmd("BF.RESERVE", "users:emails", "0.01", "100000000")
        after = self.server.info("memory")
        self.assertEqual(self.cmd("BF.INFO", "users:emails", "SIZE"), [137847016])
        self.assertLess(abs(self.cmd("MEMORY", "USAGE", "users:emails") - 137847016), 1000)
        if os.environ.get("BLUME_REDIS_ASAN_PRELOAD"):
            return  # under ASan, malloc is ASan's, not the server's jemalloc: its figures mean something else
        # The bits are zero pages the kernel commits only when written (calloc-style, as RedisBloom's
        # RedisModule_Calloc): reserving costs next to no resident memory.
        rss = int(after["used_memory_rss"]) - int(before["used_memory_rss"])
        self.assertLess(rss, 137847016 * 0.05)
        # used_memory counts the allocator's size class (160 MiB for this request, as for RedisBloom's).
        used = int(after["used_memory"]) - int(before["used_memory"])
        self.assertGreaterEqual(used, 137847016)
        self.assertLessEqual(used, 137847016 * 1.25)

    def test_argument_errors_in_redisblooms_order(self):
        self.assertArity("BF.RESERVE", "f", "0.01")
        self.assertArity("BF.RESERVE", "f", "0.01", "100", "EXPANSION", "2", "NONSCALING", "x")
        self.assertError("ERR bad error rate", "BF.RESERVE", "f", "abc", "100")
        self.assertError("ERR bad error rate", "BF.RESERVE", "f", "nan", "100")
        self.assertError("ERR error rate must be in the range (0.000000, 1.000000)", "BF.RESERVE", "f", "0", "100")
        self.assertError("ERR error rate must be in the range (0.000000, 1.000000)", "BF.RESERVE", "f", "1", "100")
        self.assertError("ERR bad capacity", "BF.RESERVE", "f", "0.01", "1e3")
        self.assertError("ERR bad capacity", "BF.RESERVE", "f", "0.01", "100.5")
        self.assertError("ERR capacity must be in the range [1, 1073741824]", "BF.RESERVE", "f", "0.01", "0")
        self.assertError("ERR capacity must be in the range [1, 1073741824]", "BF.RESERVE", "f", "0.01", "1073741825")
        self.assertError("ERR no expansion", "BF.RESERVE", "f", "0.01", "100", "EXPANSION")
        self.assertError("ERR bad expansion", "BF.RESERVE", "f", "0.01", "100", "EXPANSION", "x")
        self.assertError("Nonscaling filters cannot expand", "BF.RESERVE", "f", "0.01", "100", "NONSCALING",
                         "EXPANSION", "2")
        self.assertError("ERR expansion must be in the range [0, 32768]", "BF.RESERVE", "f", "0.01", "100",
                         "EXPANSION", "32769")
        self.assertEqual(self.cmd("EXISTS", "f"), 0)  # nothing was created by a refused command

    def test_rates_above_a_quarter_are_capped(self):
        self.cmd("BF.RESERVE", "f", "0.9", "100")
        self.assertIn(b"ratio:0.125", self.cmd("BF.DEBUG", "f")[1])

    def test_existing_keys_and_other_types(self):
        self.cmd("BF.RESERVE", "f", "0.01", "100")
        self.assertError("ERR item exists", "BF.RESERVE", "f", "0.01", "100")
        self.cmd("SET", "s", "x")
        self.assertError(WRONGTYPE, "BF.RESERVE", "s", "0.01", "100")

    def test_nonscaling_and_expansion_zero(self):
        self.cmd("BF.RESERVE", "a", "0.01", "10", "NONSCALING")
        self.cmd("BF.RESERVE", "b", "0.01", "10", "EXPANSION", "0")
        for key in ("a", "b"):
            self.assertEqual(self.cmd("BF.INFO", key, "EXPANSION"), [None])
            replies = self.cmd("BF.MADD", key, *[f"item{i}" for i in range(30)])
            self.assertLess(len(replies), 30)  # the reply stops at the first "full"
            self.assertEqual(self.cmd("BF.CARD", key), 10)
        self.assertError("ERR non scaling filter is full", "BF.ADD", "a", "one-more")

    def test_key_named_like_an_option_is_just_a_key(self):
        # RedisBloom matches NONSCALING over all of argv, the key included; blume reads only the options.
        self.cmd("BF.RESERVE", "nonscaling", "0.01", "10")
        self.assertEqual(self.cmd("BF.INFO", "nonscaling", "EXPANSION"), [2])
        self.cmd("BF.RESERVE", "expansion", "0.01", "10")
        self.assertEqual(self.cmd("BF.INFO", "expansion", "EXPANSION"), [2])

    def test_growth(self):
        self.cmd("BF.RESERVE", "g", "0.02", "4", "EXPANSION", "3")
        self.cmd("BF.MADD", "g", *[f"item-{i}" for i in range(20)])
        self.assertEqual(self.cmd("BF.INFO", "g"),
                         [b"Capacity", 52, b"Size", 312, b"Number of filters", 3, b"Number of items inserted", 19,
                          b"Expansion rate", 3])
        self.assertEqual(self.cmd("BF.DEBUG", "g"),
                         [b"size:19",
                          b"bytes:8 bits:64 hashes:7 hashwidth:64 capacity:4 size:4 ratio:0.01",
                          b"bytes:24 bits:192 hashes:8 hashwidth:64 capacity:12 size:12 ratio:0.005",
                          b"bytes:56 bits:448 hashes:9 hashwidth:64 capacity:36 size:3 ratio:0.0025"])


class AddAndExists(ModuleTestCase):
    def test_add_creates_with_defaults(self):
        self.assertEqual(self.cmd("BF.ADD", "f", "x"), 1)
        self.assertEqual(self.cmd("BF.ADD", "f", "x"), 0)
        self.assertEqual(self.cmd("BF.INFO", "f"),
                         [b"Capacity", 100, b"Size", 240, b"Number of filters", 1, b"Number of items inserted", 1,
                          b"Expansion rate", 2])

    def test_madd_and_mexists(self):
        self.assertEqual(self.cmd("BF.MADD", "f", "a", "b", "a"), [1, 1, 0])
        self.assertEqual(self.cmd("BF.MEXISTS", "f", "a", "b", "c"), [1, 1, 0])
        self.assertEqual(self.cmd("BF.EXISTS", "f", "a"), 1)
        self.assertEqual(self.cmd("BF.EXISTS", "f", "c"), 0)

    def test_no_false_negatives_across_layers(self):
        items = [f"user{i}@example.com" for i in range(5000)]
        for start in range(0, len(items), 500):
            self.cmd("BF.MADD", "f", *items[start:start + 500])
        self.assertGreater(self.cmd("BF.INFO", "f", "FILTERS")[0], 1)
        self.assertEqual(self.cmd("BF.MEXISTS", "f", *items), [1] * len(items))

    def test_missing_keys_and_other_types_answer_zero(self):
        self.cmd("SET", "s", "x")
        self.assertEqual(self.cmd("BF.EXISTS", "nothing", "a"), 0)
        self.assertEqual(self.cmd("BF.MEXISTS", "s", "a", "b"), [0, 0])
        self.assertError(WRONGTYPE, "BF.ADD", "s", "a")
        self.assertError(WRONGTYPE, "BF.MADD", "s", "a")
        self.assertEqual(self.cmd("BF.CARD", "nothing"), 0)
        self.assertError(WRONGTYPE, "BF.CARD", "s")

    def test_arity(self):
        self.assertArity("BF.ADD", "f")
        self.assertArity("BF.ADD", "f", "a", "b")
        self.assertArity("BF.MADD", "f")
        self.assertArity("BF.EXISTS", "f", "a", "b")
        self.assertArity("BF.MEXISTS", "f")
        self.assertArity("BF.CARD", "f", "x")
        self.assertArity("BF.INFO")
        self.assertArity("BF.INFO", "f", "a", "b")

    def test_resp3_booleans(self):
        self.assertIs(self.cmd3("BF.ADD", "f", "a"), True)
        self.assertEqual(self.cmd3("BF.MADD", "f", "a", "b"), [False, True])
        self.assertEqual(self.cmd3("BF.MEXISTS", "f", "a", "zz"), [True, False])
        self.assertIs(self.cmd3("BF.EXISTS", "f", "zz"), False)
        self.assertEqual(self.cmd3("BF.CARD", "f"), 2)
        self.assertEqual(self.cmd3("BF.INFO", "f"),
                         {b"Capacity": 100, b"Size": 240, b"Number of filters": 1, b"Number of items inserted": 2,
                          b"Expansion rate": 2})
        self.assertEqual(self.cmd3("BF.INFO", "f", "items"), {b"Number of items inserted": 2})

    def test_info_selectors(self):
        self.cmd("BF.RESERVE", "f", "0.01", "1000")
        self.assertEqual(self.cmd("BF.INFO", "f", "capacity"), [1000])
        self.assertEqual(self.cmd("BF.INFO", "f", "Size"), [1480])
        self.assertEqual(self.cmd("BF.INFO", "f", "FILTERS"), [1])
        self.assertEqual(self.cmd("BF.INFO", "f", "ITEMS"), [0])
        self.assertEqual(self.cmd("BF.INFO", "f", "EXPANSION"), [2])
        self.assertError("Invalid information value", "BF.INFO", "f", "CAP")
        self.assertError("ERR not found", "BF.INFO", "nothing")
        self.cmd("SET", "s", "x")
        self.assertError(WRONGTYPE, "BF.INFO", "s")


class Insert(ModuleTestCase):
    def test_insert_with_options(self):
        self.assertEqual(self.cmd("BF.INSERT", "f", "CAPACITY", "1000", "ERROR", "0.001", "EXPANSION", "4",
                                  "ITEMS", "a", "b"), [1, 1])
        self.assertEqual(self.cmd("BF.INFO", "f", "CAPACITY"), [1000])
        self.assertEqual(self.cmd("BF.INFO", "f", "EXPANSION"), [4])
        self.assertIn(b"ratio:0.0005", self.cmd("BF.DEBUG", "f")[1])
        # Options are ignored for an existing key.
        self.assertEqual(self.cmd("BF.INSERT", "f", "CAPACITY", "5", "ITEMS", "a", "c"), [0, 1])
        self.assertEqual(self.cmd("BF.INFO", "f", "CAPACITY"), [1000])

    def test_nocreate_and_nonscaling(self):
        self.assertError("ERR not found", "BF.INSERT", "f", "NOCREATE", "ITEMS", "a")
        # NONSCALING wins over EXPANSION here (unlike BF.RESERVE); the reply stops at the first "full".
        self.assertEqual(self.reply("BF.INSERT", "f", "CAPACITY", "3", "NONSCALING", "EXPANSION", "2",
                                    "ITEMS", "a", "b", "c", "d", "e"),
                         b"*4\r\n:1\r\n:1\r\n:1\r\n-ERR non scaling filter is full\r\n")
        self.assertEqual(self.cmd("BF.INSERT", "f", "NOCREATE", "ITEMS", "a"), [0])

    def test_errors(self):
        self.assertArity("BF.INSERT", "f", "ITEMS")
        self.assertArity("BF.INSERT", "f", "CAPACITY", "10")
        self.assertArity("BF.INSERT", "f", "CAPACITY")
        self.assertArity("BF.INSERT", "f", "ERROR", "0.1", "NOCREATE")
        self.assertError("Bad capacity", "BF.INSERT", "f", "CAPACITY", "x", "ITEMS", "a")
        self.assertError("Bad capacity", "BF.INSERT", "f", "CAPACITY", "0", "ITEMS", "a")
        self.assertError("Bad error rate", "BF.INSERT", "f", "ERROR", "2", "ITEMS", "a")
        self.assertError("Bad expansion", "BF.INSERT", "f", "EXPANSION", "-1", "ITEMS", "a")
        self.assertError("Unknown argument received", "BF.INSERT", "f", "FOO", "ITEMS", "a")
        self.assertEqual(self.cmd("EXISTS", "f"), 0)


class ScanDumpAndLoadChunk(ModuleTestCase):
    def dump(self, key):
        chunks, it = [], 0
        while True:
            it, data = self.cmd("BF.SCANDUMP", key, it)
            if it == 0:
                return chunks
            chunks.append((it, data))

    def test_round_trip(self):
        self.cmd("BF.RESERVE", "f", "0.01", "1000", "EXPANSION", "2")
        items = [f"k{i}" for i in range(3000)]
        self.cmd("BF.MADD", "f", *items)
        chunks = self.dump("f")
        for it, data in chunks:
            self.assertEqual(self.cmd("BF.LOADCHUNK", "copy", it, data), b"OK")
        self.assertEqual(self.cmd("BF.INFO", "copy"), self.cmd("BF.INFO", "f"))
        self.assertEqual(self.cmd("BF.MEXISTS", "copy", *items), [1] * len(items))
        self.assertEqual(self.dump("copy"), chunks)

    def test_scandump_errors_and_ends(self):
        self.assertError("ERR not found", "BF.SCANDUMP", "f", "0")
        self.cmd("BF.ADD", "f", "x")
        self.assertError("Second argument must be numeric", "BF.SCANDUMP", "f", "x")
        self.assertEqual(self.cmd("BF.SCANDUMP", "f", "100000"), [0, b""])
        self.assertEqual(self.cmd("BF.SCANDUMP", "f", "-1"), [0, b""])
        self.assertArity("BF.SCANDUMP", "f")

    def test_loadchunk_refuses_bad_input_and_keeps_the_server_up(self):
        self.assertError("ERR Second argument must be numeric", "BF.LOADCHUNK", "f", "x", "data")
        self.assertError("ERR received bad data", "BF.LOADCHUNK", "f", "1", "short")
        self.assertError("ERR not found", "BF.LOADCHUNK", "f", "9", "12345678")
        self.cmd("BF.ADD", "f", "x")
        header = self.cmd("BF.SCANDUMP", "f", "0")[1]
        hostile = bytearray(header)
        hostile[20:28] = (1 << 45).to_bytes(8, "little")  # layer bytes: 32 TiB
        hostile[28:36] = (1 << 48).to_bytes(8, "little")
        self.assertEqual(self.reply("BF.LOADCHUNK", "h", "1", bytes(hostile))[:1], b"-")
        self.assertEqual(self.cmd("EXISTS", "h"), 0)
        self.assertError("ERR received bad data", "BF.LOADCHUNK", "f", "0", "data")
        self.assertError("ERR invalid offset - no link found", "BF.LOADCHUNK", "f", "100000", "data")
        self.assertError("ERR invalid chunk - Too big for current filter", "BF.LOADCHUNK", "f", "200", b"x" * 199)
        self.assertEqual(self.cmd("PING"), True)


if __name__ == "__main__":
    unittest.main()
