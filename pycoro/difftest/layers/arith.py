"""Layer `arith`: integer arithmetic in every width (wrapping), `/ %` (truncating,
zero divisors panic, MIN / -1), shifts (amount modulo the width, any amount
type, arithmetic `>>` on signed), comparisons, `&& ||` (short-circuit, made
visible by `tick`, which prints), bitwise ops on bools, casts between integer
types and from bool, literals with suffixes and in hex/binary/with `_`,
scalar globals (read and changed by `bump` functions), and calls of any
function declared before."""
from __future__ import annotations

from .. import model as m
from ..types import BOOL, INT_TYPES, bits, is_int, is_scalar
from . import Layer, register


def calls(f):
    """Mark an expression maker whose expressions contain calls (pure_expr skips them)."""
    f.calls = True
    return f


def _binary(g, ty, ctx):
    if not is_int(ty):
        return None
    op = g.pick(["+", "-", "*", "&", "|", "^", "+", "-", "*"])
    left = g.expr(ty, ctx)
    return m.Binary(ty, op, left, g.expr(ty, ctx or left.typed()))


def divisor(g, ty, ctx):
    roll = g.r.random()
    if roll < 0.6:
        lo = -1 if ty[0] == "i" else 1
        v = g.pick([lo, 1, 2, 3, 7, 10, -2 if lo < 0 else 5, -7 if lo < 0 else 255 % (1 << bits(ty))])
        return m.Lit(ty, v, g.chance(0.3) or not ctx)
    if roll < 0.75:
        e = g.expr(ty, ctx)
        return m.Binary(ty, "|", e, m.Lit(ty, 1, not ctx and not e.typed()))
    if roll < 0.94:
        e = g.expr(ty, ctx)
        return m.Binary(ty, "+", m.Lit(ty, 2, not ctx and not e.typed()), m.Binary(ty, "&", e, m.Lit(ty, 3)))
    if roll < 0.96:   # `x - (0 & x)`: zero at times, and not a literal
        e = g.expr(ty, ctx)
        return m.Binary(ty, "-", e, m.Binary(ty, "&", m.Lit(ty, 0, not ctx and not e.typed()), e))
    if roll < 0.97:
        return m.Lit(ty, 0, not ctx or g.chance(0.5))
    return g.expr(ty, ctx)


def _division(g, ty, ctx):
    if not is_int(ty):
        return None
    left = g.expr(ty, ctx)
    return m.Binary(ty, g.pick(["/", "%"]), left, divisor(g, ty, ctx or left.typed()))


def shift_amount(g):
    """Any integer type; an unsuffixed literal amount would take the shifted
    value's type (and might not fit), so amounts other than small literals are
    never i64."""
    t = g.int_type()
    if g.chance(0.6):
        hi = min(127, (1 << bits(t) - (t[0] == "i")) - 1)
        v = g.r.randint(0, min(hi, g.pick([8, 16, 40, 70, 127])))
        if t[0] == "i" and g.chance(0.1):
            v = -g.r.randint(1, 9)
        return m.Lit(t, v, t != "i64" or v < 0 or g.chance(0.3))
    return g.expr(g.pick([x for x in INT_TYPES if x != "i64"]), ctx=False)


def _shift(g, ty, ctx):
    if not is_int(ty):
        return None
    return m.Binary(ty, g.pick(["<<", ">>"]), g.expr(ty, ctx), shift_amount(g))


def _unary(g, ty, ctx):
    if ty == BOOL:
        return m.Unary(BOOL, "!", g.expr(BOOL))
    if is_int(ty):
        e = g.expr(ty, ctx)
        # `-7u8`, `-(7u8)` and `-(7)` for a u8 are literals that do not fit
        op = "~" if isinstance(e, m.Lit) and ty[0] == "u" else g.pick(["-", "~"])
        return m.Unary(ty, op, e)
    return None


def _cast(g, ty, ctx):
    if not is_int(ty):
        return None
    src = BOOL if g.chance(0.15) else g.int_type()
    return m.Cast(ty, g.expr(src, ctx=False))


def _compare(g, ty, ctx):
    if ty != BOOL:
        return None
    t = g.scalar_type()
    op = g.pick(["==", "!="]) if t == BOOL else g.pick(["==", "!=", "<", "<=", ">", ">="])
    first = g.expr(t, ctx=False)
    second = g.expr(t, ctx=True)
    return m.Binary(BOOL, op, *((first, second) if g.chance(0.7) else (second, first)))


def _logical(g, ty, ctx):
    if ty != BOOL:
        return None
    return m.Binary(BOOL, g.pick(["&&", "||", "&&", "||", "&", "|", "^", "==", "!="]), g.expr(BOOL), g.expr(BOOL))


@calls
def _tick(g, ty, ctx):
    """tick(k, v): prints `tick k` and gives v back; shows what is evaluated, and when."""
    if not is_scalar(ty):
        return None
    k = m.Lit("i64", g.r.randrange(1000))
    if g.chance(0.5):
        return m.Call(ty, "tick", [k, g.expr(ty)], [ty])
    return m.Call(ty, "tick", [k, g.expr(ty, ctx=False)])


@calls
def call(g, ty, ctx):
    """A call of a function declared before, returning `ty`."""
    f = g.fn
    options = [s for s in f.callable if s.ret == ty and not s.struct
               and f.cost + f.mult * s.cost < g_cost_cap(g)]
    if not options:
        return None
    return call_of(g, g.pick(options))


def call_of(g, sig) -> m.Call:
    """A call of `sig` with random arguments (a recursion's depth small), its cost counted."""
    g.fn.cost += g.fn.mult * sig.cost
    args = [g.expr(t) for _, t in sig.params]
    if sig.recursive:
        args[0] = m.Lit("i64", g.r.randint(0, 5))
    return m.Call(sig.ret, sig.name, args)


def g_cost_cap(g) -> int:
    from ..generate import COST_CAP
    return COST_CAP


def _let(g):
    ty = g.scalar_type()
    annotate = g.chance(0.6)
    init = g.expr(ty, ctx=annotate)
    if not init.typed():
        annotate = True
    name = g.fresh("v")
    mutable = g.chance(0.7)
    g.declare(name, ty, mutable)
    return m.Let(name, ty, init, mutable, annotate)


def _assign(g):
    ty = g.scalar_type()
    targets = g.places(ty, mutable=True, pure=True)
    if not targets:
        return None
    target = g.pick(targets)
    if ty == BOOL or g.chance(0.4):
        return m.Assign(target, "=", g.expr(ty))
    op = g.pick(["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="])
    value = operand_for(g, ty, op)
    if value is None and isinstance(target, m.Var) and target.name not in {v.name for v in g.globals}:
        value = g.expr(ty)   # no call can change a local scalar: the order of the two reads cannot matter
    elif value is None:
        value = g.pure_expr(ty)   # `g += bump()`: which value of g is read is not for the oracle to guess
    return m.Assign(target, op, value)


def operand_for(g, ty, op: str):
    """The right of `place op= …` where the operator constrains it: a divisor
    that is pure (else 3), a shift within the type's range; None for the
    other operators (the caller's to draw)."""
    if op in ("/=", "%="):
        value = divisor(g, ty, True)
        return value if value.pure() else m.Lit(ty, 3)
    if op in ("<<=", ">>="):
        return m.Lit(ty, g.r.randint(0, min(127, 2 * bits(ty))))
    return None


def _print(g):
    return m.Print(g.fresh("p"), [g.expr(g.scalar_type(), ctx=False) for _ in range(g.r.randint(1, 4))])


def _dump(g):
    """Print the scalar variables in scope."""
    names = [v for v in g.visible() if is_scalar(v.ty)]
    if not names:
        return None
    g.r.shuffle(names)
    return m.Print(g.fresh("d"), [m.Var(v.ty, v.name) for v in names[:8]])


@register
class Arith(Layer):
    name = "arith"

    def declare(self, g) -> None:
        t = m.Var("T", "v")
        g.add_decl(m.FnDecl("tick", [("k", "i64"), ("v", "T")], "T",
                            m.Block([m.Print("tick", [m.Var("i64", "k")]), m.Return(t)]), ["T"]))
        for _ in range(g.r.randint(0, 4)):
            ty = g.scalar_type()
            name = g.fresh("g")
            mutable = g.chance(0.75)
            g.add_global(name, ty, g.literal(ty) if g.chance(0.7) else None, mutable)
            if mutable and is_int(ty) and g.chance(0.7):
                self._bump(g, name, ty)

    @staticmethod
    def _bump(g, name: str, ty: str) -> None:
        from ..generate import FnSig
        sig = FnSig(g.fresh("bump"), [("k", ty)], ty)

        def body(g):
            return m.Block([m.Assign(m.Var(ty, name), g.pick(["+=", "*=", "^=", "-="]), m.Var(ty, "k")),
                            m.Print(sig.name, [m.Var(ty, name)]), m.Return(m.Var(ty, name))])
        g.function(sig, body)
        sig.cost = 2

    def statements(self):
        return [(3, _let), (3, _assign), (4, _print), (1, _dump)]

    def expressions(self):
        return [(3, _unary), (10, _binary), (4, _division), (4, _shift), (4, _cast), (7, _compare),
                (3, _logical), (1.5, _tick), (1.5, call)]


__all__ = ["INT_TYPES", "Arith", "call", "calls", "divisor", "shift_amount"]
