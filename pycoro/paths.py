"""Where pycoro's own files are (light: the module cache fingerprints them)."""
from __future__ import annotations

from pathlib import Path


def stdlib_dir() -> Path:
    """The stdlib: installed as pycoro/stdlib, or the checkout's top-level stdlib/."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "stdlib", here.parent / "stdlib"):
        if (candidate / "prelude.pc").is_file():
            return candidate
    raise RuntimeError(f"pycoro's stdlib is missing (looked in {here / 'stdlib'})")
