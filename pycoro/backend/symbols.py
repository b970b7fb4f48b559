"""Whether the C functions a program calls through `extern fn` exist.

A call of a symbol that nothing defines crashes the process that runs the
program under MCJIT (it is resolved to nothing: a SIGSEGV that takes a
Python interpreter with it), and makes the linker fail with a message
without a source position. The driver asks here first and reports each
missing function at its declaration (Compilation.require_externs).

Two scopes, asked with `dlsym` (ctypes, no LLVM, so that a cached run can
ask too):

- "c": the C library and the math library, what `cc … -lm` links an
  executable with; `pycoro run` and `pycoro build` accept the same programs.
- "process": everything this process can resolve, as MCJIT does (the above,
  the Python interpreter, and libraries loaded with RTLD_GLOBAL): for code
  loaded into Python (pycoro.compile).
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys

# glibc keeps these in libc_nonshared.a, linked statically into each program:
# `cc` links them and LLVM's JIT resolves them by name
# (RTDyldMemoryManager::getSymbolAddressInProcess), but dlsym cannot see them.
_GLIBC_STATIC = frozenset({"atexit", "stat", "fstat", "lstat", "stat64", "fstat64", "lstat64", "mknod"})

C_LIBRARIES = "the C library or the math library"

# The C libraries `-l` named (cli/commands.py), loaded into this process.
_LOADED: list[ctypes.CDLL] = []


def load_libraries(names: tuple[str, ...], dirs: tuple[str, ...]) -> None:
    """Load each library `-l NAME` names (lib NAME found in a `-L` folder, else
    where the system looks) into this process, global: the JIT and a cached
    program's shared library resolve their C functions against it, and
    `defined` finds them there."""
    from ..common.diagnostics import CompileError, Diagnostic
    for name in names:
        path = _find_library(name, dirs)
        if path is None:
            raise CompileError([Diagnostic(f"cannot find the C library `{name}` (-l {name})", None,
                                           hint="give the folder that holds lib" + name + ".so with -L DIR")])
        try:
            _LOADED.append(ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL))
        except OSError as err:
            raise CompileError([Diagnostic(f"cannot load the C library {path}: {err}", None)]) from None


def _find_library(name: str, dirs: tuple[str, ...]) -> str | None:
    import ctypes.util   # here: it imports subprocess, which a cached run does not need (rerun.py)
    for folder in dirs:
        for suffix in (".so", ".dylib"):
            path = os.path.join(folder, f"lib{name}{suffix}")
            if os.path.exists(path):
                return os.path.abspath(path)
    return ctypes.util.find_library(name)


@functools.cache
def _scope(where: str) -> ctypes.CDLL:
    if where == "c":
        # dlsym through a library's handle searches it and what it depends on:
        # libm, then libc (and the dynamic loader)
        for name in ("libm.so.6", "libm.so", "libm.dylib"):
            try:
                return ctypes.CDLL(name)
            except OSError:
                pass
    return ctypes.CDLL(None)


def defined(name: str, where: str) -> bool:
    """Whether the C function `name` can be found in scope `where` ("c" or "process")."""
    if name in _GLIBC_STATIC and sys.platform.startswith("linux"):
        return True
    return any(_has(library, name) for library in (_scope(where), *_LOADED))


def _has(library: ctypes.CDLL, name: str) -> bool:
    try:
        library[name]
    except (AttributeError, ValueError):
        return False
    return True


def all_defined(names: list[str], where: str) -> bool:
    return all(defined(name, where) for name in names)


_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"


def _near(name: str):
    """Names one edit from `name`: another case, one character dropped, two
    swapped, one replaced, one added (the cheapest first)."""
    yield name.lower()
    for i in range(len(name)):
        yield name[:i] + name[i + 1:]
    for i in range(len(name) - 1):
        yield name[:i] + name[i + 1] + name[i] + name[i + 2:]
    for i in range(len(name)):
        for c in _LETTERS:
            yield name[:i] + c + name[i + 1:]
    for i in range(len(name) + 1):
        for c in _LETTERS:
            yield name[:i] + c + name[i:]


def suggestion(name: str, where: str) -> str | None:
    """A function of scope `where` whose name is one typo away from `name`
    (a few hundred dlsym lookups, only when one is missing)."""
    seen = {name}
    for candidate in _near(name):
        if candidate in seen or not candidate or candidate[0].isdigit():
            continue
        seen.add(candidate)
        if candidate[0] == "_" and name[0] != "_":
            continue   # the C library's internals
        if defined(candidate, where):
            return candidate
    return None
