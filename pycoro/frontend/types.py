"""Semantic types. Frozen and compared by value: `IntT(64, True) == I64`."""
from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from ..common.memo import while_alive
from ..common.paths import stdlib_display
from ..common.record import fields, record

if TYPE_CHECKING:
    from . import ast


class Type:
    def __str__(self) -> str:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    # Types are DAGs (`Duo<T, T>` shares T): hash each node once, not once per path.
    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash((type(self),) + tuple(getattr(self, f) for f in fields(self)))

    is_int = is_float = is_numeric = False


@record(frozen=True)
class IntT(Type):
    __hash__ = Type.__hash__
    bits: int
    signed: bool
    is_int = True
    is_numeric = True

    def __str__(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.bits}"

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1


@record(frozen=True)
class FloatT(Type):
    __hash__ = Type.__hash__
    bits: int
    is_float = True
    is_numeric = True

    def __str__(self) -> str:
        return f"f{self.bits}"


@record(frozen=True)
class Simple(Type):
    __hash__ = Type.__hash__
    """Types that are just a name: bool, void, str, Handle, and the null literal's type."""
    name: str

    def __str__(self) -> str:
        return self.name


@record(frozen=True)
class ArrayT(Type):
    __hash__ = Type.__hash__
    elem: Type
    size: int

    def __str__(self) -> str:
        return f"[{self.elem}; {self.size}]"


@record(frozen=True)
class SliceT(Type):
    """`[T]`: a borrowed view of consecutive Ts, a pointer and a length (LANGUAGE.md §2.1)."""
    __hash__ = Type.__hash__
    elem: Type

    def __str__(self) -> str:
        return f"[{self.elem}]"


@record(frozen=True)
class PtrT(Type):
    __hash__ = Type.__hash__
    elem: Type

    def __str__(self) -> str:
        return f"ptr<{self.elem}>"


@record(frozen=True)
class FnT(Type):
    __hash__ = Type.__hash__
    params: tuple[Type, ...]
    ret: Type

    def __str__(self) -> str:
        ret = "" if self.ret == VOID else f" -> {self.ret}"
        return f"fn({', '.join(map(str, self.params))}){ret}"


@record(frozen=True)
class _Declared(Type):
    """A type named by a declaration, with its type arguments: `Name<A, B>`."""
    __hash__ = Type.__hash__
    decl: "ast.StructDecl | ast.PromiseDecl"
    args: tuple[Type, ...] = ()

    def __str__(self) -> str:
        return _with_args(self.decl.name, self.args)


@record(frozen=True)
class StructT(_Declared):
    """An instance of a (possibly generic) struct declaration."""
    __hash__ = Type.__hash__


@record(frozen=True)
class PromiseT(_Declared):
    """The owning handle type `P<…>` of a coroutine whose promise is P."""
    __hash__ = Type.__hash__


def is_prelude_promise(t: Type, name: str) -> bool:
    """Whether `t` is the prelude's promise type `name` (`Generator`, `Task`:
    hooks the compiler knows), not a program's own of the same name."""
    return isinstance(t, PromiseT) and t.decl.name == name and t.decl.span.file == stdlib_display("prelude")


@record(frozen=True)
class TypeVar(Type):
    __hash__ = Type.__hash__
    """A generic parameter, before monomorphisation."""
    name: str

    def __str__(self) -> str:
        return self.name


def _with_args(name: str, args: tuple[Type, ...]) -> str:
    return f"{name}<{', '.join(map(str, args))}>" if args else name


I8, I16, I32, I64 = (IntT(b, True) for b in (8, 16, 32, 64))
U8, U16, U32, U64 = (IntT(b, False) for b in (8, 16, 32, 64))
F32, F64 = FloatT(32), FloatT(64)
BOOL = Simple("bool")
VOID = Simple("void")
STR = Simple("str")
HANDLE = Simple("Handle")
NULL = Simple("null")
ERROR = Simple("<error>")  # absorbs further errors about the same expression

PRIMITIVES: dict[str, Type] = {
    "i8": I8, "i16": I16, "i32": I32, "i64": I64,
    "u8": U8, "u16": U16, "u32": U32, "u64": U64,
    "f32": F32, "f64": F64, "bool": BOOL, "void": VOID, "str": STR, "Handle": HANDLE,
}


def substitute(t: Type, subst: dict[str, Type]) -> Type:
    return t if not subst or not has_vars(t) else _substitute(t, subst)


def _substitute(t: Type, subst: dict[str, Type]) -> Type:
    match t:
        case TypeVar(name):
            return subst.get(name, t)
        case ArrayT(elem, n):
            return ArrayT(substitute(elem, subst), n)
        case PtrT(elem):
            return PtrT(substitute(elem, subst))
        case SliceT(elem):
            return SliceT(substitute(elem, subst))
        case FnT(params, ret):
            return FnT(tuple(substitute(p, subst) for p in params), substitute(ret, subst))
        case StructT(decl, args):
            return StructT(decl, tuple(substitute(a, subst) for a in args))
        case PromiseT(decl, args):
            return PromiseT(decl, tuple(substitute(a, subst) for a in args))
    return t


@while_alive
def size(t: Type) -> int:
    """Nodes in `t` written out as a tree (`Duo<T, T>` counts T twice)."""
    match t:
        case ArrayT(elem=elem) | PtrT(elem=elem) | SliceT(elem=elem):
            return 1 + size(elem)
        case StructT(args=args) | PromiseT(args=args) | FnT(params=args):
            return 1 + sum(map(size, args))
    return 1


@while_alive
def has_vars(t: Type) -> bool:
    match t:
        case TypeVar():
            return True
        case ArrayT(elem, _) | PtrT(elem) | SliceT(elem):
            return has_vars(elem)
        case FnT(params, ret):
            return any(map(has_vars, params)) or has_vars(ret)
        case StructT(_, args) | PromiseT(_, args):
            return any(map(has_vars, args))
    return False


def unify(pattern: Type, actual: Type, subst: dict[str, Type]) -> bool:
    """Bind the type variables of `pattern` so that it equals `actual`."""
    if isinstance(pattern, TypeVar):
        if pattern.name in subst:
            return subst[pattern.name] == actual
        subst[pattern.name] = actual
        return True
    parts = _parts(pattern, actual)
    return pattern == actual if parts is None else all(unify(p, a, subst) for p, a in parts)


def _parts(a: Type, b: Type) -> list[tuple[Type, Type]] | None:
    """The component types of `a` and `b` that must be equal for them to be
    equal, pairwise, when they are built alike (None: they are not)."""
    match a, b:
        case ArrayT(ae, an), ArrayT(be, bn):
            return [(ae, be)] if an == bn else None
        case (PtrT(ae), PtrT(be)) | (SliceT(ae), SliceT(be)):
            return [(ae, be)]
        case FnT(ap, ar), FnT(bp, br):
            return [*zip(ap, bp), (ar, br)] if len(ap) == len(bp) else None
        case (StructT(ad, aa), StructT(bd, ba)) | (PromiseT(ad, aa), PromiseT(bd, ba)):
            return list(zip(aa, ba)) if ad is bd else None
    return None


def overlap(a: Type, b: Type, a_vars: tuple[str, ...], b_vars: tuple[str, ...]) -> bool:
    """Whether some type is both `a` and `b` (impl targets over their own type
    variables `a_vars`, `b_vars`): `Two<T, i64>` and `Two<i64, T>` are
    (`Two<i64, i64>`), `Box<i64>` and `Box<f64>` are not. Unification with
    variables on both sides, the two lists renamed apart."""
    a = substitute(a, {v: TypeVar(f"{v}.0") for v in a_vars})
    b = substitute(b, {v: TypeVar(f"{v}.1") for v in b_vars})
    bound: dict[str, Type] = {}

    def walk(t: Type) -> Type:
        while isinstance(t, TypeVar) and t.name in bound:
            t = bound[t.name]
        return t

    def same(x: Type, y: Type) -> bool:
        x, y = walk(x), walk(y)
        if x == y:
            return True
        if isinstance(x, TypeVar) or isinstance(y, TypeVar):
            var, other = (x, y) if isinstance(x, TypeVar) else (y, x)
            bound[var.name] = other
            return True
        parts = _parts(x, y)
        return parts is not None and all(same(p, q) for p, q in parts)

    return same(a, b)


def abi_of(t: Type) -> str:
    """The coroutine ABI a handle type belongs to: its promise's `abi` (default
    `switch`); `Handle` is the switched-resume handle (LANGUAGE.md §2)."""
    if isinstance(t, PromiseT) and t.decl.abi is not None:
        return t.decl.abi.name
    return "switch"


def is_scalar(t: Type) -> bool:
    return t.is_numeric or t == BOOL
