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
from .llvmcompat import I32, I64, PTR, gep, global_string
from .runtime import RUNTIME, UNSIGNED_FIRST, UNSIGNED_HI, symbol

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

    def signedness(b: ir.IRBuilder, template: str, unsigned: ir.Value, flags: tuple[int, ...]) -> ir.Value:
        """The format for a panic's numbers: `template`'s `{}`s become `%llu`
        where `unsigned` has that number's flag (runtime.UNSIGNED_*: a u64
        past i64's range), `%lld` elsewhere, chosen at run time."""
        def spelled(bits: int) -> ir.Value:
            return string(template.format(*("%llu" if bits & flag else "%lld" for flag in flags)))
        every = sum(flags)
        taken = b.and_(unsigned, I32(every))
        chosen = spelled(0)
        for bits in range(1, every + 1):
            if bits & every == bits:   # each combination of the flags
                chosen = b.select(b.icmp_unsigned("==", taken, I32(bits)), spelled(bits), chosen)
        return chosen

    def printf(b: ir.IRBuilder, fmt: str | ir.Value, values: list[ir.Value]) -> None:
        # vprintf takes the arguments packed in a buffer, each at its natural alignment
        if values:
            packed = ir.LiteralStructType([v.type for v in values])
            buf = b.alloca(packed)
            for i, v in enumerate(values):
                b.store(v, b.gep(buf, [I32(0), I32(i)]))
            args = buf
        else:
            args = ir.Constant(PTR, None)
        b.call(vprintf, [string(fmt) if isinstance(fmt, str) else fmt, args])

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
    message, file, line, col = fn.args[:4]   # (a backtrace link follows: none on a GPU)
    printf(b, "panic: %s at %s:%d:%d\n", [message, file, line, col])
    b.call(trap, [])
    b.unreachable()
    fn, b = define("panic_bounds")
    index, length, unsigned, file, line, col = fn.args[:6]
    printf(b, signedness(b, "panic: index out of bounds: the length is %lld but the index is {} at %s:%d:%d\n",
                         unsigned, (UNSIGNED_FIRST,)), [length, index, file, line, col])
    b.call(trap, [])
    b.unreachable()
    fn, b = define("panic_slice")
    lo, hi, length, unsigned, file, line, col = fn.args[:7]
    printf(b, signedness(b, "panic: slice {}..{} out of range for slice of length %lld at %s:%d:%d\n",
                         unsigned, (UNSIGNED_FIRST, UNSIGNED_HI)), [lo, hi, length, file, line, col])
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
    fn, b = define("retcon_alloc")
    b.ret(b.call(malloc, [fn.args[0]]))
    fn, b = define("retcon_free")
    b.call(free, [fn.args[0]])
    b.ret_void()
    return module


# ---- kernels on the CPU (`pycoro.gpu`'s device="cpu")
#
# The same program compiled for the host, to compare a GPU's results with:
# the index builtins read `pc.gpu.index`, which a launcher sets before running
# each thread of the grid in turn. Threads run one after another, so a barrier
# can only be honoured with one thread per block; with more, sync_threads()
# panics rather than compute something a GPU would not.

EMULATED_INDEX = "pc.gpu.index"   # [12 x i32]: thread_id, block_id, block_dim, grid_dim; x, y, z each
_SLOTS = {f"{what}_{axis}": 3 * i + j
          for i, what in enumerate(("thread_id", "block_id", "block_dim", "grid_dim"))
          for j, axis in enumerate("xyz")}
_INDEX_TYPE = ir.ArrayType(I32, 12)


def launcher_name(kernel: str) -> str:
    return f"pc.launch.{kernel}"


def _index(module: ir.Module) -> ir.GlobalVariable:
    g = module.globals.get(EMULATED_INDEX)
    if g is None:
        g = ir.GlobalVariable(module, _INDEX_TYPE, EMULATED_INDEX)
        g.linkage = "internal"
        g.initializer = ir.Constant(_INDEX_TYPE, None)
    return g


def _slot(b: ir.IRBuilder, name: str) -> ir.Value:
    return gep(b, _index(b.module), [I32(0), I32(_SLOTS[name])], _INDEX_TYPE)


def emulated_builtin(b: ir.IRBuilder, name: str) -> ir.Value:
    """An index builtin, read from what the launcher set."""
    return b.load(_slot(b, name), typ=I32)


def emulated_barrier_holds(b: ir.IRBuilder) -> ir.Value:
    """Whether sync_threads() can be honoured: one thread per block."""
    dims = [b.load(_slot(b, f"block_dim_{axis}"), typ=I32) for axis in "xyz"]
    return b.icmp_unsigned("==", b.mul(b.mul(dims[0], dims[1]), dims[2]), I32(1))


def emulated_launcher(module: ir.Module, name: str, body: ir.Function, flush: ir.Function) -> ir.Function:
    """`void pc.launch.NAME(ptr dims, args…)`: runs every thread of the grid in
    turn; `dims` is six u32s, the grid's then the block's x, y, z."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR] + list(body.function_type.args)),
                     launcher_name(name))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    dims_arg, args = fn.args[0], list(fn.args[1:])
    dims = [b.load(gep(b, dims_arg, [I32(i)], I32), typ=I32) for i in range(6)]
    grid, block = dims[:3], dims[3:]
    for axis, g, t in zip("xyz", grid, block):
        b.store(g, _slot(b, f"grid_dim_{axis}"))
        b.store(t, _slot(b, f"block_dim_{axis}"))

    def count(n: ir.Value, label: str, inner) -> None:
        """for i in 0..n (u32) { inner(i) }"""
        entry, head, step, done = b.block, fn.append_basic_block(f"{label}.head"), \
            fn.append_basic_block(f"{label}.body"), fn.append_basic_block(f"{label}.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I32)
        i.add_incoming(I32(0), entry)
        b.cbranch(b.icmp_unsigned("<", i, n), step, done)
        b.position_at_end(step)
        inner(i)
        i.add_incoming(b.add(i, I32(1)), b.block)
        b.branch(head)
        b.position_at_end(done)

    def spread(linear: ir.Value, sizes: list[ir.Value], what: str) -> None:
        """x, y, z of a linear index (x fastest, as CUDA numbers threads)."""
        rest = linear
        for axis, size in zip("xyz", sizes):
            b.store(b.urem(rest, size), _slot(b, f"{what}_{axis}"))
            rest = b.udiv(rest, size)

    def run_block(blk: ir.Value) -> None:
        spread(blk, grid, "block_id")
        count(b.mul(b.mul(block[0], block[1]), block[2]), "thread",
              lambda t: (spread(t, block, "thread_id"), b.call(body, args)))

    count(b.mul(b.mul(grid[0], grid[1]), grid[2]), "block", run_block)
    b.call(flush, [])   # what the kernels printed, before control returns to Python
    b.ret_void()
    return fn
