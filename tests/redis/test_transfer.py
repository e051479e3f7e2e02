#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`blume build --redisbloom` and `blume redis push|pull` against real servers: a pushed key answers exactly
like one filled by BF.MADD (the same SCANDUMP bytes), files come back byte for byte, other kinds and
existing keys are refused, and a Redis Cluster routes every chunk to the key's node."""

import os
import subprocess
import tempfile
import unittest

from common import module_path
from server import Cluster, RedisServer


def cli():
    path = os.environ.get("BLUME_CLI")
    if not path:
        raise unittest.SkipTest("BLUME_CLI is not set (ctest sets it to the built tool)")
    return path


def run(*args, check=True):
    r = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"blume {' '.join(map(str, args))}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def scandump(client, command, key):
    out = [tuple(client.execute_command(command, key, 0))]
    it = 1
    while True:
        it, data = client.execute_command(command, key, it)
        if it == 0:
            return out
        out.append((it, data))


class Transfer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cli()
        cls.server = RedisServer(module_path())
        cls.server.start()
        cls.r = cls.server.client()
        cls.url = f"redis://127.0.0.1:{cls.server.port}"
        cls.tmp = tempfile.TemporaryDirectory()
        cls.keys = [f"user{i}@example.com" for i in range(50_000)]
        cls.key_file = os.path.join(cls.tmp.name, "keys.txt")
        with open(cls.key_file, "w") as f:
            f.write("".join(k + "\n" for k in cls.keys + cls.keys[:5000]))  # duplicates, as real input has

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.tmp.cleanup()

    def setUp(self):
        self.r.flushall()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def test_a_pushed_redisbloom_file_is_what_bf_madd_makes(self):
        for items, fpr, grow in ((50_000, "0.01", False), (20_000, "0.001", True)):
            with self.subTest(items=items, fpr=fpr):
                self.r.flushall()
                out = self.path(f"rb-{items}.blume")
                run("build", "--redisbloom", "--items", items, "--fpr", fpr, "--input", self.key_file, "--output",
                    out, "--no-progress")
                self.assertIn("(BF)", run("redis", "push", out, "pushed", "--url", self.url).stdout)
                self.r.execute_command("BF.RESERVE", "madd", fpr, items)
                for i in range(0, len(self.keys), 1000):
                    self.r.execute_command("BF.MADD", "madd", *self.keys[i:i + 1000])
                for i in range(0, 5000, 1000):
                    self.r.execute_command("BF.MADD", "madd", *self.keys[i:i + 1000])
                self.assertEqual(scandump(self.r, "BF.SCANDUMP", "pushed"), scandump(self.r, "BF.SCANDUMP", "madd"))
                self.assertEqual(self.r.execute_command("BF.INFO", "pushed"), self.r.execute_command("BF.INFO", "madd"))
                filters = self.r.execute_command("BF.INFO", "pushed", "FILTERS")[0]
                self.assertEqual(filters > 1, grow)

    def test_files_come_back_byte_for_byte(self):
        for kind, extra, command in (("counting", (), "CBF"), ("aging", (), "WBF"), (None, ("--redisbloom",), "BF")):
            with self.subTest(kind=kind or "redisbloom"):
                out = self.path(f"{command}.blume")
                run("build", *(("--kind", kind) if kind else ()), *extra, "--input", self.key_file, "--output", out,
                    "--no-progress")
                key = "{t}" + command
                run("redis", "push", out, key, "--url", self.url)
                self.assertEqual(self.r.execute_command(f"{command}.MEXISTS", key, *self.keys[-2000:]), [1] * 2000)
                back = self.path(f"{command}-back.blume")
                self.assertIn(f"({command})", run("redis", "pull", key, back, "--url", self.url).stdout)
                with open(out, "rb") as a, open(back, "rb") as b:
                    self.assertEqual(a.read(), b.read())
                # The pulled file answers through the tool as it answered in Redis.
                if kind:
                    q = run("query", back, *self.keys[:3], "absent-key@example.org", check=False)
                    self.assertEqual(q.stdout.split("\n")[:3], [f"{k}\tmaybe" for k in self.keys[:3]], q.stderr)

    def test_a_key_filled_by_commands_pulls_into_a_file(self):
        self.r.execute_command("CBF.RESERVE", "c", "0.01", "1000")
        self.r.execute_command("CBF.MADD", "c", "a", "b", "a")
        run("redis", "pull", "c", self.path("c.blume"), "--cluster", f"127.0.0.1:{self.server.port}")
        self.assertIn("counting", run("info", self.path("c.blume"), "--json").stdout)
        self.assertEqual(run("query", self.path("c.blume"), "a", "b").stdout, "a\tmaybe\nb\tmaybe\n")
        # 8-bit counters travel too (the tool's own verbs read the 4-bit kind only).
        self.r.execute_command("CBF.RESERVE", "w", "0.01", "1000", "WIDTH", "8")
        self.r.execute_command("CBF.MADD", "w", "a", "b", "a")
        run("redis", "pull", "w", self.path("w.blume"), "--url", self.url)
        run("redis", "push", self.path("w.blume"), "w2", "--url", self.url)
        self.assertEqual(self.r.execute_command("CBF.COUNT", "w2", "a"), 2)
        self.assertEqual(scandump(self.r, "CBF.SCANDUMP", "w2"), scandump(self.r, "CBF.SCANDUMP", "w"))

    def test_refusals(self):
        sb = self.path("sb.blume")
        run("build", "--kind", "split-block", "--input", self.key_file, "--output", sb, "--no-progress")
        r = run("redis", "push", sb, "x", "--url", self.url, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("split-block filter has no Redis type", r.stderr)
        self.assertEqual(self.r.execute_command("EXISTS", "x"), 0)
        c = self.path("c.blume")
        run("build", "--kind", "counting", "--input", self.key_file, "--output", c, "--no-progress")
        self.r.execute_command("SET", "taken", "v")
        r = run("redis", "push", c, "taken", "--url", self.url, check=False)
        self.assertIn("exists", r.stderr)
        self.assertEqual(self.r.execute_command("GET", "taken"), b"v")
        run("redis", "push", c, "taken", "--url", self.url, "--replace")
        self.assertEqual(self.r.execute_command("TYPE", "taken"), b"blume-CBF")
        # A damaged file is refused before anything is sent.
        with open(c, "rb") as f:
            data = bytearray(f.read())
        data[-1] ^= 1
        bad = self.path("bad.blume")
        with open(bad, "wb") as f:
            f.write(data)
        r = run("redis", "push", bad, "bad", "--url", self.url, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("checksum", r.stderr)
        self.assertEqual(self.r.execute_command("EXISTS", "bad"), 0)
        for args, message in ((("pull", "missing", self.path("m.blume")), "no key 'missing'"),
                              (("pull", "taken-string", self.path("m.blume")), "holds a string")):
            self.r.execute_command("SET", "taken-string", "v")
            r = run("redis", *args, "--url", self.url, check=False)
            self.assertIn(message, r.stderr)
            self.assertFalse(os.path.exists(self.path("m.blume")))
        r = run("redis", "push", c, "k", "--url", "http://localhost:1", check=False)
        self.assertIn("--url must look like redis://HOST:PORT", r.stderr)
        r = run("build", "--redisbloom", "--kind", "bloom", "--input", self.key_file, "--output", self.path("z"),
                check=False)
        self.assertIn("leave out --kind", r.stderr)
        rb = self.path("rb.blume")
        run("build", "--redisbloom", "--input", self.key_file, "--output", rb, "--no-progress")
        r = run("query", rb, "user1@example.com", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("RedisBloom's: a filter for Redis", r.stderr)


class ClusterTransfer(unittest.TestCase):
    def test_push_and_pull_follow_the_slot_map(self):
        cli()
        with Cluster(module_path()) as cluster, tempfile.TemporaryDirectory() as tmp:
            keys = [f"k{i}" for i in range(20_000)]
            key_file = os.path.join(tmp, "keys.txt")
            with open(key_file, "w") as f:
                f.write("".join(k + "\n" for k in keys))
            out = os.path.join(tmp, "rb.blume")
            run("build", "--redisbloom", "--input", key_file, "--output", out, "--no-progress")
            seed = f"127.0.0.1:{cluster.nodes[0].port}"
            names = [f"pushed:{i}" for i in range(6)]
            for name in names:
                run("redis", "push", out, name, "--cluster", seed)
            self.assertGreater(len({cluster.owner(n) for n in names}), 1)
            for name in names:
                self.assertEqual(cluster.cli("BF.EXISTS", name, "k123").strip(), "1")
                back = os.path.join(tmp, name.replace(":", "-"))
                run("redis", "pull", name, back, "--cluster", seed)
                with open(out, "rb") as a, open(back, "rb") as b:
                    self.assertEqual(a.read(), b.read())


if __name__ == "__main__":
    unittest.main()
