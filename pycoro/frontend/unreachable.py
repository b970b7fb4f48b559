"""The `unreachable statement` warning (rustc's `unreachable_code`): a
statement after one that never lets control reach it (a `return`,
`co_return`, `break`, `continue`, a `panic`, a `loop` without `break`, an
`if` whose branches all do one of these), in the same block.

    fn f() -> i64 { return 1; print("never"); }
                              ^ unreachable statement

It uses the checker's own facts about statements (check/flow.py), which
only say what certainly holds, so reachable code is never reported; one
warning per block, at its first unreachable statement. The standard
library's code is not looked at."""
from __future__ import annotations

from ..common.diagnostics import Diagnostic, Span
from . import ast
from .check.flow import never_falls_through
from .program import CheckedProgram


def warnings(program: CheckedProgram) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for body in program.own_bodies():
        for block in ast.nodes_of(body, ast.Block):
            for before, after in zip(block.stmts, block.stmts[1:]):
                if never_falls_through(before):
                    found.append(Diagnostic("unreachable statement", _head(after), severity="warning",
                                            notes=[("any code after this is unreachable", _head(before))]))
                    break
    return found


def _head(s: ast.Stmt) -> Span:
    """A statement's first line (a loop's body need not be underlined)."""
    span = s.span
    return Span(span.file, span.line, span.col, span.line, span.col + 1) if span.end_line != span.line else span
