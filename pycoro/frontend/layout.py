"""Sizes and alignments of PyCoro types, with C's layout rules.

Every target pycoro supports (x86-64, AArch64, nvptx64) aligns scalars to
their size, so these numbers equal LLVM's for the types pycoro emits.
"""
from __future__ import annotations

import functools
from typing import Callable

from .types import BOOL, VOID, ArrayT, FloatT, IntT, PromiseT, StructT, Type

POINTER_SIZE = 8

# Bigger types are refused: LLVM cannot lay out or zero them reasonably, and
# no stack or JIT section could hold them.
MAX_TYPE_BYTES = 1 << 30


@functools.lru_cache(maxsize=65536)  # bounded: one process may compile many programs
def size_align(t: Type, fields: Callable[[StructT], list[tuple[str, Type]]]) -> tuple[int, int]:
    """(size, alignment) in bytes; `fields` gives a struct's field types."""
    return _compute(t, fields)


def _compute(t: Type, fields) -> tuple[int, int]:
    match t:
        case IntT(bits=bits) | FloatT(bits=bits):
            return bits // 8, bits // 8
        case ArrayT(elem=elem, size=n):
            size, align = size_align(elem, fields)
            return size * n, align
        case StructT():
            offset, align = 0, 1
            for _, ft in fields(t):
                fsize, falign = size_align(ft, fields)
                offset = (offset + falign - 1) // falign * falign + fsize
                align = max(align, falign)
            return (offset + align - 1) // align * align, align
    if t == BOOL:
        return 1, 1
    if t == VOID:
        return 0, 1
    return POINTER_SIZE, POINTER_SIZE


def is_aggregate(t: Type) -> bool:
    """Values that live in memory and are copied with memcpy (never first-class in LLVM)."""
    return isinstance(t, (StructT, ArrayT))


@functools.lru_cache(maxsize=65536)  # bounded: one process may compile many programs
def owns(t: Type, fields: Callable[[StructT], list[tuple[str, Type]]]) -> bool:
    """Whether a value of type t holds an owning coroutine handle, directly, in a
    field or as array elements: destroying it destroys those coroutines; moving
    it empties its source."""
    if isinstance(t, ArrayT):
        return owns(t.elem, fields)
    if isinstance(t, PromiseT):
        # `final run;`: the coroutine frees itself when it ends, so its handle is
        # not an owner (like a detached C++ task)
        return not any(s.point == "final" and s.mode == "run" for s in t.decl.suspends)
    if isinstance(t, StructT):
        return any(owns(ft, fields) for _, ft in fields(t))
    return False
