"""Calling a program's `main` in this process, wherever its code was loaded
from: by MCJIT (jit.py), or from a shared library with ctypes alone, without
LLVM (a cached `pycoro run`: rerun.py)."""
from __future__ import annotations

import ctypes
import sys

_libc = ctypes.CDLL(None)
_MAIN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
_FRAME_COUNTER = ctypes.CFUNCTYPE(ctypes.c_int64)


def call_main(main: int, frame_counter: int | None) -> tuple[int, int]:
    """Call the C `main` at address `main`; return its exit status and how many
    coroutine frames were still allocated afterwards (by the counter function
    at `frame_counter`, where the program has one)."""
    sys.stdout.flush()
    sys.stderr.flush()
    status = _MAIN(main)(0, None)
    _libc.fflush(None)
    live = _FRAME_COUNTER(frame_counter)() if frame_counter else 0
    return status, live


def load_library(path: str, frame_counter: str) -> tuple[int, int | None] | None:
    """Load the shared library at `path`; the addresses of its `main` and of the
    function named `frame_counter`, or None when it cannot be loaded here (a
    symbol it needs is missing from this process, say)."""
    try:
        library = ctypes.CDLL(str(path))   # RTLD_NOW: every symbol is resolved here or never
        main = ctypes.cast(library["main"], ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    try:
        counter = ctypes.cast(library[frame_counter], ctypes.c_void_p).value
    except AttributeError:
        counter = None
    return main, counter
