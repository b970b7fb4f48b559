"""What the checker's modules share: the operator classes and the record of
a method found for a receiver."""
from __future__ import annotations

from ...common.record import record
from .. import ast
from ..types import Type

COMPOUND_OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")


ARITH = ("+", "-", "*", "/", "%")


BITWISE = ("&", "|", "^")


SHIFTS = ("<<", ">>")


EQUALITY = ("==", "!=")


ORDERING = ("<", "<=", ">", ">=")


LOGICAL = ("&&", "||")


@record(frozen=True)
class Method:
    decl: ast.FnDecl
    subst: dict
    owner: Type

