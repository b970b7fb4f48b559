"""What a wheel is made of: pyproject.toml lists packages by hand (the stdlib,
pycoro/stdlib, holds no Python), so a new subpackage must be listed there, or
`pip install .` leaves it out while an editable install works."""
from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _listed() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])


def test_every_package_is_listed():
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "pycoro").rglob("__init__.py")}
    assert found <= _listed(), sorted(found - _listed())


def _wheel(tmp_path) -> zipfile.ZipFile:
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                   check=True, capture_output=True, timeout=600)
    return zipfile.ZipFile(next(tmp_path.glob("pycoro-*.whl")))


def test_the_wheel_carries_the_stdlib_and_nothing_stray(tmp_path):
    wheel = _wheel(tmp_path)
    names = set(wheel.namelist())
    assert {n.split("/")[0] for n in names} == {"pycoro", "pycoro-0.1.0.dist-info", "pycoro-0.1.0.data"}
    stdlib = {p.name for p in (ROOT / "pycoro" / "stdlib").glob("*.pc")}
    assert {f"pycoro/stdlib/{name}" for name in stdlib} <= names
    assert {"pycoro/py.typed", "pycoro/frontend/grammar.lark", "pycoro-0.1.0.dist-info/licenses/LICENSE",
            "pycoro/launcher/launcher.c", "pycoro/launcher/launcher.h"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".o", ".so"))]
    metadata = wheel.read("pycoro-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Project-URL: Documentation" in metadata
    # the user install (no extra) pulls nothing GPU-only; what the tests need of
    # NVIDIA's carries a platform marker, so the README's commands work on macOS
    requirements = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    assert not [r for r in requirements if "nvidia" in r and "extra ==" not in r]
    assert all("sys_platform" in r for r in requirements if "nvidia" in r)


def test_the_pycoro_command_is_the_launching_script(tmp_path):
    """`pycoro` is bin/pycoro as it is (pip installs it beside the console
    scripts, executable), and the command in Python is `pycoro-python`,
    which the script runs (pipeline/launch.py)."""
    wheel = _wheel(tmp_path)
    script = wheel.getinfo("pycoro-0.1.0.data/scripts/pycoro")
    assert wheel.read(script) == (ROOT / "bin" / "pycoro").read_bytes()
    assert wheel.read(script).startswith(b"#!/bin/sh\n")
    entry_points = wheel.read("pycoro-0.1.0.dist-info/entry_points.txt").decode()
    assert "[console_scripts]\npycoro-python = pycoro.cli.main:main\n" in entry_points
