"""Layer `async`: `async fn` and std/async (LANGUAGE.md §7).

- `async fn main()` (through generate.py's main hooks) and async fns with
  scalar, struct or no results whose bodies mix the control layer's
  statements with: `await f(…)` of async fns declared before (statements, and
  inside any expression, so what is evaluated before a suspension shows),
  `spawn f(…)` (a `Join` kept in a variable and awaited later, or dropped at
  once or at the end of its scope: the task runs on, detached), `await j`,
  `await sleep(ms)` (small, zero, negative, now and then any i64),
  `await yield_now()`, `now()`, and `return` (also early, from main);
- a small recursion (an async fn awaiting itself with a smaller depth);
- channels of i64 (`channel<i64>(cap)`, now and then a capacity of 0, which
  panics), shared by copying: `await ch.send(v)`, `await ch.recv()` (its `ok`
  and `value` printed), `ch.close()` (a send after it panics), producers and
  consumers spawned or awaited with the channel as an argument;
- so now and then a deadlock (every task waiting, no timer: panic, 101), a
  send on a closed channel, and tasks left behind when main returns.

Not generated: channels of handles (generators, Joins), `Join`s passed
around or stored, async methods, `--real-time`, mixing `Task<T>` in.

The oracle: every async fn is an `async def` run by
pycoro/difftest/async_oracle.py's scheduler (`run_main(main, flush=_flush)`,
spawn/sleep/yield_now/now/channel from there); see its docstring for the
rules it follows.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import model as m
from ..generate import FnSig
from ..types import BOOL, is_scalar
from . import Layer, register
from .arith import calls
from .stream_nodes import CoFnDecl, PyOnly
from .streams import add_coroutine, args_for, budgeted, drop_handle, elem, kind

PY_HELPERS = "from pycoro.difftest.async_oracle import run_main, spawn, sleep, yield_now, now, channel"
CH = "Channel<i64>"


# ---------------------------------------------------------------- nodes

@dataclass
class AwaitA(m.Expr):
    """`await CALL` of an async fn (or a std/async one: sleep, yield_now,
    a channel's send/recv), or `await j` of a Join."""
    ty: object
    e: m.Expr

    def pc(self) -> str:
        return f"(await {self.e.pc()})"

    def py(self) -> str:
        return f"(await {self.e.py()})"

    def pure(self) -> bool:
        return False


@dataclass
class Spawn(m.Expr):
    ty: object
    call: m.Expr

    def pc(self) -> str:
        return f"spawn {self.call.pc()}"

    def py(self) -> str:
        return f"spawn({self.call.py()})"

    def pure(self) -> bool:
        return False


@dataclass
class Raw(m.Expr):
    """An expression written out for each side (`now()`, `ch.send(v)`, …)."""
    ty: object
    pc_text: str
    py_text: str
    args: list

    def pc(self) -> str:
        return self.pc_text.format(*[a.pc() for a in self.args])

    def py(self) -> str:
        return self.py_text.format(*[a.val() for a in self.args])

    def pure(self) -> bool:
        return False


@dataclass
class Recv(m.Stmt):
    """`let M = await ch.recv(); print(LABEL, M.ok, M.value);`"""
    name: str
    ch: str
    label: str

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}let {self.name} = await {self.ch}.recv();",
                f'{ind}print("{self.label}", {self.name}.ok, {self.name}.value);']

    def py(self, ind: str) -> list[str]:
        return [f"{ind}{self.name} = await {self.ch}.recv()",
                f"{ind}_p({self.label!r}, {self.name}.ok, {self.name}.value)"]


@dataclass
class AsyncMain(CoFnDecl):
    """`async fn main()`; in Python `async def _amain()` run by the oracle's
    scheduler from a plain `main` (run_main exits the process itself)."""

    def py_lines(self, globals_: list[str]) -> list[str]:
        out = super().py_lines(globals_)
        out[0] = out[0].replace("def main(", "def _amain(")
        return out + ["", "", "def main():", f"{m.IND}run_main(_amain, flush=_flush)"]


def _ch_arg(name: str) -> m.Expr:
    return m.Var(CH, name)


# ---------------------------------------------------------------- declarations

def _ret_type(g):
    roll = g.r.random()
    if roll < 0.25:
        return "void"
    if roll < 0.33 and g.structs:
        return g.pick(g.structs)
    return g.scalar_type()


def _register(g, sig, body):
    decl = add_coroutine(g, sig, body, "async", g.asyncs)
    decl.ret = None if sig.ret == "void" else sig.ret
    return decl


def _async_fn(g, recursive: bool = False) -> None:
    t = _ret_type(g)
    if recursive and (t == "void" or not is_scalar(t)):
        t = "i64"
    params = [(g.fresh("a"), g.value_type(0.2)) for _ in range(g.r.randint(0, 2))]
    if recursive:
        params.insert(0, (g.fresh("d"), "i64"))
    sig = FnSig(g.fresh("af"), params, t, recursive=recursive)
    ret = None if t == "void" else t

    def body(g):
        g.fn.kind, g.fn.ret = "async", ret
        shown = [m.Var(ty, n) for n, ty in params if is_scalar(ty)][:2]
        prefix = [m.Print(sig.name, shown + [Raw("i64", "now()", "now()", [])])]
        if g.chance(0.4):
            prefix.append(m.Defer(m.Print(g.fresh("adefer"), shown[:1])))
        if recursive:
            d = params[0][0]
            prefix.append(m.If(m.Binary(BOOL, "<=", m.Var("i64", d), m.Lit("i64", 0)),
                               m.Block([m.Return(g.expr(t))])))
            prefix.append(_pause(g))
        blk = budgeted(g, 10, lambda: g.block(1, 4, prefix=prefix))
        if recursive and not blk.ends():
            again = AwaitA(t, m.Call(t, sig.name, [m.Binary("i64", "-", m.Var("i64", d), m.Lit("i64", 1))]
                                     + [g.expr(ty) for _, ty in params[1:]]))
            if t != BOOL:
                again = m.Binary(t, g.pick(["+", "^", "-"]), again, g.expr(t))
            blk.body.append(m.Return(again))
        if ret is not None and not blk.ends():
            blk.body.append(m.Return(g.expr(t)))
        return blk
    _register(g, sig, body)
    if recursive:
        sig.cost *= 6


def _producer(g) -> None:
    ch, n, base, i = "ch", "n", "base", g.fresh("i")
    sig = FnSig(g.fresh("prod"), [(ch, CH), (n, "i64"), (base, "i64")], "void")
    closes = g.chance(0.5)
    nap = g.r.choice([None, 0, 1, 3])

    def body(g):
        g.fn.kind, g.fn.ret = "async", None
        loop = [m.ExprStmt(AwaitA(None, Raw(None, "{}.send({})", "{}.send({})",
                                            [_ch_arg(ch), m.Binary("i64", "+", m.Var("i64", base), m.Var("i64", i))]))),
                m.Print(sig.name, [m.Var("i64", base), m.Var("i64", i), Raw("i64", "now()", "now()", [])])]
        if nap is not None:
            loop.insert(0, m.ExprStmt(AwaitA(None, Raw(None, "sleep({})", "sleep({})", [m.Lit("i64", nap)]))))
        stmts = [m.For(i, m.Lit("i64", 0), m.Var("i64", n), False, m.Block(loop))]
        if closes:
            stmts.append(m.ExprStmt(Raw(None, "{}.close()", "{}.close()", [_ch_arg(ch)])))
        return m.Block(stmts)
    _register(g, sig, body)
    g.producers.append(sig)


def _consumer(g) -> None:
    ch, n, total, k = "ch", "n", "total", g.fresh("i")
    sig = FnSig(g.fresh("cons"), [(ch, CH), (n, "i64")], "i64")

    def body(g):
        g.fn.kind, g.fn.ret = "async", "i64"
        mv = g.fresh("m")
        inner = [Recv(mv, ch, sig.name),
                 m.If(m.Unary(BOOL, "!", Raw(BOOL, f"{mv}.ok", f"{mv}.ok", [])), m.Block([m.Break()])),
                 m.Assign(m.Var("i64", total), "+=", Raw("i64", f"{mv}.value", f"{mv}.value", []))]
        if g.chance(0.4):
            inner.append(m.ExprStmt(AwaitA(None, Raw(None, "yield_now()", "yield_now()", []))))
        return m.Block([m.Let(total, "i64", m.Lit("i64", 0)),
                        m.For(k, m.Lit("i64", 0), m.Var("i64", n), False, m.Block(inner)),
                        m.Return(m.Var("i64", total))])
    _register(g, sig, body)
    g.consumers.append(sig)


# ---------------------------------------------------------------- helpers

def _in_async(g) -> bool:
    return kind(g) == "async" and not g.fn.in_defer


def _options(g, want=None):
    f = g.fn
    out = []
    for s in getattr(g, "asyncs", []):
        if s in getattr(g, "producers", []) or s in getattr(g, "consumers", []):
            continue
        t = _struct_of(g, s.ret)
        if want is not None and t != want:
            continue
        if f.cost + f.mult * s.cost < 4000:
            out.append(s)
    return out


def _struct_of(g, t):
    return next((x for x in g.structs if x.name == str(t)), t)


def _call(g, sig):
    g.fn.cost += g.fn.mult * sig.cost
    return m.Call(sig.ret, sig.name, args_for(g, sig))


def _vars(g, prefix):
    return [v for scope in g.fn.scopes for v in scope if isinstance(v.ty, str) and v.ty.startswith(prefix)]


def _ms(g) -> m.Expr:
    roll = g.r.random()
    if roll < 0.75:
        return m.Lit("i64", g.r.choice([0, 1, 1, 2, 3, 5, 10]))
    if roll < 0.85:
        return m.Lit("i64", g.r.choice([-1, -100]))
    return g.expr("i64")


def _pause(g) -> m.Stmt:
    if g.chance(0.5):
        return m.ExprStmt(AwaitA(None, Raw(None, "yield_now()", "yield_now()", [])))
    return m.ExprStmt(AwaitA(None, Raw(None, "sleep({})", "sleep({})", [_ms(g)])))


# ---------------------------------------------------------------- statements

def _sleep(g):
    if not _in_async(g):
        return None
    return _pause(g)


def _now(g):
    if not _in_async(g):
        return None
    return m.Print(g.fresh("now"), [Raw("i64", "now()", "now()", [])])


def _await_stmt(g):
    if not _in_async(g):
        return None
    options = _options(g)
    if not options:
        return None
    sig = g.pick(options)
    t = _struct_of(g, sig.ret)
    e = AwaitA(t, _call(g, sig))
    if is_scalar(t) and g.chance(0.6):
        return m.Print(g.fresh("aw"), [e])
    return m.ExprStmt(e)


def _spawn(g):
    if not _in_async(g):
        return None
    options = _options(g)
    if not options:
        return None
    sig = g.pick(options)
    e = Spawn(f"Join<{sig.ret}>", _call(g, sig))
    if g.chance(0.3):
        return m.ExprStmt(e)   # detached at once
    name = g.fresh("j")
    g.declare(name, e.ty, True)
    return m.Let(name, e.ty, e, True, annotate=False)


def _join(g):
    if not _in_async(g):
        return None
    here = [v for v in g.fn.scopes[-1] if isinstance(v.ty, str) and v.ty.startswith("Join<")]
    if not here:
        return None
    h = g.pick(here)
    drop_handle(g, h.name)
    t = _struct_of(g, elem(h.ty))
    e = AwaitA(t, m.Var(h.ty, h.name))
    if is_scalar(t):
        return m.Print(g.fresh("jn"), [e])
    return m.ExprStmt(e)


def _channel(g):
    if not _in_async(g) or g.fn.depth > 1:
        return None
    name = g.fresh("ch")
    cap = g.r.choice([1, 1, 2, 3]) if g.chance(0.97) else 0
    g.declare(name, CH, False)
    return m.Let(name, CH, Raw(CH, "channel<i64>({})", "channel({})", [m.Lit("i64", cap)]), False, annotate=False)


def _chan_op(g):
    if not _in_async(g):
        return None
    chans = _vars(g, CH)
    if not chans:
        return None
    ch = g.pick(chans).name
    roll = g.r.random()
    if roll < 0.12:
        return m.ExprStmt(AwaitA(None, Raw(None, "{}.send({})", "{}.send({})", [_ch_arg(ch), g.expr("i64")])))
    if roll < 0.22:
        return Recv(g.fresh("m"), ch, g.fresh("rv"))
    if roll < 0.3:
        return m.ExprStmt(Raw(None, "{}.close()", "{}.close()", [_ch_arg(ch)]))
    if roll < 0.7 and g.producers:
        sig = g.pick(g.producers)
        call = m.Call("void", sig.name, [_ch_arg(ch), m.Lit("i64", g.r.randint(0, 4)), g.expr("i64")])
        if g.chance(0.8):
            return m.ExprStmt(Spawn("Join<void>", call))
        return m.ExprStmt(AwaitA(None, call))
    if g.consumers:
        sig = g.pick(g.consumers)
        call = m.Call("i64", sig.name, [_ch_arg(ch), m.Lit("i64", g.r.randint(0, 3))])
        if g.chance(0.6):
            name = g.fresh("j")
            g.declare(name, "Join<i64>", True)
            return m.Let(name, "Join<i64>", Spawn("Join<i64>", call), True, annotate=False)
        return m.Print(g.fresh("cs"), [AwaitA("i64", call)])
    return None


# ---------------------------------------------------------------- expressions

@calls
def _await_expr(g, ty, ctx):
    if not _in_async(g):
        return None
    options = _options(g, ty)
    if not options:
        return None
    return AwaitA(ty, _call(g, g.pick(options)))


@calls
def _now_expr(g, ty, ctx):
    if ty != "i64" or not _in_async(g):
        return None
    return Raw("i64", "now()", "now()", [])


@register
class Async(Layer):
    name = "async"
    requires = ("control",)

    def declare(self, g) -> None:
        g.asyncs, g.producers, g.consumers = [], [], []
        g.add_decl(PyOnly([PY_HELPERS]))
        _producer(g)
        _consumer(g)
        for _ in range(g.r.randint(1, 3)):
            _async_fn(g)
        if g.chance(0.6):
            _async_fn(g, recursive=True)
        for _ in range(g.r.randint(0, 2)):
            _async_fn(g)
        if g.chance(0.3):
            _producer(g)

    # generate.py's main hooks: `async fn main()`
    def main_ret(self, g, ret):
        return None

    def enter_main(self, g) -> None:
        g.fn.kind = "async"

    def main_decl(self, g, decl):
        return AsyncMain(decl.name, decl.params, decl.ret, decl.body, kind="async")

    def statements(self):
        return [(2, _sleep), (1, _now), (2.5, _await_stmt), (2, _spawn), (2, _join), (1, _channel), (3, _chan_op)]

    def expressions(self):
        return [(2, _await_expr), (0.5, _now_expr)]
