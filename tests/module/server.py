"""A real redis-server (Debian's package) with bloomkit's module loaded, on a
free loopback port in a scratch directory: started, restarted from its own
RDB or AOF, made a replica, stopped."""
import os
import shutil
import socket
import subprocess
import time

import redis

MODULE = os.environ.get("BLOOMKIT_MODULE", "build/bloomkit-redis-module.so")
WRAP = os.environ.get("BLOOMKIT_MODULE_WRAP", "")  # e.g. "valgrind --error-exitcode=99 ..."
PRELOAD = os.environ.get("BLOOMKIT_MODULE_PRELOAD", "")  # a sanitizer's runtime (check-module-asan)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_port() -> int:
    """A free port P whose cluster bus port P + 10000 is free too (a cluster
    node binds both, and refuses a P above 55535)."""
    for _ in range(200):
        p = free_port()
        if p > 55535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p + 10000))
            except OSError:
                continue
        return p
    raise RuntimeError("no free port pair for a cluster node")


class Server:
    def __init__(self, workdir: str, args=(), module_args=(), port=None, conf=None):
        self.dir = workdir
        # a config file the server reads first, which loads the module (CONFIG
        # REWRITE writes it)
        self.conf = conf
        os.makedirs(workdir, exist_ok=True)
        self.args = list(args)
        self.module_args = list(module_args)
        self.port = port or free_port()
        self.proc = None
        self.start()

    def command(self):
        exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        return (WRAP.split() if WRAP else []) + [exe] + ([self.conf] if self.conf else []) + [
            "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
            "--save", "", "--appendonly", "no", "--logfile", os.path.join(self.dir, "log"),
            *([] if self.conf else ["--loadmodule", os.path.abspath(MODULE), *self.module_args])
        ] + self.args

    def start(self):
        env = dict(os.environ)
        if PRELOAD:
            env["LD_PRELOAD"] = PRELOAD
        with open(os.path.join(self.dir, "stderr"), "ab") as err:
            self.proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=err,
                                         env=env)
        deadline = time.time() + (120 if WRAP else 20)
        while True:
            try:
                r = self.client()
                r.ping()
                if r.info("persistence").get("loading", 0) == 0:
                    return
            except (redis.ConnectionError, redis.BusyLoadingError):
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("redis-server did not start:\n" + self.log())
            time.sleep(0.05)

    def client(self, **kw) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=120, **kw)

    def log(self) -> str:
        try:
            with open(os.path.join(self.dir, "log"), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def sanitizer_report(self) -> str:
        """What a sanitizer printed (the server's stderr), or ''."""
        try:
            with open(os.path.join(self.dir, "stderr"), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        return text if ("Sanitizer" in text or "runtime error" in text) else ""

    def stop(self) -> int:
        """Stop (SHUTDOWN NOSAVE); the exit status (valgrind's error code under WRAP)."""
        if self.proc and self.proc.poll() is None:
            try:
                self.client().shutdown(nosave=True)
            except redis.ConnectionError:
                pass
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else 0

    def restart(self, extra=()):
        self.stop()
        self.args += list(extra)
        self.start()
