"""Layer `control`: if/else chains, while, loop and for over ranges (`..`,
`..=`, up to the top of a type), break/continue, early returns, functions with
parameters and results (scalars, structs, arrays), bounded recursion, structs
and arrays as values (copies on every binding, argument and result; nested;
fields and elements of temporaries), bounds-checked indexing, methods on
`self` and `mut self` (which change the caller's value), and `defer` (at the
block's exit, in reverse order, also on break, continue and return).

Every loop is bounded by a counter of its own or a short range, and calls
only go to functions declared before the caller (plus the recursive ones,
called with a small depth), so every program ends quickly."""
from __future__ import annotations

from .. import model as m
from ..generate import FnSig
from ..types import BOOL, ArrayT, StructT, is_aggregate, is_int, is_scalar, min_max, scalar_leaves
from . import Layer, register
from .arith import call_of, calls, g_cost_cap


def _structs(g) -> None:
    for _ in range(g.r.randint(1, 3)):
        fields = []
        for k in range(g.r.randint(1, 4)):
            if g.structs and g.chance(0.2):
                ft = g.pick(g.structs)
            elif g.chance(0.15):
                ft = ArrayT(g.int_type(), g.r.randint(2, 3))
            else:
                ft = g.scalar_type()
            fields.append((f"f{k}", ft))
        g.add_struct(StructT(g.fresh("S"), tuple(fields)))


def _ret_type(g):
    roll = g.r.random()
    return None if roll < 0.15 else g.value_type(0.3)


def _body(g, ret, lo=2, hi=5, prefix=()) -> m.Block:
    saved, g.budget = g.budget, 14
    try:
        body = g.block(lo, hi, prefix=prefix, end=None if ret is None else lambda g: m.Return(g.expr(ret)))
    finally:
        g.budget = saved
    return body


def _functions(g) -> None:
    for _ in range(g.r.randint(1, 4)):
        params = [(g.fresh("a"), g.value_type(0.35)) for _ in range(g.r.randint(0, 3))]
        sig = FnSig(g.fresh("f"), params, _ret_type(g))
        g.function(sig, lambda g, sig=sig: _body(g, sig.ret))
    if g.chance(0.6):
        _recursive(g)


def _recursive(g) -> None:
    ty = g.scalar_type() if g.chance(0.8) else g.value_type(1.0)
    n, x = g.fresh("a"), g.fresh("a")
    sig = FnSig(g.fresh("rec"), [(n, "i64"), (x, ty)], ty, recursive=True)

    def body(g):
        base = m.If(m.Binary(BOOL, "<=", m.Var("i64", n), m.Lit("i64", 0)), m.Block([m.Return(g.expr(ty))]))
        saved, g.budget = g.budget, 6
        try:
            middle = g.block(1, 3)
        finally:
            g.budget = saved
        again = m.Call(ty, sig.name, [m.Binary("i64", "-", m.Var("i64", n), m.Lit("i64", 1)), g.expr(ty)])
        if is_int(ty):
            again = m.Binary(ty, g.pick(["+", "-", "^", "*"]), again, g.expr(ty))
        elif ty == BOOL:
            again = m.Binary(BOOL, g.pick(["^", "==", "!="]), again, g.expr(BOOL))
        # the middle in a block of its own: what it shadows (the depth) is not shadowed in `again`
        return m.Block([base, m.Block(middle.body[:-1] if middle.ends() else middle.body), m.Return(again)])
    g.function(sig, body)
    sig.cost = sig.cost * 7


def _methods(g) -> None:
    for st in list(g.structs):
        for _ in range(g.r.randint(0, 2)):
            params = [(g.fresh("a"), g.value_type(0.2)) for _ in range(g.r.randint(0, 2))]
            sig = FnSig(g.fresh("m"), params, _ret_type(g), struct=st.name, mut_self=g.chance(0.6))
            g.function(sig, lambda g, sig=sig: _body(g, sig.ret, 1, 4), self_ty=st)


def _agg_globals(g) -> None:
    for _ in range(g.r.randint(0, 2)):
        ty = g.value_type(1.0)
        init = None
        if isinstance(ty, ArrayT) and is_scalar(ty.elem) and g.chance(0.6):
            init = m.ArrayLit(ty, [g.literal(ty.elem) for _ in range(ty.n)])
        g.add_global(g.fresh("g"), ty, init)


# ---------------------------------------------------------------- statements

def cond(g) -> m.Expr:
    """A condition that depends on the program's state more often than not:
    a variable (a loop's too) compared with a small literal, or any bool."""
    ints = [v for v in g.visible() if is_int(v.ty)]
    if ints and g.chance(0.6):
        v = g.pick(ints)
        var = m.Var(v.ty, v.name)
        if g.chance(0.3):
            return m.Binary(BOOL, g.pick(["==", "!="]), m.Binary(v.ty, "%", var, m.Lit(v.ty, g.pick([2, 3]))),
                            m.Lit(v.ty, 0))
        return m.Binary(BOOL, g.pick(["<", "<=", ">", ">=", "==", "!="]), var, g.literal(v.ty))
    return g.expr(BOOL)


def _if(g):
    if not g.can_nest():
        return None
    test = cond(g)
    then = g.block(1, 3)
    roll = g.r.random()
    if roll < 0.4:
        return m.If(test, then)
    if roll < 0.8 or not g.can_nest():
        return m.If(test, then, g.block(1, 3))
    return m.If(test, then, _if(g) or g.block(1, 2))


def _bound(g) -> int:
    return g.r.randint(1, 5 if g.fn.mult < 6 else 2)


def _while(g):
    if not g.can_nest():
        return None
    bound = _bound(g)
    counter = g.fresh("w")
    return m.While(counter, bound, cond(g), g.block(1, 4, loop=True, mult=bound))


def _loop(g):
    if not g.can_nest():
        return None
    bound = _bound(g)
    return m.Loop(g.fresh("w"), bound, g.block(1, 4, loop=True, mult=bound))


def _for(g):
    if not g.can_nest():
        return None
    t = g.int_type()
    lo_t, hi_t = min_max(t)
    span = _bound(g)
    inclusive = g.chance(0.4)
    if g.chance(0.15):   # up to the top (or from the bottom) of the type
        top = g.chance(0.6)
        a = hi_t - span + 1 if top else lo_t
        lo, hi = m.Lit(t, a, True), m.Lit(t, hi_t if top else lo_t + span - 1, g.chance(0.5))
        inclusive = True
    else:
        a = g.r.randint(max(lo_t, -3), 3)
        lo = m.Lit(t, a, g.chance(0.6) or t == "u64")
        if g.chance(0.6):
            hi = m.Lit(t, a + g.r.randint(0, span), not lo.typed() or g.chance(0.3))
        else:   # a + (e & 3): a bound the loop computes once
            e = g.expr(t, ctx=True)
            hi = m.Binary(t, "+", m.Lit(t, a, not lo.typed() and not e.typed()), m.Binary(t, "&", e, m.Lit(t, 3)))
    var = g.fresh("i")
    from ..generate import VarInfo
    g.fn.scopes.append([VarInfo(var, t, False)])
    try:
        body = g.block(1, 4, loop=True, mult=span + 1)
    finally:
        g.fn.scopes.pop()
    return m.For(var, lo, hi, inclusive, body)


def _jump(g):
    if not g.fn.loops or g.fn.in_defer:
        return None
    jump = m.Break() if g.chance(0.5) else m.Continue()
    if g.chance(0.25):
        return jump
    return m.If(cond(g), m.Block([m.Print(g.fresh("j"), [g.expr(g.scalar_type(), ctx=False)]), jump]))


def _return(g):
    f = g.fn
    if f.in_defer or f.depth == 0:
        return None
    value = g.expr(f.ret) if f.ret is not None else None
    return m.If(cond(g), m.Block([m.Print(g.fresh("r"), []), m.Return(value)]))


def _defer(g):
    if g.fn.in_defer:
        return None
    g.fn.in_defer = True
    try:
        names = [v for v in g.visible() if is_scalar(v.ty)]
        g.r.shuffle(names)
        shown = m.Print(g.fresh("defer"), [m.Var(v.ty, v.name) for v in names[:3]])
        ty = g.int_type()
        targets = g.places(ty, mutable=True, pure=True)
        change = m.Assign(g.pick(targets), g.pick(["=", "+=", "^="]), g.pure_expr(ty)) if targets else None
        roll = g.r.random()
        if roll < 0.45 or change is None:
            inner = shown
        elif roll < 0.75:
            inner = change
        else:   # a block (it may not declare anything)
            call = _call_stmt(g) if g.chance(0.5) else None
            inner = m.Block([s for s in (shown, change, call) if s is not None])
    finally:
        g.fn.in_defer = False
    return m.Defer(inner)


def _shadow(g):
    """`let x = x + e;` (or `x as T`): a new x hides the old one until its block
    ends. Only in programs of arith and control, whose code refers to
    variables through model.Var (which writes a shadowing name as PyCoro's)."""
    if g.layer not in ("arith", "control"):
        return None
    olds = [v for scope in g.fn.scopes for v in scope if is_scalar(v.ty) and v.name != "self"]
    olds = [v for v in olds if v in g.visible()]
    if not olds:
        return None
    v = g.pick(olds)
    old = m.Var(v.ty, v.name)
    ty = v.ty if g.chance(0.6) else g.scalar_type()
    if ty == v.ty and is_int(ty):
        init = m.Binary(ty, g.pick(["+", "-", "^", "*"]), old, g.expr(ty))
    elif ty == v.ty:
        init = m.Binary(BOOL, g.pick(["^", "==", "!="]), old, g.expr(BOOL))
    elif ty == BOOL:
        init = m.Binary(BOOL, "!=", old, g.literal(v.ty, ctx=True))
    else:
        init = m.Cast(ty, old)
    name = f"{m.pc_name(v.name)}{m.SHADOW}{g.fresh('')}"
    mutable = g.chance(0.5)
    g.declare(name, ty, mutable)
    return m.Let(name, ty, init, mutable, annotate=g.chance(0.5) or not init.typed())


def _block(g):
    if not g.can_nest():
        return None
    return g.block(1, 3)


def _agg_type(g):
    return g.value_type(1.0)


def _let_agg(g):
    ty = _agg_type(g)
    name = g.fresh("v")
    mutable = g.chance(0.75)
    init = None if mutable and g.chance(0.2) else g.expr(ty)
    g.declare(name, ty, mutable)
    return m.Let(name, ty, init, mutable, annotate=init is None or not init.typed() or g.chance(0.5))


def _assign_agg(g):
    ty = _agg_type(g)
    targets = g.places(ty, mutable=True, pure=True)
    if not targets:
        return None
    return m.Assign(g.pick(targets), "=", g.expr(ty))


def _dump_agg(g):
    aggs = [v for v in g.visible() if is_aggregate(v.ty)]
    if not aggs:
        return None
    v = g.pick(aggs)
    leaves = []
    for path, t in list(scalar_leaves(v.ty))[:10]:
        e = m.Var(v.ty, v.name)
        for kind, x in path:
            e = m.Field(e.ty.field(x), e, x) if kind == "field" else m.Index(e.ty.elem, e, m.Lit("i64", x))
        leaves.append(e)
    return m.Print(g.fresh("s"), leaves)


def _method_options(g, want=None, mutable_only=False):
    out = []
    f = g.fn
    for sig in f.callable:
        if not sig.struct or (want is not None and sig.ret != want) or (mutable_only and not sig.mut_self):
            continue
        if f.cost + f.mult * sig.cost > 4000:
            continue
        out.append(sig)
    return out


def _method_call(g, sig, ty):
    st = next(s for s in g.structs if s.name == sig.struct)
    g.fn.cost += g.fn.mult * sig.cost
    if sig.mut_self:
        recvs = g.places(st, mutable=True, pure=True)
        if not recvs:
            return None
        recv = g.pick(recvs)
        args = [g.pure_expr(t) if is_scalar(t) else g.leaf(t) for _, t in sig.params]
        if any(not a.pure() for a in args):
            return None
    else:
        recv = g.expr(st)
        args = [g.expr(t) for _, t in sig.params]
    return m.MethodCall(ty, recv, sig.struct, sig.name, args, sig.mut_self)


def _method_stmt(g):
    options = _method_options(g)
    if not options:
        return None
    sig = g.pick(options)
    call = _method_call(g, sig, sig.ret)
    return m.ExprStmt(call) if call is not None else None


def _call_stmt(g):
    f = g.fn
    options = [s for s in f.callable if not s.struct and f.cost + f.mult * s.cost < g_cost_cap(g)]
    if not options:
        return None
    sig = g.pick(options)
    call = call_of(g, sig)
    if sig.ret is not None and is_scalar(sig.ret) and g.chance(0.7):
        return m.Print(g.fresh("c"), [call])
    return m.ExprStmt(call)


# ---------------------------------------------------------------- expressions

@calls
def _method_expr(g, ty, ctx):
    options = _method_options(g, ty)
    if not options:
        return None
    return _method_call(g, g.pick(options), ty)


def _project(g, ty, ctx):
    """A field or element of a temporary (a call, a literal) or of any value."""
    if not (is_scalar(ty) or is_aggregate(ty)) or g.expr_depth >= 2:
        return None
    holders = [s for s in g.structs if any(ft == ty for _, ft in s.fields)]
    if g.chance(0.4) or not holders:
        arr = ArrayT(ty, g.r.randint(2, 3))
        return m.Index(ty, g.expr(arr, ctx=False), g.index(arr.n))
    st = g.pick(holders)
    return m.Field(ty, g.expr(st, ctx=False), g.pick([n for n, ft in st.fields if ft == ty]))


@register
class Control(Layer):
    name = "control"
    requires = ("arith",)

    def declare(self, g) -> None:
        _structs(g)
        _agg_globals(g)
        _methods(g)
        _functions(g)

    def statements(self):
        return [(4, _if), (2, _while), (2, _loop), (3, _for), (2.5, _jump), (0.7, _return), (2, _defer),
                (0.7, _block), (1.5, _shadow), (2.5, _let_agg), (1.5, _assign_agg), (2, _dump_agg), (2, _method_stmt),
                (2, _call_stmt)]

    def expressions(self):
        return [(1.5, _method_expr), (1, _project)]
