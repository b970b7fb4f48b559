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

from hosted import chosen, numba_jit, pycoro_function, report

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


VARIANTS = {
    "pycoro": lambda: pycoro_function(PYCORO_SOURCE, "moving_avg"),
    "numba": lambda: numba_jit(python_moving_avg),
}
# each variant's spelling of "its values as an array"
INTO_NUMPY = {"pycoro": lambda values: values.to_numpy(), "numba": lambda values: np.fromiter(values, np.float64)}


def variant(name: str, into_numpy: bool):
    fn = chosen(VARIANTS, name)
    if into_numpy:
        return lambda xs, k: INTO_NUMPY[name](fn(xs, k)).sum()
    return lambda xs, k: _sum(fn(xs, k))


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
