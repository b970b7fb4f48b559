"""An on-disk cache of compiled artefacts, keyed by content and versions.

$PYCORO_CACHE_DIR, else $XDG_CACHE_HOME/pycoro, else ~/.cache/pycoro.
A cache that cannot be written is simply not used.

Every key covers the compiler itself: pycoro's version, llvmlite's, and a
hash of pycoro's own sources and stdlib, so that an edited checkout never
reads what an older compiler wrote.
"""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import llvmlite

from . import __version__

_PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    if os.environ.get("PYCORO_CACHE_DIR"):
        return Path(os.environ["PYCORO_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pycoro"


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the compiler's sources and stdlib (a few ms, once per process)."""
    from .frontend.resolve import stdlib_dir
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
