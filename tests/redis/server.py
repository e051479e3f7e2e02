# SPDX-License-Identifier: Apache-2.0
"""Start real redis-server processes for the module's integration tests.

Dependency-free apart from redis-py (Debian's python3-redis). Run the tests with /usr/bin/python3: that is
the interpreter Debian's python3-redis is installed for (a python3 found earlier on PATH may lack it).

    with RedisServer("build/redis/blume.so") as server:
        client = server.client()              # redis.Redis speaking RESP2, bytes in and out
        client.execute_command("BF.ADD", "k", "x")
        server.restart()                      # same port and dir: the data comes back from the RDB
        resp3 = server.client(protocol=3)     # HELLO 3; maps come back as dicts, booleans as bool

    with RedisServer(module) as primary, replica_of(primary) as replica: ...
    with Cluster(module) as cluster: cluster.cli("BF.ADD", "k", "x")
    with Cluster(module, replicas=1) as cluster:   # 3 primaries, 3 replicas
        cluster.failover(cluster.replicas()[0])     # the replica becomes primary; waits until all agree
        cluster.reshard(source, target, 100)        # redis-cli --cluster reshard
        cluster.move_slot(slot, source, target)     # one slot, by hand (begin/migrate_slot_keys/end)

Every server gets a free loopback port, a private temporary directory (removed on stop unless the caller
chose the directory), `--save ""` (no background saves), `--repl-diskless-sync-delay 0` (replicas sync at
once), `--crash-memcheck-enabled no` (a crash exits at once), `--enable-debug-command yes` (DEBUG RELOAD,
DEBUG DIGEST-VALUE, DEBUG SEGFAULT) and logs to `redis.log` in its directory; `config` pairs come last and
override these. stop() fails (raises ServerError) when the server had crashed, so a crash the test did not
notice still fails it. Servers still running when the interpreter exits
are killed, so a failing test does not leave processes behind.

Environment:
    BLUME_REDIS_SERVER        redis-server binary (default: redis-server on PATH)
    BLUME_REDIS_CLI           redis-cli binary (default: redis-cli on PATH)
    BLUME_REDIS_ASAN_PRELOAD  path of libasan.so, preloaded into every server (for an ASan-built module)
"""

import atexit
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis
from redis.connection import Connection, PythonParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse

__all__ = ["RedisServer", "replica_of", "Cluster", "ServerError", "read_reply"]

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
LOG_TAIL_LINES = 40

_running = set()  # servers started and not yet stopped, for the exit hook


class ServerError(RuntimeError):
    """A server failed to start, died, or did not reach the expected state in time."""


def _kill_leftovers():
    for server in list(_running):
        server.kill()
        server._remove_dir()


atexit.register(_kill_leftovers)


def _binary(variable, name):
    path = os.environ.get(variable) or shutil.which(name)
    if not path:
        raise ServerError(f"{name} not found (install redis-server/redis-tools or set {variable})")
    return path


def _port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A free loopback port whose cluster bus port (port + 10000) is free too.

    Both are drawn below the kernel's ephemeral range: the kernel hands ephemeral ports to outgoing
    connections (replication links, redis-cli), which could take one between our check and the bind.
    """
    high = _ephemeral_low() - 10001
    low = min(10000, high - 1000)
    if low < 1024:
        low, high = 20000, 30000  # odd ephemeral range: take our chances
    for _ in range(1000):
        port = random.randint(low, high)
        if _port_is_free(port) and _port_is_free(port + 10000):
            return port
    raise ServerError("no free loopback port found")


def _config_pairs(config):
    """{name: value} or [(name, value), ...] -> argv. A list/tuple value becomes several arguments."""
    if config is None:
        return []
    items = config.items() if hasattr(config, "items") else config
    argv = []
    for name, value in items:
        argv.append("--" + name)
        if isinstance(value, (list, tuple)):
            argv.extend(str(v) for v in value)
        else:
            argv.append(str(value))
    return argv


def _config_names(config):
    if config is None:
        return set()
    items = config.items() if hasattr(config, "items") else config
    return {name for name, _ in items}


# ---- RESP3 -------------------------------------------------------------------------------------------
# Debian 12's redis-py (4.3) predates RESP3: it has no `protocol=3` and its parser rejects RESP3 types.
# read_reply understands every RESP2 and RESP3 type; the protocol-3 client plugs it into redis-py.


def read_reply(readline, read, parse_error=None):
    """Read one reply. `readline()` returns a line without CRLF; `read(n)` returns n bytes and consumes
    the CRLF after them. Errors are returned (not raised) as parse_error(text) results, like redis-py.

    RESP3 mapping: map -> dict, set -> set (list if an element is unhashable), double -> float,
    boolean -> bool, null -> None, big number -> int, verbatim string -> bytes without its "txt:" prefix,
    attribute -> dropped (the reply that follows it is returned), push -> list.
    """
    parse_error = parse_error or (lambda text: redis.exceptions.ResponseError(text))
    line = readline()
    if not line:
        raise RedisConnectionError("connection closed by server")
    kind, rest = line[:1], line[1:]
    if kind == b"+":
        return rest
    if kind == b"-":
        return parse_error(rest.decode("utf-8", errors="replace"))
    if kind == b":" or kind == b"(":
        return int(rest)
    if kind == b"$":
        length = int(rest)
        return None if length < 0 else read(length)
    if kind == b"*" or kind == b">":
        length = int(rest)
        return None if length < 0 else [read_reply(readline, read, parse_error) for _ in range(length)]
    if kind == b"_":
        return None
    if kind == b",":
        return float(rest)  # "inf", "-inf" and "nan" parse as well
    if kind == b"#":
        return rest == b"t"
    if kind == b"=":
        return read(int(rest))[4:]
    if kind == b"!":
        return parse_error(read(int(rest)).decode("utf-8", errors="replace"))
    if kind == b"%":
        pairs = [
            (_hashable(read_reply(readline, read, parse_error)), read_reply(readline, read, parse_error))
            for _ in range(int(rest))
        ]
        return dict(pairs)
    if kind == b"~":
        items = [read_reply(readline, read, parse_error) for _ in range(int(rest))]
        try:
            return set(items)
        except TypeError:
            return items
    if kind == b"|":
        for _ in range(2 * int(rest)):
            read_reply(readline, read, parse_error)
        return read_reply(readline, read, parse_error)
    raise InvalidResponse(f"Protocol Error: {line!r}")


def _hashable(value):
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


class _Resp3Parser(PythonParser):
    def read_response(self, disable_decoding=False):
        def read(length):
            return self._buffer.read(length)

        reply = read_reply(self._buffer.readline, read, self.parse_error)
        if isinstance(reply, redis.exceptions.ConnectionError):
            raise reply
        if not disable_decoding and self.encoder.decode_responses:
            reply = _decode(reply, self.encoder)
        return reply


def _decode(value, encoder):
    if isinstance(value, bytes):
        return encoder.decode(value)
    if isinstance(value, list):
        return [_decode(v, encoder) for v in value]
    if isinstance(value, dict):
        return {_decode(k, encoder): _decode(v, encoder) for k, v in value.items()}
    if isinstance(value, set):
        return {_decode(v, encoder) for v in value}
    if isinstance(value, tuple):
        return tuple(_decode(v, encoder) for v in value)
    return value


class _Resp3Connection(Connection):
    def on_connect(self):
        super().on_connect()
        self.send_command("HELLO", "3")
        hello = self.read_response()
        if not isinstance(hello, dict) or hello.get(b"proto", hello.get("proto")) != 3:
            raise RedisConnectionError(f"HELLO 3 failed: {hello!r}")


class _RawConnection:
    """One socket speaking RESP, returning each reply's exact bytes (for wire-format checks)."""

    def __init__(self, port, protocol):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")
        if protocol == 3:
            self.command("HELLO", "3")

    def command(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(parts))
        recorded = []

        def readline():
            line = self.file.readline()
            recorded.append(line)
            return line[:-2]

        def read(length):
            data = self.file.read(length + 2)
            recorded.append(data)
            return data[:-2]

        value = read_reply(readline, read)
        return value, b"".join(recorded)

    def close(self):
        self.file.close()
        self.sock.close()


# ---- one server --------------------------------------------------------------------------------------


class RedisServer:
    """A redis-server process on 127.0.0.1, optionally with a module loaded. Use as a context manager."""

    def __init__(self, module_path=None, module_args=(), config=None, port=None, dir=None):
        self.module_path = os.path.abspath(module_path) if module_path else None
        self.module_args = [str(a) for a in module_args]
        self.config = config
        self.port = port or free_port()
        self._own_dir = dir is None
        self.dir = dir  # a private temporary directory is made by start()
        self.process = None
        self._saved_logs = {}
        self.returncode = None  # exit status of the last process, once stopped (negative: killed by a signal)
        self._clients = []

    # -- lifecycle --

    @property
    def logfile(self):
        return os.path.join(self.dir, "redis.log")

    @property
    def stderr_file(self):
        return os.path.join(self.dir, "stderr.log")

    def argv(self):
        argv = [
            _binary("BLUME_REDIS_SERVER", "redis-server"),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", self.dir,
            "--logfile", self.logfile,
            "--daemonize", "no",
            "--enable-debug-command", "yes",
        ]
        chosen = _config_names(self.config)
        if "save" not in chosen:
            argv += ["--save", ""]
        if "repl-diskless-sync-delay" not in chosen:
            argv += ["--repl-diskless-sync-delay", "0"]  # a replica's full sync starts at once, not after 5 s
        if "crash-memcheck-enabled" not in chosen:
            # A crash report would end with a memory test that takes seconds (tens on a busy machine).
            argv += ["--crash-memcheck-enabled", "no"]
        if self.module_path:
            # Module configs (--<module>.<name> value) must come after --loadmodule: they go in `config`.
            argv += ["--loadmodule", self.module_path] + self.module_args
        return argv + _config_pairs(self.config)

    def _environment(self):
        env = dict(os.environ)
        preload = os.environ.get("BLUME_REDIS_ASAN_PRELOAD")
        if preload:
            # Debian's redis-server takes malloc/free from the shared libjemalloc, so a preloaded ASan runtime
            # serves every allocation of the server and of an ASan-built module.
            # - Errors stay fatal: halt_on_error stops the server at the first report. Not abort_on_error:
            #   the server catches SIGABRT, and its crash report (which walks memory) trips ASan again.
            # - Leaks are reported at shutdown but not fatal (LSAN_OPTIONS exitcode=0): the server is
            #   allowed its own exit-time leftovers, and a leak must not fail every clean shutdown.
            #   LSAN_OPTIONS is read last and its exitcode is shared with ASan errors, so an ASan error also
            #   exits 0: stop() therefore looks for error reports in stderr.log and raises on them.
            # - fast_unwind_on_malloc=0: the server has no frame pointers, and the fast unwinder stops in
            #   zmalloc, before the module's frames; the slow one costs ~2.5x on allocation-heavy runs.
            # - allocator_may_return_null: TryAlloc of an impossible size returns NULL, as with jemalloc.
            # Options already in ASAN_OPTIONS/LSAN_OPTIONS come last and win.
            env["LD_PRELOAD"] = preload
            env["ASAN_OPTIONS"] = ":".join(filter(None, [
                "halt_on_error=1:abort_on_error=0:detect_leaks=1:allocator_may_return_null=1",
                "fast_unwind_on_malloc=0:malloc_context_size=30", os.environ.get("ASAN_OPTIONS")]))
            env["LSAN_OPTIONS"] = ":".join(filter(None, ["exitcode=0", os.environ.get("LSAN_OPTIONS")]))
        return env

    def start(self, timeout=START_TIMEOUT):
        if self.process is not None:
            return self
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="blume-redis-")
        os.makedirs(self.dir, exist_ok=True)
        with open(self.stderr_file, "ab") as err:
            self.process = subprocess.Popen(
                self.argv(), stdout=err, stderr=err, stdin=subprocess.DEVNULL, env=self._environment()
            )
        _running.add(self)
        deadline = time.monotonic() + timeout
        last = None
        while True:
            if self.process.poll() is not None:
                code = self.returncode = self.process.returncode
                self.process = None
                _running.discard(self)
                message = f"redis-server exited with code {code} while starting\n{self._tail()}"
                self._remove_dir()
                raise ServerError(message)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    last = sock.recv(64)
                    if last.startswith(b"+PONG"):
                        return self
            except OSError as error:
                last = error
            if time.monotonic() > deadline:
                self.kill()
                message = f"redis-server did not answer PING within {timeout} s ({last!r})\n{self._tail()}"
                self._remove_dir()
                raise ServerError(message)
            time.sleep(0.05)

    def stop(self, save=False, remove_dir=True, timeout=STOP_TIMEOUT):
        """Shut down (SHUTDOWN NOSAVE, or SAVE), killing the process if it does not exit in time.
        Raises ServerError (after cleaning up) if the server had already died, refused to shut down, or
        reported AddressSanitizer errors: a crash the test itself did not notice still fails it."""
        for client in self._clients:
            client.close()
        self._clients = []
        refused = None
        if self.process is not None:
            if self.process.poll() is None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
                        sock.settimeout(timeout)
                        sock.sendall(b"SHUTDOWN SAVE\r\n" if save else b"SHUTDOWN NOSAVE\r\n")
                        reply = sock.recv(256)  # empty: the server closed the connection on its way out
                    if reply:
                        refused = f"SHUTDOWN refused: {reply!r}"  # then killed below
                except OSError:
                    pass  # refused or reset: a server dying on its own closes sockets before it is reapable
                if refused is None:
                    try:
                        self.process.wait(timeout)
                    except subprocess.TimeoutExpired:
                        pass
            exited = self.process.poll() is not None
            self.kill()  # reaps the process; SIGKILL only if it is still running
            if refused is None and not exited:
                refused = f"redis-server did not exit within {timeout} s of SHUTDOWN and was killed"
            elif refused is None and self.returncode != 0:  # it crashed, before or while we asked
                refused = f"redis-server exited with code {self.returncode}"
            if refused:
                refused += "\n" + self._tail()
        sanitizer = self.sanitizer_errors()
        if sanitizer:
            raise ServerError(f"AddressSanitizer reported errors (logs kept in {self.dir}):\n" + "\n".join(sanitizer))
        if remove_dir:
            self._remove_dir()
        if refused:
            raise ServerError(refused)

    def _remove_dir(self):
        """Remove the directory if we created it, keeping its logs readable through log() and stderr()."""
        if self._own_dir and self.dir and os.path.isdir(self.dir):
            self._saved_logs = {self.logfile: self.log(), self.stderr_file: self.stderr()}
            shutil.rmtree(self.dir, ignore_errors=True)

    def restart(self, save=True, timeout=START_TIMEOUT):
        """Stop and start again on the same port and directory. With save=True the shutdown writes an RDB
        first, so data comes back from it; an enabled AOF is flushed and reloaded either way."""
        self.stop(save=save, remove_dir=False)
        return self.start(timeout)

    def kill(self):
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGKILL)
            self.returncode = self.process.wait()
            self.process = None
        _running.discard(self)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- use --

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def client(self, protocol=2, **kwargs):
        """A redis.Redis for this server; bytes in, bytes out.

        protocol=3 sends HELLO 3 on connect and parses RESP3. redis-py's per-command response callbacks are
        turned off for it, since Debian's redis-py shapes them for RESP2; replies come back as parsed."""
        options = {"host": "127.0.0.1", "port": self.port, "decode_responses": False, **kwargs}
        if protocol == 2:
            client = redis.Redis(**options)
        elif protocol == 3:
            pool = redis.ConnectionPool(connection_class=_Resp3Connection, parser_class=_Resp3Parser, **options)
            client = redis.Redis(connection_pool=pool)
            client.response_callbacks = redis.client.CaseInsensitiveDict({})
        else:
            raise ValueError(f"protocol must be 2 or 3, not {protocol!r}")
        self._clients.append(client)
        return client

    def raw(self, *args, protocol=2):
        """Run one command on a fresh connection; returns (parsed value, exact reply bytes)."""
        connection = _RawConnection(self.port, protocol)
        try:
            return connection.command(*args)
        finally:
            connection.close()

    def info(self, section):
        """INFO <section> as a dict of str -> str."""
        return _fields(self.raw("INFO", section)[0])

    def cluster_info(self):
        """CLUSTER INFO as a dict of str -> str (cluster_state, cluster_slots_assigned, ...)."""
        return _fields(self.raw("CLUSTER", "INFO")[0])

    def log(self):
        """The server's log (redis.log); after stop() removed the directory, its last contents."""
        return self._read(self.logfile)

    def stderr(self):
        """The process's stdout and stderr (sanitizer reports land here)."""
        return self._read(self.stderr_file)

    def _read(self, path):
        if self.dir is None:
            return ""
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return self._saved_logs.get(path, "")

    def sanitizer_errors(self):
        """AddressSanitizer error reports (not leak reports) found in stderr.log, one string each."""
        return _reports(self.stderr(), "ERROR: AddressSanitizer", "SUMMARY: AddressSanitizer")

    def leak_report(self):
        """LeakSanitizer's report from the last shutdown under ASan ("" when nothing leaked)."""
        return "\n".join(_reports(self.stderr(), "ERROR: LeakSanitizer", "SUMMARY: AddressSanitizer"))

    def _tail(self):
        parts = []
        for title, text in (("redis.log", self.log()), ("stderr", self.stderr())):
            lines = text.splitlines()
            crash = next((n for n, line in enumerate(lines) if "REDIS BUG REPORT START" in line), None)
            if crash is not None:
                # A crash report is hundreds of lines; its cause and stack trace come first.
                end = next((n for n in range(crash, len(lines)) if "INFO OUTPUT" in lines[n]), crash + 30)
                lines = lines[max(0, crash - 5):end]
            else:
                lines = lines[-LOG_TAIL_LINES:]
            if lines:
                parts.append(f"--- {title} ---\n" + "\n".join(lines))
        return "\n".join(parts) or "(the server wrote no log)"

    def wait_for(self, predicate, what, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while not predicate():
            if not self.alive():
                raise ServerError(f"redis-server died while waiting for {what}\n{self._tail()}")
            if time.monotonic() > deadline:
                raise ServerError(f"timed out after {timeout} s waiting for {what}\n{self._tail()}")
            time.sleep(0.05)


def _fields(text):
    lines = text.decode().splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line and not line.startswith("#"))


def _reports(text, first, last):
    reports, current = [], None
    for line in text.splitlines():
        if first in line:
            current = [line]
        elif current is not None:
            current.append(line)
            if last in line:
                reports.append("\n".join(current))
                current = None
    if current:
        reports.append("\n".join(current))
    return reports


def replica_of(primary, module_path=None, module_args=None, config=None, timeout=START_TIMEOUT):
    """Start a replica of `primary` (loading the same module, as a replica must to read its RDB) and wait
    until its link is up. The result is a running RedisServer; stop it, or use it in a `with`."""
    extra = dict(config or {})
    extra["replicaof"] = ["127.0.0.1", primary.port]
    replica = RedisServer(
        module_path if module_path is not None else primary.module_path,
        primary.module_args if module_args is None else module_args,
        config=list(_pairs(primary.config)) + list(extra.items()),
    )
    replica.start(timeout)
    try:
        replica.wait_for(lambda: replica.info("replication").get("master_link_status") == "up",
                         "master_link_status:up", timeout)
    except BaseException:
        replica.stop()
        raise
    return replica


def _pairs(config):
    if config is None:
        return []
    items = config.items() if hasattr(config, "items") else config
    return [(name, value) for name, value in items if name not in ("replicaof", "slaveof")]


class Cluster:
    """A Redis Cluster of `masters` primaries, each with `replicas` replicas, every node loading the module.

    nodes[:masters] start as the primaries (redis-cli --cluster create makes the first addresses masters);
    roles change with failover(), so ask primaries()/replicas() rather than relying on the order."""

    def __init__(self, module_path=None, masters=3, module_args=(), config=None, timeout=30.0, replicas=0):
        self.module_path = module_path
        self.module_args = module_args
        self.masters = masters
        self.replicas_per_master = replicas
        self.config = config
        self.timeout = timeout
        self.nodes = []

    def start(self):
        try:
            for _ in range(self.masters * (1 + self.replicas_per_master)):
                node_config = list(_pairs(self.config)) + [
                    ("cluster-enabled", "yes"),
                    ("cluster-config-file", "nodes.conf"),
                    ("cluster-node-timeout", "5000"),
                ]
                self.nodes.append(RedisServer(self.module_path, self.module_args, config=node_config).start())
            addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
            created = subprocess.run(
                [_binary("BLUME_REDIS_CLI", "redis-cli"), "--cluster", "create", *addresses,
                 "--cluster-replicas", str(self.replicas_per_master), "--cluster-yes"],
                capture_output=True, text=True, timeout=self.timeout,
            )
            if created.returncode != 0:
                raise ServerError(f"redis-cli --cluster create failed:\n{created.stdout}\n{created.stderr}")
            self.wait_stable()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        errors = []
        for node in self.nodes:
            try:
                node.stop()
            except ServerError as error:
                errors.append(error)
        self.nodes = []
        if errors:
            raise errors[0]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- topology --

    @staticmethod
    def call(node, *args):
        """One command on `node` over a fresh connection (polling loops would pile up pooled clients);
        an error reply raises redis.ResponseError."""
        value = node.raw(*args)[0]
        if isinstance(value, redis.exceptions.ResponseError):
            raise value
        return value

    def node_id(self, node):
        return self.call(node, "CLUSTER", "MYID").decode()

    def node_at(self, port):
        return next(node for node in self.nodes if node.port == int(port))

    def primaries(self):
        """The nodes that currently say they are primaries, in the order of `nodes`."""
        return [node for node in self.nodes if node.info("replication")["role"] == "master"]

    def replicas(self, of=None):
        """The nodes that currently say they are replicas (of the primary `of`, if given)."""
        found = []
        for node in self.nodes:
            replication = node.info("replication")
            if replication["role"] == "slave" and (of is None or int(replication["master_port"]) == of.port):
                found.append(node)
        return found

    def slots_of(self, node):
        """The slots `node` serves, ascending, as the other nodes see it (CLUSTER SLOTS)."""
        slots = []
        for start, end, master, *_ in self.call(self.nodes[0], "CLUSTER", "SLOTS"):
            if master[1] == node.port:
                slots.extend(range(start, end + 1))
        return sorted(slots)

    def _view(self, node):
        """`node`'s CLUSTER NODES as a comparable set: (id, role, primary id, slots) for each node, or None
        while it sees a node failing or a link down."""
        view = set()
        for line in self.call(node, "CLUSTER", "NODES").decode().splitlines():
            fields = line.split()
            node_id, flags, primary, link = fields[0], fields[2].split(","), fields[3], fields[7]
            slots = fields[8:]
            if "fail" in flags or "fail?" in flags or "handshake" in flags or link != "connected":
                return None
            role = "master" if "master" in flags else "slave"
            # [slot->-id] and [slot-<-id]: a migration in progress, shown only by the two nodes doing it.
            view.add((node_id, role, primary, tuple(s for s in slots if not s.startswith("["))))
        return frozenset(view)

    def _stable(self):
        # cluster_state:ok alone is not enough: after a failover or a SETSLOT a node that has not yet heard
        # the news is ok too, and redirects clients to the old owner; a primary that has not yet heard that
        # a node is its replica ignores that replica's CLUSTER FAILOVER (which then times out). So every
        # node must draw the same map of roles and slots, with no link down, and every replica must be
        # attached and synced (a replica still loading its primary's RDB has not got the data yet).
        for node in self.nodes:
            info = node.cluster_info()
            if info.get("cluster_state") != "ok" or info.get("cluster_slots_ok") != "16384":
                return False
            replication = node.info("replication")
            if replication["role"] == "slave" and (replication.get("master_link_status") != "up"
                                                   or replication.get("master_sync_in_progress") != "0"):
                return False
        views = [self._view(node) for node in self.nodes]
        return views[0] is not None and len(views[0]) == len(self.nodes) and all(v == views[0] for v in views)

    def wait_stable(self, timeout=None):
        timeout = timeout or self.timeout
        deadline = time.monotonic() + timeout
        while not self._stable():
            for node in self.nodes:
                if not node.alive():
                    raise ServerError(f"node {node.port} died while the cluster settled\n{node._tail()}")
            if time.monotonic() > deadline:
                states = {node.port: (node.cluster_info().get("cluster_state"), node.info("replication")["role"],
                                      node.info("replication").get("master_link_status"))
                          for node in self.nodes}
                raise ServerError(f"the cluster did not settle within {timeout} s: {states}")
            time.sleep(0.1)

    def failover(self, replica, timeout=None):
        """CLUSTER FAILOVER on `replica` (a coordinated one: its primary stops writes until the replica
        caught up, so nothing acknowledged is lost); returns once it is the primary and the cluster settled."""
        timeout = timeout or self.timeout
        deadline = time.monotonic() + timeout
        while True:
            self.call(replica, "CLUSTER", "FAILOVER")
            # A manual failover the primary did not answer gives up after 5 s (CLUSTER_MF_TIMEOUT); ask again.
            try:
                replica.wait_for(lambda: replica.info("replication")["role"] == "master",
                                 "the replica to become primary", min(6.0, max(deadline - time.monotonic(), 0.1)))
                break
            except ServerError:
                if time.monotonic() > deadline or not replica.alive():
                    raise
        self.wait_stable(timeout)

    def reshard(self, source, target, slots):
        """redis-cli --cluster reshard: moves `slots` slots, the lowest `source` serves, keys and all."""
        result = subprocess.run(
            [_binary("BLUME_REDIS_CLI", "redis-cli"), "--cluster", "reshard", f"127.0.0.1:{source.port}",
             "--cluster-from", self.node_id(source), "--cluster-to", self.node_id(target),
             "--cluster-slots", str(slots), "--cluster-yes"],
            capture_output=True, text=True, timeout=max(self.timeout, 120),
        )
        if result.returncode != 0:
            raise ServerError(f"redis-cli --cluster reshard failed:\n{result.stdout}\n{result.stderr}")
        self.wait_stable()
        return result.stdout

    # One slot by hand, in the steps redis-cli takes, so a test can stop between them (a key too big to
    # migrate) and see each step fail or succeed.

    def begin_slot_migration(self, slot, source, target):
        self.call(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", self.node_id(source))
        self.call(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", self.node_id(target))

    def migrate_slot_keys(self, slot, source, target, batch=100, timeout_ms=10000):
        """MIGRATE every key of `slot` from `source` to `target`, `batch` keys a call; returns how many
        moved. A refused MIGRATE raises redis.ResponseError, leaving the keys where they were."""
        moved = 0
        while True:
            keys = self.call(source, "CLUSTER", "GETKEYSINSLOT", slot, batch)
            if not keys:
                return moved
            self.call(source, "MIGRATE", "127.0.0.1", target.port, "", 0, timeout_ms, "KEYS", *keys)
            moved += len(keys)

    def end_slot_migration(self, slot, owner):
        """SETSLOT NODE on every primary: `owner` serves `slot` from now on (the new owner first, as
        redis-cli does, so its epoch bump wins), and the cluster settles."""
        owner_id = self.node_id(owner)
        for node in [owner] + [n for n in self.primaries() if n is not owner]:
            self.call(node, "CLUSTER", "SETSLOT", slot, "NODE", owner_id)
        self.wait_stable()

    def abort_slot_migration(self, slot, source, target):
        """Drop the IMPORTING/MIGRATING states: the slot stays with `source`, with whatever keys are
        still there (keys already migrated stay on `target`, unreachable: move them back first)."""
        for node in (target, source):
            self.call(node, "CLUSTER", "SETSLOT", slot, "STABLE")
        self.wait_stable()

    def move_slot(self, slot, source, target):
        """Move one slot and its keys from `source` to `target`; returns the number of keys moved."""
        self.begin_slot_migration(slot, source, target)
        moved = self.migrate_slot_keys(slot, source, target)
        self.end_slot_migration(slot, target)
        return moved

    def set_config(self, name, value):
        """CONFIG SET on every node (configs are local: CONFIG SET neither replicates nor propagates)."""
        for node in self.nodes:
            self.call(node, "CONFIG", "SET", name, value)

    # -- use --

    def client(self, **kwargs):
        """A redis.cluster.RedisCluster seeded with every node; bytes in, bytes out."""
        from redis.cluster import ClusterNode, RedisCluster

        # Debian's redis-py (4.3) logs a traceback for every MOVED/ASK it then follows; the redirections a
        # reshard or a failover cause are expected here. An error it gives up on is still raised.
        logging.getLogger("redis.cluster").setLevel(logging.CRITICAL)
        options = {"decode_responses": False, **kwargs}
        return RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", node.port) for node in self.nodes], **options)

    def cli(self, *args, node=0, check=True):
        """`redis-cli -c -p <port of node> args...` (follows MOVED redirections); returns stdout."""
        result = subprocess.run(
            [_binary("BLUME_REDIS_CLI", "redis-cli"), "-c", "-p", str(self.nodes[node].port),
             *[str(a) for a in args]],
            capture_output=True, text=True, timeout=self.timeout,
        )
        if check and result.returncode != 0:
            raise ServerError(f"redis-cli {' '.join(map(str, args))} failed: {result.stderr}")
        return result.stdout

    def owner(self, key):
        """The node that serves `key`'s slot."""
        slot = self.call(self.nodes[0], "CLUSTER", "KEYSLOT", key)
        for start, end, master, *_ in self.call(self.nodes[0], "CLUSTER", "SLOTS"):
            if start <= slot <= end:
                port = master[1]
                return next(node for node in self.nodes if node.port == port)
        raise ServerError(f"no node serves slot {slot}")
