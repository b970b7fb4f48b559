"""numba anchors for gen_sum and gen_pipeline: `python numba_anchors.py WORKLOAD`.

Compilation is excluded from the timing (one warm-up call on a small input).
"""
import sys
import time

from numba import njit


@njit
def rng(lo, hi):
    i = lo
    while i < hi:
        yield i
        i += 1


@njit
def gen_sum(n):
    s = 0
    for v in rng(0, n):
        s += v
    return s, n


@njit
def map3(lo, hi):
    for v in rng(lo, hi):
        yield v * 3


@njit
def evens(lo, hi):
    for v in map3(lo, hi):
        if v % 2 == 0:
            yield v


@njit
def take(lo, hi, n):
    taken = 0
    for v in evens(lo, hi):
        if taken >= n:
            break
        yield v
        taken += 1


@njit
def gen_pipeline(n):
    s = 0
    for v in take(0, n, n // 4):
        s += v
    return s, n // 4


SIZES = {"gen_sum": 100_000_000, "gen_pipeline": 50_000_000}

if __name__ == "__main__":
    name = sys.argv[1]
    fn = globals()[name]
    fn(1000)
    start = time.perf_counter_ns()
    checksum, items = fn(SIZES[name])
    elapsed = time.perf_counter_ns() - start
    print("checksum", checksum)
    print("ns_per_item", elapsed / items)
