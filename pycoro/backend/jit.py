"""Run a linked, optimised module in-process with MCJIT."""
from __future__ import annotations

import llvmlite.binding as llvm

from .inprocess import call_main


def run_main(loaded: "Loaded", live_frames: str) -> tuple[int, int]:
    """Call the program's C `main`; return its exit status and how many
    coroutine frames were still allocated afterwards."""
    return call_main(loaded.address("main"), loaded.engine.get_function_address(live_frames))


class Loaded:
    """A module compiled into this process; its functions stay valid while it lives."""

    def __init__(self, module: llvm.ModuleRef, machine: llvm.TargetMachine, objects: tuple[bytes, ...] = ()):
        self.engine = llvm.create_mcjit_compiler(module, machine)
        for code in objects:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        self.engine.finalize_object()

    @classmethod
    def from_object(cls, code: bytes, machine: llvm.TargetMachine) -> "Loaded":
        """Load object code emitted for this process (by a JIT target machine)."""
        empty = llvm.parse_assembly("")
        empty.triple = machine.triple
        return cls(empty, machine, (code,))

    def address(self, name: str) -> int:
        address = self.engine.get_function_address(name)
        if not address:
            raise KeyError(name)
        return address
