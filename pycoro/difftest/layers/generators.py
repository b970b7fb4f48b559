"""Layer `generators`: `Generator<T>` functions (T an integer type, bool, a
struct or an array) and the ways a program drives, moves and destroys them.

Generated: generator functions whose bodies are the usual random statements
plus `yield`, `co_return v;` / `co_return;` (also inside `if`s and loops),
`yield from` of calls, of std/iter pipelines and of handle variables (lent,
not moved: a variable driven by hand first, perhaps to its end, stays its
owner's, which destroys it at the end of its scope; as a statement and as
`let x = yield from …;`, whose value is the inner
generator's `co_return` value or T's zero value), a recursive generator
delegating to itself (depth 0..4, sometimes with the `if n <= 0 {
co_return; }` base case that pycoro compiles without a frame), generators
that take a generator as a parameter (they own it), a generic generator
`fn NAME<T>(x: T, n: i64)` called for several element types (sometimes with
explicit type arguments), generator methods taking `self` by value (the
frame keeps a copy of the receiver, which the body may change); `for v in f(…)` over a
temporary (destroyed at the end of the loop, also on break/continue/return),
`for v in g` over a variable (advanced in place, not destroyed);
`var g = f(…);` driven by hand (`g.next()`, `g.value()` after a `next()`,
also after the end where it is the result, `g.done()`, a bounded drain);
laziness (nothing runs before the first `next()`); moves of handles into
`let h = g;`, into plain functions that consume them, into std/iter
adapters, out of functions that return them; reassigning
a handle variable (the old coroutine is destroyed after the new value is
computed); destruction of suspended generators with pending `defer`s at the
end of the owner's scope; std/iter (`range`, `count` under `take`/`zip`,
`map`/`filter` with function values (named, or returned by a chooser the
compiler cannot see through), `take`, `zip`, `enumerate`, `chain`,
`sum`).

The oracle: Python generators. `_Gen` wraps one with PyCoro's handle
protocol (`next`/`value`/`done`; the result after the end; `next` after the
end keeps returning False); a PyCoro `defer` is a try/finally, and every
point where PyCoro destroys a coroutine is an explicit `close()` (Python's
own GC timing would differ): the end of the owning variable's block (a
`HandleLet` is a `Defer` whose finally closes it), the end of a `for` over
a temporary, a reassignment, the end of a function that owns a handle
parameter; closing a generator that never started closes the handles it
was given (a PyCoro frame that never ran destroys its parameters, last
first). A move is `(x, x := None)[0]`, so the closes of the scope that
lost the handle do nothing. `yield from` of a temporary is `yield from
_yf(w)`, which gives the inner generator's result (or the zero value) and
yields nothing for one that has ended, as docs/decisions.md says; closing the
delegating generator closes the temporary first (it is the innermost thing to
destroy). `yield from h` of a variable is `_yfb(h)`, a loop over `h.next()`
that never closes `h` (Python's own `yield from` would close it, before the
`defer`s between h's declaration and the delegation).

Deliberately not generated: `value()` before the first `next()` (the
promise's `current` is not specified then), `resume()` of a finished
coroutine (a panic by design, not a value), handles in globals or yielded
(not supported: docs/coroutines.md), handles in struct fields and arrays
(supported, destroyed field by field / first to last: not generated yet),
generator methods on `mut self` (they refer to the caller's value, and the
oracle cannot follow an assignment of the whole value: Python rebinds the
name), `count` outside `take`/`zip` (it never ends), `Stream`/`Once`.

The model nodes and the oracle's helpers are generator_nodes.py's; this
module draws them.
"""
from __future__ import annotations


from .. import model as m
from ..generate import FnSig, VarInfo
from ..model import CoReturn, Yield
from ..types import BOOL, ArrayT, is_int, is_scalar
from . import Layer, register
from .arith import calls
from .function_values import add_choosers, add_mappers, function_value
from .generator_nodes import (CoFnDecl, Closer, CoSig, ForH, GenCall, GenMethodCall, HAssign, HandleLet,
                              HandleT, HMethod, MoveVar, Support, SumCall, YieldFrom, _state, is_handle, pair_t)

IND = m.IND


def _fstate(g) -> dict:
    """Per function: handle variables' loop depth at declaration, moved ones."""
    f = g.fn
    if not hasattr(f, "handles"):
        f.handles = {}
        f.moved = set()
        f.busy = set()   # iterated by an enclosing `for`: not moved or reassigned in its body
    return f.__dict__


def co_kind(g):
    """The promise of the coroutine being generated ('Generator', 'Coro') or None."""
    return getattr(g.fn, "co_kind", None) if g.fn is not None else None


def live_handles(g, promise="Generator", elem=None, mutable=False):
    st = _fstate(g)
    return [v for v in g.visible() if is_handle(v.ty) and v.ty.promise == promise and v.name not in st["moved"]
            and (elem is None or v.ty.elem == elem) and (v.mutable or not mutable)]


def movable(g, v) -> bool:
    st = _fstate(g)
    return not g.fn.in_defer and st["handles"].get(v.name, -1) == g.fn.loops and v.name not in st["busy"]


def move(g, v) -> MoveVar:
    _fstate(g)["moved"].add(v.name)
    return MoveVar(v.ty, v.name)


def handle_var(g, name: str, ty, init: m.Expr) -> HandleLet:
    """`var name = init;` of a handle (init made first: it cannot use name),
    which later statements of its scope may use and which its scope's end
    destroys."""
    g.declare(name, ty, True)
    _fstate(g)["handles"][name] = g.fn.loops
    return HandleLet(Closer(name), name, ty, init, True, g.chance(0.3))


def loop_body(g, src: m.Expr, var: str, elem, make) -> m.Block:
    """`make(g)`, made as the body of `for var in src`: var in scope, and a
    variable src busy there (neither moved nor reassigned while it is iterated)."""
    g.fn.scopes.append([VarInfo(var, elem, False)])
    busy = _fstate(g)["busy"]
    added = isinstance(src, m.Var) and src.name not in busy
    if added:
        busy.add(src.name)
    try:
        return make(g)
    finally:
        g.fn.scopes.pop()
        if added:
            busy.discard(src.name)


def elem_type(g):
    roll = g.r.random()
    if roll < 0.55:
        return g.int_type() if g.chance(0.6) else "i64"
    if roll < 0.65:
        return BOOL
    if roll < 0.9 and g.structs:
        return g.pick(g.structs)
    return ArrayT(g.int_type(), g.r.randint(2, 3))


def _cost_ok(g, cost) -> bool:
    from ..generate import COST_CAP
    return g.fn.cost + g.fn.mult * cost < COST_CAP


def _small(g, lo=-1, hi=5) -> m.Lit:
    return m.Lit("i64", g.r.randint(lo, hi))


# ---------------------------------------------------------------- coroutine expressions

def gen_expr(g, elem, depth=0, allow_move=True):
    """A temporary `Generator<elem>` (a call, an std/iter pipeline, a moved
    variable, a function that returns one), or None."""
    st = _state(g)
    options = []
    cos = [s for s in st["cos"] if s.ty.elem == elem and s.ty.promise == "Generator" and not s.generic and _cost_ok(g, s.cost)]
    if cos:
        options.append((5, "call"))
    generic = [s for s in st["cos"] if s.generic]
    if generic:
        options.append((1, "generic"))
    if elem == "i64":
        options.append((2, "range"))
        options.append((1, "take_count"))
    if depth < 2:
        options.append((1.5, "take"))
        options.append((1, "chain"))
        if any(t == elem for _, _, t in st["mappers"]):
            options.append((1.2, "map"))
        if any(t == elem for _, t in st["preds"]):
            options.append((1.2, "filter"))
    movables = [v for v in live_handles(g, elem=elem) if movable(g, v)] if allow_move else []
    if movables:
        options.append((1.5, "move"))
    if not options:
        return None
    kind = g.weighted(options)
    ty = HandleT(elem)
    if kind == "call":
        s = g.pick(cos)
        g.fn.cost += g.fn.mult * s.cost
        if s.struct is not None:
            recv = g.expr(s.struct, ctx=False)
            return GenMethodCall(ty, recv, s.struct.name, s.name, [g.expr(t) for _, t in s.params])
        args = []
        for _, t in s.params:
            if is_handle(t):
                a = gen_expr(g, t.elem, depth + 1, allow_move)
                if a is None:
                    return None
                args.append(a)
            else:
                args.append(g.expr(t))
        if s.recursive:
            args[0] = m.Lit("i64", g.r.randint(0, 4))
        return GenCall(ty, s.name, args, make=s.make)
    if kind == "generic":
        s = g.pick(generic)
        g.fn.cost += g.fn.mult * s.cost
        x = g.expr(elem, ctx=False) if g.chance(0.6) else g.expr(elem)
        call = GenCall(ty, s.name, [x, _small(g, -1, 4)])
        if not x.typed() or g.chance(0.3):
            call.targs = [elem]
        return call
    if kind == "range":
        lo = g.r.randint(-3, 3)
        lo_e = m.Lit("i64", lo) if g.chance(0.7) else m.Binary("i64", "&", g.expr("i64"), m.Lit("i64", 3))
        return GenCall(ty, "range", [lo_e, m.Lit("i64", lo + g.r.randint(-1, 5))], "_it_range")
    if kind == "take_count":
        start = m.Lit("i64", g.r.randint(-5, 5)) if g.chance(0.8) else m.Lit("i64", 9223372036854775806)
        return GenCall(ty, "take", [GenCall(ty, "count", [start], "_it_count"), _small(g, -1, 5)], "_it_take")
    if kind == "move":
        return move(g, g.pick(movables))
    if kind == "take":
        inner = gen_expr(g, elem, depth + 1, allow_move)
        return inner and GenCall(ty, "take", [inner, _small(g, -1, 4)], "_it_take")
    if kind == "chain":
        a = gen_expr(g, elem, depth + 1, allow_move)
        b = a and gen_expr(g, elem, depth + 1, allow_move)
        return b and GenCall(ty, "chain", [a, b], "_it_chain")
    if kind == "map":
        name, src, _ = g.pick([x for x in st["mappers"] if x[2] == elem])
        inner = gen_expr(g, src, depth + 1, allow_move)
        return inner and GenCall(ty, "map", [inner, function_value(g, f"fn({src}) -> {elem}", name)], "_it_map")
    if kind == "filter":
        name, _ = g.pick([x for x in st["preds"] if x[1] == elem])
        inner = gen_expr(g, elem, depth + 1, allow_move)
        return inner and GenCall(ty, "filter", [inner, function_value(g, f"fn({elem}) -> bool", name)],
                                 "_it_filter")
    return None


def any_gen_expr(g, depth=0):
    """A temporary generator of any element type (zip and enumerate too): (expr, elem)."""
    st = _state(g)
    elems = [s.ty.elem for s in st["cos"] if s.ty.promise == "Generator" and not s.generic] + ["i64"]
    elems += [v.ty.elem for v in live_handles(g) if movable(g, v)]
    roll = g.r.random()
    if roll < 0.12 and depth < 1:
        a_t = g.pick(elems)
        a = gen_expr(g, a_t, depth + 1)
        if a is None:
            return None, None
        if g.chance(0.3):
            b_t, b = "i64", GenCall(HandleT("i64"), "count", [_small(g, -3, 3)], "_it_count")
        else:
            b_t = g.pick(elems)
            b = gen_expr(g, b_t, depth + 1)
            if b is None:
                return None, None
        pt = pair_t(a_t, b_t)
        return GenCall(HandleT(pt), "zip", [a, b], "_it_zip"), pt
    if roll < 0.2 and depth < 1:
        a_t = g.pick(elems)
        a = gen_expr(g, a_t, depth + 1)
        if a is None:
            return None, None
        pt = pair_t("i64", a_t)
        return GenCall(HandleT(pt), "enumerate", [a], "_it_enumerate"), pt
    elem = g.pick(elems)
    return gen_expr(g, elem, depth), elem


# ---------------------------------------------------------------- statements

def _show(g, e: m.Expr, label: str) -> m.Stmt:
    """Print a value of any type: a scalar as is, an aggregate's scalars (bound first)."""
    if is_scalar(e.ty):
        return m.Print(label, [e])
    name = g.fresh("gx")
    from ..types import scalar_leaves
    leaves = []
    for path, _t in list(scalar_leaves(e.ty))[:8]:
        x = m.Var(e.ty, name)
        for kind, k in path:
            x = m.Field(x.ty.field(k), x, k) if kind == "field" else m.Index(x.ty.elem, x, m.Lit("i64", k))
        leaves.append(x)
    return m.Block([m.Let(name, e.ty, e, mutable=False, annotate=False), m.Print(label, leaves)])


def _for_gen(g):
    if not g.can_nest():
        return None
    recursive = [s for s in _state(g)["cos"] if s.recursive and _cost_ok(g, s.cost)]
    if recursive and g.chance(0.3):
        # a recursive generator's call: a loop that may run it as a recursive
        # function (middle/internal_iteration.py)
        s = g.pick(recursive)
        g.fn.cost += g.fn.mult * s.cost
        depth = m.Lit("i64", g.r.randint(0, 4))
        src, elem = GenCall(s.ty, s.name, [depth] + [g.expr(t) for _, t in s.params[1:]]), s.ty.elem
    elif g.chance(0.25):
        hs = live_handles(g)
        if hs:
            v = g.pick(hs)
            src, elem = m.Var(v.ty, v.name), v.ty.elem
        else:
            return None
    else:
        src, elem = any_gen_expr(g)
        if src is None:
            return None
        if isinstance(src, MoveVar):   # `for v in h` iterates h in place: no move
            _fstate(g)["moved"].discard(src.name)
            src = m.Var(src.ty, src.name)
    var = g.fresh("ge")

    def make(g):
        body = g.block(1, 3, loop=True, mult=4)
        if g.chance(0.6):
            body.body.insert(0, _show(g, m.Var(elem, var), g.fresh("it")))
        return body
    return ForH(var, src, loop_body(g, src, var, elem, make), g.fresh("gt"))


def _let_handle(g):
    if g.fn.in_defer:
        return None
    src, elem = any_gen_expr(g)
    if src is None:
        return None
    return handle_var(g, g.fresh("gv"), HandleT(elem), src)


def _use_handle(g):
    if g.fn.in_defer:
        return None
    hs = live_handles(g, mutable=True)
    if not hs:
        return None
    v = g.pick(hs)
    elem = v.ty.elem
    nxt = HMethod(BOOL, v.name, "next")
    val = HMethod(elem, v.name, "value")
    roll = g.r.random()
    if roll < 0.25:
        return m.Print(g.fresh("nx"), [nxt] + ([HMethod(BOOL, v.name, "done")] if g.chance(0.5) else []))
    if roll < 0.35:
        return m.ExprStmt(nxt)
    if roll < 0.65 or not g.can_nest():
        then = m.Block([_show(g, val, g.fresh("hv"))])
        els = m.Block([_show(g, val, g.fresh("hr"))]) if g.chance(0.6) else None
        return m.If(nxt, then, els)
    if roll < 0.85:
        bound = g.r.randint(1, 6)
        body = g.block(0, 2, loop=True, mult=bound, prefix=[_show(g, val, g.fresh("dr"))])
        return m.While(g.fresh("w"), bound, nxt, body)
    return m.Print(g.fresh("dn"), [HMethod(BOOL, v.name, "done")])


def _move_handle(g):
    hs = [v for v in live_handles(g) if movable(g, v)]
    if not hs:
        return None
    v = g.pick(hs)
    st = _state(g)
    roll = g.r.random()
    users = [u for u in st["users"] if u.params[0][1] == v.ty and _cost_ok(g, u.cost)]
    if roll < 0.35 and users:
        u = g.pick(users)
        g.fn.cost += g.fn.mult * u.cost
        args = [move(g, v)] + [g.expr(t) for _, t in u.params[1:]]
        call = m.Call(u.ret, u.name, args)
        return m.Print(g.fresh("use"), [call]) if is_scalar(u.ret) else m.ExprStmt(call)
    if roll < 0.5 and is_int(v.ty.elem):
        return m.Print(g.fresh("sum"), [SumCall(v.ty.elem, move(g, v))])
    if roll < 0.75:
        name = g.fresh("gv")
        return handle_var(g, name, v.ty, move(g, v))
    if g.can_nest():   # through an adapter, in a loop
        wrapped = GenCall(v.ty, "take", [move(g, v), _small(g, 0, 4)], "_it_take")
        var = g.fresh("ge")
        g.fn.scopes.append([VarInfo(var, v.ty.elem, False)])
        try:
            body = g.block(1, 2, loop=True, mult=4, prefix=[_show(g, m.Var(v.ty.elem, var), g.fresh("tk"))])
        finally:
            g.fn.scopes.pop()
        return ForH(var, wrapped, body, g.fresh("gt"))
    return None


def _reassign(g):
    if g.fn.in_defer:
        return None
    hs = [v for v in live_handles(g, mutable=True) if v.name not in _fstate(g)["busy"]]
    if not hs:
        return None
    v = g.pick(hs)
    e = gen_expr(g, v.ty.elem)
    if e is None or (isinstance(e, MoveVar) and e.name == v.name):
        return None
    _fstate(g)["moved"].discard(v.name)   # it holds a coroutine again (if the value moved it)
    return HAssign(v.name, e)


def _yield(g):
    if co_kind(g) is None or g.fn.in_defer:
        return None
    return Yield(g.expr(g.fn.co_elem))


def _yield_from(g):
    if co_kind(g) != "Generator" or g.fn.in_defer:
        return None
    elem = g.fn.co_elem
    lent = [v for v in live_handles(g, elem=elem) if v.name not in _fstate(g)["busy"]]
    if lent and g.chance(0.5):
        v = g.pick(lent)
        src = m.Var(v.ty, v.name)   # lent, not moved
    else:
        src = gen_expr(g, elem, allow_move=False)
    if src is None:
        return None
    if g.chance(0.5):
        name = g.fresh("yf")
        let = m.Let(name, elem, YieldFrom(elem, src), False, g.chance(0.5))
        if g.chance(0.6):
            return m.Block([let, _show(g, m.Var(elem, name), g.fresh("yr"))])
        g.declare(name, elem, False)
        return let
    return m.ExprStmt(YieldFrom(elem, src))


def _yield_from_advanced(g):
    """`{ var h = …; h.next(); … let r = yield from h; }`: delegation to a
    generator driven by hand first (perhaps to its end, perhaps into a
    `yield from` of its own)."""
    if co_kind(g) != "Generator" or not g.can_nest():
        return None
    elem = g.fn.co_elem
    g.fn.scopes.append([])
    try:
        src = gen_expr(g, elem)
        if src is None:
            return None
        name = g.fresh("gv")
        stmts = [HandleLet(Closer(name), name, HandleT(elem), src, True)]
        for _ in range(g.r.randint(1, 3)):
            stmts.append(m.Print(g.fresh("ad"), [HMethod(BOOL, name, "next")]))
        r = g.fresh("yf")
        stmts.append(m.Let(r, elem, YieldFrom(elem, m.Var(HandleT(elem), name)), False, g.chance(0.5)))
        if g.chance(0.3):
            stmts.append(m.Print(g.fresh("af"), [HMethod(BOOL, name, "next"), HMethod(BOOL, name, "done")]))
        stmts.append(_show(g, m.Var(elem, r), g.fresh("ya")))
    finally:
        g.fn.scopes.pop()
    return m.Block(stmts)


def _co_return(g):
    if co_kind(g) is None or g.fn.in_defer or g.fn.depth == 0:
        return None
    value = g.expr(g.fn.co_elem) if g.chance(0.6) else None
    return m.If(g.expr(BOOL), m.Block([m.Print(g.fresh("cr"), []), CoReturn(value)]))


@calls
def _sum_expr(g, ty, ctx):
    if not is_int(ty) or g.fn is None or g.fn.in_defer or g.expr_depth > 2:
        return None
    src = gen_expr(g, ty, 1, allow_move=False)
    return SumCall(ty, src) if src is not None else None


# ---------------------------------------------------------------- declarations

def without_return(g):
    """The statement kinds without control's `return` (an error in a coroutine)."""
    from .control import _return
    return [(w, f) for w, f in g.stmt_kinds if f is not _return]


def co_function(g, sig: FnSig, elem, promise: str, make_body, self_ty=None) -> CoFnDecl:
    """Generate a coroutine (its statements may yield) and record it."""
    saved = g.stmt_kinds
    g.stmt_kinds = without_return(g)

    def body(g):
        g.fn.co_kind, g.fn.co_elem = promise, elem
        return make_body(g)
    try:
        decl = g.function(sig, body, self_ty=self_ty)
    finally:
        g.stmt_kinds = saved
    if sig.struct:
        g.methods[sig.struct].remove(sig)
    else:
        g.functions.remove(sig)
    new = CoFnDecl(**{k: getattr(decl, k) for k in decl.__dataclass_fields__}, coroutine=True)
    g.decls[g.decls.index(decl)] = new
    return new


def _co_body(g, elem, lo=2, hi=5, budget=12) -> m.Block:
    saved, g.budget = g.budget, budget
    try:
        body = g.block(lo, hi)
    finally:
        g.budget = saved
    stmts = body.body
    if not any(isinstance(s, Yield) for s in stmts):
        k = g.r.randint(0, len(stmts) - (1 if stmts and stmts[-1].ends() else 0))
        stmts.insert(k, Yield(g.expr(elem)))
    if g.chance(0.5) and g.fn.co_kind == "Generator":
        k = g.r.randint(0, len(stmts) - (1 if stmts and stmts[-1].ends() else 0))
        stmts.insert(k, Yield(g.expr(elem)))
    if g.chance(0.5):
        # a defer early on: pending while the generator is suspended
        names = [v for v in g.visible() if is_scalar(v.ty)][:2]
        stmts.insert(0, m.Defer(m.Print(g.fresh("gd"), [m.Var(v.ty, v.name) for v in names])))
    if not body.ends():
        roll = g.r.random()
        if roll < 0.35:
            stmts.append(CoReturn(g.expr(elem)))
        elif roll < 0.5:
            stmts.append(CoReturn())
    return body


def _generator(g) -> None:
    elem = elem_type(g)
    st = _state(g)
    params = [(g.fresh("a"), g.value_type(0.2)) for _ in range(g.r.randint(0, 2))]
    earlier = [s for s in st["cos"] if s.ty.promise == "Generator" and not s.generic]
    if earlier and g.chance(0.3):
        src = g.pick(earlier).ty
        params.insert(g.r.randint(0, len(params)), (g.fresh("src"), src))
    name = g.fresh("gen")
    sig = FnSig(name, params, HandleT(elem))

    def make(g):
        for n, t in params:
            if is_handle(t):
                _fstate(g)["handles"][n] = 0
        if any(is_handle(t) for _, t in params) and g.chance(0.5):
            # use the source generator first thing: iterate it, delegate to it, or keep it
            n, t = next((n, t) for n, t in params if is_handle(t))
            if t.elem == elem and g.chance(0.5):
                first = m.ExprStmt(YieldFrom(elem, m.Var(t, n)))   # lent: the parameter destroys it
            else:
                var = g.fresh("ge")
                g.fn.scopes.append([VarInfo(var, t.elem, False)])
                try:
                    body = g.block(1, 2, loop=True, mult=4, prefix=[_show(g, m.Var(t.elem, var), g.fresh("sr"))])
                finally:
                    g.fn.scopes.pop()
                first = ForH(var, m.Var(t, n), body, g.fresh("gt"))
            rest = _co_body(g, elem)
            return m.Block([first] + rest.body)
        body = _co_body(g, elem)
        ints = [(n, t) for n, t in params if is_int(t)]
        if ints and g.chance(0.35):
            # `if COND { co_return; }` first, COND on scalar parameters and
            # literals: a `yield from` statement of it makes no frame when COND holds
            n, t = g.pick(ints)
            x = m.Var(t, n)
            if g.chance(0.4):
                x = m.Binary(t, g.pick(["%", "/", "&", "+", "*"]), x, m.Lit(t, g.r.randint(1, 5), True))
            if g.chance(0.3):
                x = m.Cast("i64", x)
            lit = m.Lit(x.ty, g.r.randint(0, 6), True)
            cond = m.Binary(BOOL, g.pick(["<", "<=", "==", "!=", ">"]), x, lit)
            body.body.insert(0, m.If(cond, m.Block([CoReturn()])))
        return body
    co_function(g, sig, elem, "Generator", make)
    st["cos"].append(CoSig(name, params, sig.ret, sig.cost))


def _method(g) -> None:
    """impl S { fn NAME(self, …) -> Generator<T> }: a generator over a copy of
    the receiver (its statements read and change `self`, the copy)."""
    if not g.structs:
        return
    st = g.pick(g.structs)
    elem = elem_type(g)
    params = [(g.fresh("a"), g.scalar_type()) for _ in range(g.r.randint(0, 1))]
    name = g.fresh("gm")
    sig = FnSig(name, params, HandleT(elem), struct=st.name, mut_self=False)
    co_function(g, sig, elem, "Generator", lambda g: _co_body(g, elem), self_ty=st)
    _state(g)["cos"].append(CoSig(name, params, sig.ret, sig.cost, struct=st))


def _recursive(g) -> None:
    elem = g.int_type() if g.chance(0.7) else elem_type(g)
    n, x = g.fresh("a"), g.fresh("a")
    name = g.fresh("rgen")
    sig = FnSig(name, [(n, "i64"), (x, elem)], HandleT(elem))
    ty = HandleT(elem)

    def make(g):
        # delegations that pass `x` on: whether an instance only delegates to
        # base cases is known from its arguments (guards._last_level)
        fixed = g.chance(0.4)
        # a body that a `for` over the generator runs as a recursive function
        # (middle/internal_iteration.py): base cases end with `co_return;`
        looped = g.chance(0.25)

        def again():
            passed = m.Var(elem, x) if fixed else g.pure_expr(elem)
            return GenCall(ty, name, [m.Binary("i64", "-", m.Var("i64", n), m.Lit("i64", 1)), passed])
        cond = m.Binary(BOOL, "<=", m.Var("i64", n), m.Lit("i64", 0))
        shape = g.r.random()
        if shape < 0.3:
            base = m.If(cond, m.Block([CoReturn()]))   # the frameless base case
        elif shape < 0.55:
            value = g.expr(elem) if g.chance(0.7) and not looped else None
            base = m.If(cond, m.Block([Yield(m.Var(elem, x)), CoReturn(value)]))
        else:
            # leaves that yield values read from the parameters and globals, then
            # `co_return;`: taken in the delegating generator (middle/guards.py),
            # each value evaluated after the consumer has resumed it
            base = m.If(cond, m.Block([Yield(g.pure_expr(elem)) for _ in range(g.r.randint(1, 2))]
                                      + [CoReturn()]))
        stmts = [base]
        if g.chance(0.3):
            # a second leading base case, taken only when the first is not
            leaf = m.Binary(BOOL, "==", m.Var("i64", n), m.Lit("i64", 1))
            stmts.append(m.If(leaf, m.Block([Yield(g.pure_expr(elem)), CoReturn()])))
        if looped:
            return m.Block(stmts + _loop_shape(g, again, elem))
        if g.chance(0.3):
            # a tree's shape: `yield from` and `yield` of values read from the
            # parameters and globals alone, which a `yield from` of it runs in
            # place of making the generator (middle/guards.py)
            stmts += [m.ExprStmt(YieldFrom(elem, again())), Yield(g.pure_expr(elem)),
                      m.ExprStmt(YieldFrom(elem, again()))]
            return m.Block(stmts)
        if g.chance(0.35):
            return m.Block(stmts + _heap_shape(g, again, elem))
        saved, g.budget = g.budget, 4
        try:
            for _ in range(g.r.randint(1, 2)):
                call = GenCall(ty, name, [m.Binary("i64", "-", m.Var("i64", n), m.Lit("i64", 1)), g.expr(elem)])
                if g.chance(0.5):
                    r = g.fresh("yf")
                    stmts.append(m.Let(r, elem, YieldFrom(elem, call), False, True))
                    g.declare(r, elem, False)
                    stmts.append(_show(g, m.Var(elem, r), g.fresh("rr")))
                else:
                    stmts.append(m.ExprStmt(YieldFrom(elem, call)))
                if g.chance(0.6):
                    stmts.append(Yield(g.expr(elem)))
                if g.chance(0.4):
                    stmts += g.block(1, 1).body
        finally:
            g.budget = saved
        if not any(s.ends() for s in stmts[1:]) and g.chance(0.6):
            stmts.append(CoReturn(g.expr(elem)))
        return m.Block(stmts)
    co_function(g, sig, elem, "Generator", make)
    _state(g)["cos"].append(CoSig(name, sig.params, ty, sig.cost * 20, recursive=True))


def _loop_shape(g, again, elem) -> list:
    """Statements a `for` over the generator runs in a recursive function
    (middle/internal_iteration.py), none of them a base case: a `while` that
    yields and may break, `yield from`s of itself (`again()`), and maybe a
    `co_return;` between them, of values without calls."""
    inner = [Yield(g.pure_expr(elem))]
    if g.chance(0.5):
        inner.insert(g.r.randint(0, 1), m.If(g.pure_expr(BOOL), m.Block([m.Break()])))
    stmts = [m.While(g.fresh("w"), g.r.randint(1, 3), g.pure_expr(BOOL), m.Block(inner)),
             m.ExprStmt(YieldFrom(elem, again()))]
    if g.chance(0.5):
        stmts.append(m.If(g.pure_expr(BOOL), m.Block([CoReturn()])))
    return stmts + [Yield(g.pure_expr(elem)), m.ExprStmt(YieldFrom(elem, again()))]


def _heap_shape(g, again, elem) -> list:
    """A loop's shape (Heap's algorithm): `yield from` itself (`again()`: a
    call of it), then a `for` over a range whose body has a `let`, an
    assignment, a branch and more `yield from`s of arguments without calls,
    which a `yield from` of it runs in place of making the generator
    (middle/guards.py)."""
    first = m.ExprStmt(YieldFrom(elem, again()))
    i, t = g.fresh("i"), g.fresh("t")
    g.fn.scopes.append([])
    try:
        g.declare(i, "i64", False)
        body = [m.Let(t, elem, g.pure_expr(elem), False)]
        g.declare(t, elem, False)
        targets = g.places(elem, mutable=True, pure=True)
        if targets and g.chance(0.7):
            body.append(m.Assign(g.pick(targets), "=", m.Var(elem, t)))
        otherwise = m.Block([m.ExprStmt(YieldFrom(elem, again()))]) if g.chance(0.5) else None
        body.append(m.If(g.pure_expr(BOOL), m.Block([Yield(g.pure_expr(elem))]), otherwise))
        body.append(m.ExprStmt(YieldFrom(elem, again())))
    finally:
        g.fn.scopes.pop()
    return [first, m.For(i, m.Lit("i64", 0), m.Lit("i64", g.r.randint(1, 2)), False, m.Block(body))]


def _generic(g) -> None:
    """fn NAME<T>(x: T, n: i64) -> Generator<T>: yields x up to n times (a
    coroutine instantiated for several element types)."""
    name = g.fresh("ggen")
    x, n, i = g.fresh("a"), g.fresh("a"), g.fresh("i")
    tv = m.Var("T", x)
    nv = m.Var("i64", n)
    stop = g.r.randint(1, 4)
    steps = [Yield(tv), m.Assign(m.Var("i64", i), "+=", m.Lit("i64", 1))]
    if g.chance(0.5):
        steps.append(m.If(m.Binary(BOOL, "==", m.Var("i64", i), m.Lit("i64", stop)),
                          m.Block([m.Print(g.fresh("gs"), [nv]), CoReturn(tv if g.chance(0.6) else None)])))
    stmts = []
    if g.chance(0.7):
        stmts.append(m.Defer(m.Print(g.fresh("gd"), [nv])))
    stmts += [m.Print(g.fresh("gg"), [nv]), m.Let(i, "i64", m.Lit("i64", 0)),
              m.While(g.fresh("w"), 6, m.Binary(BOOL, "<", m.Var("i64", i), nv), m.Block(steps))]
    roll = g.r.random()
    if roll < 0.4:
        stmts.append(CoReturn(tv))
    elif roll < 0.6:
        stmts.append(CoReturn())
    decl = CoFnDecl(name, [(x, "T"), (n, "i64")], HandleT("T"), m.Block(stmts), ["T"], coroutine=True)
    g.add_decl(decl)
    _state(g)["cos"].append(CoSig(name, decl.params, HandleT("T"), 12, generic=True))


def _plain(g, sig: FnSig, make_body) -> None:
    """A plain function that owns handle parameters or returns a handle."""
    saved = g.stmt_kinds
    if is_handle(sig.ret):   # control's early `return e` cannot make a handle
        g.stmt_kinds = without_return(g)
    try:
        decl = g.function(sig, make_body)
    finally:
        g.stmt_kinds = saved
    g.functions.remove(sig)
    new = CoFnDecl(**{k: getattr(decl, k) for k in decl.__dataclass_fields__}, coroutine=False)
    g.decls[g.decls.index(decl)] = new


def _user(g) -> None:
    """fn use(h: Generator<T>, …) -> R: consumes a generator."""
    st = _state(g)
    gens = [s for s in st["cos"] if s.ty.promise == "Generator" and not s.generic]
    if not gens:
        return
    ty = g.pick(gens).ty
    h = g.fresh("h")
    params = [(h, ty)] + [(g.fresh("a"), g.scalar_type()) for _ in range(g.r.randint(0, 1))]
    ret = g.scalar_type() if g.chance(0.8) else None
    sig = FnSig(g.fresh("use"), params, ret)
    from .control import _body

    def make(g):
        _fstate(g)["handles"][h] = 0
        if g.chance(0.5):
            local = g.fresh("gv")
            prefix = [HandleLet(Closer(local), local, ty, move(g, VarInfo(h, ty, False)), True, g.chance(0.3))]
            g.declare(local, ty, True)
            _fstate(g)["handles"][local] = 0
        else:
            var = g.fresh("ge")
            g.fn.scopes.append([VarInfo(var, ty.elem, False)])
            try:
                body = g.block(1, 3, loop=True, mult=4, prefix=[_show(g, m.Var(ty.elem, var), g.fresh("us"))])
            finally:
                g.fn.scopes.pop()
            prefix = [ForH(var, m.Var(ty, h), body)]
        return _body(g, ret, 1, 4, prefix=prefix)
    _plain(g, sig, make)
    st["users"].append(sig)


def _maker(g) -> None:
    """fn make(…) -> Generator<T>: makes one, perhaps advances it, returns it."""
    st = _state(g)
    gens = [s for s in st["cos"] if s.ty.promise == "Generator" and not s.generic and not s.make]
    if not gens:
        return
    ty = g.pick(gens).ty
    params = [(g.fresh("a"), g.scalar_type()) for _ in range(g.r.randint(0, 2))]
    sig = FnSig(g.fresh("make"), params, ty)

    def make(g):
        local = g.fresh("gv")
        src = gen_expr(g, ty.elem)
        if src is None:
            return m.Block([m.Return(GenCall(ty, "take", [GenCall(HandleT("i64"), "range", [m.Lit("i64", 0), m.Lit("i64", 2)], "_it_range"), m.Lit("i64", 0)], "_it_take"))]) if ty.elem == "i64" else None
        stmts = [HandleLet(Closer(local), local, ty, src, True)]
        g.declare(local, ty, True)
        _fstate(g)["handles"][local] = 0
        if g.chance(0.6):
            stmts.append(m.Print(g.fresh("mk"), [HMethod(BOOL, local, "next")]))
        saved, g.budget = g.budget, 4
        try:
            more = g.block(0, 2).body
        finally:
            g.budget = saved
        if not any(s.ends() for s in more) and local not in _fstate(g)["moved"]:
            stmts += more
        stmts.append(m.Return(MoveVar(ty, local)))
        return m.Block(stmts)
    box = []
    _plain(g, sig, lambda g: box.append(make(g)) or box[-1] or m.Block([]))
    if box[-1] is None:   # nothing to make it from: drop it
        g.decls.pop()
        return
    st["cos"].append(CoSig(sig.name, params, ty, sig.cost, make=True))


@register
class Generators(Layer):
    name = "generators"
    requires = ("control",)

    def declare(self, g) -> None:
        g.add_decl(Support())
        if g.chance(0.5):
            _generic(g)
        for _ in range(g.r.randint(1, 3)):
            _generator(g)
        if g.chance(0.6):
            _recursive(g)
        add_mappers(g)
        add_choosers(g)
        for _ in range(g.r.randint(0, 2)):
            _generator(g) if g.chance(0.7) else _method(g)
        for _ in range(g.r.randint(0, 2)):
            _user(g)
        if g.chance(0.5):
            _maker(g)

    def statements(self):
        return [(4, _for_gen), (3, _let_handle), (4, _use_handle), (2, _move_handle), (0.8, _reassign),
                (6, _yield), (2, _yield_from), (1, _yield_from_advanced), (1, _co_return)]

    def expressions(self):
        return [(1, _sum_expr)]
