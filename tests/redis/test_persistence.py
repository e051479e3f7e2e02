#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Persistence and distribution through Redis itself, with real servers: RDB save and restart, DEBUG
RELOAD, AOF rewrite and a restart from the AOF alone, a replica receiving every write, MEMORY USAGE, COPY,
and a 3-master Redis Cluster where redis-cli -c routes every command to the node that owns the key."""

import os
import unittest

from common import module_path
from server import Cluster, RedisServer, replica_of

ITEMS = [f"user{i}@example.com" for i in range(3000)]


def fill(client):
    """A growing Bloom filter, a non-scaling one, and a grown cuckoo filter with deletes."""
    client.execute_command("BF.RESERVE", "bf", "0.01", "500")
    for start in range(0, len(ITEMS), 500):
        client.execute_command("BF.MADD", "bf", *ITEMS[start:start + 500])
    client.execute_command("BF.RESERVE", "fixed", "0.001", "100", "NONSCALING")
    client.execute_command("BF.MADD", "fixed", *ITEMS[:50])
    client.execute_command("CF.RESERVE", "cf", "256", "BUCKETSIZE", "4", "EXPANSION", "2")
    for item in ITEMS[:1500]:
        client.execute_command("CF.ADD", "cf", item)
    for item in ITEMS[:100]:
        client.execute_command("CF.DEL", "cf", item)


def snapshot(client):
    """Everything a client can observe about the three filters."""
    return {
        "bf": client.execute_command("BF.INFO", "bf"),
        "bf-dump": client.execute_command("BF.SCANDUMP", "bf", "0"),
        "fixed": client.execute_command("BF.INFO", "fixed"),
        "cf": client.execute_command("CF.INFO", "cf"),
        "cf-dump": client.execute_command("CF.SCANDUMP", "cf", "0"),
        "bf-members": client.execute_command("BF.MEXISTS", "bf", *ITEMS, "absent-1", "absent-2"),
        "cf-members": client.execute_command("CF.MEXISTS", "cf", *ITEMS[:1600]),
        "digest": client.execute_command("DEBUG", "DIGEST"),
    }


class Persistence(unittest.TestCase):
    def test_rdb_save_and_restart(self):
        with RedisServer(module_path()) as server:
            fill(server.client())
            before = snapshot(server.client())
            server.restart(save=True)
            self.assertEqual(snapshot(server.client()), before)
            self.assertIn("Done loading RDB", server.log())

    def test_debug_reload(self):
        with RedisServer(module_path()) as server:
            client = server.client()
            fill(client)
            before = snapshot(client)
            self.assertEqual(client.execute_command("DEBUG", "RELOAD"), b"OK")
            self.assertEqual(snapshot(client), before)

    def test_aof_rewrite_and_restart_from_the_aof_alone(self):
        config = {"appendonly": "yes", "aof-use-rdb-preamble": "no"}
        with RedisServer(module_path(), config=config) as server:
            client = server.client()
            fill(client)
            before = snapshot(client)
            client.execute_command("BGREWRITEAOF")
            server.wait_for(lambda: server.info("persistence")["aof_rewrite_in_progress"] == "0"
                            and server.info("persistence")["aof_rewrite_scheduled"] == "0", "the AOF rewrite")
            client.execute_command("BF.ADD", "bf", "after-the-rewrite")
            before["bf-members"] = client.execute_command("BF.MEXISTS", "bf", *ITEMS, "absent-1", "absent-2")
            before["bf"] = client.execute_command("BF.INFO", "bf")
            before["bf-dump"] = client.execute_command("BF.SCANDUMP", "bf", "0")
            before["digest"] = client.execute_command("DEBUG", "DIGEST")
            for name in os.listdir(server.dir):
                if name.endswith(".rdb"):
                    os.remove(os.path.join(server.dir, name))
            server.restart(save=False)
            self.assertEqual(snapshot(server.client()), before)
            self.assertEqual(server.client().execute_command("BF.EXISTS", "bf", "after-the-rewrite"), 1)

    def test_memory_usage_and_copy(self):
        with RedisServer(module_path()) as server:
            client = server.client()
            fill(client)
            size = client.execute_command("BF.INFO", "bf", "SIZE")[0]
            usage = client.execute_command("MEMORY", "USAGE", "bf")
            self.assertGreaterEqual(usage, size)
            self.assertLess(usage, size + 200)
            cf_size = client.execute_command("CF.INFO", "cf")[1]
            self.assertGreaterEqual(client.execute_command("MEMORY", "USAGE", "cf"), cf_size)
            self.assertEqual(client.execute_command("COPY", "bf", "bf2"), 1)
            self.assertEqual(client.execute_command("COPY", "cf", "cf2"), 1)
            client.execute_command("BF.ADD", "bf2", "only-in-the-copy")
            self.assertEqual(client.execute_command("BF.EXISTS", "bf", "only-in-the-copy"), 0)
            self.assertEqual(client.execute_command("BF.MEXISTS", "bf2", *ITEMS), [1] * len(ITEMS))
            self.assertEqual(client.execute_command("CF.INFO", "cf2"), client.execute_command("CF.INFO", "cf"))

    def test_replica_receives_every_write(self):
        with RedisServer(module_path()) as primary, replica_of(primary) as replica:
            client = primary.client()  # one connection, so WAIT waits for all of its writes
            fill(client)
            client.execute_command("BF.LOADCHUNK", "loaded", "1", client.execute_command("BF.SCANDUMP", "bf", "0")[1])
            it = 1
            while True:
                it, data = client.execute_command("BF.SCANDUMP", "bf", it)
                if it == 0:
                    break
                client.execute_command("BF.LOADCHUNK", "loaded", it, data)
            client.execute_command("CF.LOADCHUNK", "cf-loaded", "1", client.execute_command("CF.SCANDUMP", "cf", "0")[1])
            it = 1
            while True:
                it, data = client.execute_command("CF.SCANDUMP", "cf", it)
                if it == 0:
                    break
                client.execute_command("CF.LOADCHUNK", "cf-loaded", it, data)
            client.execute_command("CF.COMPACT", "cf")
            self.assertEqual(client.execute_command("WAIT", "1", "5000"), 1)
            expected = snapshot(client)
            self.assertEqual(snapshot(replica.client()), expected)
            self.assertEqual(replica.client().execute_command("BF.MEXISTS", "loaded", *ITEMS), [1] * len(ITEMS))
            self.assertEqual(replica.client().execute_command("CF.INFO", "cf-loaded"),
                             client.execute_command("CF.INFO", "cf-loaded"))
            with self.assertRaises(Exception):  # a replica refuses writes, CF.COMPACT included
                replica.client().execute_command("CF.COMPACT", "cf")

    def test_a_replica_with_a_lower_filter_limit_applies_its_primarys_growth(self):
        # bf.max-filter-memory is local: a replica must not drop items its primary stored.
        with RedisServer(module_path()) as primary, replica_of(primary) as replica:
            replica.client().execute_command("CONFIG", "SET", "bf.max-filter-memory", "4096")
            client = primary.client()
            client.execute_command("BF.RESERVE", "grows", "0.01", "100")
            client.execute_command("CF.RESERVE", "cf-grows", "64")
            items = [f"item-{i}" for i in range(2000)]
            for i in range(0, len(items), 100):
                client.execute_command("BF.MADD", "grows", *items[i:i + 100])
                client.execute_command("CF.INSERT", "cf-grows", "ITEMS", *items[i:i + 100])
            self.assertEqual(client.execute_command("WAIT", "1", "5000"), 1)
            r = replica.client()
            self.assertEqual(r.execute_command("BF.MEXISTS", "grows", *items), [1] * len(items))
            self.assertEqual(r.execute_command("CF.MEXISTS", "cf-grows", *items), [1] * len(items))
            size = r.execute_command("BF.INFO", "grows", "SIZE")
            self.assertGreater(size[0] if isinstance(size, list) else size, 4096)


class RedisCluster(unittest.TestCase):
    def test_commands_are_routed_to_the_owning_node(self):
        with Cluster(module_path()) as cluster:
            keys = [f"filter:{i}" for i in range(12)]
            for key in keys:
                self.assertEqual(cluster.cli("BF.RESERVE", key, "0.01", "1000").strip(), "OK")
                self.assertEqual(cluster.cli("BF.MADD", key, "a", "b").split(), ["1", "1"])
                self.assertEqual(cluster.cli("CF.ADD", "cf:" + key, "x").strip(), "1")
            owners = set()
            for key in keys:
                self.assertEqual(cluster.cli("BF.EXISTS", key, "a").strip(), "1")
                self.assertEqual(cluster.cli("CF.COUNT", "cf:" + key, "x").strip(), "1")
                owners.add(cluster.owner(key))
            self.assertGreater(len(owners), 1)  # the keys really are spread over several nodes


if __name__ == "__main__":
    unittest.main()
