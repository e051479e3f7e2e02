#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The practitioner's sign-up gate with real parts: a small sign-up service (Python's standard-library HTTP
server: the post's readers write Python, and it exercises blume's bindings) in front of a real PostgreSQL
table of N registered addresses with a unique index. Before it asks the database
`SELECT 1 FROM users WHERE email = %s`, the service asks a filter:

  none    no filter: every attempt costs a SELECT
  blume   blume in-process (the Python bindings), a split-block filter file built from the table by the blume
          tool (`COPY users(email) TO STDOUT | blume build`) and memory-mapped
  redis   blume's Redis module through redis-py, as the post does it: BF.RESERVE users:emails 0.01 <capacity>,
          BF.MADD to fill it from the table, BF.EXISTS before the SELECT, BF.ADD after the INSERT

"No" from the filter skips only the SELECT, never the INSERT: the unique index stays the source of truth, so a
filter that missed an insert (a crash between the commit and the filter update) cannot let a duplicate in;
`--crash-test` shows that path and the recovery (the filter rebuilt from the table).

  signup.py run --items 1M --attempts 100k           # every mode, then the crash test
  signup.py run --items 10M --modes blume,redis

`run` starts its own PostgreSQL (Debian's postgresql, as the postgres user when run as root) and redis-server on
loopback ports in a temporary directory, and removes them at the end. `serve` is the service itself.
"""

import argparse
import contextlib
import http.client
import http.server
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

NAMES = ["ann", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar",
         "peggy", "trent", "victor", "walter"]
DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "example.org", "proton.me", "mail.de", "web.de", "icloud.com"]
REDIS_KEY = "users:emails"


def address(i):
    """Registered users are addresses 0 … N-1; new sign-ups come from above N."""
    return f"{NAMES[i & 15]}.{i:x}@{DOMAINS[(i >> 4) & 7]}"


def parse_count(text):
    scale = {"k": 10**3, "K": 10**3, "M": 10**6}
    return int(float(text[:-1]) * scale[text[-1]]) if text[-1] in scale else int(text)


# ---- the service ------------------------------------------------------------------------------------------


class Gate:
    """What stands before the SELECT: answers False only for addresses certainly not registered."""

    def __init__(self, mode, args):
        self.mode = mode
        self.filter = None
        self.filter_file = args.filter_file
        if mode == "blume":
            import blume

            self.filter = blume.open(self.filter_file)  # mapped: the file's pages, shared, read as touched
        elif mode == "redis":
            import redis

            self.redis = redis.Redis(host="127.0.0.1", port=args.redis_port)

    def may_contain(self, email):
        if self.mode == "blume":
            return email in self.filter
        if self.mode == "redis":
            return self.redis.execute_command("BF.EXISTS", REDIS_KEY, email) == 1
        return True

    def added(self, email):
        if self.mode == "blume":
            self.filter.add(email)
        elif self.mode == "redis":
            self.redis.execute_command("BF.ADD", REDIS_KEY, email)

    def save(self):
        """On a clean shutdown the in-process filter keeps what it learnt; a crash loses the last adds."""
        if self.mode == "blume":
            self.filter.save(self.filter_file)

    def memory(self):
        if self.mode == "blume":
            return self.filter.size_in_bytes
        if self.mode == "redis":
            return self.redis.execute_command("MEMORY", "USAGE", REDIS_KEY)
        return 0


class Service:
    def __init__(self, args):
        import psycopg2

        self.db = psycopg2.connect(host="127.0.0.1", port=args.pg_port, dbname="signup", user="postgres")
        self.gate = Gate(args.mode, args)
        self.allow_crash = args.allow_crash
        self.stats = {"attempts": 0, "selects": 0, "selects_empty": 0, "inserts": 0, "conflicts": 0, "created": 0,
                      "taken": 0}
        self.lock = threading.Lock()

    def sign_up(self, email, crash_after_commit=False):
        import psycopg2.errors

        with self.lock:  # one database connection: attempts in turn
            self.stats["attempts"] += 1
            cur = self.db.cursor()
            if self.gate.may_contain(email):
                self.stats["selects"] += 1
                cur.execute("SELECT 1 FROM users WHERE email = %s", (email,))
                if cur.fetchone() is not None:
                    self.db.rollback()
                    self.stats["taken"] += 1
                    return "taken"
                self.stats["selects_empty"] += 1  # the filter's false positive (or a user not yet in it)
            self.stats["inserts"] += 1
            try:
                cur.execute("INSERT INTO users (email) VALUES (%s)", (email,))
                self.db.commit()
            except psycopg2.errors.UniqueViolation:
                # The filter said no, the index says taken: the filter missed an insert. The index decides.
                self.db.rollback()
                self.stats["conflicts"] += 1
                self.stats["taken"] += 1
                return "taken"
            if crash_after_commit and self.allow_crash:
                os._exit(17)  # committed, and the filter never hears of it
            self.gate.added(email)
            self.stats["created"] += 1
            return "created"


def serve(args):
    service = Service(args)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection for the whole replay
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):  # noqa: N802 - the http.server interface
            email = self.rfile.read(int(self.headers["Content-Length"])).decode()
            result = service.sign_up(email, self.headers.get("X-Crash-After-Commit") == "1")
            self.reply(201 if result == "created" else 409, {"email": email, "result": result})

        def do_GET(self):  # noqa: N802
            self.reply(200, dict(service.stats, filter_bytes=service.gate.memory()))

        def log_message(self, *_):
            pass

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on 127.0.0.1:{args.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        with service.lock:
            service.gate.save()


# ---- the parts: PostgreSQL, Redis, the service -------------------------------------------------------------


def pg_bin(name):
    candidates = sorted(pathlib.Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not candidates:
        raise SystemExit("PostgreSQL not found: apt-get install postgresql")
    return str(candidates[-1])


class Postgres:
    """A throwaway cluster on a loopback port; as root it runs as the postgres user (it refuses root)."""

    def __init__(self, work, port):
        self.dir, self.port = work / "pg", port
        self.dir.mkdir()
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.dir, "postgres", "postgres")
        subprocess.run(self.as_user + [pg_bin("initdb"), "-D", str(self.dir / "data"), "-U", "postgres", "-A", "trust",
                                       "-E", "UTF8", "--no-locale", "--no-sync"], check=True, capture_output=True)
        # synchronous_commit off: each sign-up's commit does not wait for the disk, which would add the same
        # flush to every mode and hide what the gate saves (a crash of PostgreSQL itself is not the test).
        self.proc = subprocess.Popen(self.as_user + [pg_bin("postgres"), "-D", str(self.dir / "data"), "-p", str(port),
                                                     "-c", "listen_addresses=127.0.0.1", "-c",
                                                     f"unix_socket_directories={self.dir}", "-c",
                                                     "synchronous_commit=off", "-c", "shared_buffers=512MB"],
                                     stdout=subprocess.DEVNULL, stderr=open(self.dir / "server.log", "wb"))
        for _ in range(300):
            if subprocess.run([pg_bin("pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise SystemExit("PostgreSQL did not start: " + (self.dir / "server.log").read_text())
        subprocess.run([pg_bin("psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-qc",
                        "CREATE DATABASE signup"], check=True)

    def connect(self):
        import psycopg2

        return psycopg2.connect(host="127.0.0.1", port=self.port, dbname="signup", user="postgres")

    def stop(self):
        # pg_ctl's fast shutdown (runuser does not pass signals on to the server it started).
        subprocess.run(self.as_user + [pg_bin("pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop"],
                       capture_output=True)
        self.proc.wait(timeout=60)


class Redis:
    def __init__(self, work, port, module):
        self.proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", str(work), "--loadmodule", module],
                                     stdout=subprocess.DEVNULL)
        import redis

        self.client = redis.Redis(host="127.0.0.1", port=port)
        for _ in range(100):
            with contextlib.suppress(redis.ConnectionError):
                self.client.ping()
                return
            time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class TextStream:
    """A file-like object COPY reads from: addresses start … stop-1, one per line, made as they are read."""

    def __init__(self, start, stop):
        self.next, self.stop, self.buffer = start, stop, b""

    def read(self, size=65536):
        while len(self.buffer) < size and self.next < self.stop:
            end = min(self.stop, self.next + 10_000)
            self.buffer += "".join(address(i) + "\n" for i in range(self.next, end)).encode()
            self.next = end
        out, self.buffer = self.buffer[:size], self.buffer[size:]
        return out

    readline = read


def load_users(pg, n):
    """N registered users: COPY into the table, then the unique index (faster than indexing row by row)."""
    start = time.perf_counter()
    with pg.connect() as db, db.cursor() as cur:
        cur.execute("CREATE TABLE users (id bigserial PRIMARY KEY, email text NOT NULL)")
        cur.copy_expert("COPY users (email) FROM STDIN", TextStream(0, n), size=1 << 20)
        cur.execute("CREATE UNIQUE INDEX users_email ON users (email)")
        cur.execute("ANALYZE users")
    return time.perf_counter() - start


def rebuild_blume(pg, cli, path, capacity):
    """The filter from the table: COPY … TO STDOUT piped into `blume build` (also the recovery)."""
    copy = subprocess.Popen([pg_bin("psql"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "signup",
                             "-qAtc", "COPY users (email) TO STDOUT"], stdout=subprocess.PIPE)
    subprocess.run([cli, "build", "--kind", "split-block", "--items", str(capacity), "--fpr", "1%", "--input", "-",
                    "--output", str(path), "--allow-overfill"], stdin=copy.stdout, check=True)
    copy.stdout.close()
    if copy.wait() != 0:
        raise SystemExit("psql COPY failed")


def rebuild_redis(pg, client, capacity):
    """The post's way: BF.RESERVE, then BF.MADD from the table, 1000 addresses a call, pipelined."""
    client.delete(REDIS_KEY)
    client.execute_command("BF.RESERVE", REDIS_KEY, "0.01", str(capacity))
    with pg.connect() as db, db.cursor(name="emails") as cur:
        cur.itersize = 100_000
        cur.execute("SELECT email FROM users")
        pipe = client.pipeline(transaction=False)
        batch = []
        for (email,) in cur:
            batch.append(email)
            if len(batch) == 1000:
                pipe.execute_command("BF.MADD", REDIS_KEY, *batch)
                batch = []
                if len(pipe) >= 16:
                    pipe.execute()
        if batch:
            pipe.execute_command("BF.MADD", REDIS_KEY, *batch)
        pipe.execute()


class ServiceProcess:
    def __init__(self, args, mode, extra=()):
        self.port = args.service_port
        self.proc = subprocess.Popen([sys.executable, __file__, "serve", "--mode", mode, "--port", str(self.port),
                                      "--pg-port", str(args.pg_port), "--redis-port", str(args.redis_port),
                                      "--filter-file", str(args.filter_file), *extra],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening" not in line:
            raise SystemExit(f"the {mode} service did not start")
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def sign_up(self, email, crash=False):
        self.conn.request("POST", "/signup", body=email.encode(), headers={"X-Crash-After-Commit": "1"} if crash else {})
        response = self.conn.getresponse()
        return json.loads(response.read())["result"]

    def stats(self):
        self.conn.request("GET", "/stats")
        return json.loads(self.conn.getresponse().read())

    def stop(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


# ---- the run ---------------------------------------------------------------------------------------------------


def replay(service, n, attempts, taken_share, first_new):
    """Attempts in a fixed order: mostly new addresses (from first_new up), every 1/taken_share-th one taken."""
    latencies, results = [], {"created": 0, "taken": 0}
    every = max(1, round(1 / taken_share)) if taken_share > 0 else 0
    new = first_new
    start = time.perf_counter()
    for i in range(attempts):
        if every and i % every == 0:
            email = address((i * 7919) % n)  # a registered user signing up again
        else:
            email, new = address(new), new + 1
        t = time.perf_counter()
        results[service.sign_up(email)] += 1
        latencies.append(time.perf_counter() - t)
    elapsed = time.perf_counter() - start
    latencies.sort()
    return {"p50_us": latencies[len(latencies) // 2] * 1e6, "p99_us": latencies[int(len(latencies) * 0.99)] * 1e6,
            "throughput": attempts / elapsed, "results": results, "new_used": new - first_new}


def crash_test(args, pg, redis_server, mode):
    """Commit, crash before the filter hears of it, restart: the stale filter says no, the INSERT meets the
    unique index, and the address is reported taken; one row. Then rebuild the filter from the table."""
    email = f"crash.{mode}@example.org"
    service = ServiceProcess(args, mode, ["--allow-crash"])
    with contextlib.suppress(http.client.HTTPException, ConnectionError):
        service.sign_up(email, crash=True)
    if service.proc.wait(timeout=30) != 17:
        raise SystemExit("the service was to crash after the commit")
    service = ServiceProcess(args, mode)  # the filter as it was: without the address
    first = service.sign_up(email)
    stats = service.stats()
    service.stop()
    with pg.connect() as db, db.cursor() as cur:
        cur.execute("SELECT count(*) FROM users WHERE email = %s", (email,))
        rows = cur.fetchone()[0]
    ok = first == "taken" and rows == 1 and stats["conflicts"] == 1 and stats["selects"] == 0
    # Recovery: the filter rebuilt from the table knows the address again, so the SELECT answers.
    start = time.perf_counter()
    with pg.connect() as db, db.cursor() as cur:
        cur.execute("SELECT count(*) FROM users")
        count = cur.fetchone()[0]
    if mode == "blume":
        rebuild_blume(pg, args.blume_cli, args.filter_file, count)
    else:
        rebuild_redis(pg, redis_server.client, count)
    rebuilt = time.perf_counter() - start
    service = ServiceProcess(args, mode)
    again = service.sign_up(email)
    stats_after = service.stats()
    service.stop()
    ok = ok and again == "taken" and stats_after["selects"] == 1 and stats_after["conflicts"] == 0
    print(f"crash test ({mode}): committed, crashed before the filter update; after restart the filter said no, "
          f"the INSERT hit the unique index: '{first}', {rows} row, {stats['conflicts']} conflict. Rebuilt the "
          f"filter from {count:,} rows in {rebuilt:.2f} s; then '{again}' through the SELECT. "
          f"{'passed' if ok else 'FAILED'}", flush=True)
    return ok


def run(args):
    n, attempts = parse_count(args.items), parse_count(args.attempts)
    modes = args.modes.split(",")
    work = pathlib.Path(tempfile.mkdtemp(prefix="blume-signup-"))
    os.chmod(work, 0o755)
    args.filter_file = work / "users.blume"
    pg = redis_server = None
    ok = True
    try:
        pg = Postgres(work, args.pg_port)
        load_seconds = load_users(pg, n)
        print(f"PostgreSQL {pg_bin('postgres').split('/')[-3]}: {n:,} registered users loaded and indexed in "
              f"{load_seconds:.1f} s; {attempts:,} sign-up attempts per mode, "
              f"{args.taken:.0%} of them already taken", flush=True)
        if "redis" in modes:
            redis_server = Redis(work, args.redis_port, args.module)
        rows = []
        first_new = n
        capacity = n + attempts * (len(modes) + 1)
        for mode in modes:
            prepared = time.perf_counter()
            if mode == "blume":
                rebuild_blume(pg, args.blume_cli, args.filter_file, capacity)
            elif mode == "redis":
                rebuild_redis(pg, redis_server.client, capacity)
            prepared = time.perf_counter() - prepared
            service = ServiceProcess(args, mode)
            result = replay(service, n, attempts, args.taken, first_new)
            first_new += result["new_used"]
            stats = service.stats()
            service.stop()
            rows.append((mode, prepared, result, stats))
            print(f"# {mode}: {json.dumps(stats)}", file=sys.stderr, flush=True)
        print()
        print(f"| filter | database SELECTs | of which found nothing | INSERTs | p50 µs | p99 µs | attempts/s | "
              f"filter memory | filter built in |")
        print("|---|---|---|---|---|---|---|---|---|")
        for mode, prepared, result, stats in rows:
            name = {"none": "none", "blume": "blume in-process", "redis": "blume's Redis module (BF.*)"}[mode]
            memory = f"{stats['filter_bytes'] / 2**20:,.2f} MiB" if stats["filter_bytes"] else "–"
            print(f"| {name} | {stats['selects']:,} | {stats['selects_empty']:,} | {stats['inserts']:,} | "
                  f"{result['p50_us']:.0f} | {result['p99_us']:.0f} | {result['throughput']:,.0f} | {memory} | "
                  f"{prepared:.1f} s |")
            ok = ok and stats["taken"] == result["results"]["taken"] and stats["conflicts"] == 0
        print(flush=True)
        if args.crash_test:
            for mode in (m for m in modes if m != "none"):
                ok = crash_test(args, pg, redis_server, mode) and ok
    finally:
        if redis_server:
            redis_server.stop()
        if pg:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("all checks passed" if ok else "CHECKS FAILED")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="start PostgreSQL (and Redis), load the users, replay sign-ups in every mode")
    r.add_argument("--items", default="1M", help="registered users (default 1M)")
    r.add_argument("--attempts", default="100k", help="sign-up attempts per mode (default 100k)")
    r.add_argument("--taken", type=float, default=0.1, help="share of attempts with a taken address (default 0.1)")
    r.add_argument("--modes", default="none,blume,redis")
    r.add_argument("--crash-test", action="store_true", help="then the crash between commit and filter update")
    r.add_argument("--blume-cli", default=os.environ.get("BLUME_CLI", "build/release/cli/blume"))
    r.add_argument("--module", default=os.environ.get("BLUME_REDIS_MODULE", "build/release/redis/blume_redis.so"))
    r.add_argument("--pg-port", type=int, default=55432)
    r.add_argument("--redis-port", type=int, default=56379)
    r.add_argument("--service-port", type=int, default=58080)
    s = sub.add_parser("serve", help="the sign-up service (started by run)")
    s.add_argument("--mode", choices=["none", "blume", "redis"], required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--pg-port", type=int, required=True)
    s.add_argument("--redis-port", type=int, required=True)
    s.add_argument("--filter-file", required=True)
    s.add_argument("--allow-crash", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
        return 0
    args.blume_cli = os.path.abspath(args.blume_cli)
    args.module = os.path.abspath(args.module)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
