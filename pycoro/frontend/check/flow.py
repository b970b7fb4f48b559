"""What a statement's control flow certainly does: return, fall through to
the next statement, or leave its loop (for the missing-return check and
the merging of moves)."""
from __future__ import annotations

from .. import ast


def always_returns(s: ast.Stmt | None) -> bool:
    """Whether control can never fall off the end of `s`."""
    match s:
        case ast.Return() | ast.CoReturn():
            return True
        case ast.Block(stmts=stmts):
            return any(always_returns(x) for x in stmts)
        case ast.If(then=then, else_=else_):
            return else_ is not None and always_returns(then) and always_returns(else_)
        case ast.Loop(body=body):
            return not _breaks(body)
        case ast.While(cond=ast.BoolLit(value=True), body=body):
            return not _breaks(body)
        case ast.With(body=body):   # its body runs (or the `with` panics)
            return always_returns(body)
        case ast.ExprStmt(expr=ast.Call(callee=ast.Name(name="panic"))):
            return True
    return False


def never_falls_through(s: ast.Stmt | None) -> bool:
    """Whether control never goes on to the statement after `s`: every path
    through it returns, panics, or leaves by `break`/`continue`."""
    match s:
        case ast.Break() | ast.Continue():
            return True
        case ast.Block(stmts=stmts):
            return any(map(never_falls_through, stmts))
        case ast.If(then=then, else_=else_):
            return never_falls_through(then) and never_falls_through(else_)
        case ast.With(body=body):
            return never_falls_through(body)
    return always_returns(s)


def _breaks(s: ast.Stmt) -> bool:
    """Whether `s` contains a `break` that leaves the loop whose body it is."""
    match s:
        case ast.Break():
            return True
        case ast.Block(stmts=stmts):
            return any(map(_breaks, stmts))
        case ast.If(then=then, else_=else_):
            return _breaks(then) or (else_ is not None and _breaks(else_))
        case ast.Defer(stmt=inner):
            return _breaks(inner)
        case ast.With(body=body):   # not a loop: its `break` leaves the loop around it
            return _breaks(body)
    return False  # nested loops own their breaks
