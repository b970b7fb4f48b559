"""Every tests/programs/*.pc, run with `pycoro run` and as a built executable."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from expectations import diagnostics, read

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.pc"))


def _check_output(proc, exp, path):
    assert proc.stdout.splitlines() == exp.stdout, proc.stderr
    for want in exp.stderr:
        assert any(want in line for line in proc.stderr.splitlines()), proc.stderr
    assert proc.returncode == exp.status, proc.stderr


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_run(path, pycoro):
    exp = read(path)
    proc = pycoro("run", path.name, cwd=path.parent)
    if exp.errors:
        assert diagnostics(proc.stderr) == exp.errors, proc.stderr
        assert proc.returncode == 1
        assert "Traceback" not in proc.stderr
    else:
        _check_output(proc, exp, path)
    assert diagnostics(proc.stderr, "warning") == exp.warnings, proc.stderr


@pytest.mark.parametrize("path", [p for p in PROGRAMS if not read(p).errors], ids=lambda p: p.stem)
def test_built_executable(path, pycoro, tmp_path):
    exe = tmp_path / path.stem
    proc = pycoro("build", path.name, "-o", exe, cwd=path.parent)
    assert proc.returncode == 0, proc.stderr
    exp = read(path)
    _check_output(subprocess.run([exe], capture_output=True, text=True, cwd=path.parent, timeout=60),
                  exp, path)


@pytest.mark.parametrize("path", [p for p in PROGRAMS if not read(p).errors], ids=lambda p: p.stem)
def test_run_unoptimised_without_leaks(path, pycoro):
    """At -O0 nothing is elided: every coroutine frame is on the heap, and must be freed."""
    exp = read(path)
    proc = pycoro("run", "-O0", "--check-leaks", path.name, cwd=path.parent)
    _check_output(proc, exp, path)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("path", [p for p in PROGRAMS if not read(p).errors], ids=lambda p: p.stem)
def test_run_with_the_resume_loop(path, opt, pycoro):
    """Symmetric transfer as GPU builds do it (middle/coro/trampoline.py), on the CPU."""
    proc = pycoro("run", opt, "--check-leaks", "--trampoline", path.name, cwd=path.parent)
    _check_output(proc, read(path), path)


DELEGATING = [p for p in PROGRAMS if not read(p).errors and "yield from" in p.read_text()]


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("path", DELEGATING, ids=lambda p: p.stem)
def test_run_with_reyielded_delegation(path, opt, pycoro):
    """`yield from` as GPU builds lower it (a loop that yields each value
    again: FnInstance.generator_delegations), on the CPU: the same output, no leak."""
    proc = pycoro("run", opt, "--check-leaks", "--reyield", path.name, cwd=path.parent)
    _check_output(proc, read(path), path)
