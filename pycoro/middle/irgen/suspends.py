"""Which expressions may suspend the coroutine they run in: an owning value
made before one of them is held until its consumer takes it (FnGen.hold)."""
from __future__ import annotations

from ...frontend import ast

_SUSPENSIONS = (ast.Yield, ast.YieldFrom, ast.Await)


def suspends_after(exprs: list) -> list[bool]:
    """For each expression of a list evaluated in order: whether one after it may
    suspend. (The first is never looked into: nested calls `f(f(f(…)))` stay
    linear.)"""
    flags, later = [False] * len(exprs), False
    for i in range(len(exprs) - 1, 0, -1):
        later = later or may_suspend(exprs[i])
        flags[i - 1] = later
    return flags


def may_suspend(node) -> bool:
    """Whether evaluating an expression may suspend the coroutine it runs in."""
    return ast.contains(node, _SUSPENSIONS)


_LOOPS = (ast.While, ast.Loop, ast.For)


def suspends_in_a_loop(body) -> bool:
    """Whether a function's body may suspend inside a loop (a coroutine that
    does is usually resumed many times: middle/coro/first_resume.py)."""
    return any(ast.contains(loop, _SUSPENSIONS) for loop in ast.nodes_of(body, _LOOPS))


def in_loop_bodies(body, kind: type) -> list:
    """The nodes of `kind` inside a loop's body (run once a round) of a
    function's body."""
    return [node for loop in ast.nodes_of(body, _LOOPS) for node in ast.nodes_of(loop.body, kind)]
