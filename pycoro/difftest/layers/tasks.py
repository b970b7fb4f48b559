"""Layer `tasks`: the prelude's lazy `Task<T>` (LANGUAGE.md §5.5).

- `Task<T>` coroutines (T a scalar, a struct now and then, or `void`) whose
  bodies mix the control layer's statements (its early returns become
  `co_return v;`) with `await` of tasks declared before: as a statement, in
  `let`, and inside any expression (operands, arguments, conditions, so the
  order of evaluation around a suspension shows), chains of them, and one
  small recursion (`await` of a call of itself with a smaller depth);
- task variables (`var ht = t(…);`: nothing runs yet), awaited in a task
  body (the first `await` runs it, later ones give its value again), or
  passed to `block_on` in a plain function or `main` (a move), or left
  unstarted (destroying one runs nothing);
- `block_on(t(…))` as an expression in plain functions, `main` and task
  bodies; `block_on` of a task that has finished panics ("resumed a finished
  coroutine"), which happens now and then.

Not generated: awaiters of the program's own (the scheduler of
tests/programs/awaiters.pc), `Task<Generator<T>>` (refused), tasks that
suspend without anything to resume them.

The oracle: each task is `@taskfn async def` (pycoro/difftest/async_oracle.py:
a lazy `task` run by its first await as a nested call), `block_on` a local
helper that panics through the oracle's own `_panic` (which flushes its
buffered output).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import model as m
from ..generate import FnSig
from ..model import CoReturn
from ..types import BOOL, is_aggregate, is_scalar
from . import Layer, register
from .arith import calls
from .stream_nodes import PyOnly
from .streams import (
    add_coroutine,
    args_for,
    budgeted,
    drop_handle,
    elem,
    kind,
    replace_returns,
)

PY_HELPERS = '''
from pycoro.difftest.async_oracle import taskfn


def block_on(t):
    """The prelude's block_on: runs the lazy task to its end, here."""
    if t.done():
        _panic("resumed a finished coroutine")
    it = t.__await__()
    try:
        it.send(None)
    except StopIteration as stop:
        return stop.value
    _panic("block_on: the task suspended and nothing can resume it")
'''


@dataclass
class Await(m.Expr):
    ty: object
    e: m.Expr

    def pc(self) -> str:
        return f"(await {self.e.pc()})"

    def py(self) -> str:
        return f"(await {self.e.py()})"

    def val(self) -> str:
        # the awaiter's result is a copy of the task's value (await it again: another copy)
        return f"_cp({self.py()})" if is_aggregate(self.ty) else self.py()

    def pure(self) -> bool:
        return False


def _ret_of(sig) -> object:
    return elem(sig.ret)


def _task_type(g):
    roll = g.r.random()
    if roll < 0.12:
        return "void"
    if roll < 0.22 and g.structs:
        return g.pick(g.structs)
    return g.scalar_type()


def _struct_of(g, t):
    return next((x for x in g.structs if x.name == t), t)


def _task_fn(g, recursive: bool = False) -> None:
    t = _task_type(g)
    params = [(g.fresh("a"), g.value_type(0.2)) for _ in range(g.r.randint(0, 2))]
    if recursive:
        t = t if t != "void" else "i64"
        params.insert(0, (g.fresh("d"), "i64"))
    sig = FnSig(g.fresh("tk"), params, f"Task<{t}>", recursive=recursive)
    ret = None if t == "void" else t

    def body(g):
        g.fn.kind, g.fn.ret = "task", ret
        shown = [m.Var(ty, n) for n, ty in params if is_scalar(ty)][:2]
        prefix = [m.Print(sig.name, shown)]
        if g.chance(0.5):
            prefix.append(m.Defer(m.Print(g.fresh("tdefer"), shown[:1])))
        if recursive:
            d = params[0][0]
            prefix.append(m.If(m.Binary(BOOL, "<=", m.Var("i64", d), m.Lit("i64", 0)),
                               m.Block([CoReturn(g.expr(t))])))
        blk = budgeted(g, 12, lambda: g.block(1, 5, prefix=prefix))
        if recursive and not blk.ends():
            again = Await(t, m.Call(sig.ret, sig.name, [m.Binary("i64", "-", m.Var("i64", params[0][0]),
                                                                  m.Lit("i64", 1))] + [g.expr(ty) for _, ty in params[1:]]))
            if t != BOOL and is_scalar(t):
                again = m.Binary(t, g.pick(["+", "^", "*", "-"]), again, g.expr(t))
            blk.body.append(CoReturn(again))
        replace_returns(blk.body, lambda r: CoReturn(r.value))
        if not blk.ends():
            blk.body.append(CoReturn(g.expr(t) if ret is not None else None))
        return blk
    add_coroutine(g, sig, body, "task", g.tasks).value_ty = t
    if recursive:
        sig.cost *= 6


def _options(g, want=None):
    f = g.fn
    out = []
    for s in getattr(g, "tasks", []):
        t = _struct_of(g, _ret_of(s))
        if want is not None and t != want:
            continue
        if f.cost + f.mult * s.cost < 4000:
            out.append(s)
    return out


def _call(g, sig):
    g.fn.cost += g.fn.mult * sig.cost
    return m.Call(sig.ret, sig.name, args_for(g, sig))


def _task_vars(g, want=None):
    return [v for scope in g.fn.scopes for v in scope if isinstance(v.ty, str) and v.ty.startswith("Task<")
            and (want is None or _struct_of(g, elem(v.ty)) == want)]


# ---------------------------------------------------------------- expressions

@calls
def _await_expr(g, ty, ctx):
    if kind(g) != "task" or g.fn.in_defer:
        return None
    hs = _task_vars(g, ty)
    if hs and g.chance(0.35):
        h = g.pick(hs)
        return Await(ty, m.Var(h.ty, h.name))
    options = _options(g, ty)
    if not options:
        return None
    return Await(ty, _call(g, g.pick(options)))


@calls
def _block_on_expr(g, ty, ctx):
    if g.fn is None or g.fn.in_defer:
        return None
    options = _options(g, ty)
    if not options:
        return None
    return m.Call(ty, "block_on", [_call(g, g.pick(options))])


# ---------------------------------------------------------------- statements

def _await_stmt(g):
    if kind(g) != "task" or g.fn.in_defer:
        return None
    options = _options(g)
    hs = _task_vars(g)
    if hs and g.chance(0.4):
        h = g.pick(hs)
        t = _struct_of(g, elem(h.ty))
        e = Await(t, m.Var(h.ty, h.name))
    elif options:
        sig = g.pick(options)
        t = _struct_of(g, _ret_of(sig))
        e = Await(t, _call(g, sig))
    else:
        return None
    if is_scalar(t) and g.chance(0.6):
        return m.Print(g.fresh("aw"), [e])
    return m.ExprStmt(e)


def _let_task(g):
    options = _options(g)
    if not options or g.fn.in_defer:
        return None
    sig = g.pick(options)
    name = g.fresh("ht")
    init = _call(g, sig)
    g.declare(name, sig.ret, True)
    return m.Let(name, sig.ret, init, True, annotate=g.chance(0.5))


def _block_on_stmt(g):
    if g.fn.in_defer:
        return None
    hs = _task_vars(g)
    here = [v for v in hs if any(v.name == x.name for x in g.fn.scopes[-1])]
    if here and g.chance(0.5):
        h = g.pick(here)   # a move: only of a variable of this block
        drop_handle(g, h.name)
        t = _struct_of(g, elem(h.ty))
        e = m.Call(t, "block_on", [m.Var(h.ty, h.name)])
    else:
        options = _options(g)
        if not options:
            return None
        sig = g.pick(options)
        t = _struct_of(g, _ret_of(sig))
        e = m.Call(t, "block_on", [_call(g, sig)])
    if is_scalar(t):
        return m.Print(g.fresh("bo"), [e])
    return m.ExprStmt(e)


@register
class Tasks(Layer):
    name = "tasks"
    requires = ("control",)

    def declare(self, g) -> None:
        g.tasks = []
        g.add_decl(PyOnly(PY_HELPERS.strip("\n").split("\n")))
        for _ in range(g.r.randint(1, 3)):
            _task_fn(g)
        if g.chance(0.7):
            _task_fn(g, recursive=True)
        for _ in range(g.r.randint(0, 2)):
            _task_fn(g)

    def statements(self):
        return [(3, _await_stmt), (1.5, _let_task), (2, _block_on_stmt)]

    def expressions(self):
        return [(3, _await_expr), (0.7, _block_on_expr)]
