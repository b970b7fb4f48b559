"""Python iterating range(0, 10^7) through a generator: `python py_iter.py VARIANT`.

VARIANT is `pycoro` (a PyCoro `Generator<i64>` from pycoro.compile), `cpython`
(a Python generator), `numba` (an @njit generator) or `range` (Python's own
range, the limit). The consumer is the same Python loop for all of them, so
the differences are the cost of producing each value. Compilation and the
first call are excluded from the timing; prints `checksum` and `ns_per_item`
as the other workloads do.
"""
import sys

from hosted import NUMBERS, chosen, numba_jit, numbers, pycoro_function, report, sum_values

N = 10_000_000

VARIANTS = {
    "pycoro": lambda: pycoro_function(NUMBERS, "numbers"),
    "cpython": lambda: numbers,
    "numba": lambda: numba_jit(numbers),
    "range": lambda: range,
}


def main() -> None:
    report(*sum_values(chosen(VARIANTS, sys.argv[1]), N), N)


if __name__ == "__main__":
    main()
