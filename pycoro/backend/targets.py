"""Target machines. `native` compiles for the host CPU, like numba and -march=native."""
from __future__ import annotations

import functools

import llvmlite.binding as llvm


@functools.cache
def _initialise() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def native_machine(opt_level: int, jit: bool = False) -> llvm.TargetMachine:
    _initialise()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
        opt=min(opt_level, 3), reloc="pic", codemodel="jitdefault" if jit else "default", jit=jit)


def native_triple() -> str:
    _initialise()
    return llvm.get_process_triple()
