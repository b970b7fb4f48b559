"""GPU code (LANGUAGE.md §8) for NVPTX: the builtins' intrinsics, kernel entry
points, and the small runtime a kernel links instead of stdlib/rt.pc.

A `kernel fn` is emitted as an ordinary internal function; its entry point,
named as in the source, has the `ptx_kernel` calling convention, takes its
pointers in the global address space (as CUDA's `__global__` parameters) and
calls the body with generic pointers.
"""
from __future__ import annotations

from llvmlite import ir

from ..frontend.types import PtrT
from . import intrinsics
from .llvmcompat import I32, I64, PTR, global_string
from .runtime import RUNTIME, symbol

# builtin → the intrinsic it reads (all `() -> i32`, read as u32) or calls
GPU_INTRINSICS: dict[str, str] = {
    f"{what}_{axis}": f"llvm.nvvm.read.ptx.sreg.{reg}.{axis}"
    for what, reg in (("thread_id", "tid"), ("block_id", "ctaid"),
                      ("block_dim", "ntid"), ("grid_dim", "nctaid"))
    for axis in "xyz"}
GPU_INTRINSICS["sync_threads"] = "llvm.nvvm.barrier0"

GLOBAL = 1   # NVPTX's global address space


def kernel_entry(module: ir.Module, name: str, body: ir.Function, param_types: list) -> ir.Function:
    """`define ptx_kernel void @name(…)`: casts global pointers to generic and calls the body."""
    params = [ir.PointerType(addrspace=GLOBAL) if isinstance(t, PtrT) else arg.type
              for t, arg in zip(param_types, body.args)]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), params), name)
    fn.calling_convention = "ptx_kernel"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    args = [b.addrspacecast(a, PTR) if isinstance(t, PtrT) else a
            for t, a in zip(param_types, fn.args)]
    b.call(body, args)
    b.ret_void()
    return fn


# ---- the runtime

def runtime_module(context: ir.Context | None = None) -> ir.Module:
    """The runtime's entry points (middle/runtime.py) for NVPTX: printing through
    CUDA's `vprintf`, panics that print and trap, frames from the device heap
    (reached only with `--allow-device-heap`: the driver refuses a kernel whose
    frames were not all placed in local memory)."""
    module = ir.Module(name="<gpu runtime>", context=context or ir.Context())
    vprintf = ir.Function(module, ir.FunctionType(I32, [PTR, PTR]), "vprintf")
    malloc = ir.Function(module, ir.FunctionType(PTR, [I64]), "malloc")
    free = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
    strings: dict[bytes, ir.GlobalVariable] = {}

    def string(text: str) -> ir.GlobalVariable:
        data = text.encode()
        if data not in strings:
            strings[data] = global_string(module, data, f".fmt.{len(strings)}")
        return strings[data]

    def define(name: str) -> tuple[ir.Function, ir.IRBuilder]:
        fn = ir.Function(module, RUNTIME[name], symbol(name))   # internalised once linked
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    def printf(b: ir.IRBuilder, fmt: str, values: list[ir.Value]) -> None:
        # vprintf takes the arguments packed in a buffer, each at its natural alignment
        if values:
            packed = ir.LiteralStructType([v.type for v in values])
            buf = b.alloca(packed)
            for i, v in enumerate(values):
                b.store(v, b.gep(buf, [I32(0), I32(i)]))
            args = buf
        else:
            args = ir.Constant(PTR, None)
        b.call(vprintf, [string(fmt), args])

    formats = {"print_i64": "%lld", "print_u64": "%llu", "print_str": "%s", "print_ptr": "%p",
               "print_f64": "%.17g"}
    for name, fmt in formats.items():
        fn, b = define(name)
        printf(b, fmt, [fn.args[0]])
        b.ret_void()
    fn, b = define("print_f32")
    printf(b, "%.9g", [b.fpext(fn.args[0], ir.DoubleType())])
    b.ret_void()
    fn, b = define("print_bool")
    printf(b, "%s", [b.select(fn.args[0], string("True"), string("False"))])
    b.ret_void()
    for name, text in (("print_sep", " "), ("print_end", "\n")):
        fn, b = define(name)
        printf(b, text, [])
        b.ret_void()
    for name in ("flush", "init"):
        fn, b = define(name)
        b.ret_void()
    trap = intrinsics.declare(module, "llvm.trap")
    fn, b = define("panic")
    message, file, line, col = fn.args
    printf(b, "panic: %s at %s:%d:%d\n", [message, file, line, col])
    b.call(trap, [])
    b.unreachable()
    fn, b = define("panic_bounds")
    index, length, file, line, col = fn.args
    printf(b, "panic: index out of bounds: the length is %lld but the index is %lld at %s:%d:%d\n",
           [length, index, file, line, col])
    b.call(trap, [])
    b.unreachable()
    fn, b = define("coro_alloc")
    b.ret(b.call(malloc, [fn.args[0]]))
    fn, b = define("coro_free")
    with b.if_then(b.icmp_unsigned("!=", fn.args[0], ir.Constant(PTR, None))):   # null: elided
        b.call(free, [fn.args[0]])
    b.ret_void()
    fn, b = define("coro_count")
    b.ret_void()
    return module
