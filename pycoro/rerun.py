"""`pycoro run` of a program compiled before: its object code from the on-disk
cache (cache.py), as Python runs a module from its .pyc.

This module imports nothing of the compiler (no parser, checker or code
generator), so a cached run starts in about half the time of a compiling one;
on a miss the CLI compiles through the driver, which fills the cache.
"""
from __future__ import annotations

from pathlib import Path

from . import cache
from .backend import jit
from .diagnostics import LeakError
from .middle.runtime import LIVE_FRAMES
from .options import Options

KIND = "run"   # the driver's Compilation.run stores its entries under this kind


def run_cached(path: str, options: Options, check_leaks: bool) -> int | None:
    """Run the program at `path` from the cache; None when it is not there (or
    the file cannot be read: the driver then reports why)."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    hit = cache.load_object(KIND, cache.object_key(KIND, source, Path(path).resolve().parent, options))
    if hit is None:
        return None
    return run_object(hit[0], options, check_leaks)


def run_object(code: bytes, options: Options, check_leaks: bool) -> int:
    status, live = jit.run_main(jit.Loaded.from_object(code, options.machine(jit=True)), LIVE_FRAMES)
    if check_leaks and live:
        raise LeakError(live)
    return status
