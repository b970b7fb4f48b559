"""valgrind's memcheck over built executables of the coroutine programs in
tests/programs/ (issue 19): no invalid read or write, no use of an
uninitialised value, no leaked block. Opt-in (PYCORO_VALGRIND=1; needs
valgrind on PATH): each program is built at -O0 and -O2 and runs ~50 times
slower under memcheck, so plain `pytest` skips it. They are built for a
baseline x86-64 CPU (PYCORO_TARGET_CPU): memcheck knows no AVX-512.

A panicking program exits at once (status 101): what it still holds is
reachable from its stack or the runtime's free lists, which memcheck does
not count as leaked."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from expectations import read
from pycoro.backend.targets import TARGET_CPU
from test_programs import PROGRAMS

ENABLED = os.environ.get("PYCORO_VALGRIND") == "1"
COROUTINE = re.compile(r"\b(Generator|Stream|Once|Task|async fn|yield|co_return|await)\b")
# exit statuses of its own, so that a memcheck finding cannot pass for the program's status
ERRORS = 97
MEMCHECK = ["valgrind", "--tool=memcheck", "--quiet", f"--error-exitcode={ERRORS}", "--leak-check=full",
            "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect",
            "--track-origins=yes"]


def _coroutine_programs():
    return [p for p in PROGRAMS if not read(p).errors and COROUTINE.search(p.read_text())]


@pytest.mark.skipif(not ENABLED, reason="set PYCORO_VALGRIND=1 to run the built programs under valgrind")
@pytest.mark.skipif(ENABLED and shutil.which("valgrind") is None, reason="valgrind is not installed")
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("path", _coroutine_programs(), ids=lambda p: p.stem)
def test_memcheck_finds_nothing(path, opt, pycoro, tmp_path):
    exe = tmp_path / path.stem
    built = pycoro("build", opt, path.name, "-o", exe, cwd=path.parent, env={TARGET_CPU: "x86-64-v2"})
    assert built.returncode == 0, built.stderr
    proc = subprocess.run(MEMCHECK + [str(exe)], capture_output=True, text=True, cwd=path.parent, timeout=600)
    exp = read(path)
    assert proc.returncode == exp.status, proc.stderr
    assert proc.stdout.splitlines() == exp.stdout, proc.stderr
