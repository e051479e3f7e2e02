# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the module's integration tests: where the module is, and a test case that starts one
real redis-server with it per class and empties it before every test."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402
from server import RedisServer  # noqa: E402

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def module_path():
    path = os.environ.get("BLUME_REDIS_MODULE")
    if not path:
        raise unittest.SkipTest("BLUME_REDIS_MODULE is not set (ctest sets it to the built module)")
    return path


class ModuleTestCase(unittest.TestCase):
    """One server per test class (module arguments and config from the class), flushed before each test."""

    module_args = ()
    config = None

    @classmethod
    def setUpClass(cls):
        cls.server = RedisServer(module_path(), module_args=cls.module_args, config=cls.config)
        cls.server.start()
        cls.r = cls.server.client()
        cls.r3 = cls.server.client(protocol=3)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        errors = cls.server.sanitizer_errors()
        if errors:
            raise AssertionError("sanitizer errors in the server:\n" + "\n".join(errors))

    def setUp(self):
        self.r.flushall()

    def cmd(self, *args):
        return self.r.execute_command(*args)

    def cmd3(self, *args):
        return self.r3.execute_command(*args)

    def reply(self, *args, protocol=2):
        """The exact bytes of the reply (redis-py would strip an error's "ERR " prefix)."""
        return self.server.raw(*args, protocol=protocol)[1]

    def assertError(self, expected, *args, protocol=2):
        """The command answers exactly the error `expected` (the text after '-')."""
        self.assertEqual(self.reply(*args, protocol=protocol), b"-" + expected.encode() + b"\r\n", args)

    def assertArity(self, *args):
        name = args[0].lower()
        self.assertError(f"ERR wrong number of arguments for '{name}' command", *args)
