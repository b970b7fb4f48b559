"""Layer `streams`: returned-continuation coroutines (LANGUAGE.md §6).

- `Stream<T>` functions (T a scalar, now and then a struct): lazy, `yield` in
  any statement (loops, branches, `with` bodies, bodies of `for` over other
  streams), `co_return;` (also the control layer's early returns, rewritten),
  `defer`s pending at a `yield`;
- a recursive stream (its first parameter a small depth) that iterates a call
  of itself and yields what it gets, changed;
- arguments now and then wider than a byte (1300, -1): a frame's byte
  written over by another coroutine's `bool` shows;
- `for v in s(…)` over a temporary (destroyed at the end of the `for`, also on
  break/continue/return), and over a variable (advanced in place, not moved);
- stream variables (`var hs = s(…)`) driven by hand: `next()`, `value()` after
  a `next()` that gave true, `done()`, `resume()` (guarded, or not: a finished
  one panics), reassigned (the new value first, then the old one destroyed),
  moved into a function that drains it, or left to be destroyed at the end of
  their scope, in reverse order with the `defer`s there;
- `Once<T>` functions (the yield at the top level of the body, a `defer`
  before it, code after it), used by `with v in o(…) { … }` anywhere (the body
  may break, continue, return, or yield inside a stream) and held in a
  variable (`var ho = o(…)`: it has run to its yield; `resume()`, `done()`,
  destroyed at the end of the scope, which runs only its `defer`s);
- plain functions that use `with`, called from streams and from `main`;
- endless streams (`loop { yield s; s += k; … }`, or a `bool` that flips
  each turn), two or three of one item type, one with a wide parameter that
  only its `defer` reads, now and then a generic one, and a plain function
  returning one of two of them: each consumed by a `for` that breaks on a
  value it must reach within a few. That is the shape of the two stream
  dispatch miscompiles (tests/programs/stream_dispatch_one_coroutine.pc,
  stream_dispatch_generic_names.pc), which the shapes above did not find.

Not generated: `value()` before the first `next()` or after the end (its value
is not specified), `Once<ptr<T>>` (pointers are not modelled), streams of
streams, handles in structs or arrays, moves out of a variable declared in an
enclosing block (the rules of maybe-moved variables are another layer's).

The oracle: a stream is a Python generator (a `def` with a `yield`), wrapped
in `_St` (next/value/done/resume/close); a Once is a generator run to its
yield when called (`_On`). PyCoro's destruction points are explicit: a
temporary's `close()` in a `finally` around its `for`, a variable's in a
`finally` around the rest of its block (so it interleaves with `defer`s, in
reverse order), a `with`'s resumption in a `finally` and, when the stream
around it is destroyed (GeneratorExit), its `close()` instead.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import model as m
from ..generate import FnSig, VarInfo
from ..model import CoReturn, Yield
from ..types import BOOL, is_scalar, scalar_leaves
from . import Layer, register
from .stream_nodes import PY_HELPERS, CoFnDecl, ForStream, HandleLet, HCall, PyLine, PyOnly, Reassign, With

IND = m.IND


# ---------------------------------------------------------------- helpers

def kind(g) -> str | None:
    return getattr(g.fn, "kind", None) if g.fn is not None else None


def replace_returns(node, make):
    """Replace every `Return` inside a statement tree by make(return) (None: drop it)."""
    if isinstance(node, list):
        out = []
        for s in node:
            if isinstance(s, m.Return):
                r = make(s)
                if r is not None:
                    out.append(r)
            else:
                replace_returns(s, make)
                out.append(s)
        node[:] = out
        return
    if isinstance(node, m.If):
        replace_returns(node.then, make)
        if node.els is not None:
            replace_returns(node.els, make)
        return
    if isinstance(node, m.Stmt) and hasattr(node, "__dataclass_fields__"):
        for name in node.__dataclass_fields__:
            v = getattr(node, name)
            if isinstance(v, m.Block):
                replace_returns(v.body, make)
            elif isinstance(v, list) and v and isinstance(v[0], m.Stmt):
                replace_returns(v, make)


def contains(node, cls) -> bool:
    if isinstance(node, cls):
        return True
    if isinstance(node, list):
        return any(contains(x, cls) for x in node)
    if isinstance(node, (m.Stmt, m.Decl)) and hasattr(node, "__dataclass_fields__"):
        return any(contains(getattr(node, f), cls) for f in node.__dataclass_fields__
                   if isinstance(getattr(node, f), (m.Stmt, list)))
    return False


def shows(e: m.Expr, ty) -> list:
    """Scalar expressions that show a value of type `ty` (a struct's fields)."""
    if is_scalar(ty):
        return [e]
    out = []
    for path, _t in list(scalar_leaves(ty))[:4]:
        x = e
        for k, name in path:
            x = m.Field(x.ty.field(name), x, name) if k == "field" else m.Index(x.ty.elem, x, m.Lit("i64", name))
        out.append(x)
    return out


def add_coroutine(g, sig: FnSig, make_body, ckind: str, registry: list) -> CoFnDecl:
    """Declare a coroutine through g.function, keep it out of the plain
    callables (the control layer would call it as a function) and in
    `registry` instead."""
    decl = g.function(sig, make_body)
    assert g.decls[-1] is decl
    g.functions.remove(sig)
    co = CoFnDecl(decl.name, decl.params, decl.ret, decl.body, decl.generic, decl.self_kind, decl.struct, ckind)
    g.decls[-1] = co
    registry.append(sig)
    return co


def budgeted(g, n: int, make):
    saved, g.budget = g.budget, n
    try:
        return make()
    finally:
        g.budget = saved


def scoped(g, names, make):
    """make() with `names` ([(name, type)]) declared in a scope of their own."""
    g.fn.scopes.append([VarInfo(n, t, False) for n, t in names])
    try:
        return make()
    finally:
        g.fn.scopes.pop()


# Values with bytes other than 0 and 1 (1300 is 0x514): a coroutine's
# argument kept in its frame shows when a `bool` is written over one of its
# bytes, which the small values expressions mostly give would hide. (Alone
# this did not find tests/programs/stream_dispatch_one_coroutine.pc's
# miscompile in 300 programs on the compiler before its fix: that needs two
# streams of one item type, a field read only by a `defer`, a `bool` of the
# other at the same offset, and a `break`.)
_WIDE = {"i64": (1300, -1, 0x0102030405, -70000), "i32": (1300, -1, 0x01020304),
         "u64": (1300, 2 ** 40 + 5), "u32": (1300, 0xFFFFFFFF)}


def args_for(g, sig: FnSig) -> list:
    args = [m.Lit(t, g.pick(_WIDE[t]), suffix=True) if t in _WIDE and g.chance(0.25) else g.expr(t)
            for _, t in sig.params]
    if sig.recursive:
        args[0] = m.Lit("i64", g.r.randint(0, 3))
    return args


def handle_vars(g, prefix: str) -> list[VarInfo]:
    return [v for scope in g.fn.scopes for v in scope if isinstance(v.ty, str) and v.ty.startswith(prefix)]


def elem(ty: str):
    return ty[ty.index("<") + 1:-1]


def drop_handle(g, name: str) -> None:
    """`name` was moved: no later statement may use it."""
    for scope in g.fn.scopes:
        scope[:] = [v for v in scope if v.name != name]


# ---------------------------------------------------------------- declarations

def _elem_type(g):
    if g.structs and g.chance(0.12):
        st = g.pick(g.structs)
        if all(is_scalar(t) for _, t in scalar_leaves(st)):
            return st
    return g.scalar_type()


def _stream_fn(g, recursive: bool = False) -> None:
    t = _elem_type(g)
    params = [(g.fresh("a"), g.value_type(0.2)) for _ in range(g.r.randint(0, 2))]
    if recursive:
        params.insert(0, (g.fresh("d"), "i64"))
    sig = FnSig(g.fresh("st"), params, f"Stream<{t}>", recursive=recursive)

    def body(g):
        g.fn.kind, g.fn.elem, g.fn.ret, g.fn.yields = "stream", t, None, 0
        prefix = [m.Print(sig.name, [m.Var(ty, n) for n, ty in params if is_scalar(ty)][:2])]
        if g.chance(0.6):
            prefix.append(m.Defer(m.Print(g.fresh("sdefer"), [m.Var(ty, n) for n, ty in params if is_scalar(ty)][:1])))
        if recursive:
            d = params[0][0]
            v = g.fresh("sv")
            inner_args = [m.Binary("i64", "-", m.Var("i64", d), m.Lit("i64", 1))] + [g.expr(ty) for _, ty in params[1:]]

            def inner():
                stmts = g.block(0, 2, loop=True, mult=3).body
                if any(s.ends() for s in stmts):
                    stmts = stmts[:-1]
                val = m.Var(t, v)
                if t != BOOL and is_scalar(t) and g.chance(0.7):
                    val = m.Binary(t, g.pick(["+", "^", "-"]), val, g.literal(t, ctx=True))
                return m.Block(stmts + [Yield(val)])
            loop = ForStream(v, m.Call(sig.ret, sig.name, inner_args), scoped(g, [(v, t)], inner), g.fresh("_t"))
            prefix.append(m.If(m.Binary(BOOL, ">", m.Var("i64", d), m.Lit("i64", 0)), m.Block([loop])))
        blk = budgeted(g, 12, lambda: g.block(1, 5, prefix=prefix))
        n = 0
        if not blk.ends() and g.chance(0.5):
            i = g.fresh("i")
            n = g.r.randint(1, 4)
            tail = scoped(g, [(i, "i64")], lambda: g.block(0, 2, loop=True, mult=n))
            if tail.ends():
                tail.body.pop()
            tail.body.append(Yield(g.expr(t)))
            blk.body.append(m.For(i, m.Lit("i64", 0), m.Lit("i64", n), False, tail))
        replace_returns(blk.body, lambda r: CoReturn())
        if not contains(blk.body, (Yield, CoReturn)):
            blk.body.append(CoReturn())
        sig.yields = g.fn.yields + n
        return blk
    add_coroutine(g, sig, body, "stream", g.streams)
    if recursive:
        sig.cost *= 8


def _once_fn(g) -> None:
    t = g.scalar_type()
    params = [(g.fresh("a"), g.value_type(0.2)) for _ in range(g.r.randint(0, 2))]
    sig = FnSig(g.fresh("on"), params, f"Once<{t}>")

    def body(g):
        g.fn.kind, g.fn.elem, g.fn.ret = "once", t, None
        shown = [m.Var(ty, n) for n, ty in params if is_scalar(ty)][:2]
        prefix = [m.Print(sig.name, shown)]
        if g.chance(0.7):
            prefix.append(m.Defer(m.Print(g.fresh("odefer"), shown[:1])))
        pre = budgeted(g, 5, lambda: g.block(0, 3, prefix=prefix))
        replace_returns(pre.body, lambda r: None)   # a path that ends before the yield is refused
        if pre.ends():
            pre.body.pop()
        y = Yield(g.expr(t))
        post = budgeted(g, 4, lambda: g.block(0, 3))
        replace_returns(post.body, lambda r: CoReturn())
        return m.Block(pre.body + [y, m.Print(g.fresh("after"), [])] + post.body)
    add_coroutine(g, sig, body, "once", g.onces)


def _with_fn(g) -> None:
    """A plain function that uses `with` (called from streams and main)."""
    from .control import _body
    params = [(g.fresh("a"), g.scalar_type()) for _ in range(g.r.randint(0, 2))]
    ret = g.scalar_type() if g.chance(0.7) else None
    sig = FnSig(g.fresh("wf"), params, ret)

    def body(g):
        w = _with(g, force=True)
        return _body(g, ret, 0, 2, prefix=[w] if w is not None else [])
    g.function(sig, body)


def _drain_fn(g, t) -> None:
    """fn dr(s: Stream<T>) -> i64: takes the stream (a move), counts (and
    prints) its values, maybe stops early; the stream dies at its end."""
    s, v, n = "s", "v", "n"
    sig = FnSig(g.fresh("dr"), [(s, f"Stream<{t}>")], "i64")
    limit = g.r.randint(1, 4) if g.chance(0.5) else None

    def body(g):
        inner = [m.Print(sig.name, shows(m.Var(t, v), t)), m.Assign(m.Var("i64", n), "+=", m.Lit("i64", 1))]
        if limit is not None:
            inner.append(m.If(m.Binary(BOOL, ">=", m.Var("i64", n), m.Lit("i64", limit)), m.Block([m.Break()])))
        return m.Block([HandleLet(PyLine(f"{s}.close()"), name=s), m.Let(n, "i64", m.Lit("i64", 0)),
                        ForStream(v, m.Var(sig.params[0][1], s), m.Block(inner), ""),
                        m.Print(g.fresh("drained"), [m.Var("i64", n)]), m.Return(m.Var("i64", n))])
    decl = g.function(sig, body)
    g.functions.remove(sig)
    g.drains.append(sig)
    return decl


@dataclass
class Forever(m.Stmt):
    """`loop { body }` with no bound of its own: only in an endless stream,
    whose consumers stop (_for_endless)."""
    body: m.Block

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}loop {{"] + m.pc_stmts(self.body.body, ind + IND) + [ind + "}"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}while True:"] + m.py_stmts(self.body.body, ind + IND)


def _endless_fn(g, t: str, flips: bool, reads_in_defer: bool, generic: bool = False) -> FnSig:
    """An endless stream of T whose values a consumer can stop on (its
    `stop`): `fn enN(w: i64, …) -> Stream<T> { defer print(…, w); var s = L;
    loop { yield s; s = s + K; <statements> } }` counts up from L by K (a
    consumer stops at `v >= L + n*K`); with `flips`, `var f = …; loop { f =
    !f; yield f as T; … }` alternates 0 and 1 (stop at `v == 1`). The
    statements of a turn (half the time none) cannot change the state; they
    may end the stream. `w`, read only when the frame is destroyed, lives in
    the frame all along, so a byte written over it by another stream's `bool`
    shows (tests/programs/stream_dispatch_one_coroutine.pc: found only
    without counters of their own in either loop, and with a break that
    depends on the values). `generic`: `fn enN<T, U>(…, _u: U)`, called with
    type arguments (each call site its own): an instance's name holds a
    comma, `@"pc.enN<i64,bool>.resume.0"` (tests/programs/
    stream_dispatch_generic_names.pc)."""
    params = [(g.fresh("w"), "i64")] + [(g.fresh("a"), g.scalar_type()) for _ in range(g.r.randint(0, 1))]
    if generic:
        params.append((g.fresh("_u"), "U"))
    sig = FnSig(g.fresh("en"), params, f"Stream<{t}>")
    start, step = g.r.randint(-10, 20), g.r.randint(1, 3)

    def body(g):
        g.fn.kind, g.fn.elem, g.fn.ret, g.fn.yields = "stream", t, None, 0
        # half the time no print before the first yield: a call there hid
        # the miscompile above
        head = ([m.Print(sig.name, [m.Var(ty, n) for n, ty in params[1:] if ty != "U"])]
                if g.chance(0.5) else [])
        if reads_in_defer:
            head.append(m.Defer(m.Print(g.fresh("edefer"), [m.Var("i64", params[0][0])])))
        state = g.fresh("es")
        state_t = BOOL if flips else t
        here = m.Var(state_t, state)
        if flips:
            head.append(m.Let(state, BOOL, g.expr(BOOL)))
            turn = [m.Assign(here, "=", m.Unary(BOOL, "!", here)), Yield(m.Cast(t, here))]
        else:
            head.append(m.Let(state, t, m.Lit(t, start, suffix=True)))
            turn = [Yield(here), m.Assign(here, "+=", m.Lit(t, step))]
        g.declare(state, state_t, False)   # (the generator's statements leave it alone)
        rest = budgeted(g, 3 if g.chance(0.5) else 0,
                        lambda: g.block(0, 2, loop=True, mult=_FOR_ENDLESS_MAX, prefix=turn))
        replace_returns(rest.body, lambda r: CoReturn())
        return m.Block(head + [Forever(rest)])
    co = add_coroutine(g, sig, body, "stream", g.endless)
    if generic:
        co.generic = ["T", "U"]
    sig.generic = generic
    sig.stop = ((lambda v, n: m.Binary(BOOL, "==", v, m.Lit(t, 1))) if flips else
                (lambda v, n: m.Binary(BOOL, ">=", v, m.Lit(t, start + n * step))))
    return sig


def _endless_call(g, sig: FnSig, first: m.Expr, rest) -> m.Call:
    """A call of an endless stream or picker: `first` its first argument,
    `rest(ty)` each other one's; a generic one's type arguments drawn here."""
    targs = [g.scalar_type(), g.scalar_type()] if getattr(sig, "generic", False) else []
    args = [first] + [g.literal(targs[1], ctx=False) if ty == "U" else rest(ty) for _, ty in sig.params[1:]]
    return m.Call(sig.ret, sig.name, args, targs)


def _picker_fn(g, members: list) -> None:
    """`fn pkN(w: i64, c: bool) -> Stream<T> { if c { return enA(w, …); }
    return enB(w, …); }`: the stream a loop iterates is one of two
    coroutines' (their stops, or'ed, stop it). A step's continuation then
    comes through a phi of two coroutines' (stream_dispatch_generic_names.pc)."""
    first, second = members
    c = g.fresh("c")
    sig = FnSig(g.fresh("pk"), [(g.fresh("w"), "i64"), (c, BOOL)], first.ret)

    def body(g):
        w = m.Var("i64", sig.params[0][0])
        pick = [_endless_call(g, member, w, lambda ty: g.literal(ty, ctx=False)) for member in members]
        return m.Block([m.If(m.Var(BOOL, c), m.Block([m.Return(pick[0])])), m.Return(pick[1])])
    g.function(sig, body)
    g.functions.remove(sig)   # (not for the control layer's calls: a stream it would drop unstarted)
    sig.stop = lambda v, n: m.Binary(BOOL, "||", first.stop(v, n), second.stop(v, n))
    g.endless.append(sig)


_FOR_ENDLESS_MAX = 6     # values a consumer takes from an endless stream


def _endless_family(g) -> None:
    """Two or three endless streams of one item type (one of the other
    streams' where it is a signed integer): one whose `defer` reads its `w`,
    one whose state is a `bool`, now and then a generic one; half the time a
    function that returns one of two of them."""
    shared = sorted({elem(s.ret) for s in g.streams} & {"i8", "i16", "i32", "i64"})
    t = g.pick(shared) if shared and g.chance(0.7) else "i64"
    family = [(False, True), (True, g.chance(0.3))] + [(g.chance(0.5), g.chance(0.5))
                                                      for _ in range(g.r.randint(0, 1))]
    g.r.shuffle(family)
    members = [_endless_fn(g, t, flips, reads_in_defer, generic=g.chance(0.3))
               for flips, reads_in_defer in family]
    if g.chance(0.5):
        _picker_fn(g, g.r.sample(members, 2))


def _for_endless(g):
    """`for v in enN(…) { if STOP(v) { break; } … }`: the loop leaves by its
    `break` within a few values, which its stream's `stop` says (no counter
    of the loop's own: with one, LLVM's loop did not show the miscompile
    this shape is for)."""
    if not g.can_nest() or not getattr(g, "endless", []) or g.fn.mult > 8:
        return None
    sig = g.pick(g.endless)
    t = elem(sig.ret)
    taken = g.r.randint(1, _FOR_ENDLESS_MAX - 1)
    g.fn.cost += g.fn.mult * sig.cost
    v = g.fresh("ev")
    wide = m.Lit("i64", g.pick(_WIDE["i64"]), suffix=True) if g.chance(0.7) else g.expr("i64")
    call = _endless_call(g, sig, wide, g.expr)
    guard = [m.If(sig.stop(m.Var(t, v), taken), m.Block([m.Break()]))]
    body = scoped(g, [(v, t)], lambda: budgeted(g, 2 if g.chance(0.5) else 0,
                                                  lambda: g.block(0, 2, loop=True, mult=taken + 1, prefix=guard)))
    return ForStream(v, call, body, g.fresh("_t"))


# ---------------------------------------------------------------- statements

def _streams_of(g, elem_t=None):
    f = g.fn
    return [s for s in getattr(g, 'streams', []) if f.cost + f.mult * s.cost < 4000 and (elem_t is None or elem(s.ret) == elem_t)]


def _for_stream(g):
    if not g.can_nest() or not getattr(g, 'streams', []):
        return None
    options = _streams_of(g)
    if not options:
        return None
    sig = g.pick(options)
    t = elem(sig.ret)
    t = next((x for x in g.structs if x.name == t), t)
    g.fn.cost += g.fn.mult * sig.cost
    v = g.fresh("sv")
    src = m.Call(sig.ret, sig.name, args_for(g, sig))
    mult = max(1, min(getattr(sig, "yields", 4), 10))
    body = scoped(g, [(v, t)], lambda: g.block(1, 3, loop=True, mult=mult))
    if g.chance(0.3):
        body.body.insert(0, m.Print(g.fresh("got"), shows(m.Var(t, v), t)))
    return ForStream(v, src, body, g.fresh("_t"))


def _yield(g):
    if kind(g) != "stream" or g.fn.in_defer or g.fn.mult > 8:
        return None   # a yield in nested loops (or bodies of nested streams) would make too many values
    g.fn.yields += g.fn.mult
    return Yield(g.expr(g.fn.elem))


def _co_return(g):
    if kind(g) != "stream" or g.fn.in_defer or g.fn.depth == 0:
        return None
    return m.If(g.expr(BOOL), m.Block([m.Print(g.fresh("cr"), []), CoReturn()]))


def _let_stream(g):
    if not getattr(g, 'streams', []) or g.fn.in_defer:
        return None
    options = _streams_of(g)
    if not options:
        return None
    sig = g.pick(options)
    g.fn.cost += g.fn.mult * sig.cost
    name = g.fresh("hs")
    init = m.Call(sig.ret, sig.name, args_for(g, sig))
    g.declare(name, sig.ret, True)
    return HandleLet(PyLine(f"{name}.close()"), name=name, init=init)


def _struct_of(g, t):
    return next((x for x in g.structs if x.name == t), t)


def _busy(g) -> set:
    """Handle variables that an enclosing `for` iterates in place."""
    if not hasattr(g.fn, "busy"):
        g.fn.busy = set()
    return g.fn.busy


def _use_stream(g):
    hs = handle_vars(g, "Stream<")
    if not hs or g.fn.in_defer:
        return None
    h = g.pick(hs)
    var = m.Var(h.ty, h.name)
    t = _struct_of(g, elem(h.ty))
    roll = g.r.random()
    if roll < 0.2 and any(v.name == h.name for v in g.fn.scopes[-1]):
        roll = 0.9   # a move into a drain
    if roll < 0.35:
        return m.If(HCall(BOOL, var, "next"), m.Block([m.Print(g.fresh("nx"), shows(HCall(t, var, "value"), t))]))
    if roll < 0.45:
        return m.Print(g.fresh("nx"), [HCall(BOOL, var, "next"), HCall(BOOL, var, "done")])
    if roll < 0.55:
        guard = m.Unary(BOOL, "!", HCall(BOOL, var, "done"))
        show = m.If(guard, m.Block([m.Print(g.fresh("rs"), shows(HCall(t, var, "value"), t))]))
        resume = m.ExprStmt(HCall(None, var, "resume"))
        if g.chance(0.85):
            return m.If(guard, m.Block([resume, show]))
        return m.Block([resume, show])   # may panic: resumed a finished coroutine
    if roll < 0.7 and g.can_nest():
        v = g.fresh("sv")
        busy = _busy(g)
        busy.add(h.name)   # not reassigned nor moved while a `for` iterates it (that loop would not end)
        try:
            body = scoped(g, [(v, t)], lambda: g.block(1, 3, loop=True, mult=4))
        finally:
            busy.discard(h.name)
        body.body.insert(0, m.Print(g.fresh("it"), shows(m.Var(t, v), t)))
        return ForStream(v, var, body, "")
    if h.name in _busy(g):
        return None
    if roll < 0.85:
        options = [s for s in _streams_of(g) if s.ret == h.ty]
        if not options:
            return None
        sig = g.pick(options)
        g.fn.cost += g.fn.mult * sig.cost
        return Reassign(h.name, m.Call(sig.ret, sig.name, args_for(g, sig)), g.fresh("_t"))
    # a move into a drain: only of a variable of this block (no maybe-moved paths)
    if not any(v.name == h.name for v in g.fn.scopes[-1]):
        return None
    drains = [d for d in getattr(g, 'drains', []) if d.params[0][1] == h.ty]
    if not drains:
        return None
    drop_handle(g, h.name)
    return m.Print(g.fresh("dr"), [m.Call("i64", g.pick(drains).name, [var])])


def _with(g, force: bool = False):
    if not getattr(g, 'onces', []) or g.fn.in_defer or not (force or g.can_nest()):
        return None
    sig = g.pick(getattr(g, 'onces', []))
    t = elem(sig.ret)
    v = g.fresh("wv")
    src = m.Call(sig.ret, sig.name, args_for(g, sig))
    body = scoped(g, [(v, t)], lambda: g.block(1, 3))
    body.body.insert(0, m.Print(g.fresh("in"), [m.Var(t, v)]))
    return With(v, src, body, g.fresh("_t"))


def _let_once(g):
    if not getattr(g, 'onces', []) or g.fn.in_defer:
        return None
    sig = g.pick(getattr(g, 'onces', []))
    name = g.fresh("ho")
    init = m.Call(sig.ret, sig.name, args_for(g, sig))
    g.declare(name, sig.ret, True)
    return HandleLet(PyLine(f"{name}.close()"), name=name, init=init, wrapper="_On")


def _use_once(g):
    hs = handle_vars(g, "Once<")
    if not hs or g.fn.in_defer:
        return None
    h = g.pick(hs)
    var = m.Var(h.ty, h.name)
    roll = g.r.random()
    if roll < 0.4:
        return m.Print(g.fresh("od"), [HCall(BOOL, var, "done")])
    resume = m.ExprStmt(HCall(None, var, "resume"))
    if roll < 0.9:
        return m.If(m.Unary(BOOL, "!", HCall(BOOL, var, "done")), m.Block([resume]))
    return resume   # may panic: resumed a finished coroutine


@register
class Streams(Layer):
    name = "streams"
    requires = ("control",)

    def declare(self, g) -> None:
        g.streams, g.onces, g.drains, g.endless = [], [], [], []
        g.add_decl(PyOnly(PY_HELPERS.strip("\n").split("\n")))
        for _ in range(g.r.randint(1, 2)):
            _once_fn(g)
        for _ in range(g.r.randint(0, 2)):
            _with_fn(g)
        for _ in range(g.r.randint(1, 3)):
            _stream_fn(g)
        if g.chance(0.6):
            _stream_fn(g, recursive=True)
        if g.chance(0.4):
            _stream_fn(g)
        for t in sorted({elem(s.ret) for s in getattr(g, 'streams', [])})[:2]:
            _drain_fn(g, _struct_of(g, t))
        if g.chance(0.5):
            _endless_family(g)

    def statements(self):
        return [(3, _for_stream), (4, _yield), (1, _co_return), (1.5, _let_stream), (3, _use_stream),
                (1.5, _with), (0.5, _let_once), (1, _use_once), (2, _for_endless)]
