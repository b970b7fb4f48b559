"""The runtime's entry points as the generated code sees them.

The runtime itself is PyCoro (`stdlib/rt.pc`), compiled as a separate unit
and linked into every program; this table is the ABI between the two.
"""
from __future__ import annotations

from llvmlite import ir

from .llvmcompat import I1, I32, I64, PTR

_VOID = ir.VoidType()

RUNTIME: dict[str, ir.FunctionType] = {
    "print_i64": ir.FunctionType(_VOID, [I64]),
    "print_u64": ir.FunctionType(_VOID, [I64]),
    "print_f64": ir.FunctionType(_VOID, [ir.DoubleType()]),
    "print_f32": ir.FunctionType(_VOID, [ir.FloatType()]),
    "print_bool": ir.FunctionType(_VOID, [I1]),
    "print_str": ir.FunctionType(_VOID, [PTR]),
    "print_ptr": ir.FunctionType(_VOID, [PTR]),
    "print_sep": ir.FunctionType(_VOID, []),
    "print_end": ir.FunctionType(_VOID, []),
    # A panic's last arguments (its site): file, line, column, and for a
    # backtrace what leads to the coroutines that continue when the panicking
    # one ends, and its kind (coro/base.py's LINK_*). irgen/function.py's `panic_site`.
    # message, site
    "panic": ir.FunctionType(_VOID, [PTR, PTR, I32, I32, PTR, I32]),
    # index, length, which numbers are u64s (UNSIGNED_*), site
    "panic_bounds": ir.FunctionType(_VOID, [I64, I64, I32, PTR, I32, I32, PTR, I32]),
    # lo, hi, length, which numbers are u64s, site
    "panic_slice": ir.FunctionType(_VOID, [I64, I64, I64, I32, PTR, I32, I32, PTR, I32]),
    "flush": ir.FunctionType(_VOID, []),
    "init": ir.FunctionType(_VOID, []),
    # coroutine frames: every allocation and free is counted (`pycoro run --check-leaks`)
    "coro_alloc": ir.FunctionType(PTR, [I64]),
    "coro_free": ir.FunctionType(_VOID, [PTR, I64]),
    # a frame from a promise's own allocate (+1) / deallocate (-1) hook, counted too
    "coro_count": ir.FunctionType(_VOID, [I64]),
    # a returned-continuation frame too big for its caller's buffer (LLVM calls these)
    "retcon_alloc": ir.FunctionType(PTR, [I64]),
    "retcon_free": ir.FunctionType(_VOID, [PTR]),
    # std/async with `--real-time`: a monotonic clock in ms, and waiting for it
    "clock_ms": ir.FunctionType(I64, []),
    "sleep_ms": ir.FunctionType(_VOID, [I64]),
}

NORETURN = {"panic", "panic_bounds", "panic_slice"}
# A bounds panic's numbers travel as i64s; these bits say which were `u64`s
# (one past i64's range would print as negative): the index or `lo`, and `hi`.
UNSIGNED_FIRST, UNSIGNED_HI = 1, 2


# Called by `pycoro run --check-leaks` after `main`: the number of live frames.
LIVE_FRAMES = "pc.__pc_live_frames"

# The runtime's variables the generated code uses too (declared there,
# defined in stdlib/rt.pc): how many native levels of loops run as recursive
# functions are on the stack (middle/internal_iteration.py), the runtime's so
# that `__pc_try` puts it back when a panic abandons such loops. By rt.pc's
# symbol, the name the runtime gives it: outside the `pc.` names of a
# program's own symbols, and not a C identifier either (an `extern`'s name),
# so that nothing a program declares can take it.
PUSHED_LEVELS = "__pycoro.pushed_levels"
SHARED_STATE = {"pc.__pc_pushed_levels": PUSHED_LEVELS}


def symbol(name: str) -> str:
    """The runtime function `name` is `fn __pc_<name>` in stdlib/rt.pc."""
    return f"pc.__pc_{name}"
