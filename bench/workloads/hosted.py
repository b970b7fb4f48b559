"""What the Python-hosted workloads (py_*.py) share: the consumer loop they
time and the two lines every workload prints (bench/run.py reads them)."""
import time


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
