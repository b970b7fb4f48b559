"""The launch index: `pycoro run FILE` of a cached program without Python.

The `pycoro` command is a shell script (bin/pycoro). For the command line
`pycoro run FILE` it runs the launcher, a C program (pycoro/launcher.c) that
this module builds into the cache, which starts the program from its cache
entry in ~1 ms where Python alone takes ~11. The launcher cannot compute a
cache key (that needs the compiler's fingerprint, BLAKE2, the options), so a
Python run of the same command line that finds the entry writes an index for
it: a text file, `launch-KEY` in the cache folder, KEY the FNV-1a of the
Python command, the working folder and FILE as given (what the entry's key
depends on besides what the index checks). Its first line is INDEX_FORMAT,
then one line per thing that must be as it was, each of which the launcher
checks before it loads anything:

    host DIGEST                 cache.host_id(): the processor the code is for
    env NAME DIGEST|-           a variable that changes the key or the compiler
    source DIGEST PATH          the program and each file it imports, by content
    stamp SIZE MTIME_NS PATH    each compiler source, llvmlite's version, the
                                Python command, the library: as .pyc files do
    dir MTIME_NS PATH           each compiler folder: a source added or removed
    touch PATH                  the entry's record (used: cache.evict keeps it)
    library PATH                the program, linked as a shared library

Digests are 64-bit FNV-1a in hex. Anything else, the launcher hands the
command line to Python, which runs it as before and writes the index again.
The shell script sets COMMAND_VARIABLE to the Python command's path only for
that command line; a run without it (`python -m pycoro run`, any option)
writes no index.
"""
from __future__ import annotations

import os

from ..common import cache

INDEX_FORMAT = "pycoro-launch 1"    # launcher.c's INDEX_FORMAT
COMMAND_VARIABLE = "PYCORO_COMMAND"
LAUNCHER = "launcher"               # bin/pycoro runs the cache folder's file of this name
LAUNCHER_SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "launcher.c")

# What a run reads from the environment that changes its entry's key
# (options.backtraces_wanted, cache.host_id) or which compiler the Python
# command imports.
KEY_ENVIRONMENT = ("PYCORO_BACKTRACE", "PYCORO_TARGET_CPU", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE",
                   "PYTHONNOUSERSITE", "PYTHONSAFEPATH")


def take_command() -> str | None:
    """The Python command's path where bin/pycoro asked for an index, and
    the variable removed (the program does not see it, as it does not from
    the launcher)."""
    return os.environ.pop(COMMAND_VARIABLE, None)


def fnv(data: bytes, h: int = 0xCBF29CE484222325) -> int:
    """64-bit FNV-1a: cheap to compute in the launcher, which has no BLAKE2."""
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def index_path(command: str, file: str) -> str:
    key = fnv(b"\0".join([os.fsencode(command), os.fsencode(os.getcwd()), os.fsencode(file)]))
    return os.path.join(cache.cache_dir(), f"launch-{key:016x}")


def write_index(command: str, file: str, imported: list[str], library: str, record: str) -> None:
    """Let the launcher run `pycoro run FILE` from this entry (`imported`: the
    files the program imported; `library`, `record`: the entry's files).
    Quietly nothing where the cache cannot be written or the launcher cannot
    be built."""
    host = cache.host_id()
    if not host.startswith("linux\n"):   # a host_id the launcher cannot compute (one without /proc/cpuinfo)
        return
    lines = [INDEX_FORMAT, f"host {fnv(host.encode()):016x}"]
    for name in KEY_ENVIRONMENT:
        value = os.environb.get(os.fsencode(name))
        lines.append(f"env {name} " + ("-" if value is None else f"{fnv(value):016x}"))
    for path in [os.path.abspath(file), *imported]:
        try:
            lines.append(f"source {fnv(cache._read(path)):016x} {path}")
        except OSError:
            return
    files, folders = cache.compiler_files()
    import llvmlite   # (loaded already: the cache's key covers its version)
    stamped = [*files, *((path, None) for path in (command, library, _version_file(llvmlite)))]
    for path, stat in stamped:
        try:
            stat = stat or os.stat(path)
        except OSError:
            return
        lines.append(f"stamp {stat.st_size} {stat.st_mtime_ns} {path}")
    lines += [f"dir {stat.st_mtime_ns} {path}" for path, stat in folders]
    lines += [f"touch {record}", f"library {library}"]
    if any("\n" in line for line in lines) or not ensure_launcher():
        return
    _store(index_path(command, file), ("\n".join(lines) + "\n").encode())


def _version_file(module) -> str:
    folder = os.path.dirname(module.__file__)
    version = os.path.join(folder, "_version.py")
    return version if os.path.exists(version) else module.__file__


def _store(path: str, data: bytes) -> None:
    """Write-then-rename (a launcher reading it never sees half a file)."""
    partial = f"{path}.{os.getpid()}"
    try:
        with open(partial, "wb") as f:
            f.write(data)
        os.replace(partial, path)
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass


def ensure_launcher() -> bool:
    """Whether the cache folder has the launcher built from this LAUNCHER_SOURCE;
    built now (with the C compiler that links executables) where it has not."""
    directory = cache.cache_dir()
    launcher = os.path.join(directory, LAUNCHER)
    try:
        with open(LAUNCHER_SOURCE, "rb") as f:
            source_digest = f"{fnv(f.read()):016x}"
        with open(launcher + ".source", encoding="ascii") as f:
            if f.read() == source_digest and os.access(launcher, os.X_OK):
                return True
    except OSError:
        pass
    import subprocess
    from ..backend.c_compiler import c_compiler_command
    compiler = c_compiler_command()
    if compiler is None:
        return False
    partial = f"{launcher}.{os.getpid()}"
    try:
        os.makedirs(directory, exist_ok=True)
        built = subprocess.run([*compiler, "-O2", LAUNCHER_SOURCE, "-o", partial, "-ldl", "-lpthread"],
                               capture_output=True).returncode == 0
        if built:
            os.replace(partial, launcher)
            _store(launcher + ".source", source_digest.encode())
    except OSError:
        built = False
    return built
