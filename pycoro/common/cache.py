"""An on-disk cache of compiled artefacts, keyed by content and versions.

$PYCORO_CACHE_DIR, else $XDG_CACHE_HOME/pycoro, else ~/.cache/pycoro.
A cache that cannot be written is simply not used. Programs' object code
(`pycoro run`, pycoro.embed; for `pycoro run` also the same code linked as a
shared library, which a later run loads without LLVM) is kept for the most
recently used `MAX_OBJECTS` programs; older entries are deleted when a new
one is stored.

Every key covers the compiler itself: pycoro's version, llvmlite's, and the
name, size and modification time of each of pycoro's own sources and stdlib
files (as Python's .pyc files do), so that an edited checkout never reads
what an older compiler wrote.

A cached `pycoro run` goes through this module before anything else of the
compiler, so it imports little: BLAKE2 without OpenSSL's `hashlib`, entry
records in `marshal` rather than JSON, `tempfile` only to store, paths as
strings (`pathlib` brings fnmatch, urllib.parse and ipaddress: 3 ms).
"""
from __future__ import annotations

import functools
import marshal
import os
import sys

try:
    from _blake2 import blake2b   # CPython's own: `hashlib` would load OpenSSL first (~2.5 ms)
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

import llvmlite

from .. import __version__

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))   # the pycoro package: every source the compiler is made of, its stdlib too


def cache_dir() -> str:
    if os.environ.get("PYCORO_CACHE_DIR"):
        return os.environ["PYCORO_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pycoro")


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@functools.cache
def compiler_files() -> tuple[list[tuple[str, os.stat_result]], list[tuple[str, os.stat_result]]]:
    """Every source the compiler is made of, its stdlib too, and the folders
    that hold them: (path, stat) of each (os.walk rather than pathlib's glob,
    and no reading of the files)."""
    files, folders = [], []
    for directory, subdirectories, names in os.walk(_PACKAGE):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
        folders.append((directory, os.stat(directory)))
        for name in names:
            if name.endswith((".py", ".lark", ".pc", ".c", ".h")):
                path = os.path.join(directory, name)
                files.append((path, os.stat(path)))
    return files, folders


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the compiler's version and of its sources' and stdlib's names,
    sizes and modification times (once per process; together 2 ms of every
    cached run before it was done without reading the files)."""
    stamps = [f"pycoro {__version__} llvmlite {llvmlite.__version__}"]
    stamps += [f"{path[len(_PACKAGE):]} {stat.st_size} {stat.st_mtime_ns}" for path, stat in compiler_files()[0]]
    return blake2b("\0".join(sorted(stamps)).encode()).hexdigest()


def digest(data: str | bytes) -> str:
    return blake2b(data.encode() if isinstance(data, str) else data, digest_size=32).hexdigest()


def key(*parts: str | bytes) -> str:
    h = blake2b(compiler_fingerprint().encode(), digest_size=32)
    for part in parts:
        h.update(b"\0" + (part.encode() if isinstance(part, str) else part))
    return h.hexdigest()[:32]


def load(kind: str, digest: str) -> str | None:
    data = load_bytes(kind, digest)
    try:
        return None if data is None else data.decode()
    except UnicodeDecodeError:
        return None


def load_bytes(kind: str, digest: str) -> bytes | None:
    try:
        return _read(os.path.join(cache_dir(), f"{kind}-{digest}"))
    except OSError:
        return None


def store(kind: str, digest: str, data: str | bytes) -> None:
    directory = cache_dir()
    try:
        os.makedirs(directory, exist_ok=True)
        # write-then-rename: a concurrent reader never sees half a file
        import tempfile   # only to store: a cached run never does
        fd, tmp = tempfile.mkstemp(dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, os.path.join(directory, f"{kind}-{digest}"))
    except OSError:
        pass


# ---- object code of a program, for loading into this process

def object_key(kind: str, source: str, base_dir: str | os.PathLike, options, display: str) -> str:
    """An entry is keyed by the program's source, where its imports are looked
    up, the options, the host CPU and how the program names its file (the
    path as given: its panics and backtraces print it, and its imports'
    names follow from it); it records each imported file's hash
    (store_object), and is used only while those files are unchanged."""
    return key(kind, source, os.fspath(base_dir), repr(options), host_id(), display)


# The lines of a processor's /proc/cpuinfo entry that say what it is and what it
# can do (x86, then AArch64): LLVM's host CPU name and features follow from them.
_CPU_IDENTITY = frozenset({"vendor_id", "cpu family", "model", "model name", "stepping", "flags",
                           "CPU implementer", "CPU architecture", "CPU variant", "CPU part", "CPU revision",
                           "Features"})


@functools.cache
def host_id() -> str:
    """What native code is compiled for. On Linux, CPU 0's identity and feature
    flags as the kernel lists them, read without loading LLVM (a cached `pycoro
    run` does not); elsewhere, LLVM's description of the host."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            first_cpu = f.read(65536).split("\n\n")[0]
    except OSError:
        first_cpu = ""
    identity = [line for line in first_cpu.splitlines() if line.partition(":")[0].strip() in _CPU_IDENTITY]
    chosen = os.environ.get("PYCORO_TARGET_CPU", "")   # backend/targets.py TARGET_CPU
    if not identity:
        from ..backend.targets import host_description   # LLVM
        return host_description() + chosen
    return "\n".join([sys.platform, os.uname().machine, *identity, chosen])


def _valid_entry(kind: str, entry_key: str) -> dict | None:
    """An entry's record, while every file the program imported is unchanged."""
    record = load_bytes(f"{kind}.meta", entry_key)
    if record is None:
        return None
    entry = marshal.loads(record)
    for path, want, leads_to in entry["imports"]:
        if os.path.realpath(path) != leads_to or digest(_read(path)) != want:
            return None
    os.utime(record_path(kind, entry_key))   # used: the newest to keep
    return entry


def _entry_file(kind: str, entry_key: str, part: str, field: str) -> tuple[str, bytes, dict] | None:
    """A valid entry's file `part` (its digest recorded under `field`): where it
    is, its contents, and the entry's record."""
    try:
        entry = _valid_entry(kind, entry_key)
        path = os.path.join(cache_dir(), f"{kind}.{part}-{entry_key}")
        if entry is None or field not in entry:
            return None
        data = _read(path)
        return (path, data, entry) if digest(data) == entry[field] else None
    except (OSError, ValueError, EOFError, KeyError, TypeError):
        return None   # unreadable, from another layout or another Python's marshal: compile again


def load_object(kind: str, entry_key: str) -> tuple[bytes, object] | None:
    """The object code and metadata of a valid entry."""
    found = _entry_file(kind, entry_key, "o", "object")
    return None if found is None else (found[1], found[2]["meta"])


def load_shared(kind: str, entry_key: str) -> tuple[str, object, dict] | None:
    """Where a valid entry's code is, linked as a shared library (store_object's
    `shared`) for loading with ctypes alone, its metadata, and its record (the
    digests of the library and of each file the program imported)."""
    found = _entry_file(kind, entry_key, "so", "shared")
    return None if found is None else (found[0], found[2]["meta"], found[2])


def record_path(kind: str, entry_key: str) -> str:
    """Where an entry's record is: its modification time is when it was last used."""
    return os.path.join(cache_dir(), f"{kind}.meta-{entry_key}")


def store_object(kind: str, entry_key: str, code: bytes, meta, imported: list[os.PathLike],
                 shared: bytes | None = None) -> None:
    """Store object code, its metadata, and optionally the same code linked as a
    shared library; the entry is valid while the `imported` files are unchanged."""
    # each by the path it was looked up at, where it led then and its contents
    deps = [[os.fspath(p), digest(_read(p)), os.path.realpath(p)] for p in imported if os.path.isfile(p)]
    record = {"meta": meta, "imports": deps, "object": digest(code)}
    store(f"{kind}.o", entry_key, code)   # the record last: it is what makes an entry valid
    if shared is not None:
        store(f"{kind}.so", entry_key, shared)
        record["shared"] = digest(shared)
    store(f"{kind}.meta", entry_key, marshal.dumps(record))
    evict()


MAX_OBJECTS = 500


def evict(keep: int = MAX_OBJECTS) -> None:
    """Delete the entries of all but the `keep` most recently used programs."""
    directory = cache_dir()
    try:
        entries = [(entry.stat().st_mtime, entry.name) for entry in os.scandir(directory) if ".meta-" in entry.name]
    except OSError:
        return
    if len(entries) <= keep:
        return
    evicted = sorted(entries)[:len(entries) - keep]
    for _, name in evicted:
        kind, _, key_part = name.partition(".meta-")
        for file in (name, *(f"{kind}.{part}-{key_part}" for part in ("o", "so"))):
            discard(os.path.join(directory, file))
    # the launcher's indexes (pipeline/launch.py) as old as those: one may name
    # an evicted entry (its launch then goes to Python, which writes it again)
    # (and what a launcher's build killed half-way left: `launcher-M.PID`)
    try:
        for entry in os.scandir(directory):
            if entry.name.startswith("launch") and entry.stat().st_mtime <= evicted[-1][0] \
                    and (entry.name.startswith("launch-") or entry.name.rpartition(".")[2].isdigit()):
                discard(entry.path)
    except OSError:   # one gone meanwhile (another process evicting, or storing by rename)
        pass


def discard(path: str) -> None:
    """Remove a file of the cache, if it is there."""
    try:
        os.unlink(path)
    except OSError:
        pass
