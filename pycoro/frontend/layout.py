"""Sizes and alignments of PyCoro types, with C's layout rules.

Every target pycoro supports (x86-64, AArch64, nvptx64) aligns scalars to
their size, so these numbers equal LLVM's for the types pycoro emits.
"""
from __future__ import annotations

from typing import Callable

from .types import BOOL, VOID, ArrayT, FloatT, IntT, PromiseT, SliceT, StructT, Type

POINTER_SIZE = 8

# Bigger types are refused: LLVM cannot lay out or zero them reasonably, and
# no stack or JIT section could hold them.
MAX_TYPE_BYTES = 1 << 30


class StructLayouts:
    """Every struct instance's fields (type arguments substituted), and the
    sizes, alignments and ownership that follow from them.

    The checker fills it as it lays structs out, through `lay_out` (which
    reports recursive structs and duplicate fields); `frozen()` is what the
    middle gets: the same layouts, no way back into the checker. Its caches
    belong to one compilation, so nothing of one program outlives it."""

    def __init__(self, lay_out: Callable[[StructT], list[tuple[str, Type]]] | None = None,
                 fields: dict[StructT, tuple[tuple[str, Type], ...]] | None = None):
        self._lay_out = lay_out
        self._fields = {} if fields is None else fields
        self._sizes: dict[Type, tuple[int, int]] = {}
        self._owns: dict[Type, bool] = {}
        self._views: dict[Type, bool] = {}

    def frozen(self) -> "StructLayouts":
        return StructLayouts(None, dict(self._fields))

    def record(self, t: StructT, fields: list[tuple[str, Type]]) -> None:
        self._fields[t] = tuple(fields)

    def known(self, t: StructT) -> bool:
        return t in self._fields

    def laid_out(self) -> tuple[StructT, ...]:
        """Every struct laid out so far (the middle's way from a handle type
        to its promise state: debuginfo.py)."""
        return tuple(self._fields)

    def fields(self, t: StructT) -> tuple[tuple[str, Type], ...]:
        found = self._fields.get(t)
        if found is None:
            if self._lay_out is None:
                raise KeyError(f"struct {t} was not laid out by the checker")
            self._lay_out(t)
            found = self._fields.get(t, ())
        return found

    def offsets(self, fields) -> list[int]:
        """Where each of `fields` ((name, type) pairs) lies in their C layout."""
        found, offset = [], 0
        for _, ft in fields:
            size, align = self.size_align(ft)
            offset = (offset + align - 1) // align * align
            found.append(offset)
            offset += size
        return found

    def size_align(self, t: Type) -> tuple[int, int]:
        """(size, alignment) in bytes."""
        found = self._sizes.get(t)
        if found is None:
            self._sizes[t] = (0, 1)   # a struct that contains itself (reported) meets this, not itself
            found = self._sizes[t] = self._compute(t)
        return found

    def _compute(self, t: Type) -> tuple[int, int]:
        match t:
            case IntT(bits=bits) | FloatT(bits=bits):
                return bits // 8, bits // 8
            case ArrayT(elem=elem, size=n):
                size, align = self.size_align(elem)
                return size * n, align
            case SliceT():
                return 2 * POINTER_SIZE, POINTER_SIZE   # the pointer and the i64 length
            case StructT():
                offset, align = 0, 1
                for _, ft in self.fields(t):
                    fsize, falign = self.size_align(ft)
                    offset = (offset + falign - 1) // falign * falign + fsize
                    align = max(align, falign)
                return (offset + align - 1) // align * align, align
        if t == BOOL:
            return 1, 1
        if t == VOID:
            return 0, 1
        return POINTER_SIZE, POINTER_SIZE

    def owns(self, t: Type) -> bool:
        """Whether a value of type t holds an owning coroutine handle, directly, in a
        field or as array elements: destroying it destroys those coroutines; moving
        it empties its source."""
        found = self._owns.get(t)
        if found is None:
            self._owns[t] = False   # a struct that contains itself (reported) meets this, not itself
            found = self._owns[t] = self._compute_owns(t)
        return found

    def _compute_owns(self, t: Type) -> bool:
        if isinstance(t, ArrayT):
            return self.owns(t.elem)
        if isinstance(t, PromiseT):
            # `final run;`: the coroutine frees itself when it ends, so its handle is
            # not an owner (like a detached C++ task)
            return not any(s.point == "final" and s.mode == "run" for s in t.decl.suspends)
        if isinstance(t, StructT):
            return any(self.owns(ft) for _, ft in self.fields(t))
        return False


    def views(self, t: Type | None) -> bool:
        """Whether a value of type t holds a slice, directly, in a field or as array
        elements: what it views may not outlive it (check/views.py)."""
        found = self._views.get(t)
        if found is None:
            self._views[t] = False   # a struct that contains itself (reported) meets this, not itself
            found = self._views[t] = self._compute_views(t)
        return found

    def _compute_views(self, t: Type | None) -> bool:
        if isinstance(t, SliceT):
            return True
        if isinstance(t, ArrayT):
            return self.views(t.elem)
        return isinstance(t, StructT) and any(self.views(ft) for _, ft in self.fields(t))


def is_aggregate(t: Type) -> bool:
    """Values that live in memory and are copied with memcpy (never first-class in LLVM)."""
    return isinstance(t, (StructT, ArrayT))
