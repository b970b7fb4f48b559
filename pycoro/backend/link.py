"""Native artefacts: objects, assembly, and executables linked by the system C compiler."""
from __future__ import annotations

import errno
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import llvmlite.binding as llvm

from ..common.diagnostics import CompileError, Diagnostic
from .c_compiler import c_compiler_command


def write_object(code: bytes, path: str) -> None:
    with open(path, "wb") as f:
        f.write(code)


def write_assembly(module: llvm.ModuleRef, machine: llvm.TargetMachine, path: str) -> None:
    with open(path, "w") as f:
        f.write(machine.emit_assembly(module))


def write_executable(code: bytes, path: str, libraries: tuple[str, ...] = (), dirs: tuple[str, ...] = ()) -> None:
    """`libraries`, `dirs`: the program's own C libraries (-l) and where they
    are (-L, also the executable's run-time search path: it runs where it was built)."""
    flags = [flag for d in dirs for flag in (f"-L{d}", f"-Wl,-rpath,{os.path.abspath(d)}")]
    _link(code, path, "an executable", [], flags + [f"-l{name}" for name in libraries])


def write_shared(code: bytes, path: str) -> None:
    """A shared library (the code is position-independent: targets.native_machine)."""
    _link(code, path, "a shared library", ["-shared"])


def _link(code: bytes, path: str, what: str, flags: list[str], libraries: list[str] = ()) -> None:
    cc = c_compiler_command()
    if cc is None:
        raise CompileError([Diagnostic(
            f"cannot link {what}: no C compiler found (install gcc or set CC)", None,
            hint="`pycoro run` needs no C compiler; `--emit obj` writes an object file")])
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, "program.o")
        write_object(code, obj)
        # -lpthread: the runtime finds its stack with pthread_getattr_np, in libc
        # itself only since glibc 2.34 (the library is empty there)
        result = subprocess.run([*cc, *flags, obj, "-o", path, *libraries, "-lm", "-lpthread"], capture_output=True,
                                text=True)
    if result.returncode != 0:
        unwritable = re.search(r"cannot open output file .*?: (.+)", result.stderr)
        if unwritable:   # the driver words it as for every artefact (Compilation.build)
            raise OSError(errno.EIO, unwritable.group(1).strip(), path)
        raise CompileError([Diagnostic(f"linking failed ({shlex.join(cc)}):\n{result.stderr.strip()}", None)])


def shared_from_object(code: bytes) -> bytes | None:
    """Position-independent object code linked alone into a shared library by
    the system linker, for loading into a Python process with ctypes: its
    undefined symbols (libc's, libm's) are resolved from that process when it
    is loaded. None where that cannot be done (no `ld`, not Linux)."""
    linker = shutil.which("ld")
    if linker is None or not sys.platform.startswith("linux"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        obj, library = os.path.join(tmp, "program.o"), os.path.join(tmp, "program.so")
        with open(obj, "wb") as f:
            f.write(code)
        # --eh-frame-hdr (which cc passes, and ld alone does not): the index of
        # the unwind tables, without which glibc's `backtrace` stops at the
        # library's code (a panic's PYCORO_BACKTRACE)
        if subprocess.run([linker, "-shared", "--eh-frame-hdr", obj, "-o", library],
                          capture_output=True).returncode != 0:
            return None
        with open(library, "rb") as f:
            return f.read()
