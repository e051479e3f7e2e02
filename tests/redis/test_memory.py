#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What a filter costs the server: INFO's used_memory grows by the filter's reported Size, give or take
the allocator's rounding of each block to its size class, for every type at sizes from a few KiB to
128 MiB, right at size-class boundaries (a power-of-two cuckoo table, Bloom and counting arrays fitted
to end just below one), and a grown cuckoo filter again once reloaded from an RDB file."""

import unittest

from common import ModuleTestCase

# Bytes of Size that are not the payload blocks (the value structs, allocated apart and small).
BLOOM_FIXED, BLOOM_LAYER = 32, 64
CUCKOO_FIXED, CUCKOO_SUB_FILTER = 40, 16
NATIVE_HEADER = 192

# The key itself, its dictionary entry, and the client's buffers, which the server sizes as it likes.
SLACK = 64 << 10

TARGETS = [4 << 10, 1 << 20, 1 << 24, 1 << 27]


def size_class(n):
    """jemalloc's size class for a request of n bytes (the server's used_memory counts classes):
    multiples of 16 up to 128, then four classes per doubling."""
    if n <= 8:
        return 8
    if n <= 128:
        return (n + 15) // 16 * 16
    step = 1 << ((n - 1).bit_length() - 3)
    return (n + step - 1) // step * step


def as_dict(reply):
    if isinstance(reply, dict):
        return {k.decode() if isinstance(k, bytes) else k: v for k, v in reply.items()}
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


class SizeClassModel(unittest.TestCase):
    def test_classes(self):
        self.assertEqual(size_class(1 << 30), 1 << 30)
        self.assertEqual(size_class((1 << 30) + 72), 5 << 28)
        self.assertEqual(size_class(129), 160)
        self.assertEqual(size_class(1025), 1280)
        self.assertEqual(size_class(960 << 10), 1 << 20)


class UsedMemoryMatchesSize(ModuleTestCase):
    # The largest filter here is 128 MiB; the default 4 GiB limit is plenty but keep it explicit.
    config = {"bf.max-filter-memory": str(1 << 30)}

    def used(self):
        return int(self.r.info("memory")["used_memory"])

    def size(self, family, key):
        if family == "BF":
            return int(self.cmd("BF.INFO", key, "SIZE")[0])
        return int(as_dict(self.cmd(f"{family}.INFO", key))["Size"])

    def payload(self, family, key):
        size = self.size(family, key)
        if family == "BF":
            return size - BLOOM_FIXED - BLOOM_LAYER * int(self.cmd("BF.INFO", key, "FILTERS")[0])
        if family == "CF":
            return size - CUCKOO_FIXED - CUCKOO_SUB_FILTER * int(as_dict(self.cmd("CF.INFO", key))["Number of filters"])
        return size - NATIVE_HEADER

    def reserve(self, family, key, capacity):
        if family == "BF":
            self.cmd("BF.RESERVE", key, "0.01", capacity, "NONSCALING")
        elif family == "CF":
            self.cmd("CF.RESERVE", key, capacity)
        elif family == "CBF":
            self.cmd("CBF.RESERVE", key, "0.01", capacity)
        else:
            self.cmd("WBF.RESERVE", key, "0.01", capacity, "ITEMS", capacity)

    def fitted_capacity(self, family, target):
        """A capacity whose payload ends within 64 bytes below `target` (a size-class boundary), where any
        bytes added to the block would take it into the next class; the closest found if none does."""
        if family == "CF":
            return target  # bucket size 2, 8-bit fingerprints: a table of exactly `capacity` bytes
        capacity, best = 1000, None
        for _ in range(16):
            self.reserve(family, "fit", capacity)
            p = self.payload(family, "fit")
            self.r.delete("fit")
            if p <= target and (best is None or p > best[1]):
                best = (capacity, p)
            if target - 64 < p <= target:
                break
            scaled = capacity * (target - 32) // p
            capacity = max(1, scaled if scaled != capacity else capacity + (1 if p < target else -1))
        return best[0] if best else capacity

    def measure(self, family, capacity):
        self.r.flushall()
        before = self.used()
        self.reserve(family, "k", capacity)
        grew = self.used() - before
        return grew, self.size(family, "k"), self.payload(family, "k")

    def check(self, family, target):
        capacity = self.fitted_capacity(family, target)
        grew, size, payload = self.measure(family, capacity)
        usage = int(self.cmd("MEMORY", "USAGE", "k", "SAMPLES", "0"))
        with self.subTest(family=family, target=target, size=size, payload=payload, grew=grew):
            # The filter's bytes are counted, less what the server freed meanwhile (client buffers: 2 KiB
            # were seen under ASan), which is why the lower bound has the same slack as the upper.
            self.assertGreaterEqual(grew, payload - SLACK)
            self.assertLessEqual(grew, size_class(payload) + SLACK)
            if payload == size_class(payload):
                self.assertLessEqual(grew, size + size // 100 + SLACK)
            self.assertGreaterEqual(usage, size)
            self.assertLessEqual(usage, size + 256)

    def test_bloom(self):
        for target in TARGETS:
            self.check("BF", target)

    def test_cuckoo(self):
        for target in TARGETS:
            self.check("CF", target)

    def test_counting(self):
        for target in TARGETS:
            self.check("CBF", target)

    def test_window(self):
        for target in TARGETS:
            self.check("WBF", target)


    def test_cuckoo_sub_filters_reloaded(self):
        # Three sub-filters of 32, 128 and 512 KiB: a block each when grown, and the same blocks reloaded
        # (one block for their 672 KiB sum took the 768 KiB class).
        self.cmd("CF.RESERVE", "k", 1 << 15, "EXPANSION", 4)
        n = 0
        while int(as_dict(self.cmd("CF.INFO", "k"))["Number of filters"]) < 3:
            self.cmd("CF.INSERT", "k", "ITEMS", *(f"item:{i}" for i in range(n, n + 5000)))
            n += 5000
        payload = self.payload("CF", "k")
        self.assertEqual(payload, 672 << 10)
        self.cmd("DEBUG", "RELOAD")
        with_key = self.used()
        self.r.delete("k")
        reloaded = with_key - self.used()
        self.assertGreaterEqual(reloaded, payload)
        self.assertLessEqual(reloaded, payload + 1024)

if __name__ == "__main__":
    unittest.main(verbosity=2)
