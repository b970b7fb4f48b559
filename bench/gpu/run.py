"""The example kernels of examples/gpu/ on a CUDA GPU against the same work
written by hand in CUDA C (bench/gpu/kernels.cu, `nvcc -O3`), side by side in
one run (docs/gpu.md records the figures).

    python bench/gpu/run.py [--rounds 15] [--out DIR] [--arch sm_90] [workload ...]

Both sides are loaded as PTX through pycoro.gpu's driver (the driver compiles
each to the device's machine code alike) and launched on the same buffers; a
kernel's time is the median over `--rounds` launches of CUDA events around the
launch alone (the buffers' copies lie outside them). `ptxas -v` gives each
entry's registers and stack frame (its local memory: a coroutine frame the
compiler placed there shows in it). Needs a CUDA device, `nvcc` and `ptxas`.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
import pycoro.gpu  # noqa: E402
from pycoro.gpu import _driver  # noqa: E402   (the launcher both sides share)

THREADS = 256   # per block, for every workload


@dataclass(frozen=True)
class Workload:
    example: str          # examples/gpu/NAME.pc, or bench/gpu/NAME.pc
    kernel: str           # in the program and in kernels.cu
    arguments: Callable[[], list]     # fresh arguments: NumPy arrays and scalars
    grid: int
    block: int = THREADS

    @property
    def source(self) -> Path:
        ours = Path(__file__).parent / f"{self.example}.pc"   # transfers.pc: not an example to follow
        return ours if ours.exists() else ROOT / "examples" / "gpu" / f"{self.example}.pc"


def _ceil(n: int) -> int:
    return (n + THREADS - 1) // THREADS


def _ints(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.int64)


# sizes: each launch runs well past launch overhead (0.1 to a few ms on an H200)
SQUARES, PIPELINE, AWAITS = 1 << 17, 1 << 15, 1 << 15
STRIDED, STRIDED_GRID = 1 << 24, 132 * 8
ROWS, COLS = 1 << 21, 16
MULTIPLES = 1 << 24

WORKLOADS = {
    "squares": Workload("squares", "squares", lambda: [_ints(SQUARES), SQUARES], _ceil(SQUARES)),
    "pipeline": Workload("pipeline", "pipeline", lambda: [_ints(PIPELINE), PIPELINE], _ceil(PIPELINE)),
    "awaits": Workload("awaits", "sums_of_squares", lambda: [_ints(AWAITS), AWAITS], _ceil(AWAITS)),
    "transfers": Workload("transfers", "sums_of_squares", lambda: [_ints(AWAITS), AWAITS], _ceil(AWAITS)),
    "strided": Workload("strided", "square_all",
                        lambda: [np.arange(STRIDED, dtype=np.float64) / 7, np.zeros(STRIDED), STRIDED],
                        STRIDED_GRID),
    "norms": Workload("norms", "row_norms",
                      lambda: [(np.arange(ROWS * COLS) % 7 - 3).astype(np.float64), np.zeros(ROWS),
                               ROWS, COLS, 1.0, 4.0], _ceil(ROWS)),
    "streams": Workload("streams", "sum_multiples", lambda: [_ints(MULTIPLES), MULTIPLES], _ceil(MULTIPLES)),
}


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        sys.exit(f"bench/gpu/run.py: `{name}` not found on PATH")
    return found


def nvcc_ptx(arch: str, work: Path) -> str:
    out = work / "nvcc.ptx"
    subprocess.run([_tool("nvcc"), "-O3", f"-arch={arch}", "-ptx", str(Path(__file__).parent / "kernels.cu"),
                    "-o", str(out)], check=True)
    return out.read_text()


def ptxas_usage(ptx: str, arch: str, work: Path, name: str) -> tuple[dict, str]:
    """Per entry function: registers, stack frame and spills, as `ptxas -v` reports them."""
    path = work / f"{name}.ptx"
    path.write_text(ptx)
    proc = subprocess.run([_tool("ptxas"), "-v", f"-arch={arch}", str(path), "-o", "/dev/null"],
                          capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    usage: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if m := re.search(r"Function properties for (\w+)", line):
            current = usage.setdefault(m.group(1), {})
        elif current is not None and (m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)):
            current["stack"], current["spills"] = int(m.group(1)), int(m.group(2))
        elif current is not None and (m := re.search(r"Used (\d+) registers", line)):
            current["registers"] = int(m.group(1))
    return usage, text


def _values(arguments: list) -> list:
    return [memoryview(a).cast("B") if isinstance(a, np.ndarray)
            else ctypes.c_double(a) if isinstance(a, float) else ctypes.c_int64(a) for a in arguments]


def time_pycoro(kernels, w: Workload, rounds: int) -> tuple[list[float], list]:
    launch = getattr(kernels, w.kernel)[w.grid, w.block]
    arguments = w.arguments()
    times = []
    for _ in range(rounds + 2):   # two warm-up launches
        launch(*arguments)
        times.append(getattr(kernels, w.kernel).elapsed)
    return times[2:], arguments


def time_nvcc(function, w: Workload, rounds: int) -> tuple[list[float], list]:
    driver = _driver()
    arguments = w.arguments()
    values = _values(arguments)
    grid, block = (w.grid, 1, 1), (w.block, 1, 1)
    times = [driver.launch(function, grid, block, values, None) for _ in range(rounds + 2)]
    return times[2:], arguments


def _same(a: list, b: list) -> str:
    outputs = [(x, y) for x, y in zip(a, b) if isinstance(x, np.ndarray)]
    if all(np.array_equal(x, y) for x, y in outputs):
        return "identical"
    worst = max(float(np.max(np.abs(x - y) / np.maximum(np.abs(y), 1e-300))) for x, y in outputs)
    return f"DIFFERENT (max relative difference {worst:.3g})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--arch", default=None, help="sm_XX (default: the device's)")
    parser.add_argument("--out", type=Path, default=None, help="folder for the PTX, ptxas output and JSON")
    args = parser.parse_args()

    driver = _driver()
    arch = args.arch or driver.arch()
    work = Path(tempfile.mkdtemp(prefix="pycoro-gpu-bench-"))
    nvcc = nvcc_ptx(arch, work)
    nvcc_module = driver.load(nvcc)
    nvcc_usage, nvcc_text = ptxas_usage(nvcc, arch, work, "nvcc")
    reports, ptxas_texts, failures = [], [nvcc_text], 0
    print(f"{'workload':<16} {'pycoro ms':>10} {'nvcc ms':>10} {'ratio':>6}   regs p/n   stack p/n   results")
    for name in args.workloads:
        w = WORKLOADS[name]
        try:
            kernels = pycoro.gpu.compile_file(w.source, arch=arch)
            usage, text = ptxas_usage(kernels.ptx, arch, work, f"pycoro-{name}")
            ptxas_texts.append(text)
            ours, our_args = time_pycoro(kernels, w, args.rounds)
            theirs, their_args = time_nvcc(driver.function(nvcc_module, w.kernel), w, args.rounds)
        except Exception as e:   # one workload's failure is reported, the others still run
            failures += 1
            print(f"{name:<16} FAILED: {type(e).__name__}: {e}")
            continue
        p, n = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
        pu, nu = usage.get(w.kernel, {}), nvcc_usage.get(w.kernel, {})
        same = _same(our_args, their_args)
        failures += same != "identical"
        print(f"{name:<16} {p:>10.4f} {n:>10.4f} {p / n:>5.2f}x   {pu.get('registers', '?'):>4}/{nu.get('registers', '?'):<4}"
              f"  {pu.get('stack', '?'):>4}/{nu.get('stack', '?'):<4}   {same}")
        reports.append({"workload": name, "kernel": w.kernel, "source": str(w.source.relative_to(ROOT)),
                        "pycoro_ms": p, "nvcc_ms": n, "ratio": p / n,
                        "pycoro_ms_all": [t * 1e3 for t in ours], "nvcc_ms_all": [t * 1e3 for t in theirs],
                        "pycoro_ptxas": pu, "nvcc_ptxas": nu, "results": same, "grid": w.grid, "block": w.block})
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench.json").write_text(json.dumps({"arch": arch, "rounds": args.rounds,
                                                         "workloads": reports}, indent=1))
        (args.out / "ptxas.txt").write_text("\n".join(ptxas_texts))
        shutil.make_archive(str(args.out / "ptx"), "gztar", work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
