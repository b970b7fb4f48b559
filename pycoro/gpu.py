"""Run a PyCoro program's kernels from Python: on an NVIDIA GPU, or on the CPU
to compare with (LANGUAGE.md §8, docs/gpu.md).

    import pycoro.gpu
    gpu = pycoro.gpu.compile_file("examples/gpu/strided.pc")           # device="cuda"
    cpu = pycoro.gpu.compile_file("examples/gpu/strided.pc", device="cpu")
    gpu.square_all[grid, block](inp, out, n)    # numba's launch syntax
    gpu.square_all.elapsed                      # seconds the last launch took
    gpu.from_cache                              # whether the code came from the module cache

A `ptr<T>` parameter takes any writable buffer of `T`s (a NumPy array, an
`array.array`, a ctypes array): on the GPU it is copied to the device before
the launch and back after it; on the CPU the kernel works on it in place.
Scalars are checked against the kernel's signature (`TypeError` otherwise).

The GPU is reached through the CUDA driver's C API (`libcuda`, which every
NVIDIA driver installs) with ctypes, so no Python package is needed. On the
CPU, the threads of the grid run one after another, so a program that calls
`sync_threads()` must be launched there with one thread per block (a barrier
between threads that run in turn cannot be honoured: `ValueError`). A panic
in a kernel ends the process with status 101 on the CPU, as `pycoro run`
does; on the GPU it traps, and the launch raises `GpuError`.
"""
from __future__ import annotations

import ctypes
import time
from pathlib import Path

from .backend import targets
from .pipeline.driver import Compilation, Options
from .pipeline.options import DEFAULT_GPU_ARCH
from .frontend.layout import StructLayouts
from .frontend.program import BuiltinCall
from .embed import C_TYPES, scalar_argument
from .frontend.types import FloatT, PtrT, Type
from .middle.gpu import launcher_name

DEVICES = ("cuda", "cpu")


def compile(source: str, device: str = "cuda", arch: str | None = None, opt_level: int = 2,
            name: str = "<string>", cache: bool = True) -> "Kernels":
    """Compile `source`'s kernels for `device` ("cuda" or "cpu"). The code (PTX,
    or the CPU's object code) comes from the on-disk module cache when it has
    this program; `cache=False`: compile even then."""
    return Kernels(Compilation(source, name, Path.cwd(), Options(opt_level=opt_level)), device, arch, cache)


def compile_file(path: str | Path, device: str = "cuda", arch: str | None = None,
                 opt_level: int = 2, cache: bool = True) -> "Kernels":
    return Kernels(Compilation.from_file(str(path), Options(opt_level=opt_level)), device, arch, cache)


class GpuError(RuntimeError):
    """The CUDA driver refused something (no device, a kernel that trapped, …)."""


class Kernels:
    """A program's kernels, as attributes named like the `kernel fn`s."""

    def __init__(self, compilation: Compilation, device: str, arch: str | None, cache: bool = True):
        if device not in DEVICES:
            raise ValueError(f"device must be one of {', '.join(map(repr, DEVICES))}, not {device!r}")
        self.device = device
        base = compilation.options
        nvptx = Compilation(compilation.source, compilation.display, compilation.base_dir,
                            Options(opt_level=base.opt_level, target="nvptx"))
        program = nvptx.check()
        self._kernels = {f.decl.name: Kernel(self, f.decl.name, f.params, program.layouts)
                         for f in program.functions if f.decl.kind == "kernel"}
        self.uses_barrier = any(isinstance(t, BuiltinCall) and t.name == "sync_threads"
                                for f in program.functions for t in f.calls.values())
        if device == "cpu":
            native = Compilation(compilation.source, compilation.display, compilation.base_dir,
                                 Options(opt_level=base.opt_level, gpu_emulation=True))
            self._loaded, self.from_cache = native.load(cache)
        else:
            self._driver = _driver()
            self.ptx, self.from_cache = nvptx.for_arch(arch or self._driver.arch()).ptx(cache)
            self._module = self._driver.load(self.ptx)

    def __getattr__(self, name: str) -> "Kernel":
        kernels = self.__dict__.get("_kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"the program has no kernel `{name}` (kernels: {', '.join(kernels) or 'none'})")

    def __dir__(self):
        return [*super().__dir__(), *self._kernels]

    def _entry(self, name: str):
        if self.device == "cpu":
            return self._loaded.address(launcher_name(name))
        return self._driver.function(self._module, name)


class Kernel:
    def __init__(self, owner: Kernels, name: str, params: list[tuple[str, Type]], layouts: StructLayouts):
        self.owner, self.name, self.params = owner, name, params
        self._sizes = [layouts.size_align(t.elem)[0] if isinstance(t, PtrT) else 0 for _, t in params]
        self.elapsed: float | None = None   # seconds, of the last launch
        self._entry = None

    @property
    def signature(self) -> str:
        return f"kernel fn {self.name}({', '.join(f'{n}: {t}' for n, t in self.params)})"

    def __getitem__(self, config) -> "_Launch":
        if not (isinstance(config, tuple) and len(config) == 2):
            raise TypeError(f"launch {self.name} as kernel[grid, block](…)")
        return _Launch(self, _dims(config[0], "grid"), _dims(config[1], "block"))

    def __repr__(self) -> str:
        return f"<{self.signature} on {self.owner.device}>"


class _Launch:
    def __init__(self, kernel: Kernel, grid: tuple[int, int, int], block: tuple[int, int, int]):
        self.kernel, self.grid, self.block = kernel, grid, block

    def __call__(self, *args) -> None:
        k = self.kernel
        if len(args) != len(k.params):
            raise TypeError(f"{k.signature} takes {len(k.params)} arguments, {len(args)} given")
        values = [_argument(k, i, a) for i, a in enumerate(args)]
        if k._entry is None:
            k._entry = k.owner._entry(k.name)
        if k.owner.device == "cpu" and k.owner.uses_barrier and self.block != (1, 1, 1):
            raise ValueError(f"{k.name}: the program calls sync_threads(), which the CPU can honour "
                             "only with one thread per block (its threads run in turn): launch "
                             f"with block 1, not {self.block}")
        if k.owner.device == "cpu":
            k.elapsed = _launch_on_cpu(k, self.grid, self.block, values)
        else:
            k.elapsed = k.owner._driver.launch(k._entry, self.grid, self.block, values, k.params)


def _dims(value, what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and d >= 1 for d in dims):
        raise ValueError(f"{what} must be a positive int or a tuple of 1 to 3 of them, not {value!r}")
    return (dims + (1, 1))[:3]


# ---- arguments

_SCALARS = {**C_TYPES, "bool": ctypes.c_bool}   # a kernel takes a bool as LLVM's i1
_FLOAT_FORMATS, _INT_FORMATS = set("efd"), set("bBhHiIlLqQnN")


def _argument(k: Kernel, i: int, value):
    """A checked argument: a ctypes scalar, or a writable buffer (a memoryview)."""
    name, t = k.params[i]
    where = f"argument {i + 1} (`{name}: {t}`) of {k.signature}"
    if isinstance(t, PtrT):
        try:
            view = memoryview(value)
        except TypeError:
            raise TypeError(f"{where} must be a buffer (a NumPy array, array.array, …), "
                            f"not {type(value).__name__}") from None
        kind = _FLOAT_FORMATS if isinstance(t.elem, FloatT) else _INT_FORMATS
        fmt = view.format.lstrip("@=<>!")
        if view.readonly or not view.c_contiguous or view.itemsize != k._sizes[i] or fmt not in kind:
            raise TypeError(f"{where} must be a writable contiguous buffer of {t.elem} "
                            f"({k._sizes[i]}-byte items), not format {view.format!r} of "
                            f"{view.itemsize}-byte items{' (read-only)' * view.readonly}")
        return view.cast("B")
    return _SCALARS[str(t)](scalar_argument(where, t, value))


def _address(view: memoryview) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(view)) if view.nbytes else 0


def _launch_on_cpu(k: Kernel, grid, block, values) -> float:
    types = [ctypes.c_void_p] + [ctypes.c_void_p if isinstance(v, memoryview) else type(v) for v in values]
    launcher = ctypes.CFUNCTYPE(None, *types)(k._entry)
    args = [_address(v) if isinstance(v, memoryview) else v for v in values]
    dims = (ctypes.c_uint32 * 6)(*grid, *block)
    start = time.perf_counter()
    launcher(dims, *args)
    return time.perf_counter() - start


# ---- the CUDA driver, through its C API

_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 75, 76
_the_driver: "_Driver | None" = None


def _driver() -> "_Driver":
    global _the_driver
    if _the_driver is None:
        _the_driver = _Driver()
    return _the_driver


def available() -> bool:
    """Whether a CUDA device can be used (the tests that need one skip otherwise)."""
    try:
        _driver()
    except GpuError:
        return False
    return True


class _Driver:
    def __init__(self):
        for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
            try:
                self.lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            raise GpuError("no CUDA driver (libcuda) on this machine")
        lib = self.lib
        lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
        lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
        lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        lib.cuEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.cuEventSynchronize.argtypes = [ctypes.c_void_p]
        lib.cuEventElapsedTime.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p]
        self.check(lib.cuInit(0), "cuInit")
        self.device = ctypes.c_int()
        self.check(lib.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self.check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device), "cuDevicePrimaryCtxRetain")
        self.check(lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def check(self, status: int, what: str) -> None:
        if status != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(status, ctypes.byref(text))
            raise GpuError(f"{what} failed: {(text.value or b'').decode() or 'error'} ({status})")

    def arch(self) -> str:
        """The device's `sm_XX`, if LLVM knows it; else the default (the driver
        compiles PTX for older archs to the device's)."""
        cc = []
        for attribute in (_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR):
            v = ctypes.c_int()
            self.check(self.lib.cuDeviceGetAttribute(ctypes.byref(v), attribute, self.device), "cuDeviceGetAttribute")
            cc.append(v.value)
        arch = f"sm_{cc[0]}{cc[1]}"
        return arch if arch in targets.nvptx_arches() else DEFAULT_GPU_ARCH

    def load(self, ptx: str) -> ctypes.c_void_p:
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx.encode() + b"\0")),
                   "loading the PTX (cuModuleLoadData)")
        return module

    def function(self, module: ctypes.c_void_p, name: str) -> ctypes.c_void_p:
        fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()), "cuModuleGetFunction")
        return fn

    def launch(self, fn, grid, block, values, params) -> float:
        lib = self.lib
        buffers = []   # (device pointer, host view)
        slots = []
        start, end = ctypes.c_void_p(), ctypes.c_void_p()
        try:
            for v in values:
                if isinstance(v, memoryview):
                    dptr = ctypes.c_uint64()
                    self.check(lib.cuMemAlloc_v2(ctypes.byref(dptr), max(v.nbytes, 1)), "cuMemAlloc")
                    buffers.append((dptr, v))
                    if v.nbytes:
                        self.check(lib.cuMemcpyHtoD_v2(dptr, _address(v), v.nbytes), "cuMemcpyHtoD")
                    slots.append(dptr)
                else:
                    slots.append(v)
            pointers = (ctypes.c_void_p * len(slots))(*[ctypes.addressof(s) for s in slots])
            self.check(lib.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
            self.check(lib.cuEventCreate(ctypes.byref(end), 0), "cuEventCreate")
            self.check(lib.cuEventRecord(start, None), "cuEventRecord")
            self.check(lib.cuLaunchKernel(fn, *grid, *block, 0, None, pointers, None), "cuLaunchKernel")
            self.check(lib.cuEventRecord(end, None), "cuEventRecord")
            self.check(lib.cuEventSynchronize(end), "the kernel (a panic traps)")
            ms = ctypes.c_float()
            self.check(lib.cuEventElapsedTime(ctypes.byref(ms), start, end), "cuEventElapsedTime")
            for dptr, v in buffers:
                if v.nbytes:
                    self.check(lib.cuMemcpyDtoH_v2(_address(v), dptr, v.nbytes), "cuMemcpyDtoH")
            return ms.value / 1e3
        finally:
            for dptr, _ in buffers:
                lib.cuMemFree_v2(dptr)
            for event in (start, end):
                if event.value:
                    lib.cuEventDestroy_v2(event)
