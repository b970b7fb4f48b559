"""Running a program and its oracle, and judging them.

Each program is run by the oracle (python3) and by pycoro in several
configurations: `pycoro run -O0 --check-leaks`, `pycoro run -O2`, and for a
share of the programs `pycoro build -O2` then the executable. Each must give
the oracle's stdout and exit status (stderr is not compared: panics' messages
hold positions). A compiler crash (exit 70, a signal, "LLVM ERROR", a Python
traceback), a refusal of the (well-typed) program, or a timeout is a failure
too.

Programs run in parallel (`jobs` threads, each waiting on its subprocesses);
each thread runs pycoro through a fork server of its own (forkserver.py: the
compiler imported once, each command line in a fork) unless `fork_server`
is False;
`pycoro run`'s cache goes to a directory of the run's own (random programs
never repeat, and the user's cache should not fill with them).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .forkserver import ForkServer
from .generate import generate

CONFIGS = {
    "O0": ["run", "-O0", "--check-leaks"],
    "O2": ["run", "-O2"],
    "exe": ["build", "-O2"],
}
CRASH_MARKS = ("internal compiler error", "Traceback (most recent call last)", "LLVM ERROR", "Segmentation fault")


@dataclass
class Failure:
    config: str       # O0 | O2 | exe | oracle
    kind: str         # stdout | status | crash | rejected | leak | timeout | oracle
    detail: str

    @property
    def key(self) -> tuple[str, str]:
        return self.config, self.kind


@dataclass
class Result:
    layer: str
    seed: int
    failures: list = field(default_factory=list)
    configs: tuple = ()
    seconds: float = 0.0
    pc: str = ""
    py: str = ""


class Runner:
    def __init__(self, timeout: float = 30.0, cache_dir: str | None = None, avoid=frozenset(),
                 fork_server: bool = True):
        self.timeout, self.avoid, self.fork_server = timeout, frozenset(avoid), fork_server
        self._local = threading.local()
        self._servers: list[ForkServer] = []
        self._lock = threading.Lock()
        self._own_cache = cache_dir is None
        self.cache_dir = cache_dir or tempfile.mkdtemp(prefix="pycoro-difftest-cache-")
        self.env = {**os.environ, "PYCORO_CACHE_DIR": self.cache_dir, "PYTHONUNBUFFERED": "1"}

    def close(self) -> None:
        for server in self._servers:
            server.close()
        if self._own_cache:
            shutil.rmtree(self.cache_dir, ignore_errors=True)

    def _pycoro(self, argv, cwd) -> tuple[int | None, str, str]:
        """`pycoro ARGV`: through this thread's fork server, or a fresh process."""
        if not self.fork_server:
            return self._run([sys.executable, "-m", "pycoro", *argv], cwd)
        server = getattr(self._local, "server", None)
        if server is None:
            server = self._local.server = ForkServer(self.env)
            with self._lock:
                self._servers.append(server)
        return server.run(argv, cwd, self.timeout)

    def _run(self, argv, cwd) -> tuple[int | None, str, str]:
        try:
            p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=self.timeout, check=False,
                               env=self.env, errors="replace")
        except subprocess.TimeoutExpired:
            return None, "", ""
        return p.returncode, p.stdout, p.stderr

    def check(self, pc: str, py: str, configs=("O0", "O2")) -> list[Failure]:
        """The failures of a program (empty: every configuration agrees with the oracle)."""
        with tempfile.TemporaryDirectory(prefix="difftest-") as tmp:
            Path(tmp, "prog.pc").write_text(pc)
            Path(tmp, "prog.py").write_text(py)
            status, out, err = self._run([sys.executable, "prog.py"], tmp)
            if status is None:
                return [Failure("oracle", "timeout", "")]
            if "Traceback" in err or "SyntaxError" in err or status not in (0, 101) and not 0 < status < 256:
                return [Failure("oracle", "oracle", err[-2000:])]
            want = (status, out)
            failures = []
            for config in configs:
                failures += self._config(config, tmp, want)
            return failures

    def _config(self, config: str, tmp: str, want) -> list[Failure]:
        if config == "exe":
            status, out, err = self._pycoro(CONFIGS[config] + ["prog.pc", "-o", "prog.exe"], tmp)
            bad = _compiler_failure(config, status, err)
            if bad or status != 0:
                return [bad or Failure(config, "rejected", err[-2000:])]
            status, out, err = self._run(["./prog.exe"], tmp)
            if status is None:
                return [Failure(config, "timeout", "")]
            if status < 0:
                return [Failure(config, "crash", f"signal {-status}\n{err[-2000:]}")]
        else:
            status, out, err = self._pycoro(CONFIGS[config] + ["prog.pc"], tmp)
            bad = _compiler_failure(config, status, err)
            if bad:
                return [bad]
            if status == 1 and want[0] != 1 and "error" in err:
                return [Failure(config, "leak" if "leak" in err else "rejected", err[-2000:])]
        failures = []
        if out != want[1]:
            failures.append(Failure(config, "stdout", _first_difference(want[1], out)))
        if status != want[0]:
            failures.append(Failure(config, "status", f"expected {want[0]}, got {status}\n{err[-1000:]}"))
        return failures

    def run_one(self, layer: str, seed: int, exe: bool) -> Result:
        start = time.perf_counter()
        program = generate(seed, layer, self.avoid)
        pc, py = program.pc(), program.py()
        configs = ("O0", "O2", "exe") if exe else ("O0", "O2")
        failures = self.check(pc, py, configs)
        return Result(layer, seed, failures, configs, time.perf_counter() - start, pc, py)

    def run_many(self, tasks, jobs: int, on_result=None) -> list[Result]:
        """tasks: (layer, seed, exe) triples; on_result(result) as each is done."""
        results = []
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for r in pool.map(lambda t: self.run_one(*t), tasks):
                results.append(r)
                if on_result:
                    on_result(r)
        return results


def _compiler_failure(config: str, status, err: str) -> Failure | None:
    if status is None:
        return Failure(config, "timeout", "")
    # (not exit status 70 alone: that is also what `fn main() -> i32` may return)
    if status < 0 or any(mark in err for mark in CRASH_MARKS):
        return Failure(config, "crash", f"exit {status}\n{err[-3000:]}")
    return None


def _first_difference(want: str, got: str) -> str:
    a, b = want.splitlines(), got.splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: expected {x!r}, got {y!r}"
    return f"expected {len(a)} lines, got {len(b)}" + (f" (next expected {a[len(b)]!r})" if len(a) > len(b) else
                                                       f" (extra {b[len(a)]!r})")


def exe_for(seed: int, share: float) -> bool:
    """Whether program `seed` also runs as a built executable: a deterministic share."""
    if share <= 0:
        return False
    return (seed * 2654435761 % 1000) / 1000 < share
