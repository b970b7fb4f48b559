"""The `unconditional recursion` warning (rustc's `unconditional_recursion`
lint): a function that cannot return without calling itself.

    fn f(n: i64) -> i64 { return f(n + 1) + 1; }

Such a function overflows the stack at run time, or, optimised, may loop
forever (LLVM turns the recursion into a loop). The analysis follows every
path through the checked body: a path that reaches a `return` (or the end of
the body) without having called the function itself means it can return; a
path that panics or never leaves a loop does not return at all. Only when no
path returns and some path calls the function is it reported — so only what
is certainly wrong is reported, as rustc does:

- direct recursion only (the same instance: a generic function calling
  itself with the same type arguments, a method calling itself on any
  receiver), not through other functions or function pointers;
- a condition is not evaluated (`if true { return f(); }` still has a path
  that skips the call), except the `true` of `while true`, which never ends
  but by `break`;
- a `defer`red statement is not followed;
- coroutines are not analysed: calling one only creates it, and its body
  runs when it is resumed.
"""
from __future__ import annotations

from ..common.diagnostics import Diagnostic, Span
from ..common.paths import in_stdlib
from . import ast
from .program import BuiltinCall, CheckedProgram, DirectCall, FnInstance

MAX_NOTES = 3   # recursive calls shown per function


def warnings(program: CheckedProgram) -> list[Diagnostic]:
    """One warning per function declaration that cannot return without
    recursing (a generic one is reported once, whatever its instances)."""
    found: list[Diagnostic] = []
    seen: set[int] = set()
    for inst in program.functions:
        # (not the stdlib's, as the other warnings: 1.2 ms of an async program's check)
        if inst.decl.body is None or inst.is_coroutine or id(inst.decl) in seen or in_stdlib(inst.decl.span.file):
            continue
        calls = _Paths(inst).recursive_calls()
        if calls:
            seen.add(id(inst.decl))
            found.append(_warning(inst, calls))
    return found


def _warning(inst: FnInstance, calls: list[Span]) -> Diagnostic:
    decl = inst.decl
    name = decl.name_span or decl.span
    head = Span(decl.span.file, decl.span.line, decl.span.col, name.end_line, name.end_col)
    what = "method" if inst.self_mode is not None else "function"
    return Diagnostic(f"{what} `{decl.name}` cannot return without recursing", head, severity="warning",
                      notes=[("recursive call here", span) for span in calls[:MAX_NOTES]],
                      hint="every path calls it again: it overflows the stack (or, optimised, may run "
                      "forever); give it a case that returns")


class _Paths:
    """Whether some path through the body reaches a return without a
    recursive call. Each method takes `live` — some path reaches this point
    without having recursed — and says the same of the point after it."""

    def __init__(self, inst: FnInstance):
        self.inst = inst
        self.returns = False          # a path returns without recursing
        self.calls: list[Span] = []   # recursive calls some such path reaches
        self.breaks: list[bool] = []  # per enclosing loop: a path leaves it by `break` without recursing

    def recursive_calls(self) -> list[Span]:
        """The recursive calls, if the function cannot return without one; else []."""
        if self.block(self.inst.decl.body, True):
            self.returns = True   # falling off the end returns
        return [] if self.returns else self.calls

    # ---- statements
    def block(self, b: ast.Block, live: bool) -> bool:
        for s in b.stmts:
            live = self.stmt(s, live)
        return live

    def stmt(self, s: ast.Stmt, live: bool) -> bool:
        match s:
            case ast.Block():
                return self.block(s, live)
            case ast.Let(init=init):
                return self.expr(init, live)
            case ast.Assign(target=target, value=value):
                return self.expr(value, self.expr(target, live))
            case ast.ExprStmt(expr=e):
                return self.expr(e, live)
            case ast.If(cond=cond, then=then, else_=else_):
                live = self.expr(cond, live)
                taken = self.stmt(then, live)
                return (self.stmt(else_, live) if else_ is not None else live) or taken
            case ast.While(cond=cond, body=body):
                live = self.expr(cond, live)
                forever = isinstance(cond, ast.BoolLit) and cond.value
                return self.loop(body, live) or (live and not forever)
            case ast.Loop(body=body):
                return self.loop(body, live)
            case ast.For(iter=it, end=end, body=body):
                live = self.expr(it, live)
                if end is not None:
                    live = self.expr(end, live)
                return self.loop(body, live) or live   # the body may run no time
            case ast.With(expr=e, body=body):
                return self.block(body, self.expr(e, live))
            case ast.Break():
                if self.breaks:
                    self.breaks[-1] = self.breaks[-1] or live
                return False
            case ast.Continue():
                return False
            case ast.Return(value=value) | ast.CoReturn(value=value):
                if self.expr(value, live):
                    self.returns = True
                return False
            case ast.Defer():
                return live
        return live

    def loop(self, body: ast.Block, live: bool) -> bool:
        """A loop's body; whether a path leaves it by `break` without recursing."""
        self.breaks.append(False)
        self.block(body, live)
        return self.breaks.pop()

    # ---- expressions (operands before the operation, left to right)
    def expr(self, e: ast.Expr | None, live: bool) -> bool:
        if e is None or not live:
            return live   # nothing to learn on a path that has recursed already
        match e:
            case ast.Binary(op="&&" | "||", left=left, right=right):
                live = self.expr(left, live)
                self.expr(right, live)
                return live   # the right operand may not run
            case ast.Call():
                for child in _children(e):
                    live = self.expr(child, live)
                target = self.inst.calls.get(e)
                if isinstance(target, DirectCall) and target.fn is self.inst:
                    if live:
                        self.calls.append(e.span)
                    return False
                if isinstance(target, BuiltinCall) and target.name == "panic":
                    return False
                return live
        for child in _children(e):
            live = self.expr(child, live)
        return live


def _children(e: ast.Node):
    """The expressions directly inside `e`, in evaluation order."""
    for name in ast.fields(e):
        value = getattr(e, name)
        if isinstance(value, ast.Expr):
            yield value
        elif isinstance(value, ast.FieldInit):
            yield value.value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, ast.Expr):
                    yield item
                elif isinstance(item, ast.FieldInit):
                    yield item.value
