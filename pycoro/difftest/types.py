"""The types a generated program uses, and their values' ranges.

Scalars are plain strings (`"i8"` … `"u64"`, `"bool"`); arrays, slices and
structs are frozen dataclasses, so every type is hashable and compares by
value."""
from __future__ import annotations

from dataclasses import dataclass

INT_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
BOOL = "bool"


@dataclass(frozen=True)
class ArrayT:
    elem: object
    n: int

    def __str__(self) -> str:
        return f"[{self.elem}; {self.n}]"


@dataclass(frozen=True)
class SliceT:
    """`[T]`: a view of consecutive Ts (LANGUAGE.md §2.1). Not an aggregate:
    copying one copies the view, never the elements."""
    elem: object

    def __str__(self) -> str:
        return f"[{self.elem}]"


@dataclass(frozen=True)
class StructT:
    name: str
    fields: tuple  # ((field name, type), ...)

    def __str__(self) -> str:
        return self.name

    def field(self, name: str):
        return dict(self.fields)[name]


def is_int(t) -> bool:
    return t in INT_TYPES


def is_scalar(t) -> bool:
    return t in INT_TYPES or t == BOOL


def is_aggregate(t) -> bool:
    return isinstance(t, (ArrayT, StructT))


def bits(t: str) -> int:
    return int(t[1:])


def signed(t: str) -> bool:
    return t[0] == "i"


def min_max(t: str) -> tuple[int, int]:
    b = bits(t)
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if signed(t) else (0, (1 << b) - 1)


def wrap(t: str, v: int) -> int:
    """`v` reduced to `t`'s range, two's complement."""
    b = bits(t)
    v &= (1 << b) - 1
    return v - (1 << b) if signed(t) and v >> (b - 1) else v


def zero_py(t) -> str:
    """A Python expression for `t`'s zero value (a fresh object each time it runs)."""
    if t == BOOL:
        return "False"
    if isinstance(t, ArrayT):
        return "[" + ", ".join(zero_py(t.elem) for _ in range(t.n)) + "]"
    if isinstance(t, StructT):
        return "{" + ", ".join(f"{name!r}: {zero_py(ft)}" for name, ft in t.fields) + "}"
    if isinstance(t, SliceT):
        return "_Sl([], 0, 0)"
    return "0"


def scalar_leaves(t, path: tuple = ()):
    """Every scalar inside a value of type `t`: (path of ('field', name) /
    ('index', i) steps, scalar type)."""
    if is_scalar(t):
        yield path, t
    elif isinstance(t, ArrayT):
        for i in range(t.n):
            yield from scalar_leaves(t.elem, path + (("index", i),))
    else:
        for name, ft in t.fields:
            yield from scalar_leaves(ft, path + (("field", name),))
