"""Where pycoro's own files are."""
from __future__ import annotations

from pathlib import Path

STDLIB_PREFIX = "<stdlib>/"   # how diagnostics (and spans) name the stdlib's files
WRAPPERS_FILE = "<exports>"   # the export wrappers the compiler writes (exports.py, python_entries.py)


def stdlib_display(name: str) -> str:
    """The name of stdlib/NAME.pc in diagnostics and spans."""
    return f"{STDLIB_PREFIX}{name}.pc"


def in_stdlib(file: str) -> bool:
    """Whether a span's file is one of the stdlib's."""
    return file.startswith(STDLIB_PREFIX)


def compilers_own(file: str) -> bool:
    """Whether a span's file is the stdlib's or code the compiler wrote: code
    that may name the stdlib's internals (`__` names)."""
    return in_stdlib(file) or file == WRAPPERS_FILE


def stdlib_dir() -> Path:
    """The stdlib: pycoro/stdlib, in a checkout as installed."""
    stdlib = Path(__file__).resolve().parent.parent / "stdlib"
    if not (stdlib / "prelude.pc").is_file():
        raise RuntimeError(f"pycoro's stdlib is missing (looked in {stdlib})")
    return stdlib
