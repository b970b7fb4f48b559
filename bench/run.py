"""Build every workload in pycoro and in its anchors, time them in one run, print a table.

    python bench/run.py [--rounds 7] [WORKLOAD …]

Each program times its own loop (compilation and start-up excluded) and
prints `checksum` and `ns_per_item`; rounds are interleaved so that noise
hits every column alike, and the table shows medians and pycoro's ratio to
the anchor its target is about (the best one for gen_sum). Anchors that cannot be built here (no clang++-19, no numba)
are left out of the row with a note, never faked. See bench/README.md.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE / "workloads"
ANCHORS = HERE / "anchors"

# workload → (unit, anchors it has, the anchor its target is about (None: the best), target in words)
TABLE = {
    "gen_sum": ("ns/item", ["c", "cpp", "numba"], None, "at or below the best anchor"),
    "gen_noinline": ("ns/resume", ["c", "cpp"], None, "at or below the best anchor"),
    "gen_pipeline": ("ns/output", ["c", "cpp", "numba"], "cpp", "at or below clang++"),
    "tree_walk": ("ns/node", ["c", "cpp"], "cpp", "10x faster than clang++"),
    "task_chain": ("ns/task", ["cpp"], "cpp", "at or below clang++"),
    "async_pingpong": ("ns/switch", ["cpp"], "cpp", "at or below clang++"),
    "async_fanout": ("ns/task", ["cpp"], "cpp", "at or below clang++"),
    "py_iter": ("ns/item", ["cpython", "numba", "range"], "CPython gen", "faster than the CPython generator"),
    "slice_sum": ("ns/item", ["c"], "C", "at most 1.1x C"),
    "stream_sum": ("ns/item", ["generator", "c", "cpp"], "Generator", "at most 1.1x the Generator"),
    "stream_mix": ("ns/item", ["generator", "c", "cpp"], "Generator", "at most 1.1x the Generator"),
    "permutations": ("ns/perm", ["c", "cpp", "cpython"], "C", "toward 3x the C function"),
    "py_call": ("ns/call", ["numba", "python"], "numba", "at most 1.5x numba"),
    "py_steps": ("ns/item", ["cpython", "numba"], "CPython gen", "at most the CPython generator"),
    "py_print": ("ns/item", ["cpython"], "CPython gen", "at most the CPython generator"),
    "py_numpy": ("ns/item", ["arange", "cpython"], "np.arange", "at most 2x np.arange"),
    "py_moving_avg": ("ns/item", ["numba"], "numba", "measured against numba"),
    "py_moving_avg_np": ("ns/item", ["numba"], "numba", "measured against numba"),
}
# Workloads that are Python programs (workloads/NAME.py VARIANT), not .pc files:
# column → variant.
PYTHON_HOSTED = {
    "py_iter": {"pycoro": "pycoro", "CPython gen": "cpython", "numba": "numba", "range": "range"},
    "py_call": {"pycoro": "pycoro", "numba": "numba", "Python fn": "python"},
    "py_steps": {"pycoro": "pycoro", "CPython gen": "cpython", "numba": "numba"},
    "py_print": {"pycoro": "pycoro", "CPython gen": "cpython"},
    "py_numpy": {"pycoro": "pycoro", "np.arange": "arange", "CPython gen": "cpython"},
    "py_moving_avg": {"pycoro": "pycoro", "numba": "numba"},
    "py_moving_avg_np": {"pycoro": "pycoro", "numba": "numba"},
}


def cxx() -> str | None:
    for name in ("clang++-19", "clang++"):
        if shutil.which(name):
            return name
    return None


def build(workload: str, tmp: Path) -> dict[str, list[str]]:
    """The command that runs each variant, for the variants that could be built."""
    runs: dict[str, list[str]] = {}
    if workload in PYTHON_HOSTED:
        script = str(WORKLOADS / f"{workload}.py")
        for column, variant in PYTHON_HOSTED[workload].items():
            if variant != "numba" or has_numba():
                runs[column] = [sys.executable, script, variant]
        return runs
    exe = tmp / f"{workload}.pycoro"
    subprocess.run([sys.executable, "-m", "pycoro", "build", "-O2", f"{workload}.pc", "-o", str(exe)],
                   cwd=WORKLOADS, check=True)
    runs["pycoro"] = [str(exe)]
    anchors = TABLE[workload][1]
    if "generator" in anchors:   # the same program over a Generator (a stream's target)
        out = tmp / f"{workload}.generator"
        subprocess.run([sys.executable, "-m", "pycoro", "build", "-O2", f"{workload}_generator.pc", "-o", str(out)],
                       cwd=ANCHORS, check=True)
        runs["Generator"] = [str(out)]
    if "cpython" in anchors:
        runs["CPython gen"] = [sys.executable, str(ANCHORS / f"{workload}.py")]
    if "c" in anchors and (ANCHORS / f"{workload}.c").exists():
        out = tmp / f"{workload}.c"
        subprocess.run(["cc", "-O2", str(ANCHORS / f"{workload}.c"), "-o", str(out)], check=True)
        runs["C"] = [str(out)]
    if "cpp" in anchors and cxx():
        out = tmp / f"{workload}.cpp"
        subprocess.run([cxx(), "-O2", "-std=c++20", str(ANCHORS / f"{workload}.cpp"), "-o", str(out)],
                       check=True)
        runs[cxx()] = [str(out)]
    if "numba" in anchors and has_numba():
        runs["numba"] = [sys.executable, str(ANCHORS / "numba_anchors.py"), workload]
    return runs


def has_numba() -> bool:
    try:
        import numba  # noqa: F401
        return True
    except ImportError:
        return False


def measure(command: list[str]) -> tuple[str, float]:
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    return fields["checksum"], float(fields["ns_per_item"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("workloads", nargs="*", default=list(TABLE))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for workload in args.workloads:
            runs = build(workload, Path(tmpdir))
            times: dict[str, list[float]] = {name: [] for name in runs}
            checksums: dict[str, str] = {}
            for _ in range(args.rounds):           # interleaved rounds
                for name, command in runs.items():
                    checksum, ns = measure(command)
                    checksums[name] = checksum
                    times[name].append(ns)
            if len(set(checksums.values())) != 1:
                print(f"{workload}: checksums differ: {checksums}", file=sys.stderr)
                return 1
            medians = {name: statistics.median(t) for name, t in times.items()}
            rows.append((workload, medians))
    print_table(rows)
    return 0


def print_table(rows) -> None:
    columns = ["pycoro", "Generator", "C", "clang++-19", "clang++", "numba", "CPython gen", "range", "Python fn",
               "np.arange"]
    present = [c for c in columns if any(c in m for _, m in rows)]
    header = ["workload", "unit"] + present + ["pycoro / target's anchor", "target"]
    body = []
    for workload, medians in rows:
        unit, _, versus, target = TABLE[workload]
        anchors = {k: v for k, v in medians.items() if k != "pycoro"}
        versus = cxx() if versus == "cpp" else versus
        base = (min(anchors.values()) if anchors else None) if versus is None else anchors.get(versus)
        cells = [workload, unit] + [f"{medians[c]:.3g}" if c in medians else "-" for c in present]
        cells += [f"{medians['pycoro'] / base:.2f}x" if base else "-", target]
        body.append(cells)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + body:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    sys.exit(main())
