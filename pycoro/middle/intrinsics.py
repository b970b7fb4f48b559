"""The LLVM 22 intrinsics pycoro emits, with their exact signatures.

An unknown `llvm.*` name passes LLVM's verifier and kills the process later,
and signatures drift between releases (`llvm.coro.end` is `void` in LLVM 22).
Every intrinsic is declared through `declare`, which only accepts what this
table lists, and `validate` rejects any other `llvm.*` declaration before a
module reaches LLVM.
"""
from __future__ import annotations

import re

from llvmlite import ir

from .llvmcompat import I1, I8, I32, I64, TOKEN

_F32, _F64 = ir.FloatType(), ir.DoubleType()
_INT = {f"i{b}": ir.IntType(b) for b in (8, 16, 32, 64)}
_FLOAT = {"f32": _F32, "f64": _F64}


def _signatures() -> dict[str, ir.FunctionType]:
    void, ptr = ir.VoidType(), ir.PointerType()
    sigs: dict[str, ir.FunctionType] = {
        "llvm.trap": ir.FunctionType(void, []),
        # dest, src, bytes, volatile (immarg)
        "llvm.memcpy.p0.p0.i64": ir.FunctionType(void, [ptr, ptr, I64, I1]),
        # dest, byte, bytes, volatile (immarg)
        "llvm.memset.p0.i64": ir.FunctionType(void, [ptr, ir.IntType(8), I64, I1]),
    }
    # Switched-resume coroutines, as LLVM 22 declares them (llvm.coro.end is void).
    sigs.update({
        "llvm.coro.id": ir.FunctionType(TOKEN, [I32, ptr, ptr, ptr]),
        "llvm.coro.alloc": ir.FunctionType(I1, [TOKEN]),
        "llvm.coro.size.i64": ir.FunctionType(I64, []),
        "llvm.coro.align.i64": ir.FunctionType(I64, []),
        "llvm.coro.begin": ir.FunctionType(ptr, [TOKEN, ptr]),
        "llvm.coro.save": ir.FunctionType(TOKEN, [ptr]),
        "llvm.coro.suspend": ir.FunctionType(I8, [TOKEN, I1]),
        "llvm.coro.free": ir.FunctionType(ptr, [TOKEN, ptr]),
        "llvm.coro.end": ir.FunctionType(void, [ptr, I1, TOKEN]),
        "llvm.coro.resume": ir.FunctionType(void, [ptr]),
        "llvm.coro.destroy": ir.FunctionType(void, [ptr]),
        "llvm.coro.done": ir.FunctionType(I1, [ptr]),
        "llvm.coro.promise": ir.FunctionType(ptr, [ptr, I32, I1]),
        "llvm.coro.noop": ir.FunctionType(ptr, []),
        # awaiter, frame, wrapper: code that may resume the coroutine runs in the
        # wrapper, never between llvm.coro.save and llvm.coro.suspend
        "llvm.coro.await.suspend.void": ir.FunctionType(void, [ptr, ptr, ptr]),
        "llvm.coro.await.suspend.bool": ir.FunctionType(I1, [ptr, ptr, ptr]),
        "llvm.coro.await.suspend.handle": ir.FunctionType(void, [ptr, ptr, ptr]),
    })
    # Returned-continuation coroutines: size, align, buffer, prototype, allocate, deallocate
    sigs.update({
        "llvm.coro.id.retcon": ir.FunctionType(TOKEN, [I32, I32, ptr, ptr, ptr, ptr]),
        "llvm.coro.id.retcon.once": ir.FunctionType(TOKEN, [I32, I32, ptr, ptr, ptr, ptr]),
        # the yielded values; returns the continuation's `unwind` argument
        "llvm.coro.suspend.retcon.i1": ir.FunctionType(I1, [], var_arg=True),
        # every call of a retcon ramp goes through it: until CoroSplit, the ramp
        # never returns (its paths end in `unreachable`), which IPO would believe
        "llvm.coro.prepare.retcon": ir.FunctionType(ptr, [ptr]),
    })
    # Async functions (Swift's lowering), in the shapes of LLVM 22's coro-async tests:
    # size and alignment of the context before the frame, index of the context
    # parameter, the async function pointer
    sigs.update({
        "llvm.coro.id.async": ir.FunctionType(TOKEN, [I32, I32, I32, ptr]),
        "llvm.coro.async.resume": ir.FunctionType(ptr, []),
        # context-parameter index of the resume function, its address, the context
        # projection, the function it tail-calls, that function's arguments; the
        # result holds the resume function's one parameter (`{ptr}` is `sl_p0s`)
        "llvm.coro.suspend.async.sl_p0s": ir.FunctionType(ir.LiteralStructType([ptr]), [I32, ptr, ptr], var_arg=True),
        # handle, unwind, then the function the end tail-calls and its arguments
        "llvm.coro.end.async": ir.FunctionType(void, [ptr, I1], var_arg=True),
        "llvm.coro.prepare.async": ir.FunctionType(ptr, [ptr]),
    })
    # NVPTX: the index registers of §8's builtins, and the block barrier
    for reg in ("tid", "ctaid", "ntid", "nctaid"):
        for axis in "xyz":
            sigs[f"llvm.nvvm.read.ptx.sreg.{reg}.{axis}"] = ir.FunctionType(I32, [])
    sigs["llvm.nvvm.barrier0"] = ir.FunctionType(void, [])
    # -g (irgen/debuginfo.py): where a variable lives; LLVM turns it into a debug record
    sigs["llvm.dbg.declare"] = ir.FunctionType(void, [ir.MetaDataType()] * 3)
    for iname, ity in _INT.items():
        for fname, fty in _FLOAT.items():
            # Rust's `as`: saturating, NaN → 0
            sigs[f"llvm.fptosi.sat.{iname}.{fname}"] = ir.FunctionType(ity, [fty])
            sigs[f"llvm.fptoui.sat.{iname}.{fname}"] = ir.FunctionType(ity, [fty])
    for fname, fty in _FLOAT.items():
        for op in ("sqrt", "floor", "ceil", "fabs", "trunc"):
            sigs[f"llvm.{op}.{fname}"] = ir.FunctionType(fty, [fty])
        for op in ("minimumnum", "maximumnum"):
            sigs[f"llvm.{op}.{fname}"] = ir.FunctionType(fty, [fty, fty])
    for iname, ity in _INT.items():
        for op in ("smin", "smax", "umin", "umax"):
            sigs[f"llvm.{op}.{iname}"] = ir.FunctionType(ity, [ity, ity])
        sigs[f"llvm.abs.{iname}"] = ir.FunctionType(ity, [ity, I1])
    return sigs


SIGNATURES = _signatures()

# Operands that must be constants (`immarg`): intrinsic name prefix → positions.
IMMEDIATE_OPERANDS = {"llvm.abs.": (1,), "llvm.memcpy.": (3,), "llvm.memset.": (3,),
                      "llvm.coro.id.retcon": (0, 1), "llvm.coro.id.async": (0, 1, 2), "llvm.coro.id": (0,), "llvm.coro.suspend.async": (0,), "llvm.coro.suspend": (1,), "llvm.coro.end": (1,),
                      "llvm.coro.promise": (1, 2)}


def immediate_operands(name: str) -> tuple[int, ...]:
    return next((pos for prefix, pos in IMMEDIATE_OPERANDS.items() if name.startswith(prefix)), ())


class UnknownIntrinsic(Exception):
    pass


def declare(module: ir.Module, name: str) -> ir.Function:
    if name not in SIGNATURES:
        raise UnknownIntrinsic(f"pycoro does not know the LLVM 22 intrinsic {name}")
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, SIGNATURES[name], name)


def validate(module_text: str) -> list[str]:
    """Problems with the `llvm.*` declarations of a module's text."""
    problems = []
    for match in re.finditer(r'^declare [^@]*@"?(llvm\.[\w.]+)"?\((.*)\)', module_text, re.M):
        name = match.group(1)
        if name not in SIGNATURES:
            problems.append(f"unknown intrinsic {name}")
    return problems


# std/math (frontend/intrinsics.py): (function, kind of its type) → intrinsic
# family, suffixed with the LLVM type (`llvm.sqrt.f64`). None: the argument
# itself (`abs` of an unsigned integer). Integer `abs` wraps (`abs` of the
# minimum is the minimum, as Rust's `wrapping_abs`); float `min`/`max` are
# IEEE 754-2019 minimumNumber/maximumNumber (a NaN operand yields the other,
# as Rust's `f64::min`; -0.0 < 0.0, which minnum left to the instruction
# chosen: -O0 and -O2 gave different zeros).
MATH: dict[tuple[str, str], str | None] = {
    ("sqrt", "float"): "llvm.sqrt", ("floor", "float"): "llvm.floor", ("ceil", "float"): "llvm.ceil",
    ("abs", "float"): "llvm.fabs", ("abs", "signed"): "llvm.abs", ("abs", "unsigned"): None,
    ("min", "float"): "llvm.minimumnum", ("min", "signed"): "llvm.smin", ("min", "unsigned"): "llvm.umin",
    ("max", "float"): "llvm.maximumnum", ("max", "signed"): "llvm.smax", ("max", "unsigned"): "llvm.umax",
}


def math_call(b: ir.IRBuilder, name: str, kind: str, args: list[ir.Value]) -> ir.Value:
    family = MATH[(name, kind)]
    if family is None:
        return args[0]
    ty = args[0].type
    suffix = {ir.FloatType: "f32", ir.DoubleType: "f64"}.get(type(ty)) or f"i{ty.width}"
    if family == "llvm.abs":
        args = args + [ir.Constant(I1, 0)]   # not poison on the minimum: it wraps
    return b.call(declare(b.module, f"{family}.{suffix}"), args)
