"""The generators layer's function values: plain functions std/iter's `map`
and `filter` are given (mappers and predicates), and functions that return
one of two of them (choosers), which the compiler cannot see through."""
from __future__ import annotations

from .. import model as m
from ..generate import FnSig
from ..types import BOOL
from .generator_nodes import FnRef, _state


def function_value(g, ty: str, name: str) -> m.Expr:
    """A function value for map and filter: mostly the function named (map
    and filter are then compiled for it: known_function_arguments.pc), else
    one a chooser returns, which the compiler cannot know (an indirect call
    per value)."""
    choosers = [c for c in _state(g)["choosers"] if c[1] == ty]
    if not choosers or g.chance(0.6):
        return FnRef(ty, name)
    chooser, _ = g.pick(choosers)
    return m.Call(ty, chooser, [g.expr(BOOL)])


def _chooser(g, ty: str, first: str, second: str) -> None:
    """`fn choose(c: bool) -> fn(…) -> … { if c { return first; } return second; }`"""
    c = g.fresh("c")
    body = m.Block([m.If(m.Var(BOOL, c), m.Block([m.Return(FnRef(ty, first))])), m.Return(FnRef(ty, second))])
    name = g.fresh("choose")
    g.decls.append(m.FnDecl(name, [(c, BOOL)], ty, body))
    _state(g)["choosers"].append((name, ty))


def add_choosers(g) -> None:
    """Choosers between the mappers (and the predicates) of one type."""
    st = _state(g)
    kinds = {}
    for name, src, dst in st["mappers"]:
        kinds.setdefault(f"fn({src}) -> {dst}", []).append(name)
    for name, t in st["preds"]:
        kinds.setdefault(f"fn({t}) -> bool", []).append(name)
    for ty, names in sorted(kinds.items()):
        if g.chance(0.7):
            _chooser(g, ty, g.pick(names), g.pick(names))


def add_mappers(g) -> None:
    """Plain functions used as values by map and filter."""
    from .control import _body
    st = _state(g)
    elems = list({s.ty.elem for s in st["cos"] if s.ty.promise == "Generator" and not s.generic} | {"i64"})
    elems.sort(key=str)
    for _ in range(g.r.randint(1, 3)):
        src = g.pick(elems)
        dst = g.pick(elems + [g.int_type()]) if g.chance(0.7) else src
        a = g.fresh("a")
        sig = FnSig(g.fresh("mf"), [(a, src)], dst)
        g.function(sig, lambda g, sig=sig: _body(g, sig.ret, 1, 3))
        st["mappers"].append((sig.name, src, dst))
    for _ in range(g.r.randint(0, 2)):
        t = g.pick(elems)
        a = g.fresh("a")
        sig = FnSig(g.fresh("pf"), [(a, t)], BOOL)
        g.function(sig, lambda g, sig=sig: _body(g, sig.ret, 1, 2))
        st["preds"].append((sig.name, t))
