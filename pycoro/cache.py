"""An on-disk cache of compiled artefacts, keyed by content and versions.

$PYCORO_CACHE_DIR, else $XDG_CACHE_HOME/pycoro, else ~/.cache/pycoro.
A cache that cannot be written is simply not used.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import llvmlite

from . import __version__


def cache_dir() -> Path:
    if os.environ.get("PYCORO_CACHE_DIR"):
        return Path(os.environ["PYCORO_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pycoro"


def key(*parts: str | bytes) -> str:
    h = hashlib.sha256(f"pycoro {__version__} llvmlite {llvmlite.__version__}".encode())
    for part in parts:
        h.update(b"\0" + (part.encode() if isinstance(part, str) else part))
    return h.hexdigest()[:32]


def load(kind: str, digest: str) -> str | None:
    try:
        return (cache_dir() / f"{kind}-{digest}").read_text()
    except OSError:
        return None


def store(kind: str, digest: str, text: str) -> None:
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # write-then-rename: a concurrent reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=directory)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, directory / f"{kind}-{digest}")
    except OSError:
        pass
