"""Layer `slices` (LANGUAGE.md §2.1): slices `[T]` of arrays of the integer
types and `bool` (`var`, `let` and global arrays, arrays in struct fields and
in arrays of arrays), whole and ranged (`a[..]`, `a[lo..hi]`, `a[lo..]`,
`a[..hi]`), sub-slices of slices (also chained, `a[1..][..2]`), `len()`,
element reads and writes through slices (`=` and compound operators), `for v
in s` (the body may write what it iterates, break and continue), slice
variables (`let`, `var`, reassigned, zero-valued), functions with slice
parameters (folds, in-place mutators, recursions on `xs[1..]` and on halves,
random bodies that sub-slice, write and pass their parameters on), and
generators taking a slice (iterated by `for` or driven by hand), which read
the elements as they go and may write through the slice.

The oracle models aliasing exactly: a slice is a `_Sl` (oracle.py), a view of
the array's own list, so writes through a slice show in the array and in
every other slice of it. Bounds are out of range now and then (a panic with
pycoro's message, status 101), rarely enough that most programs run to
their end.

What the generator keeps so that programs are valid:
- what each slice variable and parameter views: the least and the most
  elements it can have (indices below the least are in bounds), and whether
  it may be written through (not a slice of a `let` array or of a parameter
  that is not written);
- a slice variable is only given views of arrays (and slices) declared
  before it, so it never outlives what it views, and slices never leave the
  function that made them except as arguments;
- a function's slice parameter is written (by it or by what it calls) only
  when the layer made it a written one, and only writable slices are passed
  to those (pycoro refuses a `let` array's slice there)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import model as m
from ..generate import FnSig, VarInfo
from ..types import BOOL, ArrayT, SliceT, StructT, is_int, is_scalar
from . import Layer, register
from .arith import calls, g_cost_cap, operand_for

MAX_N = 6            # the longest array the layer makes (and what an unknown slice may hold)
P_BAD_INDEX = 0.0025 # an element index out of range
P_BAD_RANGE = 0.002  # a sub-slice's bounds out of range


# ---------------------------------------------------------------- state

@dataclass
class SlInfo:
    """What a slice variable or parameter views: at least `lo` and at most
    `hi` elements; `writable`: writes through it are allowed."""
    lo: int
    hi: int
    writable: bool


@dataclass
class SlFn:
    """A function (or a generator: `gen`) with slice parameters; `needs`: for
    each slice parameter, (the least length its body assumes, written)."""
    sig: FnSig
    needs: dict
    gen: bool = False
    elem: object = None   # a generator's element type


@dataclass
class Src:
    """An array place or a slice expression that a slice can be made of."""
    e: m.Expr
    elem: object
    lo: int
    hi: int
    writable: bool
    names: tuple          # the variables whose storage it views
    array: bool = False   # `e` is an array place (sliced with [..]), not a slice


def _st(g):
    st = g.__dict__.get("_slices_state")
    if st is None:
        st = g.__dict__["_slices_state"] = {"info": {}, "fns": []}
    return st


def _elem_type(g):
    return BOOL if g.chance(0.15) else g.int_type()


# ---------------------------------------------------------------- sources

def _array_places(g, e, writable, root, out, depth) -> None:
    t = e.ty
    if isinstance(t, ArrayT) and is_scalar(t.elem):
        out.append(Src(e, t.elem, t.n, t.n, writable, (root,), array=True))
    if depth >= 3:
        return
    if isinstance(t, StructT):
        for name, ft in t.fields:
            _array_places(g, m.Field(ft, e, name), writable, root, out, depth + 1)
    elif isinstance(t, ArrayT) and not is_scalar(t.elem):
        _array_places(g, m.Index(t.elem, e, g.index(t.n, pure=True)), writable, root, out, depth + 1)


def _sources(g, elem=None, writable=False, need=0, before=None) -> list[Src]:
    """Arrays (places in variables, never temporaries) and slice variables in
    scope with elements of type `elem` (any scalar when None), writable ones
    only when `writable`, that can give a slice of at least `need` elements;
    `before`: only those whose variables were all declared before it."""
    info = _st(g)["info"]
    out: list[Src] = []
    for v in g.visible():
        if isinstance(v.ty, SliceT):
            si = info.get(v.name)
            if si is not None:
                out.append(Src(m.Var(v.ty, v.name), v.ty.elem, si.lo, si.hi, si.writable, (v.name,)))
        elif isinstance(v.ty, (ArrayT, StructT)):
            _array_places(g, m.Var(v.ty, v.name), v.mutable, v.name, out, 0)
    out = [s for s in out if (elem is None or s.elem == elem) and (s.writable or not writable) and s.lo >= need]
    if before is not None:
        limit = _position(g, before)
        out = [s for s in out if all(_position(g, n) < limit for n in s.names)]
    return out


def _position(g, name: str) -> tuple:
    """Where a variable was declared: (scope, place in it); globals first."""
    for k, scope in enumerate(g.fn.scopes):
        for j, v in enumerate(scope):
            if v.name == name:
                return (k, j)
    return (-1, 0)


def _bound_lit(g, v: int, t: str) -> m.Lit:
    if t == "i64" and g.chance(0.7):
        return m.Lit("i64", v)
    return m.Lit(t, v, True)


def _narrow(g, src: Src, need: int) -> Src:
    """A slice of `src` with at least `need` elements (when the bounds are in
    range): whole, `[lo..hi]`, `[lo..]` or `[..hi]`, bounds literals or now
    and then a masked variable."""
    ty = SliceT(src.elem)
    spare = src.lo - need
    roll = g.r.random()
    t = g.int_type() if g.chance(0.3) else "i64"
    if g.chance(P_BAD_RANGE):
        kind = g.r.randrange(3)
        if kind == 0 and g.chance(0.2):   # past the end, as far as a u64 goes
            e = m.SliceOf(ty, src.e, None, m.Lit("u64", (1 << 64) - 1, True))
        elif kind == 0:   # past the end
            e = m.SliceOf(ty, src.e, None, _bound_lit(g, src.hi + g.r.randint(1, 2), t))
        elif kind == 1:   # lo > hi
            lo = g.r.randint(1, max(1, src.lo))
            e = m.SliceOf(ty, src.e, _bound_lit(g, lo, t), _bound_lit(g, lo - 1, t))
        else:   # negative
            e = m.SliceOf(ty, src.e, m.Lit(g.pick(["i64", "i32", "i8"]), -1, True), None)
        return Src(e, src.elem, 0, src.hi, src.writable, src.names)
    if roll < 0.3:
        if not src.array and g.chance(0.6):
            return src
        return Src(m.SliceOf(ty, src.e, None, None), src.elem, src.lo, src.hi, src.writable, src.names)
    if roll < 0.55:
        lo = g.r.randint(0, spare)
        hi = g.r.randint(lo + need, src.lo)
        return Src(m.SliceOf(ty, src.e, _bound_lit(g, lo, t), _bound_lit(g, hi, t)), src.elem, hi - lo, hi - lo,
                   src.writable, src.names)
    if roll < 0.72:
        lo = g.r.randint(0, spare)
        return Src(m.SliceOf(ty, src.e, _bound_lit(g, lo, t), None), src.elem, src.lo - lo, src.hi - lo,
                   src.writable, src.names)
    if roll < 0.88:
        hi = g.r.randint(need, src.lo)
        return Src(m.SliceOf(ty, src.e, None, _bound_lit(g, hi, t)), src.elem, hi, hi, src.writable, src.names)
    # `[(x & m)..]`: a bound the program computes
    mask = 3 if spare >= 3 else 1 if spare >= 1 else 0
    ints = [v for v in g.visible() if is_int(v.ty)]
    if ints:
        v = g.pick(ints)
        lo_e = m.Binary(v.ty, "&", m.Var(v.ty, v.name), m.Lit(v.ty, mask))
    else:
        lo_e = m.Binary(t, "&", g.literal(t, ctx=False), m.Lit(t, mask))
    return Src(m.SliceOf(ty, src.e, lo_e, None), src.elem, src.lo - mask, src.hi, src.writable, src.names)


def slice_src(g, elem=None, writable=False, need=0, before=None) -> Src | None:
    """A slice expression (pure: no calls) viewing something in scope, or None."""
    options = _sources(g, elem, writable, need, before)
    if not options:
        return None
    s = _narrow(g, g.pick(options), need)
    if g.chance(0.2) and s.lo >= need:   # a sub-slice of that
        s = _narrow(g, s, need)
    return s


def _index(g, s: Src) -> m.Expr | None:
    """An index into `s`: in bounds (below its least length), or now and then not."""
    if g.chance(P_BAD_INDEX) or s.lo == 0:
        if s.lo == 0 and not g.chance(0.01):
            return None
        t = g.int_type()
        if t[0] == "i" and g.chance(0.3):
            return m.Lit(t, -1, True)
        if t == "u64" and g.chance(0.3):
            return m.Lit(t, (1 << 64) - 1, True)
        return m.Lit(t, min(s.hi + g.r.randint(0, 2), 127), True)
    roll = g.r.random()
    if roll < 0.15:
        return m.Binary("i64", "-", m.Len("i64", s.e), m.Lit("i64", 1))
    if roll < 0.55:
        return g.index(s.lo, pure=True)
    return m.Lit("i64", g.r.randrange(s.lo), g.chance(0.2))


# ---------------------------------------------------------------- expressions

def _read(g, ty, ctx):
    if not is_scalar(ty):
        return None
    s = slice_src(g, ty, need=1 if not g.chance(0.05) else 0)
    if s is None:
        return None
    i = _index(g, s)
    return None if i is None else m.Index(ty, s.e, i)


def _len(g, ty, ctx):
    if not is_int(ty):
        return None
    s = slice_src(g)
    if s is None:
        return None
    if ty == "i64":
        return m.Len("i64", s.e)
    if not g.chance(0.3):
        return None
    return m.Cast(ty, m.Len("i64", s.e))


def _fn_options(g, ret=None, gen=False, any_ret=False):
    f = g.fn
    known = set(_callable_here(g))
    return [fn for fn in _st(g)["fns"] if fn.gen == gen and id(fn.sig) in known
            and (any_ret or fn.sig.ret == ret) and f.cost + f.mult * fn.sig.cost < g_cost_cap(g)]


def _callable_here(g):
    """The slice functions declared before the function being generated
    (recorded when its generation began)."""
    return g.fn.__dict__.get("_slice_fns", [id(fn.sig) for fn in _st(g)["fns"]])


def call_of(g, fn: SlFn) -> m.Call | None:
    args = []
    for name, t in fn.sig.params:
        if isinstance(t, SliceT):
            need, written = fn.needs[name]
            if g.chance(0.02):
                need = 0   # perhaps too short: a bounds panic in the callee
            s = slice_src(g, t.elem, written, need)
            if s is None:
                return None
            args.append(s.e)
        else:
            args.append(g.expr(t))
    g.fn.cost += g.fn.mult * fn.sig.cost
    return m.Call(fn.sig.ret, fn.sig.name, args)


@calls
def _call(g, ty, ctx):
    options = _fn_options(g, ty)
    if not options:
        return None
    return call_of(g, g.pick(options))


# ---------------------------------------------------------------- statements

def _let_array(g):
    wanted = [fn.elem for fn in _st(g)["fns"] if fn.elem is not None]
    wanted += [t.elem for fn in _st(g)["fns"] for _, t in fn.sig.params if isinstance(t, SliceT)]
    elem = g.pick(wanted) if wanted and g.chance(0.6) else _elem_type(g)
    ty = ArrayT(elem, g.r.randint(2, MAX_N))
    name = g.fresh("sa")
    mutable = g.chance(0.8)
    if mutable and g.chance(0.1):
        init = None
    elif g.chance(0.7):
        init = m.ArrayLit(ty, [g.literal(elem) for _ in range(ty.n)])
    else:
        init = m.ArrayLit(ty, [g.expr(elem) for _ in range(ty.n)])
    g.declare(name, ty, mutable)
    return m.Let(name, ty, init, mutable, annotate=init is None or not init.typed() or g.chance(0.5))


def _let_slice(g):
    name = g.fresh("s")
    mutable = g.chance(0.4)
    if mutable and g.chance(0.12):   # `var s: [T];`, zero: no elements
        elem = _elem_type(g)
        g.declare(name, SliceT(elem), True)
        _st(g)["info"][name] = SlInfo(0, MAX_N, g.chance(0.5))
        return m.Let(name, SliceT(elem), None, True)
    s = slice_src(g)
    if s is None:
        return None
    g.declare(name, SliceT(s.elem), mutable)
    # a `var` may be given another view later: it may hold up to MAX_N elements
    _st(g)["info"][name] = SlInfo(s.lo, MAX_N if mutable else s.hi, s.writable and (not mutable or g.chance(0.8)))
    return m.Let(name, SliceT(s.elem), s.e, mutable, annotate=g.chance(0.4))


def _reslice(g):
    info = _st(g)["info"]
    targets = [v for v in g.visible() if isinstance(v.ty, SliceT) and v.mutable and v.name in info]
    if not targets:
        return None
    v = g.pick(targets)
    si = info[v.name]
    s = slice_src(g, v.ty.elem, si.writable, si.lo, before=v.name)
    if s is None:
        return None
    return m.Assign(m.Var(v.ty, v.name), "=", s.e)


def _write(g):
    s = slice_src(g, writable=True, need=1)
    if s is None:
        return None
    i = _index(g, s)
    if i is None:
        return None
    t = s.elem
    target = m.Index(t, s.e, i)
    if t == BOOL:
        if g.chance(0.6):
            return m.Assign(target, "=", g.expr(BOOL))
        return m.Assign(target, g.pick(["&=", "|=", "^="]), g.pure_expr(BOOL))
    if g.chance(0.35):
        return m.Assign(target, "=", g.expr(t))
    op = g.pick(["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "+=", "^="])
    return m.Assign(target, op, operand_for(g, t, op) or g.pure_expr(t))


def _for_each(g):
    if not g.can_nest():
        return None
    s = slice_src(g)
    if s is None:
        return None
    var = g.fresh("e")
    prefix = []
    if s.writable and s.lo >= 1 and g.chance(0.4):
        # writes what it iterates: an element not visited yet is read as written
        target = m.Index(s.elem, s.e, m.Lit("i64", g.r.randrange(s.lo)))
        if s.elem == BOOL:
            prefix.append(m.Assign(target, "^=", m.Var(BOOL, var)))
        else:
            prefix.append(m.Assign(target, g.pick(["+=", "^=", "-="]), m.Var(s.elem, var)))
    if g.chance(0.5):
        prefix.insert(0, m.Print(g.fresh("v"), [m.Var(s.elem, var)]))
    g.fn.scopes.append([VarInfo(var, s.elem, False)])
    try:
        body = g.block(1, 3, loop=True, mult=min(s.hi, MAX_N) + 1, prefix=prefix)
    finally:
        g.fn.scopes.pop()
    return m.ForIn(var, s.e, body)


def _for_index(g):
    """`for i in 0..s.len() { s[i] op= e; … }` (or a print of `s[i]`)."""
    if not g.can_nest():
        return None
    s = slice_src(g, writable=g.chance(0.6))
    if s is None:
        return None
    i = g.fresh("i")
    elem = m.Index(s.elem, s.e, m.Var("i64", i))
    g.fn.scopes.append([VarInfo(i, "i64", False)])
    try:
        if s.writable and is_int(s.elem):
            first = m.Assign(elem, g.pick(["+=", "^=", "-=", "*=", "|="]), g.pure_expr(s.elem))
        elif s.writable:
            first = m.Assign(elem, "=", m.Unary(BOOL, "!", elem))
        else:
            first = m.Print(g.fresh("x"), [m.Var("i64", i), elem])
        body = g.block(0, 2, loop=True, mult=min(s.hi, MAX_N) + 1, prefix=[first])
    finally:
        g.fn.scopes.pop()
    return m.For(i, m.Lit("i64", 0), m.Len("i64", s.e), False, body)


def _print_slice(g):
    s = slice_src(g)
    if s is None:
        return None
    args = [m.Len("i64", s.e)] + [m.Index(s.elem, s.e, m.Lit("i64", k)) for k in range(min(s.lo, 4))]
    return m.Print(g.fresh("sl"), args)


def _show_array(g):
    """Print every element of an array that slices may have written."""
    arrays = [s for s in _sources(g) if s.array]
    if not arrays:
        return None
    a = g.pick(arrays)
    return m.Print(g.fresh("arr"), [m.Index(a.elem, a.e, m.Lit("i64", k)) for k in range(a.lo)])


def _defer_slice(g):
    """`defer print(s.len(), s[k]);` or `defer s[k] op= e;`: what the slice
    views when its block ends (also by break, continue or return)."""
    if g.fn.in_defer:
        return None
    g.fn.in_defer = True
    try:
        s = slice_src(g, need=1)
        if s is None or s.lo == 0:   # (bounds drawn out of range)
            return None
        k = m.Lit("i64", g.r.randrange(s.lo))
        if s.writable and is_int(s.elem) and g.chance(0.5):
            return m.Defer(m.Assign(m.Index(s.elem, s.e, k), g.pick(["+=", "^=", "="]), g.pure_expr(s.elem)))
        return m.Defer(m.Print(g.fresh("sdefer"), [m.Len("i64", s.e), m.Index(s.elem, s.e, k)]))
    finally:
        g.fn.in_defer = False


def _call_stmt(g):
    options = _fn_options(g, any_ret=True)
    if not options:
        return None
    call = call_of(g, g.pick(options))
    if call is None:
        return None
    if call.ty is not None and g.chance(0.7):
        return m.Print(g.fresh("c"), [call])
    return m.ExprStmt(call)


def _gen_for(g):
    if not g.can_nest():
        return None
    options = _fn_options(g, gen=True, any_ret=True)
    if not options:
        return None
    fn = g.pick(options)
    call = call_of(g, fn)
    if call is None:
        return None
    var = g.fresh("e")
    g.fn.scopes.append([VarInfo(var, fn.elem, False)])
    try:
        body = g.block(1, 3, loop=True, mult=MAX_N + 2)
    finally:
        g.fn.scopes.pop()
    return m.ForIn(var, call, body)


@dataclass
class Drive(m.Stmt):
    """`{ var h = gen(…); while w < B && h.next() { w += 1; print(h.value()); … } }`:
    a generator driven by hand, destroyed (perhaps suspended) at the block's end."""
    handle: str
    call: m.Expr
    counter: str
    bound: int
    label: str
    body: m.Block

    def pc(self, ind: str) -> list[str]:
        i2 = ind + m.IND
        return ([ind + "{", f"{i2}var {self.handle} = {self.call.pc()};", f"{i2}var {self.counter}: i64 = 0;",
                 f"{i2}while {self.counter} < {self.bound} && {self.handle}.next() {{",
                 f"{i2}{m.IND}{self.counter} += 1;",
                 f'{i2}{m.IND}print("{self.label}", {self.handle}.value());']
                + m.pc_stmts(self.body.body, i2 + m.IND) + [i2 + "}", ind + "}"])

    def py(self, ind: str) -> list[str]:
        i2 = ind + m.IND
        return ([f"{ind}{self.handle} = _Hd({self.call.py()})", f"{ind}{self.counter} = 0",
                 f"{ind}while {self.counter} < {self.bound} and {self.handle}.next():",
                 f"{i2}{self.counter} += 1", f"{i2}_p({self.label!r}, {self.handle}.value())"]
                + m.py_stmts(self.body.body, i2))


def _gen_drive(g):
    if not g.can_nest():
        return None
    options = _fn_options(g, gen=True, any_ret=True)
    if not options:
        return None
    call = call_of(g, g.pick(options))
    if call is None:
        return None
    bound = g.r.randint(1, MAX_N + 2)
    body = g.block(0, 2, loop=True, mult=bound)
    return Drive(g.fresh("h"), call, g.fresh("w"), bound, g.fresh("hv"), body)


# ---------------------------------------------------------------- declarations

def _op(g, t):
    return g.pick(["^", "|", "&", "!="]) if t == BOOL else g.pick(["+", "^", "-", "*", "|", "+"])


def _declare_fn(g, params, ret, needs, make_body, gen=False, elem=None) -> SlFn:
    """Generate a slice function: its slice parameters known to the layer, the
    slice functions before it callable from it; not in g.functions (arith's and
    control's calls do not know slices)."""
    sig = FnSig(g.fresh("sg" if gen else "sf"), params, ret)
    info = _st(g)["info"]
    for name, (need, written) in needs.items():
        info[name] = SlInfo(need, MAX_N, written)
    before = [id(fn.sig) for fn in _st(g)["fns"]]

    def body(g):
        g.fn.__dict__["_slice_fns"] = before
        return make_body(g, sig)
    g.function(sig, body)
    g.functions.remove(sig)
    fn = SlFn(sig, needs, gen, elem)
    _st(g)["fns"].append(fn)
    return fn


def _random_body(g, ret, prefix=(), lo=1, hi=4, end=None) -> m.Block:
    saved, g.budget = g.budget, 14
    try:
        if end is None and ret is not None:
            def end(g):
                return m.Return(g.expr(ret))
        return g.block(lo, hi, prefix=list(prefix), end=end)
    finally:
        g.budget = saved


def _fold_fn(g) -> None:
    """`fn f(xs: [T], k: T) -> T { var t = k; for v in xs { t op= v; } … return … }`"""
    t = _elem_type(g)
    xs, k, acc, v = g.fresh("xs"), g.fresh("a"), g.fresh("t"), g.fresh("e")
    written = g.chance(0.35)

    def make(g, sig):
        g.declare(acc, t, True)
        step = m.Assign(m.Var(t, acc), _op(g, t).replace("!=", "^") + "=", m.Var(t, v))
        prefix = [m.Let(acc, t, m.Var(t, k), True), m.ForIn(v, m.Var(SliceT(t), xs), m.Block([step]))]

        def end(g):
            if g.chance(0.5):
                return m.Return(m.Var(t, acc))
            return m.Return(m.Binary(t, _op(g, t), m.Var(t, acc), g.expr(t)))
        return _random_body(g, t, prefix, 0, 3, end)
    _declare_fn(g, [(xs, SliceT(t)), (k, t)], t, {xs: (g.r.randint(0, 2), written)}, make)


def _mutator_fn(g) -> None:
    """`fn f(xs: [T], k: T) { for i in 0..xs.len() { xs[i] op= k; } … }` (or -> i64)."""
    t = g.int_type() if g.chance(0.85) else BOOL
    xs, k, i = g.fresh("xs"), g.fresh("a"), g.fresh("i")
    ret = "i64" if g.chance(0.4) else None

    def make(g, sig):
        elem = m.Index(t, m.Var(SliceT(t), xs), m.Var("i64", i))
        if t == BOOL:
            step = m.Assign(elem, "=", m.Binary(BOOL, "!=", elem, m.Var(BOOL, k)))
        else:
            step = m.Assign(elem, g.pick(["+=", "^=", "-=", "*=", "|="]), m.Var(t, k))
        loop = m.For(i, m.Lit("i64", 0), m.Len("i64", m.Var(SliceT(t), xs)), False, m.Block([step]))
        end = (lambda g: m.Return(m.Len("i64", m.Var(SliceT(t), xs)))) if ret else None
        return _random_body(g, ret, [loop], 0, 3, end)
    _declare_fn(g, [(xs, SliceT(t)), (k, t)], ret, {xs: (g.r.randint(0, 1), True)}, make)


def _recursive_fn(g) -> None:
    """A recursion on `xs[1..]`, or on both halves (`xs[..h]`, `xs[h..]`)."""
    t = _elem_type(g)
    xs, h = g.fresh("xs"), g.fresh("h")
    halves = g.chance(0.5)
    op = _op(g, t)
    shout = g.chance(0.4)

    def make(g, sig):
        st = SliceT(t)
        x = m.Var(st, xs)
        length = m.Len("i64", x)
        body = [m.Print(g.fresh(sig.name), [length])] if shout else []
        body.append(m.If(m.Binary(BOOL, "==", length, m.Lit("i64", 0)), m.Block([m.Return(g.literal(t))])))
        if halves:
            first = m.Index(t, x, m.Lit("i64", 0))
            body.append(m.If(m.Binary(BOOL, "==", length, m.Lit("i64", 1)),
                             m.Block([m.Return(m.Binary(t, op, first, g.literal(t)))])))
            body.append(m.Let(h, "i64", m.Binary("i64", "/", length, m.Lit("i64", 2)), False))
            left = m.Call(t, sig.name, [m.SliceOf(st, x, None, m.Var("i64", h))])
            right = m.Call(t, sig.name, [m.SliceOf(st, x, m.Var("i64", h), None)])
            body.append(m.Return(m.Binary(t, op, left, right)))
        else:
            rest = m.Call(t, sig.name, [m.SliceOf(st, x, m.Lit("i64", 1), None)])
            body.append(m.Return(m.Binary(t, op, m.Index(t, x, m.Lit("i64", 0)), rest)))
        return m.Block(body)
    fn = _declare_fn(g, [(xs, SliceT(t))], t, {xs: (0, False)}, make)
    fn.sig.cost = 2 * MAX_N * 3


def _random_fn(g) -> None:
    """Slice parameters (one or two) and perhaps a scalar, and a random body:
    the layer's statements sub-slice them, read, write (written ones) and
    pass them on to the slice functions before."""
    params, needs = [], {}
    for _ in range(1 if g.chance(0.6) else 2):
        name = g.fresh("xs")
        params.append((name, SliceT(_elem_type(g))))
        needs[name] = (g.r.randint(0, 3), g.chance(0.5))
    if g.chance(0.6):
        params.append((g.fresh("a"), g.scalar_type()))
    g.r.shuffle(params)
    ret = None if g.chance(0.25) else g.scalar_type()
    _declare_fn(g, params, ret, needs, lambda g, sig: _random_body(g, ret, (), 2, 5))


def _generator_fn(g) -> None:
    """`fn g(xs: [T], k: T) -> Generator<T> { for v in xs { … yield …; … } … }`:
    reads each element when resumed; now and then writes through `xs`."""
    t = _elem_type(g)
    xs, k, v = g.fresh("xs"), g.fresh("a"), g.fresh("e")
    written = g.chance(0.4)
    need = g.r.randint(0, 2)

    def make(g, sig):
        st = SliceT(t)
        g.fn.scopes.append([VarInfo(v, t, False)])
        try:
            ve, ke = m.Var(t, v), m.Var(t, k)
            body = []
            if g.chance(0.3):
                test = ve if t == BOOL else m.Binary(BOOL, g.pick(["==", "<", ">"]), ve, g.literal(t))
                body.append(m.If(test, m.Block([m.Continue()])))
            roll = g.r.random()
            value = (m.Binary(t, _op(g, t), ve, ke) if roll < 0.5 else g.pure_expr(t) if roll < 0.8 else ve)
            body.append(m.Yield(value))
            if written and g.chance(0.7):
                j = m.Lit("i64", g.r.randint(0, max(0, need - 1)))   # 0 is in bounds inside the loop
                new = m.Binary(t, _op(g, t), ve, ke) if g.chance(0.6) else g.pure_expr(t)
                body.append(m.Assign(m.Index(t, m.Var(st, xs), j), "=", new))
            if g.chance(0.3):
                test = m.Unary(BOOL, "!", ve) if t == BOOL else m.Binary(BOOL, g.pick(["==", ">="]), ve,
                                                                         g.literal(t))
                body.append(m.If(test, m.Block([m.Break()])))
        finally:
            g.fn.scopes.pop()
        out = [m.ForIn(v, m.Var(st, xs), m.Block(body))]
        if g.chance(0.5):
            last = m.Cast(t, m.Len("i64", m.Var(st, xs))) if is_int(t) else ke
            out.append(m.Yield(last))
        return m.Block(out)
    fn = _declare_fn(g, [(xs, SliceT(t)), (k, t)], f"Generator<{t}>", {xs: (need, written)}, make, gen=True, elem=t)
    fn.sig.cost = 3 * (MAX_N + 1)


def _global_arrays(g) -> None:
    for _ in range(g.r.randint(0, 2)):
        ty = ArrayT(_elem_type(g), g.r.randint(2, MAX_N))
        init = m.ArrayLit(ty, [g.literal(ty.elem) for _ in range(ty.n)]) if g.chance(0.7) else None
        g.add_global(g.fresh("ga"), ty, init, mutable=g.chance(0.8))


@register
class Slices(Layer):
    name = "slices"
    requires = ("control",)

    def declare(self, g) -> None:
        _global_arrays(g)
        makers = [_fold_fn, _mutator_fn, _recursive_fn, _random_fn, _random_fn, _generator_fn]
        for _ in range(g.r.randint(2, 5)):
            g.pick(makers)(g)
        if g.chance(0.5):
            _generator_fn(g)

    def statements(self):
        return [(3, _let_array), (3, _let_slice), (1, _reslice), (4, _write), (2.5, _for_each), (1.5, _for_index),
                (2, _print_slice), (1.5, _show_array), (1, _defer_slice), (3, _call_stmt), (1.5, _gen_for), (1, _gen_drive)]

    def expressions(self):
        return [(3, _read), (1, _len), (1.5, _call)]


__all__ = ["Slices", "slice_src"]
