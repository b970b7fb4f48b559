"""The records of what borrows what, which the ownership pass (ownership.py,
views.py) writes and the program checker settles once every body is checked."""
from __future__ import annotations

from ...common.record import record
from .. import ast
from .. import messages as M
from ..program import FnInstance, LocalVar
from ..types import PtrT


def place_root(place: ast.Expr, types: dict, through: tuple[type, ...] = (PtrT,)) -> tuple[ast.Expr, bool]:
    """Walk `place` (`a.b[i].c`) down its fields and elements to the variable or
    value it is part of, and say so (False); or stop where it is reached
    through a value whose type is one of `through` (a pointer, a slice: memory
    it does not hold), and return that value (True)."""
    while isinstance(place, (ast.Field, ast.Index)):
        if isinstance(types.get(place.base), through):
            return place.base, True
        place = place.base
    return place, False


@record(frozen=True, eq=False)
class Borrow:
    """A place a coroutine refers to, which may die before it: the place as
    messages name it, the local variable it is (None: a temporary), and how
    (a `mut self` method's name; None: a slice of it passed to the coroutine)."""
    place: str
    var: object = None   # LocalVar | None
    method: str | None = None

    @property
    def via(self) -> str:
        return M.via_method(self.method) if self.method else M.via_slice()


@record(frozen=True, eq=False)
class Lent:
    """A coroutine that borrows a `mut self` place, passed as an argument: the
    callee must not move that parameter on (known once every body is checked)."""
    arg: ast.Expr
    callee: FnInstance
    index: int
    borrow: Borrow


@record(frozen=True)
class Origin:
    """An array a slice may view: its variable as messages name it, whether it
    may be written through the slice, whether it dies with this call of the
    function (a local, or a parameter taken by value), and for the caller's
    memory reached through a slice parameter, that parameter's index."""
    name: str
    writable: bool
    local: bool
    var: LocalVar | None = None   # a local's, for which of two dies first
    param: int = -1


@record(frozen=True, eq=False)
class Passed:
    """A slice of a `let` or a local array passed to `callee`'s parameter
    `index`: refused if the callee writes through it, or keeps it."""
    arg: ast.Expr
    callee: FnInstance
    index: int
    origin: Origin
