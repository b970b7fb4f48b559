"""How many times a `retcon_once` coroutine yields, on every path (LANGUAGE.md §6).

LLVM's `retcon.once` lowering has exactly one continuation: a path that ends
before its yield leaves the ramp without a value, a second yield has no
continuation to return to. Both would be undefined behaviour, so, as Swift
does for `_read`/`_modify` accessors, every path must yield exactly once,
which is checked on the syntax: a path's count is 0, 1 or "2 or more"; an `if`
joins its branches' counts; a loop must not contain a yield at all; `panic`
ends a path.
"""
from __future__ import annotations

from ..diagnostics import Span
from . import ast

MANY = 2


class _Walk:
    def __init__(self):
        self.problems: list[tuple[Span, str]] = []
        self.exits: list[tuple[frozenset, Span]] = []   # the counts reaching each `co_return`

    def report(self, span: Span, problem: str) -> None:
        if not any(s == span for s, _ in self.problems):
            self.problems.append((span, problem))

    def yields_in(self, node, counts: frozenset) -> frozenset:
        """The counts after evaluating an expression (or a statement that has no
        blocks) that holds `yield`s, in source order."""
        for y in _yields(node):
            if any(c >= 1 for c in counts):
                self.report(y.span, "this is a second `yield` on some path")
            counts = frozenset(min(c + 1, MANY) for c in counts)
        return counts

    def block(self, b: ast.Block, counts: frozenset) -> frozenset:
        for s in b.stmts:
            counts = self.stmt(s, counts)
        return counts

    def stmt(self, s: ast.Stmt, counts: frozenset) -> frozenset:
        if not counts:   # unreachable
            return counts
        match s:
            case ast.Block():
                return self.block(s, counts)
            case ast.If():
                counts = self.yields_in(s.cond, counts)
                then = self.block(s.then, counts)
                if s.else_ is None:
                    other = counts
                elif isinstance(s.else_, ast.If):
                    other = self.stmt(s.else_, counts)
                else:
                    other = self.block(s.else_, counts)
                return then | other
            case ast.While() | ast.Loop() | ast.For():
                for y in _yields(s):
                    self.report(y.span, "this `yield` is inside a loop")
                return counts
            case ast.With():
                return self.block(s.body, self.yields_in(s.expr, counts))
            case ast.CoReturn():
                self.exits.append((self.yields_in(s.value, counts) if s.value else counts, s.span))
                return frozenset()
            case ast.ExprStmt() if _is_panic(s.expr):
                return frozenset()
        return self.yields_in(s, counts)


def _is_panic(e: ast.Expr) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.name == "panic"


def _yields(node) -> list[ast.Yield]:
    found = []

    def walk(n) -> None:
        if isinstance(n, ast.Yield):
            found.append(n)
        if isinstance(n, tuple):
            for x in n:
                walk(x)
        elif isinstance(n, ast.Node):
            for f in ast.fields(n):
                if f != "span":
                    walk(getattr(n, f))
    walk(node)
    return found


def once_problems(body: ast.Block, end: Span) -> list[tuple[Span, str]]:
    """Where a retcon_once body may yield other than once: (span, what)."""
    walk = _Walk()
    walk.exits.append((walk.block(body, frozenset({0})), end))
    for counts, span in walk.exits:
        if 0 in counts:
            walk.report(span, "it can end here without yielding")
    return walk.problems
