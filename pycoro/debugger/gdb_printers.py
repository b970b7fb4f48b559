"""gdb's view of PyCoro programs built with `-g` (docs/debugging.md).

Loaded by `pycoro gdb PROGRAM` (or `source` it): runs inside gdb's own
Python, so it imports nothing of pycoro.

A coroutine handle (`Generator<i64>`, `Task<i64>`, … a typedef of the
frame's address in the DWARF pycoro writes) prints as what it refers to:

    g = Generator<i64> suspended in squares (frame 0x55555556ab10)
    done = Generator<i64> finished (frame 0x55555556ab80)

For the switched-resume coroutines (generators, tasks) a frame starts with
its resume function, which LLVM sets to null when the coroutine reaches its
final suspend point. A handle of another kind (a Stream's control block, an
async Join) prints its address only.
"""
import re

import gdb

_SWITCHED = re.compile(r"^(Generator|Task|Coro|Lazy)<")
_HANDLE = re.compile(r"^[A-Z]\w*<.*>$")


def _function_at(address: int) -> str:
    """The PyCoro function whose code is at `address` (`pc.squares.resume` → `squares`)."""
    try:
        block = gdb.block_for_pc(address)
    except RuntimeError:
        block = None
    name = block.function.name if block is not None and block.function is not None else None
    if name is None:
        return f"{address:#x}"
    name = re.sub(r"^pc\.", "", name)
    return re.sub(r"\.(resume|destroy|cleanup)$", "", name)


class HandlePrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        kind = str(self.value.type)
        word = gdb.lookup_type("unsigned long")
        frame = int(self.value.cast(word))
        if frame == 0:
            return f"{kind} (none)"
        if not _SWITCHED.match(kind):
            return f"{kind} (at {frame:#x})"
        resume = int(gdb.Value(frame).cast(word.pointer()).dereference())
        if resume == 0:
            return f"{kind} finished (frame {frame:#x})"
        return f"{kind} suspended in {_function_at(resume)} (frame {frame:#x})"


def _lookup(value):
    name = value.type.name
    if name and _HANDLE.match(name) and value.type.strip_typedefs().code == gdb.TYPE_CODE_PTR:
        return HandlePrinter(value)
    return None


gdb.pretty_printers.append(_lookup)
