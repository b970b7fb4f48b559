"""Python iterating range(0, 10^7) through a generator: `python py_iter.py VARIANT`.

VARIANT is `pycoro` (a PyCoro `Generator<i64>` from pycoro.compile), `cpython`
(a Python generator), `numba` (an @njit generator) or `range` (Python's own
range, the limit). The consumer is the same Python loop for all of them, so
the differences are the cost of producing each value. Compilation and the
first call are excluded from the timing; prints `checksum` and `ns_per_item`
as the other workloads do.
"""
import sys

from hosted import report, sum_values

N = 10_000_000

PYCORO_SOURCE = "fn numbers(lo: i64, hi: i64) -> Generator<i64> { for i in lo..hi { yield i; } }"


def cpython_numbers(lo, hi):
    for i in range(lo, hi):
        yield i


def variant(name: str):
    if name == "pycoro":
        import pycoro
        return pycoro.compile(PYCORO_SOURCE).numbers
    if name == "cpython":
        return cpython_numbers
    if name == "numba":
        from numba import njit
        return njit(cpython_numbers)
    if name == "range":
        return range
    raise SystemExit(f"unknown variant {name!r}")


def main() -> None:
    report(*sum_values(variant(sys.argv[1]), N), N)


if __name__ == "__main__":
    main()
