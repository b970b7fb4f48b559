"""Layer `send`: coroutines that receive values, as Python's `send`.

The program declares a promise `Coro<T>` whose `yield_value` returns an
awaiter (`SendBox<T>`, as tests/programs/generator_send.pc does), so
`yield v` evaluates to what the consumer sends next: `let x = (yield v);`,
`x = (yield v);`, `yield v;` (the value dropped) and `(yield v)` inside
larger expressions (evaluated left to right, as Python does). Its handle has
`send(v) -> bool` (the first send starts the coroutine, its value is not
seen, as Python's first `send(None)`; a finished coroutine is not resumed:
false), `value()` (the value last yielded; once finished, the `co_return`
value or the zero value) and `done()`. Coroutine bodies are the usual random
statements (with the generators layer's `for` loops, defers and
`co_return`s); consumers create them (`var c = sc0(…);`), send to them by
hand and in bounded loops, move them (`let d = c;`), reassign them, and let
them be destroyed, suspended with pending defers, at the end of their scope.

The oracle: the generator layer's `_Gen` wrapper, whose `send` is Python's
`gen.send` (None for the first).

Not generated: `yield from` in a `Coro` (the promise has no `yield_from`
hook), `value()` before the first send, sends to a finished coroutine via
`resume()` (a panic by design), compound assignments whose right side yields
(`x += (yield v)` reads x before or after the suspension: a choice the
language does not fix, and the consumer could change a global meanwhile).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import model as m
from ..generate import FnSig
from ..types import BOOL, is_scalar
from . import Layer, register
from .arith import calls
from .generators import (
    CoSig,
    GenCall,
    HandleT,
    HAssign,
    HMethod,
    _co_body,
    _show,
    _state,
    co_function,
    co_kind,
    handle_var,
    live_handles,
    movable,
    move,
)

PROMISE = """struct SendBox<T> { slot: ptr<T> }
impl<T> SendBox<T> {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) {}
    fn await_resume(mut self) -> T { return self.slot[0]; }
}
promise Coro<T> {
    abi switch;
    initial suspend;
    final suspend;
    var out: T;
    var inbox: T;
    fn yield_value(mut self, v: T) -> SendBox<T> { self.out = v; return SendBox { slot: &self.inbox }; }
    fn return_value(mut self, v: T) { self.out = v; }
    fn return_void(mut self) { var zero: T; self.out = zero; }
}
impl<T> Coro<T> {
    fn send(mut self, v: T) -> bool {
        if self.done() { return false; }
        self.promise().inbox = v;
        self.resume();
        return !self.done();
    }
    fn value(self) -> T { return self.promise().out; }
}""".split("\n")


@dataclass
class PromiseDecl(m.Decl):
    def pc(self) -> list[str]:
        return list(PROMISE)


@dataclass
class YieldExpr(m.Expr):
    """`(yield v)` in a Coro: the value sent next."""
    ty: object
    e: m.Expr

    def pc(self) -> str:
        return f"(yield {self.e.pc()})"

    def py(self) -> str:
        return f"(yield {self.e.val()})"

    def pure(self) -> bool:
        return False


def _elem(g):
    roll = g.r.random()
    if roll < 0.75:
        return g.int_type()
    if roll < 0.85:
        return BOOL
    return g.pick(g.structs) if g.structs else "i64"


def _coros(g, elem=None):
    return [s for s in _state(g)["cos"] if s.ty.promise == "Coro" and (elem is None or s.ty.elem == elem)]


def _coro_call(g, s: CoSig) -> GenCall:
    g.fn.cost += g.fn.mult * s.cost
    return GenCall(s.ty, s.name, [g.expr(t) for _, t in s.params])


# ---------------------------------------------------------------- inside a Coro

def _receive(g):
    """`let x = (yield v);` or `x = (yield v);`."""
    if co_kind(g) != "Coro" or g.fn.in_defer:
        return None
    elem = g.fn.co_elem
    targets = [v for v in g.visible() if v.ty == elem and v.mutable and v not in g.globals]
    if targets and g.chance(0.4):
        t = g.pick(targets)
        return m.Assign(m.Var(elem, t.name), "=", YieldExpr(elem, g.expr(elem)))
    name = g.fresh("rx")
    s = m.Let(name, elem, YieldExpr(elem, g.expr(elem)), g.chance(0.5), g.chance(0.5))
    g.declare(name, elem, s.mutable)
    return s


@calls
def _yield_expr(g, ty, ctx):
    if co_kind(g) != "Coro" or g.fn.in_defer or ty != g.fn.co_elem or not is_scalar(ty):
        return None
    return YieldExpr(ty, g.expr(ty))


# ---------------------------------------------------------------- consumers

def _let_coro(g):
    if g.fn.in_defer:
        return None
    cos = [s for s in _coros(g) if s.name != getattr(g.fn.sig, "name", None)]
    if not cos:
        return None
    s = g.pick(cos)
    name = g.fresh("cv")
    return handle_var(g, name, s.ty, _coro_call(g, s))


def _send(g):
    if g.fn.in_defer:
        return None
    hs = live_handles(g, "Coro", mutable=True)
    if not hs:
        return None
    v = g.pick(hs)
    elem = v.ty.elem
    send = HMethod(BOOL, v.name, "send", [g.expr(elem)])
    val = HMethod(elem, v.name, "value")
    roll = g.r.random()
    if roll < 0.3 and is_scalar(elem):
        return m.Print(g.fresh("sd"), [send, val])
    if roll < 0.4:
        return m.ExprStmt(send)
    if roll < 0.7 or not g.can_nest():
        return m.If(send, m.Block([_show(g, val, g.fresh("sv"))]),
                    m.Block([_show(g, val, g.fresh("sr"))]) if g.chance(0.6) else None)
    if roll < 0.9:
        bound = g.r.randint(1, 6)
        body = g.block(0, 2, loop=True, mult=bound, prefix=[_show(g, val, g.fresh("sl"))])
        return m.While(g.fresh("w"), bound, HMethod(BOOL, v.name, "send", [g.expr(elem)]), body)
    return m.Print(g.fresh("sdn"), [HMethod(BOOL, v.name, "done")])


def _move_coro(g):
    hs = [v for v in live_handles(g, "Coro") if movable(g, v)]
    if not hs:
        return None
    v = g.pick(hs)
    if g.chance(0.7):
        name = g.fresh("cv")
        return handle_var(g, name, v.ty, move(g, v))
    cos = _coros(g, v.ty.elem)
    if not cos:
        return None
    return HAssign(v.name, _coro_call(g, g.pick(cos)))


# ---------------------------------------------------------------- declarations

def _coroutine(g) -> None:
    elem = _elem(g)
    params = [(g.fresh("a"), g.scalar_type()) for _ in range(g.r.randint(0, 2))]
    name = g.fresh("sc")
    sig = FnSig(name, params, HandleT(elem, "Coro"))

    def make(g):
        body = _co_body(g, elem, 2, 5, budget=12)
        # at least one receiving yield
        if not any(isinstance(s, (m.Let, m.Assign)) and isinstance(getattr(s, "init", None) or getattr(s, "value", None), YieldExpr)
                   for s in body.body):
            rx = g.fresh("rx")
            k = g.r.randint(0, len(body.body) - (1 if body.body and body.body[-1].ends() else 0))
            body.body.insert(k, m.Let(rx, elem, YieldExpr(elem, g.expr(elem)), False, True))
            if is_scalar(elem):
                body.body.insert(k + 1, m.Print(g.fresh("got"), [m.Var(elem, rx)]))
        return body
    co_function(g, sig, elem, "Coro", make)
    _state(g)["cos"].append(CoSig(name, params, sig.ret, sig.cost))


@register
class Send(Layer):
    name = "send"
    requires = ("generators",)

    def declare(self, g) -> None:
        g.add_decl(PromiseDecl())
        for _ in range(g.r.randint(1, 3)):
            _coroutine(g)

    def statements(self):
        return [(3, _receive), (3, _let_coro), (5, _send), (1.2, _move_coro)]

    def expressions(self):
        return [(1.5, _yield_expr)]
