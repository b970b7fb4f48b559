"""A moving average over a NumPy array, driven from Python: `python py_moving_avg.py VARIANT`.

A generator takes the array (a PyCoro slice `[f64]`, without copying; for
numba, the array) and yields the mean of each window of 8 values, 10^7
values in all. VARIANT `pycoro` or `numba`: a Python `for` loop sums what
the generator yields. py_moving_avg_np.py runs the same into a NumPy array:
`.to_numpy()` of the PyCoro generator, `np.fromiter` over the numba one.
Prints `checksum` and `ns_per_item` (per input value).
"""
import sys
import time

from hosted import report

import numpy as np

N, K = 10_000_000, 8

PYCORO_SOURCE = """
fn moving_avg(xs: [f64], k: i64) -> Generator<f64> {
    var s = 0.0;
    for i in 0..xs.len() {
        s += xs[i];
        if i >= k { s -= xs[i - k]; }
        if i >= k - 1 { yield s / (k as f64); }
    }
}
"""


def python_moving_avg(xs, k):
    s = 0.0
    for i in range(len(xs)):
        s += xs[i]
        if i >= k:
            s -= xs[i - k]
        if i >= k - 1:
            yield s / k


def variant(name: str, into_numpy: bool):
    if name == "pycoro":
        import pycoro
        fn = pycoro.compile(PYCORO_SOURCE).moving_avg
        return (lambda xs, k: fn(xs, k).to_numpy().sum()) if into_numpy else (lambda xs, k: _sum(fn(xs, k)))
    if name == "numba":
        from numba import njit
        fn = njit(python_moving_avg)
        return (lambda xs, k: np.fromiter(fn(xs, k), np.float64).sum()) if into_numpy \
            else (lambda xs, k: _sum(fn(xs, k)))
    raise SystemExit(f"unknown variant {name!r}")


def _sum(values) -> float:
    s = 0.0
    for v in values:
        s += v
    return s


def main(into_numpy: bool = False) -> None:
    run = variant(sys.argv[1], into_numpy)
    xs = (np.arange(N) % 1000).astype(np.float64)
    run(xs[:100], K)   # compiles, warms up
    start = time.perf_counter_ns()
    total = run(xs, K)
    elapsed = time.perf_counter_ns() - start
    report(f"{total:.6e}", elapsed, N)


if __name__ == "__main__":
    main()
