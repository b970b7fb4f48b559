"""What the Python-hosted workloads (py_*.py) share: how a variant is chosen
and made, the generator most of them time, the consumer loop they time and
the two lines every workload prints (bench/run.py reads them)."""
import time

# `numbers(lo, hi)`: the values lo..hi, in PyCoro and in Python
NUMBERS = "fn numbers(lo: i64, hi: i64) -> Generator<i64> { for i in lo..hi { yield i; } }"


def numbers(lo, hi):
    for i in range(lo, hi):
        yield i


def pycoro_function(source: str, name: str):
    import pycoro
    return getattr(pycoro.compile(source), name)


def numba_jit(fn):
    from numba import njit
    return njit(fn)


def chosen(variants: dict, name: str):
    """The variant `name` of a workload, made now (`variants`: name → a
    function of nothing that makes it; the imports it needs happen there)."""
    if name not in variants:
        raise SystemExit(f"unknown variant {name!r} (one of {', '.join(variants)})")
    return variants[name]()


def sum_values(numbers, n: int) -> tuple[int, int]:
    """`for v in numbers(0, n): s += v`, after a warm-up (compiling, first
    call) that is not timed; the sum and the nanoseconds the loop took."""
    assert list(numbers(0, 5)) == [0, 1, 2, 3, 4]
    start = time.perf_counter_ns()
    s = 0
    for v in numbers(0, n):
        s += v
    return s, time.perf_counter_ns() - start


def report(checksum, elapsed_ns: float, items: int) -> None:
    print("checksum", checksum)
    print("ns_per_item", elapsed_ns / items)
