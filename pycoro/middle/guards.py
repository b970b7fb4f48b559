"""Base-case guards of recursive generators, tested before the generator is made.

A recursive generator almost always starts with its base case:

    fn walk(values: ptr<i64>, n: i64, i: i64) -> Generator<i64> {
        if i >= n { co_return; }
        …
        yield from walk(values, n, 2 * i + 1);

Each `yield from walk(…)` that hits the base case would create a frame, start
it, see it end at once, hand control back and destroy it — for a tree, that
is half of all the generators made. The statement `yield from g(args);` is
therefore compiled as `if !guard(args) { yield from g(args); }`, where `guard`
is g's leading condition with the parameters bound to the arguments. This is
exact when nothing observable happens between making the generator and its
first step, and nothing happens when it ends at once:

- g's first statement is `if COND { co_return; }` with no `else`, and COND
  only reads g's scalar parameters and literals through operators and casts
  (no calls, no indexing, no globals): it has the same value, and panics the
  same way (a division by zero), at the call site as in the child;
- g is a generator of the prelude's `Generator<T>` (its hooks have no
  effects), and so is the generator that delegates (its `yield_from` hook
  has none either);
- the `yield from` is a statement of its own: its value (the child's
  `co_return` value) is not used;
- g's parameters are scalars and pointers: nothing passed to it owns a
  coroutine that g would have had to destroy.

LLVM's PartialInliner does the same for ordinary functions with an early
return; a coroutine's frame allocation keeps LLVM from doing it here.
"""
from __future__ import annotations

from ..frontend import ast
from ..frontend.program import DirectCall, FnInstance, LocalVar
from ..frontend.types import PromiseT, PtrT, Type, is_scalar
from ..common.paths import stdlib_display

_PRELUDE = stdlib_display("prelude")


def _is_prelude_generator(t: Type) -> bool:
    return isinstance(t, PromiseT) and t.decl.name == "Generator" and t.decl.span.file == _PRELUDE


def leading_guard(callee: FnInstance) -> ast.Expr | None:
    """The COND of a generator's leading `if COND { co_return; }`, if it can be hoisted."""
    if callee.coro is None or not _is_prelude_generator(callee.ret) or callee.decl.body is None:
        return None
    if not all(is_scalar(t) or isinstance(t, PtrT) for _, t in callee.params):
        return None   # an argument that owns a coroutine would be left undestroyed
    stmts = callee.decl.body.stmts
    if not stmts or not isinstance(stmts[0], ast.If):
        return None
    first = stmts[0]
    then = first.then.stmts
    if first.else_ is not None or len(then) != 1 or not isinstance(then[0], ast.CoReturn) \
            or then[0].value is not None:
        return None
    return first.cond if _pure(first.cond, callee) else None


def _pure(e: ast.Expr, f: FnInstance) -> bool:
    match e:
        case ast.IntLit() | ast.BoolLit() | ast.FloatLit():
            return True
        case ast.Name():
            ref = f.refs.get(e)
            return isinstance(ref, LocalVar) and ref.is_param and is_scalar(ref.type)
        case ast.Unary(operand=operand):   # - ! ~: no effects
            return _pure(operand, f)
        case ast.Binary(left=left, right=right):
            return _pure(left, f) and _pure(right, f)
        case ast.Cast(expr=inner):
            return _pure(inner, f)
    return False


def guarded_callee(caller: FnInstance, stmt: ast.Stmt) -> FnInstance | None:
    """The generator whose guard can be tested before `stmt`, a `yield from g(…);`."""
    if not (isinstance(stmt, ast.ExprStmt) and isinstance(stmt.expr, ast.YieldFrom)):
        return None
    if caller.coro is None or not _is_prelude_generator(caller.ret):
        return None
    call = stmt.expr.value
    target = caller.calls.get(call) if isinstance(call, ast.Call) else None
    if not isinstance(target, DirectCall) or target.receiver is not None:
        return None
    return target.fn if leading_guard(target.fn) is not None else None
