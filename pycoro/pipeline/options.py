"""What a compilation is asked for. Light: the cached `pycoro run` (rerun.py)
keys its lookup by these without importing the compiler or LLVM."""
from __future__ import annotations

import os

from ..common.record import record

DEFAULT_GPU_ARCH = "sm_80"


@record(frozen=True)
class Options:
    opt_level: int = 2
    target: str = "native"            # or "nvptx"
    arch: str = DEFAULT_GPU_ARCH
    allow_device_heap: bool = False   # nvptx: accept frames from the device heap
    trampoline: bool = False          # symmetric transfer through a resume loop (always on nvptx)
    gpu_emulation: bool = False       # native: kernels run on the CPU, through launchers (pycoro.gpu)
    exports: tuple[str, ...] = ()     # functions (by name) that stay visible, for embedding (pycoro.embed)
    need_main: bool = True            # a program (not a library for embedding) must have `main`
    real_time: bool = False           # async programs: the wall clock instead of virtual time
    debug: bool = False               # -g: DWARF (middle/irgen/debuginfo.py)
    target_cpu: str = "native"        # native code's CPU: native, generic, or one LLVM knows (--target-cpu)
    libraries: tuple[str, ...] = ()       # C libraries to link or load (-l NAME)
    library_dirs: tuple[str, ...] = ()    # where to find them first (-L DIR)
    reyield: bool = False             # `yield from` as an nvptx build lowers it, on a CPU too (tests run it)

    def machine(self, jit: bool = False):
        """The LLVM target machine these options compile for (`jit`: for this process)."""
        from ..backend import targets   # LLVM: imported only to compile
        return targets.machine_for(self.target, self.arch, self.opt_level, jit, self.target_cpu)


def backtraces_wanted() -> bool:
    """Whether `PYCORO_BACKTRACE` is set (as the runtime reads it: not empty,
    not `0`). Set while compiling, it asks for the debug information a
    backtrace names functions and positions from, as `-g` does."""
    return os.environ.get("PYCORO_BACKTRACE", "0") not in ("", "0")
