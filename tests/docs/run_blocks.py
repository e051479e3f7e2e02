#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run every code block of one documentation page, so that the docs cannot drift from the code.

    run_blocks.py docs/cli.md --cli=build/release/cli/blume --module=build/release/redis/blume_redis.so ...

ctest runs it once per page (tests/docs/CMakeLists.txt: docs.readme, docs.cli, ...), handing it what the
build made. Each fenced block is handled by its info string:

  sh, bash, shell   run by bash (errexit, pipefail) in the page's directory
  console           the same for its `$ ` lines; every other non-empty line it shows (but those with `...`)
                    must appear in the output, whitespace aside
  python            run by the build's Python with the bindings on PYTHONPATH; a page's blocks share one
                    namespace. A top-level expression whose comment starts with a value (`x in f  # True:
                    maybe`, `# [1, 0]`, `# {'bits': 958505838, ...}`) must have that repr, whitespace aside
                    (`...` matches anything)
  cpp               compiled with the build's compiler and flags against include/ and run when it has a
                    main(); otherwise wrapped in one (its #include lines hoisted) and compiled and linked
  cmake             the code of the file a `same as:` comment names, which another test builds
  text              output or prose: not code
Any other info string, or none, fails the page: say what the block is.

An HTML comment right before a block (blank lines between are fine) changes what happens to it:

  <!-- not run: REASON -->    only checked for syntax (bash -n, Python's compile; C++ not at all); say why
  <!-- test setup:
  commands                     run before the block, in its language and directory, unseen by readers:
  -->                          the inputs a reference block names (key files, filters to merge)
  <!-- same as: PATH -->       the block is PATH's code, comments and blank lines aside

The page's directory is fresh for each page and shared by its blocks (shell blocks share its files, not
their variables). It stands for the source tree after a release build: build/release/cli/blume,
build/release/redis/blume_redis.so and build/release/distributed/blume-mpi link to the build under test,
and `blume` and `blume-mpi` on PATH are the tools. `blume` exits 1 to answer "no" (like grep), so the docs'
shell blocks fail on its status 2, every error of the tool, and on any other command's failure.

Servers: the docs name Redis's conventional addresses, 127.0.0.1:6379 for a server and 127.0.0.1:7000 for
a cluster. When given the module (and redis-server on PATH), the runner starts its own on free loopback
ports with tests/redis/server.py and puts their ports in the blocks: a server (started by the page's own
`redis-server ...` line where it has one, in the background, else before the first block that needs it;
`redis-cli` talks to it), and a cluster of three primaries and three replicas, every node loading the
module.

A block that needs what the test was not given (the tool, the bindings, the module and a redis-server,
mpirun and blume-mpi, the cluster client library, redis-py or xxhash for Python) is checked for syntax only,
and the summary says so. Set BLUME_DOCS_KEEP=1 to keep the page's directory.
"""

import argparse
import ast
import importlib.util
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tokenize

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
BLOCK_TIMEOUT = 600

SHELL = {"sh", "bash", "shell"}
CONSOLE = {"console"}
PYTHON = {"python", "python3", "py"}
CPP = {"cpp", "c++", "cxx"}
CMAKE = {"cmake"}
TEXT = {"text", "txt", "output"}

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
DIRECTIVE = re.compile(r"^\s*(?P<name>not run|test setup|same as):(?P<value>.*)$", re.S)


class Failure(Exception):
    pass


class Block:
    def __init__(self, page, line, lang, text, directives):
        self.page = page
        self.line = line  # of the opening fence, 1-based: the code starts on the next line
        self.lang = lang
        self.text = text
        self.not_run = directives.get("not run")
        self.setup = directives.get("test setup")
        self.same_as = directives.get("same as")
        self.setup_lines_before = directives.get("setup lines before", 0)

    def where(self):
        return f"{self.page}:{self.line}"


# ---- the page ----------------------------------------------------------------------------------------


def parse(path, shown):
    """The fenced blocks of a Markdown file, each with the directives of the comments right before it."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    blocks, pending, i = [], {}, 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("<!--"):
            end = i
            while "-->" not in lines[end]:
                end += 1
                if end == len(lines):
                    raise Failure(f"{shown}:{i + 1}: the comment is not closed")
            comment = "\n".join(lines[i:end + 1]).strip()
            match = DIRECTIVE.match(comment[4:comment.rindex("-->")])
            if match and match.group("name") == "test setup":
                value = match.group("value")
                pending["test setup"] = value.lstrip("\n").rstrip()
                pending["setup lines before"] = i + len(value) - len(value.lstrip("\n"))
            elif match:
                pending[match.group("name")] = match.group("value").strip()
            if match:
                pending["at"] = i + 1
            i = end + 1
            continue
        fence = FENCE.match(line)
        if fence:
            indent, mark = len(fence.group("indent")), fence.group("fence")
            closing = re.compile(r"^[ \t]*" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}[ \t]*$")
            end = i + 1
            while end < len(lines) and not closing.match(lines[end]):
                end += 1
            if end == len(lines):
                raise Failure(f"{shown}:{i + 1}: the code block is not closed")
            body = [text[indent:] if text[:indent].strip() == "" else text.lstrip() for text in lines[i + 1:end]]
            pending.pop("at", None)
            blocks.append(Block(shown, i + 1, fence.group("info").lower(), "\n".join(body) + "\n", pending))
            pending, i = {}, end + 1
            continue
        if line.strip() and pending:
            raise Failure(f"{shown}:{pending['at']}: a directive must come right before its code block")
        i += 1
    if pending:
        raise Failure(f"{shown}:{pending['at']}: a directive must come right before its code block")
    return blocks


def padded(lines_before, text):
    """`text` preceded by as many empty lines as precede it in the page, so that the line numbers bash,
    Python and the compiler report are the page's."""
    return "\n" * lines_before + text


# ---- what a block needs ------------------------------------------------------------------------------


def needs(block):
    text = block.text + (block.setup or "")
    need = set()
    if block.lang in SHELL | CONSOLE:
        if re.search(r"(^|[|;&(]|\$\(|\$ )\s*blume\s", text, re.M) or "cli/blume" in text:
            need.add("the blume tool")
        if re.search(r"redis-server|redis-cli|:6379\b", text):
            need.add("a Redis server")
        if re.search(r":7000\b", text):
            need.add("a Redis Cluster")
        if re.search(r"\bmpirun\b|blume-mpi", text):
            need.add("mpirun and blume-mpi")
        if re.search(r"\bimport blume\b", text):
            need.add("the Python bindings")
    elif block.lang in PYTHON:
        for module, what in (("blume", "the Python bindings"), ("redis", "redis-py"), ("xxhash", "xxhash")):
            if re.search(rf"^\s*(import|from)\s+{module}\b", text, re.M):
                need.add(what)
        if re.search(r"(:|port=)6379\b", text):
            need.add("a Redis server")
        if re.search(r"(:|port=)7000\b", text):
            need.add("a Redis Cluster")
    elif block.lang in CPP:
        if "blume/cluster/" in text:
            need.add("the cluster client library")
        if "blume/distributed/" in text:
            need.add("MPI")
    return need


def servers():
    """tests/redis/server.py, which starts the module's test servers."""
    if os.path.join(SOURCE, "tests", "redis") not in sys.path:
        sys.path.insert(0, os.path.join(SOURCE, "tests", "redis"))
    import server

    return server


# ---- the runner --------------------------------------------------------------------------------------


class Page:
    def __init__(self, args):
        self.args = args
        self.path = os.path.abspath(args.page)
        self.shown = os.path.relpath(self.path, SOURCE) if self.path.startswith(SOURCE + os.sep) else args.page
        self.tmp = tempfile.mkdtemp(prefix="blume-docs-")
        self.dir = os.path.join(self.tmp, "page")
        self.state = os.path.join(self.tmp, "state")
        self.bin = os.path.join(self.tmp, "bin")
        for d in (self.dir, self.state, self.bin):
            os.makedirs(d)
        self.counter = 0
        self.programs = 0
        self.server = None  # a server.RedisServer the runner started, or None
        self.server_port = None
        self.cluster = None
        self.python = None  # the Python driver process, and the pipes to it
        self.block_starts_server = False
        self.available = self._available()
        self._layout()

    # -- what the test was given --

    def _available(self):
        a = self.args
        have = set()
        if a.cli and os.path.exists(a.cli):
            have.add("the blume tool")
        if a.pythonpath:
            have.add("the Python bindings")
        for module, what in (("redis", "redis-py"), ("xxhash", "xxhash")):
            if subprocess.run([a.python, "-c", f"import {module}"], capture_output=True).returncode == 0:
                have.add(what)
        redis_server = os.environ.get("BLUME_REDIS_SERVER") or shutil.which("redis-server")
        redis_cli = os.environ.get("BLUME_REDIS_CLI") or shutil.which("redis-cli")
        # tests/redis/server.py drives the servers with redis-py.
        have_redis_py = importlib.util.find_spec("redis") is not None
        if a.module and redis_server and redis_cli and have_redis_py:
            have |= {"a Redis server", "a Redis Cluster"}
        if a.mpi_tool and a.mpirun:
            have.add("mpirun and blume-mpi")
        if a.cluster_lib:
            have.add("the cluster client library")
        return have

    def _layout(self):
        """build/release/... in the page's directory, and the tools on PATH."""
        links = {"cli/blume": self.args.cli, "redis/blume_redis.so": self.args.module,
                 "distributed/blume-mpi": self.args.mpi_tool}
        for name, target in links.items():
            if target:
                link = os.path.join(self.dir, "build", "release", name)
                os.makedirs(os.path.dirname(link), exist_ok=True)
                os.symlink(os.path.abspath(target), link)
        for target in (self.args.cli, self.args.mpi_tool):
            if target:
                os.symlink(os.path.abspath(target), os.path.join(self.bin, os.path.basename(target)))
        with open(os.path.join(self.state, "prelude.sh"), "w") as f:
            f.write(PRELUDE)

    def environment(self):
        env = dict(os.environ)
        env["PATH"] = self.bin + os.pathsep + env.get("PATH", "")
        if self.args.pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [self.args.pythonpath, env.get("PYTHONPATH")]))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["BLUME_DOCS_PAGE"] = self.shown
        env["BLUME_DOCS_STATE"] = self.state
        if self.server_port:
            env["BLUME_DOCS_REDIS_PORT"] = str(self.server_port)
        return env

    # -- servers --

    def prepare_servers(self, blocks, runnable):
        """Ports for the page's server, and which blocks start it themselves."""
        if not any("a Redis server" in needs(b) for b in runnable):
            return
        self.server_port = servers().free_port()
        # A block that runs `redis-server ...` starts the page's server; otherwise the runner does.
        self.block_starts_server = any(re.search(r"^\s*redis-server\s", b.text, re.M) for b in runnable
                                       if b.lang in SHELL | CONSOLE)

    def ensure_servers(self, need):
        if "a Redis Cluster" in need and self.cluster is None:
            started = time.monotonic()
            self.cluster = servers().Cluster(self.args.module, masters=3, replicas=1, timeout=60.0).start()
            print(f"  (a Redis Cluster of 3 primaries and 3 replicas on loopback, from port "
                  f"{self.cluster.nodes[0].port}: {time.monotonic() - started:.1f} s to start)", flush=True)
        if "a Redis server" in need and self.server is None and not self.block_starts_server:
            self.server = servers().RedisServer(self.args.module, port=self.server_port).start()

    def addresses(self, text, need):
        if "a Redis Cluster" in need and self.cluster:
            port = self.cluster.nodes[0].port
            text = re.sub(r"\b(127\.0\.0\.1|localhost):7000\b", f"127.0.0.1:{port}", text)
            text = re.sub(r"\bport=7000\b", f"port={port}", text)
        if "a Redis server" in need and self.server_port:
            text = re.sub(r"\b(127\.0\.0\.1|localhost):6379\b", f"127.0.0.1:{self.server_port}", text)
            text = re.sub(r"\bport=6379\b", f"port={self.server_port}", text)
        return text

    def close(self):
        if self.python:
            self.python_control.close()
            self.python.wait(10)
        pids = os.path.join(self.state, "pids")
        if os.path.exists(pids):
            for pid in open(pids).read().split():
                try:
                    os.kill(int(pid), signal.SIGTERM)
                except ProcessLookupError:
                    pass
        errors = []
        for what in (self.server, self.cluster):
            if what:
                try:
                    what.stop()
                except Exception as error:  # a server that crashed under a block fails the page
                    errors.append(error)
        if os.environ.get("BLUME_DOCS_KEEP"):
            print(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if errors:
            raise Failure(f"a server failed: {errors[0]}")

    def file(self, suffix, text):
        self.counter += 1
        path = os.path.join(self.state, f"block{self.counter}{suffix}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    # -- shell --

    def shell_syntax(self, block, text):
        path = self.file(".sh", padded(block.line, text))
        result = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
        if result.returncode != 0:
            raise Failure(f"{block.where()}: bash -n:\n{result.stderr.replace(path, self.shown)}")

    def shell(self, block, text, capture=False, lines_before=None):
        path = self.file(".sh", padded(block.line if lines_before is None else lines_before, text))
        env = self.environment()
        env["BLUME_DOCS_SCRIPT"] = path
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", 'source "$1" && source "$2"', "bash",
             os.path.join(self.state, "prelude.sh"), path],
            cwd=self.dir, env=env, stdin=subprocess.DEVNULL, timeout=BLOCK_TIMEOUT,
            stdout=subprocess.PIPE if capture else None, text=True)
        if capture:
            sys.stdout.write(result.stdout)
        sys.stdout.flush()
        if result.returncode != 0:
            what = "the block" if lines_before is None else "its test setup"
            raise Failure(f"{block.where()}: {what} exited with status {result.returncode}")
        return result.stdout

    def console(self, block, text):
        commands, shown, continued = [], [], False
        for line in text.splitlines():
            if continued or line.startswith("$ "):
                commands.append(line if continued else line[2:])
                continued = line.endswith("\\")
            elif line.strip():
                shown.append(line)
        return "\n".join(commands) + "\n", shown

    # -- Python --

    def run_python(self, block, text, lines_before=None):
        if self.python is None:
            control_r, control_w = os.pipe()
            status_r, status_w = os.pipe()
            self.python = subprocess.Popen(
                [self.args.python, os.path.abspath(__file__), "--python-driver", str(control_r), str(status_w)],
                cwd=self.dir, env=self.environment(), stdin=subprocess.DEVNULL, pass_fds=(control_r, status_w))
            os.close(control_r)
            os.close(status_w)
            self.python_control = os.fdopen(control_w, "w")
            self.python_status = os.fdopen(status_r)
        path = self.file(".py", padded(block.line if lines_before is None else lines_before, text))
        self.python_control.write(f"{self.path}\t{path}\n")
        self.python_control.flush()
        status = self.python_status.readline().strip()
        if status != "ok":
            raise Failure(f"{block.where()}: the block raised (traceback above)" if status else
                          f"{block.where()}: Python exited with status {self.python.wait()}")

    def python_syntax(self, block, text):
        try:
            compile(padded(block.line, text), self.path, "exec")
        except SyntaxError as error:
            raise Failure(f"{block.where()}: {error}")

    # -- C++ --

    def cpp(self, block, link):
        text = block.text
        fragment = not re.search(r"\bint\s+main\s*\(", text)
        lines = text.splitlines()
        if fragment:
            # Includes at file scope, the rest as main's body; each at its line of the page.
            head, body = [], []
            for n, line in enumerate(lines, start=block.line + 1):
                if line.lstrip().startswith("#include"):
                    head.append(f'#line {n} "{self.shown}"\n{line}')
                    body.append("")
                else:
                    body.append(line)
            source = "\n".join(head) + f'\nint main() {{\n#line {block.line + 1} "{self.shown}"\n' + \
                "\n".join(body) + "\n}\n"
        else:
            source = f'#line {block.line + 1} "{self.shown}"\n' + text
        # At the same path every run, so that a compiler launcher (ccache) finds its earlier results.
        self.programs += 1
        os.makedirs(self.args.work or self.state, exist_ok=True)
        path = os.path.join(self.args.work or self.state, f"program{self.programs}.cpp")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        a = self.args
        command = shlex.split(a.launcher or "") + [a.cxx, "-std=c++20", *shlex.split(a.cxxflags or "")]
        if fragment:
            # A fragment names results the reader would go on to use.
            command += ["-Wno-unused-variable", "-Wno-unused-but-set-variable"]
        command += [f"-I{d}" for d in a.include]
        libraries = []
        if "the cluster client library" in needs(block):
            command.append(f"-I{os.path.join(SOURCE, 'cluster', 'include')}")
            if link:
                libraries += [a.cluster_lib, *a.cluster_link]
        executable = path[:-4]
        # Compiled and linked in two steps: a launcher caches compilations only.
        steps = [command + ["-c", path, "-o", executable + ".o"]]
        if link:
            steps.append([a.cxx, *shlex.split(a.cxxflags or ""), executable + ".o", "-o", executable, *libraries,
                          a.xxhash or "-lxxhash", "-pthread"])
        started = time.monotonic()
        for step in steps:
            result = subprocess.run(step, cwd=os.path.dirname(path), capture_output=True, text=True,
                                    timeout=BLOCK_TIMEOUT)
            if result.returncode != 0:
                raise Failure(f"{block.where()}: does not compile:\n{shlex.join(step)}\n{result.stdout}{result.stderr}")
        print(f"  compiled in {time.monotonic() - started:.1f} s", flush=True)
        return executable if link and not fragment else None


# ---- one page ----------------------------------------------------------------------------------------


def run_page(args):
    page = Page(args)
    counts = {"run": 0, "compiled": 0, "checked": 0, "not run": 0, "syntax": 0, "not code": 0}
    skipped = []
    try:
        blocks = parse(page.path, page.shown)
        for block in blocks:
            known = SHELL | CONSOLE | PYTHON | CPP | CMAKE | TEXT
            if block.lang not in known and not block.not_run:
                raise Failure(f"{block.where()}: a code block must say what it is (```sh, ```python, ```cpp, "
                              f"```text, ...), not {block.lang or 'nothing'!r}")
            if block.lang in CMAKE and not block.same_as and not block.not_run:
                raise Failure(f"{block.where()}: a ```cmake block needs <!-- same as: FILE --> (a file a test builds)")
            if block.setup is not None and block.lang not in SHELL | CONSOLE | PYTHON:
                raise Failure(f"{block.where()}: test setup is for shell and Python blocks")
        runnable = [b for b in blocks if not b.not_run and not (needs(b) - page.available)]
        page.prepare_servers(blocks, runnable)

        for block in blocks:
            need = needs(block)
            missing = need - page.available
            label = f"{block.where()} ({block.lang or 'no info string'})"
            started = time.monotonic()
            if block.lang in TEXT:
                counts["not code"] += 1
                continue
            if block.not_run or missing:
                why = f"not run: {block.not_run}" if block.not_run else "needs " + ", ".join(sorted(missing))
                print(f"{label}: syntax only ({why})", flush=True)
                skipped.append(f"{block.where()}: {why}")
                counts["not run" if block.not_run else "syntax"] += 1
                if block.lang in SHELL:
                    page.shell_syntax(block, block.text)
                elif block.lang in CONSOLE:
                    page.shell_syntax(block, page.console(block, block.text)[0])
                elif block.lang in PYTHON:
                    page.python_syntax(block, block.text)
                elif block.lang in CPP and not block.not_run and missing <= {"the cluster client library"}:
                    page.cpp(block, link=False)  # its headers are in the source tree
                continue
            print(f"{label}:", flush=True)
            page.ensure_servers(need)
            if block.lang in CMAKE:
                check_same_as(block)
                counts["checked"] += 1
            elif block.lang in SHELL | CONSOLE:
                text = page.addresses(block.text, need)
                setup = page.addresses(block.setup, need) if block.setup else None
                if block.lang in CONSOLE:
                    text, shown = page.console(block, text)
                page.shell_syntax(block, text)
                if setup:
                    page.shell(block, setup, lines_before=block.setup_lines_before)
                output = page.shell(block, text, capture=block.lang in CONSOLE)
                if block.lang in CONSOLE:
                    compare_console(block, shown, output)
                counts["run"] += 1
            elif block.lang in PYTHON:
                page.python_syntax(block, block.text)
                if block.setup:
                    page.run_python(block, page.addresses(block.setup, need), block.setup_lines_before)
                page.run_python(block, page.addresses(block.text, need))
                counts["run"] += 1
            elif block.lang in CPP:
                executable = page.cpp(block, link=True)
                if executable:
                    result = subprocess.run([executable], cwd=page.dir, env=page.environment(),
                                            stdin=subprocess.DEVNULL, timeout=BLOCK_TIMEOUT)
                    if result.returncode != 0:
                        raise Failure(f"{block.where()}: the program exited with status {result.returncode}")
                    counts["run"] += 1
                else:
                    counts["compiled"] += 1
            print(f"  ok ({time.monotonic() - started:.1f} s)", flush=True)
    finally:
        page.close()
    total = sum(counts.values())
    print(f"{page.shown}: {total} fenced blocks: {counts['run']} run, {counts['compiled']} compiled and linked, "
          f"{counts['checked']} matched to a tested file, {counts['not run']} marked not run (syntax checked), "
          f"{counts['syntax']} checked for syntax only for want of what they need, {counts['not code']} output")
    for line in skipped:
        print(f"  {line}")


def check_same_as(block):
    """The block is the named file's code: the same lines once comments and blank lines are gone."""
    target = os.path.join(SOURCE, block.same_as.split()[0])
    if not os.path.isfile(target):
        raise Failure(f"{block.where()}: same as {block.same_as}: no such file")

    def code(text):
        return [line.rstrip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]

    with open(target, encoding="utf-8") as f:
        expected = code(f.read())
    if code(block.text) != expected:
        raise Failure(f"{block.where()}: differs from {block.same_as}:\n" + "\n".join(expected))


def compare_console(block, shown, output):
    have = {" ".join(line.split()) for line in output.splitlines()}
    for line in shown:
        if "..." not in line and " ".join(line.split()) not in have:
            raise Failure(f"{block.where()}: the block shows {line!r}, which the commands did not print")


# ---- the Python driver (a child process: the build's interpreter, one namespace per page) ------------

VALUE_LEAD = re.compile(r"(True|False|None|-?\d|[\[{('\"]|[A-Za-z_][\w.]*\()")


def shown_value(comment):
    """The value a comment starts with (`True: maybe present` -> `True`), or None for prose."""
    if not comment or not VALUE_LEAD.match(comment):
        return None
    depth, quote = 0, None
    for i, c in enumerate(comment):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and (c == ":" or c.isspace()):
            return comment[:i]
    return comment


def check_value(value, shown, where):
    actual = re.sub(r"\s+", "", repr(value))
    expected = re.sub(r"\s+", "", shown)
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    if not re.fullmatch(pattern, actual, re.S):
        raise AssertionError(f"{where}: the page shows {shown}, but the value is {value!r}")
    return value


def with_value_checks(source, filename):
    tree = ast.parse(source, filename)
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string[1:].strip()
    for statement in tree.body:
        if isinstance(statement, ast.Expr):
            shown = shown_value(comments.get(statement.end_lineno))
            if shown is not None:
                where = f"{os.path.basename(filename)}:{statement.lineno}"
                statement.value = ast.Call(ast.Name("__docs_check__", ast.Load()),
                                           [statement.value, ast.Constant(shown), ast.Constant(where)], [])
    return ast.fix_missing_locations(tree)


def python_driver(control_fd, status_fd):
    import traceback

    namespace = {"__name__": "__main__", "__docs_check__": check_value}
    status = os.fdopen(status_fd, "w")
    with os.fdopen(control_fd) as control:
        for line in control:
            filename, path = line.rstrip("\n").split("\t")
            with open(path, encoding="utf-8") as f:
                source = f.read()
            try:
                exec(compile(with_value_checks(source, filename), filename, "exec"), namespace)
                outcome = "ok"
            except BaseException:  # the block's failure, reported here; the runner fails the page
                traceback.print_exc()
                outcome = "failed"
            sys.stdout.flush()
            sys.stderr.flush()
            status.write(outcome + "\n")
            status.flush()


# Sourced before every shell block of a page.
PRELUDE = r"""
set -eE -o pipefail
trap '__docs_status=$?; echo "$BLUME_DOCS_PAGE:$LINENO: exit status $__docs_status:" \
  "$(sed -n "${LINENO}p" "$BLUME_DOCS_SCRIPT" | sed "s/^ *//")" >&2' ERR
# The tool answers "no" with exit status 1 (query, erase, redis exists); its errors are status 2.
blume() { command blume "$@" || { local status=$?; [ "$status" -eq 1 ] || return "$status"; }; }
if [ -n "${BLUME_DOCS_REDIS_PORT:-}" ]; then
  redis-cli() { command redis-cli -p "$BLUME_DOCS_REDIS_PORT" "$@"; }
  # A reader runs the server in a terminal of its own; here it runs in the background, on the test's port.
  redis-server() {
    command redis-server "$@" --port "$BLUME_DOCS_REDIS_PORT" --bind 127.0.0.1 --save "" --daemonize no \
      --dir "$BLUME_DOCS_STATE" --logfile "$BLUME_DOCS_STATE/redis-server.log" \
      </dev/null >>"$BLUME_DOCS_STATE/redis-server.out" 2>&1 &
    local pid=$! tries=0
    echo "$pid" >>"$BLUME_DOCS_STATE/pids"
    until command redis-cli -p "$BLUME_DOCS_REDIS_PORT" ping 2>/dev/null | grep -q PONG; do
      if ! kill -0 "$pid" 2>/dev/null || [ $((tries += 1)) -gt 400 ]; then
        cat "$BLUME_DOCS_STATE/redis-server.out" "$BLUME_DOCS_STATE/redis-server.log" >&2 2>/dev/null || true
        echo "redis-server did not start" >&2
        return 1
      fi
      sleep 0.05
    done
  }
fi
"""


def main():
    if sys.argv[1:2] == ["--python-driver"]:
        python_driver(int(sys.argv[2]), int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page")
    parser.add_argument("--cli", help="the blume tool")
    parser.add_argument("--python", default=sys.executable, help="the interpreter the bindings are built for")
    parser.add_argument("--pythonpath", help="the directory holding the built package blume")
    parser.add_argument("--module", help="the Redis module")
    parser.add_argument("--mpi-tool", help="blume-mpi")
    parser.add_argument("--mpirun")
    parser.add_argument("--cluster-lib", help="the cluster client library (libblume_cluster.a)")
    parser.add_argument("--cluster-link", action="append", default=[], help="what it links (hiredis)")
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("--launcher", help="the compiler launcher (ccache)")
    parser.add_argument("--cxxflags", help="the build's flags, one string")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--xxhash", help="the xxHash library")
    parser.add_argument("--work", help="where the C++ blocks are compiled (default: the page's temporary directory)")
    args = parser.parse_args()
    # Blocks run and compile in directories of their own.
    for name in ("cli", "pythonpath", "module", "mpi_tool", "cluster_lib", "work"):
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    args.include = [os.path.abspath(d) for d in args.include]
    try:
        run_page(args)
    except (Failure, subprocess.TimeoutExpired) as error:
        print(f"FAILED: {error}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
