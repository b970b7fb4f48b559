"""Python iterating a generator that prints every value: `python py_print.py VARIANT`.

`pycoro`: a PyCoro generator that prints each value (so it runs one step per
value, its output interleaved with Python's); `cpython`: the same Python
generator. Standard output goes to /dev/null while the loop runs. Prints
`checksum` and `ns_per_item`.
"""
import os
import sys

from hosted import chosen, pycoro_function, report, sum_values

N = 200_000

PYCORO_SOURCE = "fn numbers(lo: i64, hi: i64) -> Generator<i64> { for i in lo..hi { print(i); yield i; } }"


def printed_numbers(lo, hi):
    for i in range(lo, hi):
        print(i)
        yield i


VARIANTS = {"pycoro": lambda: pycoro_function(PYCORO_SOURCE, "numbers"), "cpython": lambda: printed_numbers}


def main() -> None:
    numbers = chosen(VARIANTS, sys.argv[1])
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)   # Python's and the compiled code's output alike
    try:
        s, elapsed = sum_values(numbers, N)
        sys.stdout.flush()
    finally:
        os.dup2(saved, 1)
    report(s, elapsed, N)


if __name__ == "__main__":
    main()
