"""The system C compiler: it links executables (link.py) and builds the
launcher (pipeline/launch.py). No LLVM here: a cached `pycoro run` may need it."""
from __future__ import annotations

import os
import shlex
import shutil


def c_compiler_command() -> list[str] | None:
    """The C compiler that links, with its flags: `$CC` as make and
    setuptools read it (`CC="clang -fuse-ld=lld"`), else the first of cc,
    gcc, clang that is installed."""
    words = shlex.split(os.environ.get("CC", ""))
    if words and shutil.which(words[0]):
        return words
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return [name]
    return None


def c_compiler() -> str | None:
    """The C compiler's program (c_compiler_command without its flags)."""
    command = c_compiler_command()
    return command[0] if command else None
