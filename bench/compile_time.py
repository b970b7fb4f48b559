"""Time compiling each workload, and starting a program, against ANCHORS.md's rows
"compile one such program" and "start-up".

    python bench/compile_time.py [--rounds 7]

Compile: wall time of `pycoro build -O2 --emit obj W.pc` (a whole process:
Python start-up, parse, check, LLVM's pipeline, code generation; the runtime
is in the cache, as after any first use), and the same handed to a compile
server (`pycoro server start`: no start-up but the client's, the launcher's
of bin/pycoro) against `clang++-19 -O2 -std=c++20
-c` of the workload's C++ anchor and `cc -O2 -c` of its C one. Start-up:
`pycoro run examples/hello.pc` compiling (alone, and with the server), and
again from its cache entry: by the `pycoro` command (bin/pycoro, whose
launcher starts the program without Python: pipeline/launch.py) and by the
command in Python alone (`python -m pycoro`), against `python -c pass` and
`import llvmlite.binding`. Rounds are interleaved; the table shows medians.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKLOADS = ["gen_sum", "gen_pipeline", "tree_walk", "task_chain", "async_pingpong", "async_fanout"]


def wall(cmd: list[str], env: dict, cwd: Path = ROOT) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def commands(tmp: Path) -> dict[str, dict[str, list[str]]]:
    """Per row: per column, the command to time."""
    py = sys.executable
    cxx = next((c for c in ("clang++-19", "clang++") if shutil.which(c)), None)
    rows: dict[str, dict[str, list[str]]] = {}
    pycoro = pycoro_command(tmp)
    for w in WORKLOADS:
        build = [pycoro, "build", "-O2", "--emit", "obj", str(HERE / "workloads" / f"{w}.pc"),
                 "-o", str(tmp / f"{w}.o")]
        row = {"pycoro": build, SERVED: build}
        if cxx and (HERE / "anchors" / f"{w}.cpp").exists():
            row[cxx] = [cxx, "-O2", "-std=c++20", "-c", str(HERE / "anchors" / f"{w}.cpp"), "-o", str(tmp / f"{w}.cpp.o")]
        if (HERE / "anchors" / f"{w}.c").exists():
            row["cc"] = ["cc", "-O2", "-c", str(HERE / "anchors" / f"{w}.c"), "-o", str(tmp / f"{w}.c.o")]
        rows[f"compile {w}"] = row
    hello = str(ROOT / "examples" / "hello.pc")
    rows["start-up"] = {"pycoro run (compiling)": [pycoro, "run", hello],
                        "pycoro run (compiling, server)": [pycoro, "run", hello],
                        "pycoro run (cached)": [pycoro, "run", hello],
                        "python -m pycoro run (cached)": [py, "-m", "pycoro", "run", hello],
                        "python -c pass": [py, "-c", "pass"],
                        "import llvmlite.binding": [py, "-c", "import llvmlite.binding"]}
    return rows


def pycoro_command(tmp: Path) -> str:
    """The `pycoro` command as pip installs it: bin/pycoro beside a
    `pycoro-python` console script of this Python (whatever this Python's
    environment has installed)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    shutil.copy(ROOT / "bin" / "pycoro", bin_dir / "pycoro")
    python_command = bin_dir / "pycoro-python"
    python_command.write_text(f"#!{sys.executable}\nimport sys\nfrom pycoro.cli.main import main\nsys.exit(main())\n")
    python_command.chmod(0o755)
    return str(bin_dir / "pycoro")


SERVED = "pycoro (server)"   # the same command, handed to a compile server (docs/server.md)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}   # as users run Python
        env["PYCORO_CACHE_DIR"] = str(tmp / "cache")
        env["PYCORO_SERVER_DIR"] = str(tmp / "server")
        served = {**env, "PYCORO_SERVER": "1"}
        env["PYCORO_SERVER"] = "0"   # the plain columns: every command in its own process
        subprocess.run([sys.executable, "-m", "pycoro", "server", "start"], check=True, env=served,
                       stdout=subprocess.DEVNULL)
        rows = commands(tmp)
        # hello compiling, in a cache of its own: its entry deleted before each
        # such run would make every cached run find its launch index stale
        compiling = {"PYCORO_CACHE_DIR": str(tmp / "cache-compiling")}
        for _ in range(2):   # the runtime and .pyc files; the launcher and hello's launch index
            subprocess.run(rows["start-up"]["pycoro run (cached)"], check=True, env=env, stdout=subprocess.DEVNULL)
        for _ in range(2):   # its launcher too
            subprocess.run(rows["start-up"]["pycoro run (compiling)"], check=True, env={**env, **compiling},
                           stdout=subprocess.DEVNULL)
        # a command the server ran for the Python command: the launcher hands it the next ones
        subprocess.run(rows[f"compile {WORKLOADS[0]}"][SERVED], check=True, env=served, stdout=subprocess.DEVNULL)
        times: dict[str, dict[str, list[float]]] = {r: {c: [] for c in cols} for r, cols in rows.items()}
        for _ in range(args.rounds):
            for row, cols in rows.items():
                for column, cmd in cols.items():
                    column_env = served if "server" in column else env
                    if column.startswith("pycoro run (compiling"):
                        for entry in (tmp / "cache-compiling").glob("run.*"):
                            entry.unlink()
                        column_env = {**column_env, **compiling}
                    times[row][column].append(wall(cmd, column_env))
        subprocess.run([sys.executable, "-m", "pycoro", "server", "stop"], env=served, stdout=subprocess.DEVNULL)
    columns = list(dict.fromkeys(c for cols in rows.values() for c in cols))
    print("| row | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for row, cols in times.items():
        cells = [f"{statistics.median(cols[c]) * 1000:.0f} ms" if c in cols else "—" for c in columns]
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
