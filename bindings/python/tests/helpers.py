"""Shared helpers of the Python tests: a scratch directory, the test site, a
crawl run, and a real redis-server on a free loopback port."""
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import bloomkit

HERE = os.path.dirname(os.path.abspath(__file__))
# where the bloomkit under test was imported from (a tree's build/python, or
# an installation): children import the same one
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(bloomkit.__file__)))


def child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class Site:
    """The test site (site_server.py) in a child process; its access log."""

    def __init__(self, workdir: str, pages: int = 5000):
        self.pages = pages
        self.log = os.path.join(workdir, "access.log")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "site_server.py"), self.log, str(pages)],
            stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.base = "http://127.0.0.1:%d" % self.port

    def url(self, i: int) -> str:
        return "%s/p/%d" % (self.base, i)

    def fetches(self) -> collections.Counter:
        """How many times each page was fetched."""
        with open(self.log, encoding="ascii") as f:
            return collections.Counter(line.strip() for line in f if line.startswith("/p/"))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


def crawl(workdir: str, tag: str, starts, settings: dict, background: bool = False,
          barrier: str = None, now_ms: int = None):
    """Run crawl.py; returns its stats (dict), or the Popen when background.
    now_ms: the time the crawl's window filters read (ms since the epoch),
    not the system's."""
    stats = os.path.join(workdir, "stats-%s.json" % tag)
    args = [sys.executable, os.path.join(HERE, "crawl.py"), stats] + list(starts)
    if barrier:
        args += ["--barrier", barrier]
    if now_ms is not None:
        args += ["--now", str(now_ms)]
    for k, v in settings.items():
        args += ["-s", "%s=%s" % (k, v)]
    logf = open(os.path.join(workdir, "crawl-%s.log" % tag), "w")
    proc = subprocess.Popen(args, env=child_env(), stdout=logf, stderr=subprocess.STDOUT)
    logf.close()
    if background:
        proc.stats_path = stats
        return proc
    return finish(proc, stats, workdir, tag)


def release(barrier: str, procs) -> None:
    """Wait until every crawler in procs is ready at the barrier (or one has
    died: finish() reports it), then let them all go at once."""
    deadline = time.monotonic() + 120
    d, base = os.path.split(barrier)
    while sum(f.startswith(base + ".ready-") for f in os.listdir(d)) < len(procs):
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    open(barrier, "w").close()


def finish(proc, stats_path: str, workdir: str, tag: str) -> dict:
    rc = proc.wait(timeout=600)
    if rc != 0:
        with open(os.path.join(workdir, "crawl-%s.log" % tag)) as f:
            raise AssertionError("crawl %s exited %d:\n%s" % (tag, rc, f.read()[-4000:]))
    with open(stats_path, encoding="utf-8") as f:
        return json.load(f)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A redis-server (Debian's package) on a free loopback port, no persistence."""

    def __init__(self, workdir: str):
        exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.port = free_port()
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", workdir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:  # ready when it answers PING
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def url(self, name: str) -> str:
        return "redis://127.0.0.1:%d/%s" % (self.port, name)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def have_redis() -> bool:
    """A redis-server to start, and a binding built with Redis support (hiredis)."""
    if not bloomkit._native.HAVE_REDIS:
        return False
    return shutil.which("redis-server") is not None or os.path.exists("/usr/bin/redis-server")


def scratch() -> str:
    return tempfile.mkdtemp(prefix="bloomkit-py-")


def redis_keys(port: int, db: int, pattern: str) -> list:
    """KEYS pattern in database db of the server on 127.0.0.1:port (a tiny
    RESP exchange: the tests need no Redis client package)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        f = s.makefile("rb")
        s.sendall(b"SELECT %d\r\nKEYS %s\r\n" % (db, pattern.encode()))
        if not f.readline().startswith(b"+OK"):
            raise RuntimeError("SELECT failed")
        n = int(f.readline()[1:])
        keys = []
        for _ in range(max(n, 0)):
            size = int(f.readline()[1:])
            keys.append(f.read(size + 2)[:-2].decode())
        return keys
