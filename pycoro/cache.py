"""An on-disk cache of compiled artefacts, keyed by content and versions.

$PYCORO_CACHE_DIR, else $XDG_CACHE_HOME/pycoro, else ~/.cache/pycoro.
A cache that cannot be written is simply not used. Programs' object code
(`pycoro run`, pycoro.embed) is kept for the most recently used
`MAX_OBJECTS` programs; older entries are deleted when a new one is stored.

Every key covers the compiler itself: pycoro's version, llvmlite's, and a
hash of pycoro's own sources and stdlib, so that an edited checkout never
reads what an older compiler wrote.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

import llvmlite

from . import __version__
from .paths import stdlib_dir

_PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    if os.environ.get("PYCORO_CACHE_DIR"):
        return Path(os.environ["PYCORO_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pycoro"


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the compiler's sources and stdlib (a few ms, once per process)."""
    h = hashlib.sha256(f"pycoro {__version__} llvmlite {llvmlite.__version__}".encode())
    files = sorted([*_PACKAGE.rglob("*.py"), *_PACKAGE.rglob("*.lark"), *stdlib_dir().glob("*.pc")])
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def digest(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def key(*parts: str | bytes) -> str:
    h = hashlib.sha256(compiler_fingerprint().encode())
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
        return (cache_dir() / f"{kind}-{digest}").read_bytes()
    except OSError:
        return None


def store(kind: str, digest: str, data: str | bytes) -> None:
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # write-then-rename: a concurrent reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, directory / f"{kind}-{digest}")
    except OSError:
        pass


# ---- object code of a program, for loading into this process

def object_key(kind: str, source: str, base_dir: Path, options) -> str:
    """An entry is keyed by the program's source, where its imports are looked
    up, the options and the host CPU; it records each imported file's hash
    (store_object), and is used only while those files are unchanged."""
    from .backend.targets import host_description   # LLVM: only for object code
    return key(kind, source, str(base_dir), repr(options), host_description())


def load_object(kind: str, entry_key: str) -> tuple[bytes, object] | None:
    """The object code and metadata of a valid entry."""
    try:
        entry = json.loads(load(f"{kind}.json", entry_key) or "null")
        code = load_bytes(f"{kind}.o", entry_key)
        if entry is None or code is None or digest(code) != entry["object"]:
            return None
        for path, want in entry["imports"]:
            if digest(Path(path).read_bytes()) != want:
                return None
        os.utime(cache_dir() / f"{kind}.json-{entry_key}")   # used: the newest to keep
        return code, entry["meta"]
    except (OSError, ValueError, KeyError, TypeError):
        return None   # unreadable or from another layout: compile again


def store_object(kind: str, entry_key: str, code: bytes, meta, imported: list[Path]) -> None:
    deps = [[str(p), digest(p.read_bytes())] for p in imported if p.is_file()]
    store(f"{kind}.o", entry_key, code)   # the .json last: it is what makes an entry valid
    store(f"{kind}.json", entry_key, json.dumps({"meta": meta, "imports": deps, "object": digest(code)}))
    evict()


MAX_OBJECTS = 500


def evict(keep: int = MAX_OBJECTS) -> None:
    """Delete the entries of all but the `keep` most recently used programs."""
    try:
        entries = [(p.stat().st_mtime, p) for p in cache_dir().glob("*.json-*")]
    except OSError:
        return
    if len(entries) <= keep:
        return
    for _, entry in sorted(entries)[:len(entries) - keep]:
        kind, _, key_part = entry.name.partition(".json-")
        for path in (entry, entry.with_name(f"{kind}.o-{key_part}")):
            try:
                path.unlink()
            except OSError:
                pass
