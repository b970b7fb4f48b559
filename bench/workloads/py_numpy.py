"""A generator's values into a NumPy array: `python py_numpy.py VARIANT`.

`pycoro`: `numbers(0, N).to_numpy()` of the PyCoro generator; `arange`:
`np.arange(0, N)` (the limit: the same array made by NumPy); `cpython`:
`np.fromiter` over the same Python generator. N = 10^6, best of 20 runs
(each run allocates a new array, as a user's call would). Prints `checksum`
and `ns_per_item`.
"""
import sys
import time

import numpy as np

from hosted import NUMBERS, chosen, numbers, pycoro_function, report

N = 1_000_000


def pycoro_to_numpy():
    made = pycoro_function(NUMBERS, "numbers")
    return lambda n: made(0, n).to_numpy()


VARIANTS = {
    "pycoro": pycoro_to_numpy,
    "arange": lambda: lambda n: np.arange(0, n, dtype=np.int64),
    "cpython": lambda: lambda n: np.fromiter(numbers(0, n), np.int64),
}


def main() -> None:
    make = chosen(VARIANTS, sys.argv[1])
    assert make(5).tolist() == [0, 1, 2, 3, 4]   # compiles, warms up
    best = None
    for _ in range(20 if sys.argv[1] != "cpython" else 3):
        start = time.perf_counter_ns()
        values = make(N)
        elapsed = time.perf_counter_ns() - start
        best = elapsed if best is None else min(best, elapsed)
        assert values.dtype == np.int64 and len(values) == N
    report(int(values.sum()), best, N)


if __name__ == "__main__":
    main()
