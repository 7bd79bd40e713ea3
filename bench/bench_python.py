"""bench_python.py - the Python binding's speed against Python's own set and
the pure-Python filter of Debian's python3-flor, measured in one run on the
same keys (synthetic crawler URLs from gen_urls, as bytes and as str).

    python3 bench/bench_python.py GEN_URLS [N] [--check] [--reps R]

Each figure is the best of R runs (default 5), in ns per key; the loops are
written alike for every side (a bound method in a local, `for k in keys`).
A set is made inside the time (as set.add grows it); a filter is made
before it (sized once, as a program makes it), each run a new one.
--check exits 1 when a target of docs/performance.md ("Python") is missed.
"""
import argparse
import gc
import subprocess
import sys
import time

import bloomkit
from bloomkit import BloomFilter

TARGETS = [  # (row, measured against, most allowed ratio)
    ("f.add(key)", "set.add(key)", 1.2),
    ("key in f", "key in set", 2.0),
    ("f.update(keys)", "set.add(key)", 0.6),
    ("f.add_many(keys)", "set.add(key)", 0.6),
    ("f.contains_many(keys)", "set.add(key)", 0.6),
    ("f.add(str key)", "f.add(key)", 1.3),
]
FLOR_MIN = 50.0  # bloomkit's f.add at least this many times faster than flor's add
# The configurations measured (docs/python.md, "Speed"): the defaults (keyed
# SipHash-2-4, classic layout), what most users run, and the fast hash with
# the cache-line layout (`--config "fpr=0.01 hash=xxh3 layout=blocked"`).
DEFAULTS = "fpr=0.01"


def best(fn, n, reps, setup=None):
    """fn's best time of reps runs, in ns per key; setup's result (a new,
    empty filter: made once, as a program makes it) is fn's argument and is
    made outside the time."""
    out = float("inf")
    for _ in range(reps):
        arg = setup() if setup else None
        gc.collect()
        t0 = time.perf_counter()
        fn(arg) if setup else fn()
        out = min(out, time.perf_counter() - t0)
    return out / n * 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gen_urls")
    ap.add_argument("n", type=int, nargs="?", default=400000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--config", default=DEFAULTS,
                    help="config text beside capacity=N (default: %(default)s)")
    a = ap.parse_args()
    raw = subprocess.run([a.gen_urls, str(a.n), "1.0"], check=True, capture_output=True).stdout
    keys = raw.split(b"\n")[: a.n]
    skeys = [k.decode() for k in keys]
    n = len(keys)
    cfg = f"capacity={n} {a.config}"
    probe = BloomFilter(cfg)
    probe.update(keys)
    S = set(keys)

    def set_add():
        s = set()
        add = s.add
        for k in keys:
            add(k)

    def set_in():
        for k in keys:
            k in S

    def fresh():
        return BloomFilter(cfg)

    def f_add(ks):
        def run(f):
            add = f.add
            for k in ks:
                add(k)
        return run

    def f_in():
        f = probe
        for k in keys:
            k in f

    def f_call(method):
        def run(f):
            getattr(f, method)(keys)
        return run

    def f_contains_many():
        probe.contains_many(keys)

    def call_floor():
        f = len  # a C function that does no work: the loop and one call
        for k in keys:
            f(k)

    rows = {}
    for _ in range(2):  # interleaved twice: the best of both passes
        for name, fn, setup in (("set.add(key)", set_add, None), ("key in set", set_in, None),
                                ("len(key) (a call)", call_floor, None),
                                ("f.add(key)", f_add(keys), fresh), ("key in f", f_in, None),
                                ("f.update(keys)", f_call("update"), fresh),
                                ("f.add_many(keys)", f_call("add_many"), fresh),
                                ("f.contains_many(keys)", f_contains_many, None),
                                ("f.add(str key)", f_add(skeys), fresh)):
            t = best(fn, n, a.reps, setup)
            rows[name] = min(rows.get(name, t), t)
    try:
        import flor
    except ImportError:
        flor = None
    if flor is not None:
        def flor_add():
            b = flor.BloomFilter(n=n, p=0.01)
            add = b.add
            for k in keys[: n // 20]:  # a twentieth: flor is slow
                add(k)
        rows["flor add(key)"] = best(flor_add, n // 20, max(1, a.reps // 2))

    print(f"bench_python: {n} URLs, bloomkit {bloomkit.__version__} ({cfg}), "
          f"{bloomkit._native.get_threads()} threads for batches, Python {sys.version.split()[0]}")
    for name, t in rows.items():
        print(f"  {name:24s} {t:8.1f} ns/key")
    missed = []
    for row, peer, most in TARGETS:
        ratio = rows[row] / rows[peer]
        ok = ratio <= most
        missed += [] if ok else [row]
        print(f"  {row:24s} / {peer:14s} {ratio:5.2f}x  (target <= {most}x) {'ok' if ok else 'MISSED'}")
    if flor is not None:
        speedup = rows["flor add(key)"] / rows["f.add(key)"]
        ok = speedup >= FLOR_MIN
        missed += [] if ok else ["flor"]
        print(f"  {'flor add / f.add':24s} {'':17s}{speedup:6.1f}x faster (target >= {FLOR_MIN}x) "
              f"{'ok' if ok else 'MISSED'}")
    else:
        print("  flor: python3-flor is not installed (Debian: apt-get install python3-flor): not measured")
    if a.check and missed:
        print("bench_python: missed: " + ", ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
