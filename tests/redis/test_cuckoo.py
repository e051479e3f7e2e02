#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""CF.* on a real redis-server: RedisBloom's replies, defaults and error strings, RESP2 and RESP3."""

import unittest

from common import WRONGTYPE, ModuleTestCase


class Reserve(ModuleTestCase):
    def test_reserve_and_info(self):
        self.assertEqual(self.cmd("CF.RESERVE", "c", "1000"), b"OK")
        self.assertEqual(self.cmd("CF.INFO", "c"),
                         [b"Size", 1080, b"Number of buckets", 512, b"Number of filters", 1,
                          b"Number of items inserted", 0, b"Number of items deleted", 0, b"Bucket size", 2,
                          b"Expansion rate", 1, b"Max iterations", 20])
        self.cmd("CF.RESERVE", "d", "1000", "BUCKETSIZE", "4", "MAXITERATIONS", "50", "EXPANSION", "3")
        self.assertEqual(self.cmd("CF.DEBUG", "d"),
                         b"bktsize:4 buckets:256 items:0 deletes:0 filters:1 max_iterations:50 expansion:4")

    def test_errors_in_redisblooms_order(self):
        self.assertArity("CF.RESERVE", "c")
        self.assertArity("CF.RESERVE", "c", "100", "BUCKETSIZE")
        self.assertError("Bad capacity", "CF.RESERVE", "c", "x")
        self.assertError("Couldn't parse MAXITERATIONS", "CF.RESERVE", "c", "100", "BUCKETSIZE", "0",
                         "MAXITERATIONS", "x")
        self.assertError("MAXITERATIONS: value must be in the range [1, 65535]", "CF.RESERVE", "c", "100",
                         "MAXITERATIONS", "0")
        self.assertError("Couldn't parse BUCKETSIZE", "CF.RESERVE", "c", "100", "BUCKETSIZE", "x")
        self.assertError("BUCKETSIZE: value must be in the range [1, 255]", "CF.RESERVE", "c", "100",
                         "BUCKETSIZE", "256")
        self.assertError("Couldn't parse EXPANSION", "CF.RESERVE", "c", "100", "EXPANSION", "x")
        self.assertError("EXPANSION: value must be in the range [0, 32768]", "CF.RESERVE", "c", "100",
                         "EXPANSION", "32769")
        self.assertError("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "CF.RESERVE", "c", "7",
                         "BUCKETSIZE", "4")
        self.assertError("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "CF.RESERVE", "c",
                         "1073741825")
        self.assertEqual(self.cmd("EXISTS", "c"), 0)
        self.cmd("CF.RESERVE", "c", "100")
        self.assertError("ERR item exists", "CF.RESERVE", "c", "100")
        self.cmd("SET", "s", "x")
        self.assertError(WRONGTYPE, "CF.RESERVE", "s", "100")


class AddCountDelete(ModuleTestCase):
    def test_add_creates_with_defaults_and_keeps_duplicates(self):
        self.assertEqual(self.cmd("CF.ADD", "c", "a"), 1)
        self.assertEqual(self.cmd("CF.ADD", "c", "a"), 1)
        self.assertEqual(self.cmd("CF.ADDNX", "c", "a"), 0)
        self.assertEqual(self.cmd("CF.ADDNX", "c", "b"), 1)
        self.assertEqual(self.cmd("CF.COUNT", "c", "a"), 2)
        self.assertEqual(self.cmd("CF.INFO", "c")[:6], [b"Size", 1080, b"Number of buckets", 512,
                                                          b"Number of filters", 1])

    def test_exists_and_missing_keys(self):
        self.cmd("CF.ADD", "c", "a")
        self.cmd("SET", "s", "x")
        self.assertEqual(self.cmd("CF.EXISTS", "c", "a"), 1)
        self.assertEqual(self.cmd("CF.MEXISTS", "c", "a", "b"), [1, 0])
        self.assertEqual(self.cmd("CF.EXISTS", "nothing", "a"), 0)
        self.assertEqual(self.cmd("CF.MEXISTS", "s", "a"), [0])
        self.assertEqual(self.cmd("CF.COUNT", "nothing", "a"), 0)
        self.assertEqual(self.cmd("CF.COUNT", "s", "a"), 0)
        self.assertError(WRONGTYPE, "CF.ADD", "s", "a")
        self.assertError("Not found", "CF.DEL", "nothing", "a")
        self.assertError("Not found", "CF.DEL", "s", "a")

    def test_delete(self):
        self.cmd("CF.ADD", "c", "a")
        self.cmd("CF.ADD", "c", "a")
        self.assertEqual(self.cmd("CF.DEL", "c", "a"), 1)
        self.assertEqual(self.cmd("CF.COUNT", "c", "a"), 1)
        self.assertEqual(self.cmd("CF.DEL", "c", "a"), 1)
        self.assertEqual(self.cmd("CF.DEL", "c", "a"), 0)
        info = self.cmd("CF.INFO", "c")
        self.assertEqual(info[6:10], [b"Number of items inserted", 0, b"Number of items deleted", 2])

    def test_full_filter_and_growth(self):
        self.cmd("CF.RESERVE", "fixed", "4", "BUCKETSIZE", "2", "EXPANSION", "0")
        replies = [self.reply("CF.ADD", "fixed", f"k{i}") for i in range(40)]
        self.assertIn(b"-Filter is full\r\n", replies)
        self.cmd("CF.RESERVE", "grows", "4", "BUCKETSIZE", "2", "EXPANSION", "2")
        for i in range(40):
            self.assertEqual(self.cmd("CF.ADD", "grows", f"k{i}"), 1)
        self.assertGreater(self.cmd("CF.INFO", "grows")[5], 1)
        self.assertEqual(self.cmd("CF.MEXISTS", "grows", *[f"k{i}" for i in range(40)]), [1] * 40)

    def test_compact(self):
        self.cmd("CF.RESERVE", "c", "64", "EXPANSION", "1")
        for i in range(400):
            self.cmd("CF.ADD", "c", f"k{i}")
        grown = self.cmd("CF.INFO", "c")[5]
        self.assertGreater(grown, 2)
        for i in range(400):
            if i % 10:
                self.assertEqual(self.cmd("CF.DEL", "c", f"k{i}"), 1)
        self.assertEqual(self.cmd("CF.COMPACT", "c"), b"OK")
        self.assertLess(self.cmd("CF.INFO", "c")[5], grown)
        self.assertEqual(self.cmd("CF.MEXISTS", "c", *[f"k{i}" for i in range(0, 400, 10)]), [1] * 40)
        self.assertError("Cuckoo filter was not found", "CF.COMPACT", "nothing")

    def test_max_expansions(self):
        self.cmd("CONFIG", "SET", "bf.cf-max-expansions", "2")
        try:
            self.cmd("CF.RESERVE", "c", "4", "BUCKETSIZE", "1", "EXPANSION", "1")
            errors = [self.reply("CF.ADD", "c", f"k{i}") for i in range(40)]
            self.assertIn(b"-Maximum expansions reached\r\n", errors)
            self.assertEqual(self.cmd("CF.INFO", "c")[5], 2)
        finally:
            self.cmd("CONFIG", "SET", "bf.cf-max-expansions", "32")

    def test_insert(self):
        self.assertEqual(self.cmd("CF.INSERT", "c", "CAPACITY", "1000", "ITEMS", "a", "b", "a"), [1, 1, 1])
        self.assertEqual(self.cmd("CF.INFO", "c")[3], 512)
        self.assertEqual(self.cmd("CF.INSERTNX", "c", "ITEMS", "a", "z"), [0, 1])
        self.assertError("ERR not found", "CF.INSERT", "d", "NOCREATE", "ITEMS", "a")
        self.assertError("Capacity must be in the range [cf-bucket-size * 2, 1073741824]", "CF.INSERT", "c",
                         "CAPACITY", "1", "ITEMS", "a")
        self.assertError("Bad capacity", "CF.INSERT", "c", "CAPACITY", "x", "ITEMS", "a")
        self.assertError("Unknown argument received", "CF.INSERT", "c", "FOO", "ITEMS", "a")
        self.assertArity("CF.INSERT", "c", "ITEMS")
        self.assertArity("CF.INSERT", "c", "CAPACITY", "10")
        self.cmd("CF.RESERVE", "fixed", "2", "BUCKETSIZE", "1", "EXPANSION", "0")
        replies = self.cmd("CF.INSERT", "fixed", "ITEMS", *[f"k{i}" for i in range(20)])
        self.assertIn(-1, replies)

    def test_resp3(self):
        self.assertIs(self.cmd3("CF.ADD", "c", "a"), True)
        self.assertIs(self.cmd3("CF.ADDNX", "c", "a"), False)
        self.assertEqual(self.cmd3("CF.MEXISTS", "c", "a", "b"), [True, False])
        self.assertEqual(self.cmd3("CF.INSERT", "c", "ITEMS", "b"), [True])
        self.assertEqual(self.cmd3("CF.INSERTNX", "c", "ITEMS", "b", "q"), [0, 1])  # integers stay integers
        self.assertEqual(self.cmd3("CF.COUNT", "c", "a"), 1)
        self.assertIs(self.cmd3("CF.DEL", "c", "a"), True)
        info = self.cmd3("CF.INFO", "c")
        self.assertEqual(info[b"Number of items inserted"], 2)
        self.assertEqual(info[b"Number of items deleted"], 1)
        self.assertEqual(info[b"Bucket size"], 2)

    def test_arity(self):
        for args in (("CF.ADD", "c"), ("CF.ADDNX", "c", "a", "b"), ("CF.EXISTS", "c"), ("CF.MEXISTS", "c"),
                     ("CF.COUNT", "c", "a", "b"), ("CF.DEL", "c"), ("CF.INFO",), ("CF.INFO", "c", "x"),
                     ("CF.SCANDUMP", "c"), ("CF.LOADCHUNK", "c", "1"), ("CF.COMPACT",)):
            self.assertArity(*args)


class ScanDumpAndLoadChunk(ModuleTestCase):
    def dump(self, key):
        chunks, it = [], 0
        while True:
            it, data = self.cmd("CF.SCANDUMP", key, it)
            if it == 0:
                return chunks
            chunks.append((it, data))

    def test_round_trip_across_sub_filters(self):
        self.cmd("CF.RESERVE", "c", "64", "EXPANSION", "2")
        for i in range(500):
            self.cmd("CF.ADD", "c", f"k{i}")
        chunks = self.dump("c")
        self.assertGreater(len(chunks), 2)
        for it, data in chunks:
            self.assertEqual(self.cmd("CF.LOADCHUNK", "copy", it, data), b"OK")
        self.assertEqual(self.cmd("CF.INFO", "copy"), self.cmd("CF.INFO", "c"))
        self.assertEqual(self.cmd("CF.MEXISTS", "copy", *[f"k{i}" for i in range(500)]), [1] * 500)

    def test_errors_and_ends(self):
        self.assertError("Invalid position", "CF.SCANDUMP", "c", "x")
        self.assertError("Invalid position", "CF.SCANDUMP", "c", "-1")
        self.assertError("ERR not found", "CF.SCANDUMP", "c", "0")
        self.cmd("CF.RESERVE", "c", "100")
        self.assertEqual(self.cmd("CF.SCANDUMP", "c", "0"), [0, None])  # nothing stored: nothing to dump
        self.cmd("CF.ADD", "c", "a")
        self.assertEqual(self.cmd("CF.SCANDUMP", "c", "100000"), [0, None])
        self.assertError("Invalid position", "CF.LOADCHUNK", "d", "0", "x")
        self.assertError("Invalid position", "CF.LOADCHUNK", "d", "x", "x")
        self.assertError("Invalid header", "CF.LOADCHUNK", "d", "1", "short")
        self.assertError("ERR item exists", "CF.LOADCHUNK", "c", "1", b"x" * 38)
        header = bytearray(self.cmd("CF.SCANDUMP", "c", "0")[1])
        header[8:16] = (3).to_bytes(8, "little")  # buckets: not a power of two
        self.assertError("Couldn't create filter!", "CF.LOADCHUNK", "d", "1", bytes(header))
        header[8:16] = (1 << 50).to_bytes(8, "little")  # 2^50 buckets: refused before allocating
        self.assertEqual(self.reply("CF.LOADCHUNK", "d", "1", bytes(header))[:1], b"-")
        self.assertError("ERR not found", "CF.LOADCHUNK", "d", "9", "x")
        self.assertError("Couldn't load chunk!", "CF.LOADCHUNK", "c", "100000", "x")
        self.assertError("Couldn't load chunk!", "CF.LOADCHUNK", "c", "-5", "x")
        self.assertError("Couldn't load chunk!", "CF.LOADCHUNK", "c", "300", b"x" * 299)
        self.assertEqual(self.cmd("EXISTS", "d"), 0)
        self.assertEqual(self.cmd("PING"), True)


if __name__ == "__main__":
    unittest.main()
