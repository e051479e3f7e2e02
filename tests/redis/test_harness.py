#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Self-test of the server harness, without any module: run with /usr/bin/python3 tests/redis/test_harness.py"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402
from server import Cluster, RedisServer, ServerError, replica_of  # noqa: E402


def process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class PlainServer(unittest.TestCase):
    def test_set_get_and_clean_stop(self):
        server = RedisServer(None)
        with server:
            pid, directory = server.pid, server.dir
            client = server.client()
            client.set(b"key", b"value\x00\xff")
            self.assertEqual(client.get(b"key"), b"value\x00\xff")
            self.assertEqual(server.info("server")["tcp_port"], str(server.port))
        self.assertFalse(process_exists(pid))
        self.assertFalse(os.path.exists(directory))
        self.assertEqual(server.returncode, 0)
        self.assertIn("Ready to accept connections", server.log())

    def test_resp3_client_parses_every_type(self):
        with RedisServer(None) as server:
            client = server.client(protocol=3)
            self.assertEqual(client.execute_command("HELLO", "3")[b"proto"], 3)
            self.assertEqual(client.execute_command("CONFIG", "GET", "maxmemory"), {b"maxmemory": b"0"})
            protocol = lambda kind: client.execute_command("DEBUG", "PROTOCOL", kind)  # noqa: E731
            self.assertEqual(protocol("map"), {0: False, 1: True, 2: False})
            self.assertEqual(protocol("set"), {0, 1, 2})
            self.assertEqual(protocol("double"), 3.141)
            self.assertIs(protocol("true"), True)
            self.assertIsNone(protocol("null"))
            self.assertEqual(protocol("bignum"), 1234567999999999999999999999999999999)
            self.assertEqual(protocol("verbatim"), b"This is a verbatim\nstring")
            self.assertEqual(protocol("attrib"), b"Some real reply following the attribute")
            with self.assertRaises(redis.ResponseError):
                client.execute_command("NO.SUCH.COMMAND")

    def test_raw_returns_exact_bytes(self):
        with RedisServer(None) as server:
            self.assertEqual(server.raw("DEBUG", "PROTOCOL", "double", protocol=3), (3.141, b",3.141\r\n"))
            self.assertEqual(server.raw("DEBUG", "PROTOCOL", "null", protocol=2), (None, b"$-1\r\n"))

    def test_restart_reloads_the_rdb(self):
        with RedisServer(None) as server:
            server.client().set("persisted", "yes")
            old_pid, port = server.pid, server.port
            server.restart()
            self.assertNotEqual(server.pid, old_pid)
            self.assertEqual(server.port, port)
            self.assertEqual(server.client().get("persisted"), b"yes")
        self.assertFalse(process_exists(old_pid))

    def test_a_crash_fails_the_stop(self):
        server = RedisServer(None)
        with self.assertRaisesRegex(ServerError, "exited with code -11(.|\n)*crashed by signal"):
            with server:
                with self.assertRaises(redis.ConnectionError):
                    server.client().execute_command("DEBUG", "SEGFAULT")
        self.assertFalse(server.alive())
        self.assertFalse(os.path.exists(server.dir))

    def test_failed_start_shows_the_log(self):
        server = RedisServer("/nonexistent/module.so")
        with self.assertRaises(ServerError) as caught:
            server.start()
        self.assertIn("exited with code 1", str(caught.exception))
        self.assertIn("/nonexistent/module.so", str(caught.exception))
        self.assertFalse(server.alive())
        self.assertFalse(os.path.exists(server.dir))
        self.assertIn("Can't load module", server.log())


class Replication(unittest.TestCase):
    def test_replica_serves_what_the_primary_wrote(self):
        with RedisServer(None) as primary, replica_of(primary) as replica:
            pids = (primary.pid, replica.pid)
            writer = primary.client()
            writer.set("replicated", "value")
            self.assertEqual(writer.execute_command("WAIT", 1, 5000), 1)
            reader = replica.client()
            self.assertEqual(reader.get("replicated"), b"value")
            self.assertEqual(replica.info("replication")["role"], "slave")
            with self.assertRaises(redis.ReadOnlyError):
                reader.set("other", "x")
        self.assertFalse(any(process_exists(pid) for pid in pids))


class ClusterOfThree(unittest.TestCase):
    def test_redis_cli_follows_keys_to_their_nodes(self):
        with Cluster(None, masters=3) as cluster:
            pids = [node.pid for node in cluster.nodes]
            for node in cluster.nodes:
                self.assertEqual(node.cluster_info()["cluster_state"], "ok")
            # One key per node: {tag} keys hash only the tag, so scan tags until every node owns one.
            keys = {}
            for i in range(1000):
                key = f"{{tag{i}}}:key"
                keys.setdefault(cluster.owner(key).port, key)
                if len(keys) == 3:
                    break
            self.assertEqual(len(keys), 3)
            for port, key in keys.items():
                self.assertEqual(cluster.cli("SET", key, f"on-{port}", node=0).strip(), "OK")
            for port, key in keys.items():
                owner = next(node for node in cluster.nodes if node.port == port)
                self.assertEqual(owner.client().get(key), f"on-{port}".encode())
                for asked in range(3):
                    self.assertEqual(cluster.cli("GET", key, node=asked).strip(), f"on-{port}")
                stranger = next(node for node in cluster.nodes if node.port != port)
                with self.assertRaisesRegex(redis.ResponseError, "MOVED"):
                    stranger.client().get(key)
        self.assertFalse(any(process_exists(pid) for pid in pids))


class ClusterWithReplicas(unittest.TestCase):
    def test_failover_reshard_and_moving_one_slot(self):
        with Cluster(None, masters=3, replicas=1) as cluster:
            primaries, replicas = cluster.primaries(), cluster.replicas()
            self.assertEqual((len(primaries), len(replicas)), (3, 3))
            self.assertEqual(sorted(len(cluster.replicas(of=p)) for p in primaries), [1, 1, 1])
            client = cluster.client()
            keys = [f"key:{i}" for i in range(2000)]
            for key in keys:
                client.set(key, key)

            old = cluster.owner("key:0")
            new = cluster.replicas(of=old)[0]
            cluster.failover(new)
            self.assertEqual(cluster.owner("key:0"), new)
            self.assertEqual(cluster.replicas(of=new), [old])

            source, target = new, next(p for p in cluster.primaries() if p is not new)
            before = len(cluster.slots_of(target))
            cluster.reshard(source, target, 100)
            self.assertEqual(len(cluster.slots_of(target)), before + 100)

            slot = cluster.call(source, "CLUSTER", "KEYSLOT", "key:0")
            if slot not in cluster.slots_of(source):  # the reshard took it: move it back by hand
                source, target = target, source
            moved = cluster.move_slot(slot, source, target)
            self.assertGreaterEqual(moved, 1)
            self.assertEqual(cluster.owner("key:0"), target)
            self.assertEqual(cluster.call(source, "CLUSTER", "COUNTKEYSINSLOT", slot), 0)
            self.assertEqual([client.get(key) for key in keys], [key.encode() for key in keys])


if __name__ == "__main__":
    unittest.main(verbosity=2)
