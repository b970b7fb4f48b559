"""What a wheel is made of: pyproject.toml lists packages by hand (the stdlib
is mapped from the top-level stdlib/), so a new subpackage must be listed
there, or `pip install .` leaves it out while an editable install works."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _listed() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])


def test_every_package_is_listed():
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "pycoro").rglob("__init__.py")}
    assert found <= _listed(), sorted(found - _listed())
