"""A scalar call from Python: `python py_call.py VARIANT`.

`s = add(s, i)` for i in range(10^6), where `add` is a PyCoro export
(`pycoro`), an @njit function (`numba`) or a Python function (`python`,
the floor of any call from a Python loop). Compilation and the first call
are excluded; prints `checksum` and `ns_per_item` (per call, loop included).
"""
import sys
import time

from hosted import chosen, numba_jit, pycoro_function, report

N = 1_000_000

PYCORO_SOURCE = "fn add(a: i64, b: i64) -> i64 { return a + b; }"


def python_add(a, b):
    return a + b


VARIANTS = {
    "pycoro": lambda: pycoro_function(PYCORO_SOURCE, "add"),
    "numba": lambda: numba_jit(python_add),
    "python": lambda: python_add,
}


def main() -> None:
    add = chosen(VARIANTS, sys.argv[1])
    assert add(1, 2) == 3   # compiles, warms up
    start = time.perf_counter_ns()
    s = 0
    for i in range(N):
        s = add(s, i)
    elapsed = time.perf_counter_ns() - start
    report(s, elapsed, N)


if __name__ == "__main__":
    main()
