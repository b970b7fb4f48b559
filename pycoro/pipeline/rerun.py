"""`pycoro run` of a program compiled before, from the on-disk cache
(cache.py), as Python runs a module from its .pyc.

This module imports nothing of the compiler and no LLVM: a cached run loads
the program linked as a shared library with ctypes (or, where its entry has
no library, its object code with MCJIT). On a miss the CLI compiles through
the driver, which fills the cache (Compilation.run).
"""
from __future__ import annotations

import os

from ..common import cache
from ..backend import inprocess, symbols
from .options import Options

KIND = "run"   # the driver's Compilation.run stores its entries under this kind


def run_cached(path: str, options: Options, check_leaks: bool, launch_command: str | None = None) -> int | None:
    """Run the program at `path` from the cache; None when it is not there (or
    the file cannot be read: the driver then reports why). `launch_command`:
    the Python command bin/pycoro runs, where it asks for a launch index of
    this command line (launch.py)."""
    found = _entry(path, options)
    if found is None:
        return None
    source, entry_key, library = found
    loaded = inprocess.load_library(library[0], library[1]["frame_counter"]) if library else None
    if loaded is not None:
        if launch_command is not None:
            _index(launch_command, path, source, entry_key, library)
        _warnings(library[1])
        return _status(*inprocess.call_main(*loaded), check_leaks)
    hit = cache.load_object(KIND, entry_key)
    if hit is None or not symbols.all_defined(hit[1].get("externs", ()), "process"):
        return None   # the driver compiles it again, and says which C function is missing
    _warnings(hit[1])
    return run_object(*hit, options, check_leaks)


def index_for_launcher(path: str, options: Options, launch_command: str) -> None:
    """After a `pycoro run` that compiled the program (and stored it), the
    launch index of its command line: the next run needs no Python."""
    found = _entry(path, options)
    if found is not None and found[2] is not None:
        _index(launch_command, path, *found)


def _entry(path: str, options: Options) -> tuple[bytes, str, tuple | None] | None:
    """The program's source, its cache key, and where its code is as a shared
    library (cache.load_shared); None where the file cannot be read."""
    try:
        with open(path, "rb") as f:   # as the driver reads it (decode_source): a CRLF stays
            data = f.read()
        source = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    entry_key = cache.object_key(KIND, source, os.path.dirname(os.path.realpath(path)), options, path)
    return data, entry_key, cache.load_shared(KIND, entry_key)


def _index(launch_command: str, path: str, source: bytes, entry_key: str, library: tuple) -> None:
    if not library[1].get("warnings"):   # (the launcher prints none: the command in Python does)
        from . import launch
        launch.write_index(launch_command, path, source, library[0], library[2], cache.record_path(KIND, entry_key))


def _warnings(meta: dict) -> None:
    """The program's compile-time warnings, shown at every run, as cargo does."""
    if meta.get("warnings"):
        from ..common.diagnostics import print_warnings   # (1.7 ms of a start without them)
        print_warnings(meta["warnings"])


def run_object(code: bytes, meta: dict, options: Options, check_leaks: bool) -> int:
    """Run object code compiled for this process (`meta`: its entry's, as
    Compilation.run stores it) with MCJIT."""
    from ..backend import jit   # LLVM
    loaded = jit.Loaded.from_object(code, options.machine(jit=True))
    return _status(*jit.run_main(loaded, meta["frame_counter"]), check_leaks)


def _status(status: int, live_frames: int, check_leaks: bool) -> int:
    if check_leaks and live_frames:
        from ..common.diagnostics import LeakError
        raise LeakError(live_frames)
    return status
