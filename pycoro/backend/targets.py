"""Target machines. `native` compiles for the host CPU, like numba and -march=native."""
from __future__ import annotations

import functools
import os

import llvmlite.binding as llvm


NVPTX_TRIPLE = "nvptx64-nvidia-cuda"


@functools.cache
def _initialise() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()   # module-level assembly: the runtime's cold code (cold_runtime.py)
    # -g at -O2: variable locations as DBG_VALUEs, as LLVM made them before 15.
    # Its newer instruction references assert in MachineFunction's
    # finalizeDebugInstrRefs (and abort the process: llvmlite's LLVM is built
    # with assertions) on async and returned-continuation coroutines' resume
    # functions. No effect on code without debug info.
    llvm.set_option("", "-experimental-debug-variable-locations=false")
    # Every function in `.text`: the runtime's panic functions are `cold`, which
    # would put them in `.text.unlikely.`, and the backtrace table
    # (backtrace.py) gives addresses as offsets in the one text section.
    llvm.set_option("", "-profile-guided-section-prefix=false")


@functools.cache
def _initialise_all() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


# PYCORO_TARGET_CPU=x86-64 (or x86-64-v3, znver4, …): native code for that CPU
# instead of this one's, e.g. an executable for older machines, or one that
# valgrind can run (it knows no AVX-512).
TARGET_CPU = "PYCORO_TARGET_CPU"


def native_machine(opt_level: int, jit: bool = False, cpu: str = "native") -> llvm.TargetMachine:
    """`cpu`: `native` (this machine's, or $PYCORO_TARGET_CPU's), `generic`
    (any machine of this architecture: x86-64's baseline), or a CPU LLVM knows."""
    _initialise()
    target = llvm.Target.from_default_triple()
    if cpu == "generic":
        cpu = "x86-64" if llvm.get_process_triple().startswith("x86_64") else "generic"
    elif cpu == "native":
        cpu = os.environ.get(TARGET_CPU, "")
    features = "" if cpu else llvm.get_host_cpu_features().flatten()
    return target.create_target_machine(
        cpu=cpu or llvm.get_host_cpu_name(), features=features,
        opt=min(opt_level, 3), reloc="pic", codemodel="jitdefault" if jit else "default", jit=jit)


def host_description() -> str:
    """What native code is compiled for: the host's triple, CPU and features."""
    _initialise()
    return f"{llvm.get_process_triple()} {llvm.get_host_cpu_name()} {llvm.get_host_cpu_features().flatten()}"


def native_triple() -> str:
    _initialise()
    return llvm.get_process_triple()


def nvptx_arches() -> list[str]:
    """The `sm_XX` names LLVM's NVPTX backend knows (its CPU names)."""
    _initialise_all()
    return _NVPTX_ARCHES


# From LLVM 22's NVPTX.td (llvmlite cannot list a target's CPUs).
_NVPTX_ARCHES = [f"sm_{n}" for n in (
    "20", "21", "30", "32", "35", "37", "50", "52", "53", "60", "61", "62", "70", "72", "75",
    "80", "86", "87", "88", "89", "90", "90a", "100", "100a", "100f", "101", "101a", "101f",
    "103", "103a", "103f", "110", "110a", "110f", "120", "120a", "120f", "121", "121a", "121f")]


def nvptx_machine(arch: str, opt_level: int) -> llvm.TargetMachine:
    _initialise_all()
    return llvm.Target.from_triple(NVPTX_TRIPLE).create_target_machine(cpu=arch, opt=min(opt_level, 3))


def machine_for(target: str, arch: str, opt_level: int, jit: bool = False, cpu: str = "native") -> llvm.TargetMachine:
    return nvptx_machine(arch, opt_level) if target == "nvptx" else native_machine(opt_level, jit, cpu)


def triple_for(target: str) -> str:
    return NVPTX_TRIPLE if target == "nvptx" else native_triple()
