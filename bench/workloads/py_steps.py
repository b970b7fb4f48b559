"""Python iterating a generator that cannot be run ahead: `python py_steps.py VARIANT`.

The generator counts the values it makes in a mutable global, so pycoro runs
it one step per value Python asks for (docs/embedding.md, batching). VARIANT
is `pycoro` (a PyCoro `Generator<i64>`), `cpython` (the same Python
generator) or `numba` (an @njit generator, which has no global to count in
but is one native call per value too). The consumer is the same Python loop
for all; prints `checksum` and `ns_per_item`.
"""
import sys

from hosted import chosen, numba_jit, numbers, pycoro_function, report, sum_values

N = 1_000_000

PYCORO_SOURCE = """
var made: i64 = 0;
fn numbers(lo: i64, hi: i64) -> Generator<i64> { for i in lo..hi { made += 1; yield i; } }
"""

made = 0


def counted_numbers(lo, hi):
    global made
    for i in range(lo, hi):
        made += 1
        yield i


VARIANTS = {
    "pycoro": lambda: pycoro_function(PYCORO_SOURCE, "numbers"),
    "cpython": lambda: counted_numbers,
    "numba": lambda: numba_jit(numbers),   # numba has no global to count in
}


def main() -> None:
    report(*sum_values(chosen(VARIANTS, sys.argv[1]), N), N)


if __name__ == "__main__":
    main()
