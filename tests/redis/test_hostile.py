#!/usr/bin/python3
"""Hostile input never crashes the server, never changes what it refuses to change, and never allocates
more than a header justifies: corrupt RESTORE payloads (with valid checksums, so the module itself must
notice), forged LOADCHUNK headers and chunks, and arguments of every wrong shape."""

import unittest

from common import ModuleTestCase

BF_DUMP = bytes.fromhex(
    "07813016e5a289bef8040203020102050202021404fca9f1d24d62403f020b042e92f414fca32f400241400200052840082040"
    "400091008210061828a000020005000004000400001040000100000000010000000450000203000a008627a69817d3a6bb")
CF_DUMP = bytes.fromhex(
    "07813016e5a2898214040201020402050200020402140201020405100000000000000000d700000016e13416000a00bddfff5ba2"
    "116c75")


def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected), which DUMP payloads end with."""
    poly = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 reflected
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def with_checksum(body):
    """A DUMP payload: the body (type, value, RDB version) followed by its valid CRC-64."""
    return body + crc64(body).to_bytes(8, "little")


class CorruptPayloads(ModuleTestCase):
    def test_crc_matches_redis(self):
        self.assertEqual(crc64(b"123456789"), 0xE9C6D914C4B8D9CA)
        self.assertEqual(with_checksum(BF_DUMP[:-8]), BF_DUMP)

    def assertRefused(self, payload):
        self.assertError("ERR Bad data format", "RESTORE", "k", "0", payload)
        self.assertEqual(self.cmd("EXISTS", "k"), 0)
        self.assertEqual(self.cmd("PING"), True)

    def test_every_single_byte_change_is_refused_or_loads_a_working_filter(self):
        body = BF_DUMP[:-8]
        for i in range(10, len(body) - 2):  # after the type id, before the RDB version
            for delta in (1, 0x80):
                corrupt = bytearray(body)
                corrupt[i] = (corrupt[i] + delta) & 0xFF
                reply = self.reply("RESTORE", "k", "0", with_checksum(bytes(corrupt)), "REPLACE")
                self.assertIn(reply[:1], (b"+", b"-"), (i, delta))
                if reply[:1] == b"+":  # a change the format cannot detect (bits, counts): still usable
                    self.cmd("BF.ADD", "k", "x")
                    self.cmd("BF.EXISTS", "k", "y")
                    self.cmd("BF.SCANDUMP", "k", "0")
                    self.cmd("DEL", "k")
        self.assertEqual(self.cmd("PING"), True)

    def test_cuckoo_byte_changes(self):
        body = CF_DUMP[:-8]
        for i in range(10, len(body) - 2):
            for delta in (1, 0x80):
                corrupt = bytearray(body)
                corrupt[i] = (corrupt[i] + delta) & 0xFF
                reply = self.reply("RESTORE", "k", "0", with_checksum(bytes(corrupt)), "REPLACE")
                self.assertIn(reply[:1], (b"+", b"-"), (i, delta))
                if reply[:1] == b"+":
                    self.cmd("CF.ADD", "k", "x")
                    self.cmd("CF.DEL", "k", "x")
                    self.cmd("CF.SCANDUMP", "k", "1")
                    self.cmd("DEL", "k")
        self.assertEqual(self.cmd("PING"), True)

    def test_truncated_payloads(self):
        body = BF_DUMP[:-10]
        for cut in range(1, len(body) - 1, 3):
            self.assertIn(self.reply("RESTORE", "k", "0", with_checksum(body[:cut] + BF_DUMP[-10:-8]))[:1], (b"-",))
        self.assertEqual(self.cmd("PING"), True)


class ForgedChunks(ModuleTestCase):
    def test_random_headers_never_crash(self):
        import random
        rng = random.Random(7)
        self.cmd("BF.RESERVE", "f", "0.01", "1000", "EXPANSION", "2")
        self.cmd("BF.MADD", "f", *[f"k{i}" for i in range(3000)])
        bf_header = self.cmd("BF.SCANDUMP", "f", "0")[1]
        self.cmd("CF.RESERVE", "c", "1000", "EXPANSION", "2")
        for i in range(3000):
            self.cmd("CF.ADD", "c", f"k{i}")
        cf_header = self.cmd("CF.SCANDUMP", "c", "0")[1]
        for trial in range(300):
            for command, header in (("BF.LOADCHUNK", bf_header), ("CF.LOADCHUNK", cf_header)):
                forged = bytearray(header)
                for _ in range(rng.randint(1, 4)):
                    forged[rng.randrange(len(forged))] = rng.randrange(256)
                reply = self.reply(command, f"x{trial}", "1", bytes(forged))
                self.assertIn(reply[:1], (b"+", b"-"))
                if reply[:1] == b"+":
                    for it in (1, 2, 100, 10**6):
                        self.assertIn(self.reply(command, f"x{trial}", str(it), b"\xff" * 64)[:1], (b"+", b"-"))
                    self.cmd("DEL", f"x{trial}")
        self.assertEqual(self.cmd("PING"), True)

    def test_wrong_shapes(self):
        self.cmd("SET", "s", "v")
        for args in (("BF.ADD", "s", ""), ("BF.RESERVE", "f", "-0.5", "10"), ("BF.RESERVE", "f", "inf", "10"),
                     ("BF.RESERVE", "f", "0.01", "-5"), ("BF.RESERVE", "f", "0.01", "99999999999999999999"),
                     ("BF.INSERT", "f", "CAPACITY", "-1", "ITEMS", "a"), ("CF.RESERVE", "c", "-1"),
                     ("CF.INSERT", "c", "CAPACITY", "99999999999999999999", "ITEMS", "a"),
                     ("CF.LOADCHUNK", "s", "1", b"x" * 38), ("BF.LOADCHUNK", "s", "1", b"x" * 73)):
            self.assertEqual(self.reply(*args)[:1], b"-", args)
        self.assertEqual(self.cmd("GET", "s"), b"v")
        self.assertEqual(self.cmd("EXISTS", "f", "c"), 0)


if __name__ == "__main__":
    unittest.main()
