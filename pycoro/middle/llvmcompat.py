"""Everything llvmlite.ir lacks for LLVM 22, in one place.

llvmlite.ir still types pointers (`i8*`); LLVM 22 reads `T*` as the opaque
`ptr`, but llvmlite's own checks compare pointee types. pycoro therefore
keeps every pointer opaque: the helpers here build allocas and GEPs whose
result is an opaque `ptr`, and call through a function pointer.
"""
from __future__ import annotations

from llvmlite import ir

PTR = ir.PointerType()
I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
EMPTY = ir.LiteralStructType([])   # the in-memory form of `void`: zero bytes
SLICE = ir.LiteralStructType([PTR, ir.IntType(64)])   # `[T]`: where the elements start, how many


def alloca(builder: ir.IRBuilder, ty: ir.Type, name: str = "") -> ir.Instruction:
    slot = builder.alloca(ty, name=name)
    slot.type = PTR
    return slot


def gep(builder: ir.IRBuilder, ptr: ir.Value, indices: list[ir.Value], source: ir.Type,
        name: str = "", inbounds: bool = True) -> ir.Instruction:
    inst = builder.gep(ptr, indices, inbounds=inbounds, name=name, source_etype=source)
    inst.type = PTR
    return inst


def field_ptr(builder: ir.IRBuilder, ptr: ir.Value, struct: ir.Type, index: int, name: str = "") -> ir.Instruction:
    return gep(builder, ptr, [I32(0), I32(index)], struct, name)


class _VolatileLoad(ir.LoadInstr):
    def descr(self, buf):
        plain: list[str] = []
        super().descr(plain)
        buf.append(plain[0].replace("load ", "load volatile ", 1))


def volatile_load(builder: ir.IRBuilder, ptr: ir.Value, ty: ir.Type, name: str = "") -> ir.Instruction:
    """`load volatile`: llvmlite's loads cannot say it."""
    load = _VolatileLoad(builder.block, ptr, name=name, typ=ty)
    builder._insert(load)
    return load


class TypedCallee:
    """Lets llvmlite emit `call R %fp(…)` through an opaque function pointer."""

    def __init__(self, value: ir.Value, fnty: ir.FunctionType):
        self.value = value
        self.function_type = fnty
        self.type = fnty.as_pointer()

    def get_reference(self) -> str:
        return self.value.get_reference()


def global_string(module: ir.Module, data: bytes, name: str) -> ir.GlobalVariable:
    data = data + b"\0"
    ty = ir.ArrayType(I8, len(data))
    g = ir.GlobalVariable(module, ty, name=name)
    g.initializer = ir.Constant(ty, bytearray(data))
    g.global_constant = True
    g.linkage = "private"
    g.unnamed_addr = True
    g.type = PTR
    return g


# ---- coroutines: `token`, `token none`, and the `presplitcoroutine` attribute

class TokenType(ir.Type):
    """LLVM's `token` type (llvmlite.ir has none)."""

    def _to_string(self) -> str:
        return "token"

    def __eq__(self, other) -> bool:
        return isinstance(other, TokenType)

    def __hash__(self) -> int:
        return hash("token")


TOKEN = TokenType()


class _TokenNone:
    """The constant `token none` (an operand of llvm.coro.suspend and llvm.coro.end)."""
    type = TOKEN

    def get_reference(self) -> str:
        return "none"

    def __str__(self) -> str:
        return "token none"


TOKEN_NONE = _TokenNone()


def _add_attribute(attributes, name: str) -> None:
    # llvmlite checks attributes against a list older than LLVM 22's
    attributes._known = attributes._known | {name}
    attributes.add(name)


def mark_presplit_coroutine(fn: ir.Function) -> None:
    """Tell CoroSplit that `fn` is a coroutine still to be split."""
    _add_attribute(fn.attributes, "presplitcoroutine")


def opaque_copy(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """`value`, through an empty inline asm: the same register at run time (no
    instruction; an empty asm never reaches the assembler), but LLVM cannot
    tell it is `value`, so it forwards no store made through one to a load
    through the other."""
    return b.asm(ir.FunctionType(value.type, [value.type]), "", "=r,0", [value], False, name="opaque")


def mark_elide_safe(call: ir.CallInstr) -> None:
    """`call … coro_elide_safe`: the callee's frame may live in the caller's frame
    (CoroAnnotationElide), because the language guarantees it ends in the caller."""
    _add_attribute(call.attributes, "coro_elide_safe")
