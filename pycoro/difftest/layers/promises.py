"""Layer `promises`: coroutines of the program's own promise types.

Every other coroutine layer uses a promise the tester did not write (the
prelude's `Generator`, std/async's `Task`) or one fixed promise (send's
`Coro`). This layer declares promises of its own and varies what the
compiler specialises on (middle/coro/first_resume.py makes a second resume
function only for lazy coroutines; a review found it miscompiled `initial
run` ones, which no layer generated):

- `Eager<T>`: `initial run`: a call runs the body to its first `yield` (or
  to its end) before it returns the handle; `value()` is then the first
  value, and `next()` resumes past it (so a `for` over a fresh one starts
  at its second value, where its first suspension was a `yield`);
- `Lazy<T>`: `initial suspend`, as `Generator` but without `yield_from`
  (so no `yield from` in it), a promise the program declares;
- `Pooled<T>`: as Lazy, with the promise's own `allocate`/`deallocate`
  (malloc and free, counting the frames in `pframes`); main's first `defer`
  prints the count left once everything else has ended: 0;
- `Detached<T>`: `initial run` and `final run`: it frees itself at its end,
  and its handles do not own it. Its return hooks count its end (`pdone`);
  `main` makes one and resumes it until the count moves, printing its
  values, and never touches it after (a coroutine's body never drives one,
  so the count moves for that one alone);
- each counts its `yield_value` calls in the promise (`yields()`), so every
  hook call is seen, and keeps T's zero value after `co_return;`;
- their bodies `await` awaiters of the program's own (LANGUAGE.md §5.5):
  `Ready`, `Skip` and `Again` do not suspend (`await_ready` true,
  `await_suspend` false, a transfer to the coroutine's own handle) and give
  their value, in any expression; `await Pause {};` suspends, so the
  consumer's `next()` returns true with nothing yielded (the oracle's twin
  yields `_PAUSE`, which `_Counted` does not count or show).

Their coroutines take scalar parameters; bodies are the usual random
statements with `yield`, `co_return` (in `if`s and loops) and defers, and
often a bounded `while` whose only suspend points are one or two `yield`s
(with the initial one, the two-state coroutine first_resume splits), its
trip count often one the compiler cannot know. Six in ten also get two
plain functions that make them and a chooser between those (`pickp0(c)(…)`):
through it the frame is on the heap and the resume functions run as
CoroSplit made them, where a direct call would let LLVM inline it all.
Consumers make them (`var e = ep0(…);`), read `value()`, `yields()` and
`done()` (an Eager one's at once: it has run already), advance them by hand
and in bounded loops, iterate them (`for v in ep0(…)` over a temporary,
`for v in e` in place), move them (`let d = e;`) and reassign them;
suspended ones are destroyed with pending defers at the end of their scope.

The oracle: the generator layer's `_Gen` (a Python generator), counting
the values it receives (`_Counted`); an Eager one is advanced once when it
is made. `value()` of a Lazy one before its first `next()` is not
generated, as in the generators layer; the promise's state is read before
anything is stored in it only by `yields()` and after a leading `await
Pause {};`, and is then its zero value (promise state is zero-initialised:
docs/coroutines.md).

Not generated: a Detached coroutine driven anywhere but `main`, or left
unfinished (it would never be freed); promise hooks that print (the order
of a `co_return`'s hook and its scope's defers is C++'s, hook first, where
Python's `finally` runs first: modelling it would need the oracle to run
the hook ahead of the body's own cleanups).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import model as m
from ..generate import FnSig
from ..model import Yield
from ..types import BOOL, is_scalar, zero_py
from . import Layer, register
from .arith import calls
from .generator_nodes import CoSig, FnRef, ForH, GenCall, HAssign, HandleT, HMethod, _state
from .generators import (_co_body, _fstate, _show, co_function, co_kind, handle_var, live_handles, loop_body, movable,
                         move)

# promise → its initial and final suspend points
PROMISES = {"Eager": ("run", "suspend"), "Lazy": ("suspend", "suspend"), "Pooled": ("suspend", "suspend"),
            "Detached": ("run", "run")}
OWNED = ("Eager", "Lazy", "Pooled")   # their handles own the coroutine; a Detached one frees itself

# Detached coroutines count their ends (the return hooks): their handles must
# not be touched once the coroutine has ended, so `main` drives each one until
# the count moves (a coroutine's body never drives a Detached one).
DETACHED_COUNT = "var pdone: i64 = 0;"

# Pooled's frames come from its own allocator, which counts them: once main
# has ended (its first `defer`, run last), every frame made was freed. How
# many were made depends on which frames LLVM placed in their callers (those
# are not allocated: LANGUAGE.md §5.6), so only the balance is printed.
ALLOCATOR = """extern fn malloc(n: u64) -> ptr<u8>;
extern fn free(p: ptr<u8>);
var pframes: i64 = 0;"""
ALLOCATOR_HOOKS = """    fn allocate(size: u64) -> ptr<u8> { pframes += 1; return malloc(size); }
    fn deallocate(p: ptr<u8>) { pframes -= 1; free(p); }
"""

PROMISE = """promise {name}<T> {{
    abi switch;
    initial {initial};
    final {final};
    var out: T;
    var count: i64;
    fn yield_value(mut self, v: T) {{ self.out = v; self.count += 1; }}
    fn return_value(mut self, v: T) {{ self.out = v;{ends} }}
    fn return_void(mut self) {{ var zero: T; self.out = zero;{ends} }}
{hooks}}}
impl<T> {name}<T> {{
    fn next(mut self) -> bool {{ if !self.done() {{ self.resume(); }} return !self.done(); }}
    fn value(self) -> T {{ return self.promise().out; }}
    fn yields(self) -> i64 {{ return self.promise().count; }}
}}"""

# Awaiters of the program's own in these promises' coroutines (LANGUAGE.md
# §5.5): three that do not suspend, each by another way (`await_ready` true;
# `await_suspend` returning false; returning the coroutine's own handle, a
# transfer to itself), and one that does (`await_suspend` returning nothing):
# the consumer's `next()` then returns true with nothing yielded.
AWAITERS = """struct Ready<T> { v: T }
impl<T> Ready<T> {
    fn await_ready(mut self) -> bool { return true; }
    fn await_suspend(mut self, _h: Handle) {}
    fn await_resume(mut self) -> T { return self.v; }
}
struct Skip<T> { v: T }
impl<T> Skip<T> {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, _h: Handle) -> bool { return false; }
    fn await_resume(mut self) -> T { return self.v; }
}
struct Again<T> { v: T }
impl<T> Again<T> {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) -> Handle { return h; }
    fn await_resume(mut self) -> T { return self.v; }
}
struct Pause {}
impl Pause {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, _h: Handle) {}
    fn await_resume(mut self) {}
}"""
NOT_SUSPENDING = ("Ready", "Skip", "Again")

ORACLE = '''
_PAUSE = object()   # what the twin of `await Pause {}` yields: a suspension without a value


class _Counted(_Gen):
    """A handle of a promise that counts its yield_value calls; an Eager one
    has run to its first suspend point when it is made."""

    def __init__(self, gen, zero, eager, detached):
        super().__init__(gen, zero, ())
        self.count, self.detached = 0, detached
        if eager:
            self.next()

    def send(self, v):
        previous = self.cur
        more = super().send(v)
        if more and self.cur is _PAUSE:   # suspended in `await Pause {}`: nothing yielded
            self.cur = previous
            return True
        self.count += more
        if self.detached and not more:   # its return hook counts its end
            _pdone[0] += 1
        return more

    def resume(self):
        self.next()

    def yields(self):
        return self.count


_pdone = [0]


def _mkp(fn, zero, eager, detached, *args):
    return _Counted(fn(*args), zero, eager, detached)
'''


@dataclass
class PromiseDecls(m.Decl):
    """The promises this program uses, and the oracle's handle for them."""
    names: tuple

    def pc(self) -> list[str]:
        lines = ALLOCATOR.split("\n") if "Pooled" in self.names else []
        lines += [DETACHED_COUNT] if "Detached" in self.names else []
        lines += AWAITERS.split("\n")
        for name in self.names:
            initial, final = PROMISES[name]
            hooks = ALLOCATOR_HOOKS if name == "Pooled" else ""
            ends = " pdone += 1;" if name == "Detached" else ""
            lines += PROMISE.format(name=name, initial=initial, final=final, hooks=hooks, ends=ends).split("\n")
        return lines

    def py(self) -> list[str]:
        return ORACLE.split("\n")


@dataclass
class PromiseCall(GenCall):
    """A call that makes a coroutine of one of this layer's promises: the
    oracle's `_Counted`."""

    def py(self) -> str:
        args = "".join(f", {a.val()}" for a in self.args)
        eager = PROMISES[self.ty.promise][0] == "run"
        detached = self.ty.promise not in OWNED
        return f"_mkp({self.fn}, {zero_py(self.ty.elem)}, {eager}, {detached}{args})"


@dataclass
class ValueCall(m.Expr):
    """`pick(c)(args)`: a call through the function value a chooser returns,
    which the compiler cannot see through (the coroutine's frame is made on
    the heap, its resume function called as it is: first_resume's case)."""
    ty: HandleT
    callee: m.Expr
    args: list

    def pc(self) -> str:
        return f"{self.callee.pc()}({', '.join(a.pc() for a in self.args)})"

    def py(self) -> str:
        return f"{self.callee.py()}({', '.join(a.val() for a in self.args)})"

    def pure(self) -> bool:
        return False


@dataclass
class Counter(m.Expr):
    """One of this layer's globals, as the oracle knows it: Pooled's frames
    not yet freed (`pframes`: 0, every one is freed), the Detached coroutines
    that have ended (`pdone`: the oracle's own count)."""
    name: str
    oracle: str
    ty: str = "i64"

    def pc(self) -> str:
        return self.name

    def py(self) -> str:
        return self.oracle

    def pure(self) -> bool:
        return False


def _frames_left() -> Counter:   # (a node apiece: the reducer rewrites nodes in place)
    return Counter("pframes", "0")


def _ended() -> Counter:
    return Counter("pdone", "_pdone[0]")


@dataclass
class AwaitValue(m.Expr):
    """`(await Skip<T> { v: e })`, of an awaiter that does not suspend: e."""
    ty: object
    awaiter: str
    e: m.Expr

    def pc(self) -> str:
        return f"(await {self.awaiter}<{self.ty}> {{ v: {self.e.pc()} }})"

    def py(self) -> str:
        return self.e.py()

    def pure(self) -> bool:
        return False


@dataclass
class Pause(m.Stmt):
    """`await Pause {};`: the coroutine suspends, and yields nothing."""

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}await Pause {{}};"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}yield _PAUSE"]


def _ours_running(g) -> bool:
    """Whether g is making the body of a coroutine of one of these promises."""
    return co_kind(g) in PROMISES and not g.fn.in_defer


@calls
def _await_expr(g, ty, ctx):
    if not _ours_running(g) or not is_scalar(ty):
        return None
    return AwaitValue(ty, g.pick(NOT_SUSPENDING), g.expr(ty))


def _pause(g):
    return Pause() if _ours_running(g) else None


def _elem(g):
    roll = g.r.random()
    if roll < 0.75:
        return g.int_type() if g.chance(0.6) else "i64"
    if roll < 0.85:
        return BOOL
    return g.pick(g.structs) if g.structs else "i64"


def _ours(g, elem=None, promises=OWNED) -> list[CoSig]:
    return [s for s in _state(g)["cos"] if s.ty.promise in promises and (elem is None or s.ty.elem == elem)]


def _call(g, s: CoSig) -> m.Expr:
    """A call that makes one of ours: by name, or through a function value."""
    g.fn.cost += g.fn.mult * s.cost
    chooser = _state(g).setdefault("promise_choosers", {}).get(s.name)
    if chooser is not None and g.chance(0.5):
        name, fn_ty = chooser
        return ValueCall(s.ty, m.Call(fn_ty, name, [g.expr(BOOL)]), [g.expr(t) for _, t in s.params])
    return PromiseCall(s.ty, s.name, [g.expr(t) for _, t in s.params])


def _handles(g, mutable=False):
    return [v for name in OWNED for v in live_handles(g, name, mutable=mutable)]


def _callable(g) -> list[CoSig]:
    """Ours that this function may call (not itself: no recursion here)."""
    own = getattr(g.fn.sig, "name", None)
    return [s for s in _ours(g) if s.name != own]


# ---------------------------------------------------------------- consumers

def _let(g):
    """`var e = ep0(…);`"""
    cos = _callable(g)
    if g.fn.in_defer or not cos:
        return None
    s = g.pick(cos)
    name = g.fresh("pv")
    return handle_var(g, name, s.ty, _call(g, s))


def _use(g):
    hs = _handles(g, mutable=True)
    if g.fn.in_defer or not hs:
        return None
    v = g.pick(hs)
    elem = v.ty.elem
    nxt = HMethod(BOOL, v.name, "next")
    val = HMethod(elem, v.name, "value")
    counts = [HMethod("i64", v.name, "yields"), HMethod(BOOL, v.name, "done")]
    if PROMISES[v.ty.promise][0] == "run" and g.chance(0.3):
        # an Eager one has run already: its value (the first, or its result) at any time
        return m.Block([_show(g, val, g.fresh("pf")), m.Print(g.fresh("py"), counts)])
    roll = g.r.random()
    if roll < 0.25:
        return m.Print(g.fresh("pn"), [nxt] + counts[:g.r.randint(0, 2)])
    if roll < 0.35:
        return m.ExprStmt(nxt)
    if roll < 0.65 or not g.can_nest():
        then = m.Block([_show(g, val, g.fresh("ph"))])
        els = m.Block([_show(g, val, g.fresh("pr")), m.Print(g.fresh("pc"), counts)]) if g.chance(0.6) else None
        return m.If(nxt, then, els)
    if roll < 0.85:
        bound = g.r.randint(1, 6)
        body = g.block(0, 2, loop=True, mult=bound, prefix=[_show(g, val, g.fresh("pl"))])
        return m.While(g.fresh("w"), bound, nxt, body)
    return m.Print(g.fresh("pd"), counts)


def _for(g):
    """`for v in ep0(…)` over a temporary, or `for v in e` in place."""
    if not g.can_nest():
        return None
    busy = _fstate(g)["busy"]
    hs = [v for v in _handles(g) if v.name not in busy]
    if hs and g.chance(0.3):
        v = g.pick(hs)
        src, elem = m.Var(v.ty, v.name), v.ty.elem
    else:
        cos = _callable(g)
        if not cos:
            return None
        s = g.pick(cos)
        src, elem = _call(g, s), s.ty.elem
    var = g.fresh("pe")
    body = loop_body(g, src, var, elem, lambda g: g.block(1, 3, loop=True, mult=4,
                                                          prefix=[_show(g, m.Var(elem, var), g.fresh("pi"))]))
    return ForH(var, src, body, g.fresh("pt"))


def _move(g):
    """`let d = e;` (e is moved out), or `e = ep0(…);` (the old one destroyed)."""
    hs = [v for v in _handles(g) if movable(g, v)]
    if not hs:
        return None
    v = g.pick(hs)
    if g.chance(0.6):
        name = g.fresh("pv")
        return handle_var(g, name, v.ty, move(g, v))
    same = [s for s in _callable(g) if s.ty == v.ty]
    if not same or not v.mutable:
        return None
    return HAssign(v.name, _call(g, g.pick(same)))


def _drive_detached(g):
    """In main: `{ let before = pdone; let h = dp0(…); while k < N && pdone ==
    before { print(h.value()); h.resume(); } print(pdone - before, k); }`:
    made (it has run to its first suspend point), resumed until its return
    hook counts its end, and not touched after it (it has freed itself)."""
    detached = _ours(g, promises=("Detached",))
    if g.fn.sig is not None or g.fn.in_defer or not detached:
        return None
    s = g.pick(detached)
    before, handle = g.fresh("db"), g.fresh("dh")
    count = m.Var("i64", before)
    value = HMethod(s.ty.elem, handle, "value")
    loop = m.While(g.fresh("dk"), 100000, m.Binary(BOOL, "==", _ended(), count),
                   m.Block([_show(g, value, g.fresh("dv")), m.ExprStmt(HMethod("void", handle, "resume"))]))
    return m.Block([m.Let(before, "i64", _ended(), False, False), m.Let(handle, s.ty, _call(g, s), False, False),
                    loop, m.Print(g.fresh("dd"), [m.Binary("i64", "-", _ended(), count), m.Var("i64", loop.counter)])])


# ---------------------------------------------------------------- declarations

def _yield_loop(g, elem) -> m.Stmt:
    """`while k < N && cond { yield …; [yield …;] }`: one or two suspend points
    inside a loop (with the initial one, a two-state coroutine: first_resume's
    shape), its trip count often one the compiler cannot know (cond reads the
    parameters and globals)."""
    yields = [Yield(g.expr(elem)) for _ in range(g.r.choice((1, 1, 2)))]
    bound = g.r.randint(1, 6)
    cond = g.expr(BOOL) if g.chance(0.6) else m.Lit(BOOL, True)
    return m.While(g.fresh("pk"), bound, cond, m.Block(yields))


def _opaque_makers(g, s: CoSig) -> None:
    """Two plain functions that make s's coroutine, and a chooser between
    them (`pick(c)` returns one: the compiler cannot tell which)."""
    params = ", ".join(str(t) for _, t in s.params)
    fn_ty = f"fn({params}) -> {s.ty}"
    makers = []
    for _ in range(2):
        name = g.fresh("mkp")
        body = m.Block([m.Return(PromiseCall(s.ty, s.name, [m.Var(t, n) for n, t in s.params]))])
        g.decls.append(m.FnDecl(name, list(s.params), s.ty, body))
        makers.append(name)
    c = g.fresh("c")
    chooser = g.fresh("pickp")
    body = m.Block([m.If(m.Var(BOOL, c), m.Block([m.Return(FnRef(fn_ty, makers[0]))])),
                    m.Return(FnRef(fn_ty, makers[1]))])
    g.decls.append(m.FnDecl(chooser, [(c, BOOL)], fn_ty, body))
    _state(g).setdefault("promise_choosers", {})[s.name] = (chooser, fn_ty)


def _coroutine(g, promise: str) -> None:
    elem = _elem(g)
    params = [(g.fresh("a"), g.scalar_type()) for _ in range(g.r.randint(0, 2))]
    name = g.fresh({"Eager": "ep", "Lazy": "lp", "Pooled": "qp", "Detached": "dp"}[promise])
    sig = FnSig(name, params, HandleT(elem, promise))

    def make(g):
        if g.chance(0.4):   # the loop alone (perhaps after a defer): the two-state shape
            stmts = [_yield_loop(g, elem)]
            if g.chance(0.4):
                names = [v for v in g.visible() if is_scalar(v.ty)][:2]
                stmts.insert(0, m.Defer(m.Print(g.fresh("pz"), [m.Var(v.ty, v.name) for v in names])))
            return m.Block(stmts)
        body = _co_body(g, elem, 1, 4, budget=10)
        if g.chance(0.5):
            k = g.r.randint(0, len(body.body) - (1 if body.body and body.body[-1].ends() else 0))
            body.body.insert(k, _yield_loop(g, elem))
        return body
    co_function(g, sig, elem, promise, make)
    s = CoSig(name, params, sig.ret, sig.cost)
    _state(g)["cos"].append(s)
    if g.chance(0.6):
        _opaque_makers(g, s)


@register
class Promises(Layer):
    name = "promises"
    requires = ("generators",)

    def declare(self, g) -> None:
        names = tuple(n for n in PROMISES if g.chance(0.7)) or ("Eager",)
        g.add_decl(PromiseDecls(names))
        for _ in range(g.r.randint(1, 3)):
            _coroutine(g, g.pick(list(names)))

    def statements(self):
        return [(3, _let), (4, _use), (3, _for), (1, _move), (2, _drive_detached), (1, _pause)]

    def expressions(self):
        return [(1, _await_expr)]

    # generate.py's main hooks: with Pooled, main's first `defer` (run after
    # every other one and every handle of main is destroyed) prints how many
    # of its frames are left
    def main_ret(self, g, ret):
        return ret

    def enter_main(self, g) -> None:
        pass

    def main_decl(self, g, decl):
        if any(isinstance(d, PromiseDecls) and "Pooled" in d.names for d in g.decls):
            decl.body.body.insert(0, m.Defer(m.Print(g.fresh("pa"), [_frames_left()])))
        return decl
