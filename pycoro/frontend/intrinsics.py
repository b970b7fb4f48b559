"""The functions the stdlib declares `intrinsic fn` (std/math), as the checker
sees them: name → the kinds of type its one type parameter accepts.

Each one is a single LLVM intrinsic on every target, so it costs an
instruction on the CPU and on nvptx alike (no libm, no libdevice). Which
intrinsic a name and type lower to is the middle's business
(middle/intrinsics.py's `MATH`).
"""
from __future__ import annotations

from .ast import NamedType
from .types import FloatT, IntT, Type

FLOAT, SIGNED, UNSIGNED = "float", "signed", "unsigned"
NUMERIC = (FLOAT, SIGNED, UNSIGNED)

ACCEPTS: dict[str, tuple[str, ...]] = {
    "sqrt": (FLOAT,),
    "floor": (FLOAT,),
    "ceil": (FLOAT,),
    "abs": NUMERIC,
    "min": NUMERIC,
    "max": NUMERIC,
}

# Each is declared `intrinsic fn NAME<T>(x: T, …) -> T` with this many parameters.
ARITY: dict[str, int] = {"min": 2, "max": 2}

_WORDS = {(FLOAT,): "a float type (`f32` or `f64`)", NUMERIC: "a numeric type"}


# std/async's building blocks (`intrinsic fn __name…;` there), lowered by
# middle/coro/async_.py; their signatures are std/async's to write.
RUNTIME = frozenset({"__frame_alloc", "__frame_free", "__size_of", "__current_task", "__park",
                     "__real_time", "__clock_ms", "__sleep_ms", "__take", "__put",
                     "__owns", "__dropper", "__panic_report", "__await_site"})
SUSPENDING = frozenset({"__park"})   # awaited, like an async fn
# Their parameters (by index) whose value they keep beyond the call, as a
# store into a global does (check/views.py): `__put(p, v)` moves v into *p
# (a channel's slot, a task's result).
KEEPS = {"__put": frozenset({1})}

# Facts about the whole program that the prelude tests (`intrinsic fn
# __has_yield_from<T>(item: ptr<T>) -> bool;`: a `yield from` between
# Generator<T>s), constants once the program is checked.
# Lowered by middle/irgen/.
FACTS = frozenset({"__has_yield_from"})

# Data the compiler links into the program (stdlib/rt.pc: `intrinsic fn
# __backtrace_table() -> ptr<u8>;`, the table backend/backtrace.py builds),
# by address. Lowered by middle/irgen/.
LINKED = frozenset({"__backtrace_table"})

# The stdlib's own building blocks: their signatures are the stdlib's to
# write, and none of them is a value.
STDLIB_ONLY = RUNTIME | FACTS | LINKED


def kind_of(t: Type) -> str | None:
    if isinstance(t, FloatT):
        return FLOAT
    if isinstance(t, IntT):
        return SIGNED if t.signed else UNSIGNED
    return None


def signature(name: str) -> str:
    """How the stdlib declares `name`."""
    params = "a: T, b: T" if ARITY.get(name, 1) == 2 else "x: T"
    return f"intrinsic fn {name}<T>({params}) -> T;"


def well_formed(name: str, generics: tuple[str, ...], params: list, ret) -> bool:
    """`params` and `ret` as written (type expressions naming the type parameter)."""
    def named(t) -> bool:
        return isinstance(t, NamedType) and t.name == generics[0] and not t.args
    return (len(generics) == 1 and len(params) == ARITY.get(name, 1)
            and all(named(p.type) for p in params) and ret is not None and named(ret))


def accepted(name: str) -> str:
    """What `name` accepts, in words, for a diagnostic."""
    return _WORDS[ACCEPTS[name]]
