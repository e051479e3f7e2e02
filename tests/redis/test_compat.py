#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Data compatibility with RedisBloom: bytes RedisBloom 2.8.20 itself produced on Debian's redis-server
7.0.15 (SCANDUMP streams, DUMP payloads, INFO replies) are produced by blume for the same commands, and
load into blume filters that answer every query identically."""

import unittest

from common import ModuleTestCase

h = bytes.fromhex

EMAILS_HEADER = h("0300000000000000010000000500000002000000280000000000000040010000000000000300000000000000fca9f1d24d6240"
                  "3f2e92f414fca32f400b000000140000000000000000")
EMAILS_BITS = h("40082040400091008210061828a00002000500000400040000104000010000000001000000045000")
GROW_HEADER = h("13000000000000000300000005000000030000000800000000000000400000000000000004000000000000007b14ae47e17a"
                "843f88168ac58c2b2340070000000400000000000000001800000000000000c0000000000000000c000000000000007b14ae"
                "47e17a743fe9862fb2350e2640080000000c00000000000000003800000000000000c0010000000000000300000000000000"
                "7b14ae47e17a643f4af7d49edef0284009000000240000000000000000")
GROW_CHUNKS = [(9, h("e831941407628144")),
               (33, h("b104062443eb88aec90826a9dd191015890398eae00e8af0")),
               (89, h("0008100108000000010204091000000488002000204080000004000000024080000000000000001000000000200002"
                      "000000000000600000"))]
CK_HEADER = h("0500000000000000040000000000000000000000000000000100000000000000040014000100")
CK_SLOTS = h("0000000000000000d700000016e13416")
EMAILS_DUMP = h("07813016e5a289bef8040203020102050202021404fca9f1d24d62403f020b042e92f414fca32f400241400200052840082040"
                "400091008210061828a000020005000004000400001040000100000000010000000450000203000a008627a69817d3a6bb")
CK_DUMP = h("07813016e5a2898214040201020402050200020402140201020405100000000000000000d700000016e13416000a00bddfff5ba2"
            "116c75")
EMAILS = [b"ahmed@example.com", b"mona@example.com", b"omar@example.com"]


def make_emails(test):
    test.assertEqual(test.cmd("BF.RESERVE", "emails", "0.001", "20"), b"OK")
    test.assertEqual(test.cmd("BF.MADD", "emails", *EMAILS), [1, 1, 1])


def make_grow(test):
    test.assertEqual(test.cmd("BF.RESERVE", "grow", "0.02", "4", "EXPANSION", "3"), b"OK")
    for i in range(20):
        test.cmd("BF.ADD", "grow", f"item-{i}")


def make_ck(test):
    test.assertEqual(test.cmd("CF.RESERVE", "ck", "16", "BUCKETSIZE", "4"), b"OK")
    for item in ("alpha", "beta", "gamma", "delta", "alpha"):
        test.assertEqual(test.cmd("CF.ADD", "ck", item), 1)


class SameBytesForTheSameCommands(ModuleTestCase):
    def test_bloom_scandump(self):
        make_emails(self)
        self.assertEqual(self.cmd("BF.MEXISTS", "emails", "ahmed@example.com", "nope@example.com"), [1, 0])
        self.assertEqual(self.cmd("BF.SCANDUMP", "emails", "0"), [1, EMAILS_HEADER])
        self.assertEqual(self.cmd("BF.SCANDUMP", "emails", "1"), [41, EMAILS_BITS])
        self.assertEqual(self.cmd("BF.SCANDUMP", "emails", "41"), [0, b""])
        self.assertEqual(self.cmd("BF.INFO", "emails"),
                         [b"Capacity", 20, b"Size", 136, b"Number of filters", 1, b"Number of items inserted", 3,
                          b"Expansion rate", 2])

    def test_growing_bloom_scandump(self):
        make_grow(self)
        self.assertEqual(self.cmd("BF.INFO", "grow"),
                         [b"Capacity", 52, b"Size", 312, b"Number of filters", 3, b"Number of items inserted", 19,
                          b"Expansion rate", 3])
        self.assertEqual(self.cmd("BF.SCANDUMP", "grow", "0"), [1, GROW_HEADER])
        it = 1
        for expected_next, data in GROW_CHUNKS:
            self.assertEqual(self.cmd("BF.SCANDUMP", "grow", it), [expected_next, data])
            it = expected_next
        self.assertEqual(self.cmd("BF.SCANDUMP", "grow", "89"), [0, b""])

    def test_cuckoo_scandump(self):
        make_ck(self)
        self.assertEqual(self.cmd("CF.COUNT", "ck", "alpha"), 2)
        self.assertEqual(self.cmd("CF.INFO", "ck"),
                         [b"Size", 72, b"Number of buckets", 4, b"Number of filters", 1, b"Number of items inserted", 5,
                          b"Number of items deleted", 0, b"Bucket size", 4, b"Expansion rate", 1, b"Max iterations",
                          20])
        self.assertEqual(self.cmd("CF.SCANDUMP", "ck", "0"), [1, CK_HEADER])
        self.assertEqual(self.cmd("CF.SCANDUMP", "ck", "1"), [17, CK_SLOTS])
        self.assertEqual(self.cmd("CF.SCANDUMP", "ck", "17"), [0, None])

    def test_dump_payloads(self):
        make_emails(self)
        make_ck(self)
        self.assertEqual(self.cmd("DUMP", "emails"), EMAILS_DUMP)
        self.assertEqual(self.cmd("DUMP", "ck"), CK_DUMP)


class RedisBloomDataLoads(ModuleTestCase):
    def test_loadchunk_streams(self):
        self.assertEqual(self.cmd("BF.LOADCHUNK", "emails", "1", EMAILS_HEADER), b"OK")
        self.assertEqual(self.cmd("BF.LOADCHUNK", "emails", "41", EMAILS_BITS), b"OK")
        self.assertEqual(self.cmd("BF.MEXISTS", "emails", *EMAILS, "nope@example.com"), [1, 1, 1, 0])
        self.assertEqual(self.cmd("BF.LOADCHUNK", "grow", "1", GROW_HEADER), b"OK")
        for it, data in GROW_CHUNKS:
            self.assertEqual(self.cmd("BF.LOADCHUNK", "grow", it, data), b"OK")
        self.assertEqual(self.cmd("BF.MEXISTS", "grow", *[f"item-{i}" for i in range(20)]), [1] * 20)
        self.assertEqual(self.cmd("BF.CARD", "grow"), 19)
        self.assertEqual(self.cmd("CF.LOADCHUNK", "ck", "1", CK_HEADER), b"OK")
        self.assertEqual(self.cmd("CF.LOADCHUNK", "ck", "17", CK_SLOTS), b"OK")
        self.assertEqual(self.cmd("CF.COUNT", "ck", "alpha"), 2)
        self.assertEqual(self.cmd("CF.MEXISTS", "ck", "beta", "gamma", "delta", "omega"), [1, 1, 1, 0])

    def test_loaded_filters_answer_like_filters_built_here(self):
        make_grow(self)
        self.cmd("BF.LOADCHUNK", "loaded", "1", GROW_HEADER)
        for it, data in GROW_CHUNKS:
            self.cmd("BF.LOADCHUNK", "loaded", it, data)
        probes = [f"probe-{i}" for i in range(3000)]
        self.assertEqual(self.cmd("BF.MEXISTS", "loaded", *probes), self.cmd("BF.MEXISTS", "grow", *probes))
        # Both keep growing the same way.
        more = [f"more-{i}" for i in range(200)]
        self.assertEqual(self.cmd("BF.MADD", "loaded", *more), self.cmd("BF.MADD", "grow", *more))
        self.assertEqual(self.cmd("BF.INFO", "loaded"), self.cmd("BF.INFO", "grow"))

    def test_restore_of_redisbloom_dumps(self):
        self.assertEqual(self.cmd("RESTORE", "emails", "0", EMAILS_DUMP), b"OK")
        self.assertEqual(self.cmd("RESTORE", "ck", "0", CK_DUMP), b"OK")
        self.assertEqual(self.cmd("BF.MEXISTS", "emails", *EMAILS, "nope@example.com"), [1, 1, 1, 0])
        self.assertEqual(self.cmd("CF.COUNT", "ck", "alpha"), 2)
        self.assertEqual(self.cmd("BF.SCANDUMP", "emails", "0"), [1, EMAILS_HEADER])


if __name__ == "__main__":
    unittest.main()
