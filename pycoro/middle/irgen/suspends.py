"""Which expressions may suspend the coroutine they run in: an owning value
made before one of them is held until its consumer takes it (FnGen.hold)."""
from __future__ import annotations

from ...frontend import ast

_SUSPENSIONS = (ast.Yield, ast.YieldFrom, ast.Await)


def suspends_after(exprs: list) -> list[bool]:
    """For each expression of a list evaluated in order: whether one after it may suspend."""
    flags, later = [], False
    for e in reversed(exprs):
        flags.append(later)
        later = later or may_suspend(e)
    return flags[::-1]


def may_suspend(node) -> bool:
    """Whether evaluating an expression may suspend the coroutine it runs in."""
    return ast.contains(node, _SUSPENSIONS)


_LOOPS = (ast.While, ast.Loop, ast.For)


def suspends_in_a_loop(body) -> bool:
    """Whether a function's body may suspend inside a loop (a coroutine that
    does is usually resumed many times: middle/coro/first_resume.py)."""
    return any(ast.contains(loop, _SUSPENSIONS) for loop in ast.nodes_of(body, _LOOPS))
