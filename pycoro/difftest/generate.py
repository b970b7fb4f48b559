"""The generator's core: a seeded random walk that builds a program model
(model.py) from the statement and expression kinds of a chain of layers.

It keeps what layers need to make well-typed code: the scopes of the
function being generated (`declare`, `places`), the functions declared so
far (`functions`, callable from later ones and from `main`), the structs, and
budgets that keep every program small and quick: a statement budget, a
nesting depth, and an estimate of the statements a function runs (`cost`),
which loops multiply and calls add to.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import model as m
from .types import BOOL, INT_TYPES, ArrayT, StructT, is_aggregate, min_max

# Compiler bugs found and not yet fixed: the generator steers clear of each
# one named in `avoid` (the CLI's --avoid-known, the fixed-seed test), so that
# a run finds new bugs rather than these again. Remove an entry when pycoro is
# fixed.
KNOWN_BUGS = {
}

MAX_DEPTH = 3          # nesting of compound statements
MAX_EXPR_DEPTH = 3
COST_CAP = 4000        # statements a function may run, as estimated
STMT_BUDGET = 90       # statements in a whole program


@dataclass
class VarInfo:
    name: str
    ty: object
    mutable: bool


@dataclass
class FnSig:
    name: str
    params: list          # [(name, type)]
    ret: object | None
    cost: int = 1
    struct: str = ""      # a method's struct
    mut_self: bool = False
    recursive: bool = False   # first parameter is a depth: call it with a small literal


@dataclass
class FnCtx:
    sig: FnSig | None      # None for main
    ret: object | None
    scopes: list = field(default_factory=lambda: [[]])
    loops: int = 0         # enclosing loops (break/continue allowed when > 0)
    in_defer: bool = False
    depth: int = 0
    mult: int = 1          # how many times the current statement runs, as estimated
    cost: int = 0
    callable: list = field(default_factory=list)   # FnSig


class Gen:
    def __init__(self, seed: int, layer: str, avoid=frozenset(), attempt: int = 0):
        self.seed, self.layer, self.avoid = seed, layer, frozenset(avoid)
        from .layers import chain  # the layers import this module
        self.r = random.Random(f"{layer}:{seed}" + (f":{attempt}" if attempt else ""))
        self.layers = chain(layer)
        self.decls: list = []
        self.globals: list[VarInfo] = []
        self.functions: list[FnSig] = []
        self.structs: list[StructT] = []
        self.methods: dict[str, list[FnSig]] = {}
        self._names: dict[str, int] = {}
        self.budget = STMT_BUDGET
        self.fn: FnCtx | None = None
        self.expr_depth = 0
        self.stmt_kinds, self.expr_kinds = [], []
        for lay in self.layers:
            k = lay.boost if lay.name == layer else 1.0
            self.stmt_kinds += [(w * k, f) for w, f in lay.statements()]
            self.expr_kinds += [(w * k, f) for w, f in lay.expressions()]

    # ------------------------------------------------------------ randomness
    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(list(seq))

    def weighted(self, pairs):
        pairs = [(w, x) for w, x in pairs if w > 0]
        total = sum(w for w, _ in pairs)
        x = self.r.random() * total
        for w, item in pairs:
            x -= w
            if x <= 0:
                return item
        return pairs[-1][1]

    def fresh(self, prefix: str) -> str:
        n = self._names.get(prefix, 0)
        self._names[prefix] = n + 1
        return f"{prefix}{n}"

    def int_type(self) -> str:
        return self.weighted([(3 if t in ("i64", "i32") else 2, t) for t in INT_TYPES])

    def scalar_type(self) -> str:
        return BOOL if self.chance(0.2) else self.int_type()

    def value_type(self, aggregates: float = 0.3):
        """A scalar, or sometimes a struct or array type known to the program."""
        if self.chance(aggregates):
            options = list(self.structs)
            options.append(ArrayT(self.int_type(), self.r.randint(2, 4)))
            if self.structs:
                options.append(ArrayT(self.pick(self.structs), self.r.randint(2, 3)))
            if self.chance(0.2):
                options.append(ArrayT(ArrayT(self.int_type(), self.r.randint(2, 3)), 2))
            return self.pick(options)
        return self.scalar_type()

    # ------------------------------------------------------------ declarations
    def add_decl(self, decl) -> None:
        self.decls.append(decl)

    def add_global(self, name: str, ty, init, mutable: bool = True) -> None:
        self.decls.append(m.GlobalDecl(name, ty, init, mutable))
        self.globals.append(VarInfo(name, ty, mutable))

    def add_struct(self, ty: StructT) -> None:
        self.decls.append(m.StructDecl(ty))
        self.structs.append(ty)

    def function(self, sig: FnSig, make_body, self_ty=None, generic=()) -> m.FnDecl:
        """Generate a function's body with `make_body(g) -> Block` in a fresh
        context holding its parameters; record and return its declaration."""
        outer, self.fn = self.fn, FnCtx(sig, sig.ret, callable=self.callable_from(sig))
        if self_ty is not None:
            self.declare("self", self_ty, sig.mut_self)
        for name, ty in sig.params:
            self.declare(name, ty, False)
        try:
            body = make_body(self)
            sig.cost = max(1, self.fn.cost)
        finally:
            self.fn = outer
        kind = ("mut self" if sig.mut_self else "self") if sig.struct else ""
        decl = m.FnDecl(sig.name, list(sig.params), sig.ret, body, list(generic), kind, sig.struct)
        self.decls.append(decl)
        if sig.struct:
            self.methods.setdefault(sig.struct, []).append(sig)
        else:
            self.functions.append(sig)
        return decl

    def callable_from(self, sig: FnSig | None) -> list[FnSig]:
        """What a function may call: everything declared before it (so calls never cycle)."""
        return list(self.functions) + [s for ms in self.methods.values() for s in ms]

    # ------------------------------------------------------------ scopes
    def declare(self, name: str, ty, mutable: bool) -> None:
        self.fn.scopes[-1].append(VarInfo(name, ty, mutable))

    def visible(self) -> list[VarInfo]:
        """The variables in scope: locals (a shadowed one hidden), then globals."""
        out, seen = [], set()
        for scope in reversed(self.fn.scopes):
            for v in reversed(scope):
                base = m.pc_name(v.name)
                if base not in seen:
                    seen.add(base)
                    out.append(v)
        out.reverse()
        return out + self.globals

    def places(self, ty, mutable: bool = False, pure: bool = False) -> list[m.Expr]:
        """Places of type `ty` (variables, their fields and elements) in scope;
        `mutable`: only those that may be assigned; indices made here (pure
        ones when `pure`)."""
        out = []
        for v in self.visible():
            if mutable and not v.mutable:
                continue
            self._places_in(m.Var(v.ty, v.name), ty, pure, out, 0)
        return out

    def _places_in(self, e, ty, pure, out, depth) -> None:
        if e.ty == ty:
            out.append(e)
        if depth >= 3:
            return
        if isinstance(e.ty, StructT):
            for name, ft in e.ty.fields:
                if _contains(ft, ty):
                    self._places_in(m.Field(ft, e, name), ty, pure, out, depth + 1)
        elif isinstance(e.ty, ArrayT) and _contains(e.ty.elem, ty):
            self._places_in(m.Index(e.ty.elem, e, self.index(e.ty.n, pure)), ty, pure, out, depth + 1)

    def index(self, n: int, pure: bool = False) -> m.Expr:
        """An index into an array of `n`: mostly in bounds; when not `pure`, now
        and then anything (a bounds panic). A pure index is a literal or a
        masked variable, always in bounds, and evaluating it has no effect."""
        t = self.int_type()
        roll = self.r.random()
        if roll < 0.7 or self.expr_depth >= MAX_EXPR_DEPTH:
            return m.Lit(t, self.r.randrange(n), self.chance(0.3))
        mask = (1 << (n.bit_length() - 1)) - 1 if n & (n - 1) else n - 1
        if pure:
            places = [m.Var(t, v.name) for v in self.visible() if v.ty == t]
            inner = self.pick(places) if places else m.Lit(t, self.r.randrange(n), True)
            return m.Binary(t, "&", inner, m.Lit(t, mask))
        if roll < 0.997:   # a program reads many elements: a bounds panic now and then, not in most
            return m.Binary(t, "&", self.expr(t, ctx=False), m.Lit(t, mask))
        return m.Lit(t, self.r.choice([n, n + 1, -1]) if t[0] == "i" else self.r.choice([n, n + 3]), True)

    # ------------------------------------------------------------ expressions
    def literal(self, ty, ctx: bool = True) -> m.Lit:
        if ty == BOOL:
            return m.Lit(BOOL, self.chance(0.5))
        lo, hi = min_max(ty)
        roll = self.r.random()
        if roll < 0.45:
            v = self.r.randint(max(lo, -10), min(hi, 20))
        elif roll < 0.7:
            v = self.r.choice([lo, hi, lo + 1, hi - 1, 0, 1, hi // 2 + 1, -1 if lo < 0 else 2])
        elif roll < 0.85:
            k = self.r.randrange(1, (hi.bit_length()))
            v = self.r.choice([1 << k, (1 << k) - 1, -(1 << k)])
        else:
            v = self.r.randint(lo, hi)
        v = max(lo, min(hi, v))
        suffix = (not ctx and ty != "i64") or self.chance(0.25) or (ty == "u64" and v > 2**63 - 1 and not ctx)
        style = self.weighted([(6, "dec"), (1, "hex"), (1, "bin"), (1, "sep")]) if v >= 0 else "dec"
        return m.Lit(ty, v, suffix, style)

    def expr(self, ty, ctx: bool = True) -> m.Expr:
        """An expression of type `ty`; with ctx False it must be typed on its own."""
        if self.expr_depth >= MAX_EXPR_DEPTH or self.chance(0.25 + 0.15 * self.expr_depth):
            return self.leaf(ty, ctx)
        self.expr_depth += 1
        try:
            for _ in range(6):
                maker = self.weighted(self.expr_kinds)
                e = maker(self, ty, ctx)
                if e is not None:
                    assert ctx or e.typed(), (maker, e)
                    return e
            return self.leaf(ty, ctx)
        finally:
            self.expr_depth -= 1

    def leaf(self, ty, ctx: bool = True) -> m.Expr:
        """A variable (or a place in one) of type `ty`, or a literal."""
        places = self.places(ty)
        if places and self.chance(0.7 if is_aggregate(ty) else 0.55):
            return self.pick(places)
        if is_aggregate(ty):
            return self.construct(ty, ctx)
        return self.literal(ty, ctx)

    def construct(self, ty, ctx: bool = True) -> m.Expr:
        """A struct or array literal of type `ty`."""
        if isinstance(ty, StructT):
            fields = [(n, self.expr(ft)) for n, ft in ty.fields]
            if self.chance(0.3) and ("struct-field-order" not in self.avoid or all(e.pure() for _, e in fields)):
                self.r.shuffle(fields)
            return m.StructLit(ty, fields)
        return m.ArrayLit(ty, [self.expr(ty.elem, ctx) for _ in range(ty.n)])

    def pure_expr(self, ty) -> m.Expr:
        """A typed expression without calls (a target's index, a compound value)."""
        saved, self.expr_kinds = self.expr_kinds, [(w, f) for w, f in self.expr_kinds
                                                   if not getattr(f, "calls", False)]
        try:
            return self.expr(ty, ctx=False)
        finally:
            self.expr_kinds = saved

    # ------------------------------------------------------------ statements
    def stmt(self):
        self.budget -= 1
        self.fn.cost += self.fn.mult
        for _ in range(8):
            maker = self.weighted(self.stmt_kinds)
            s = maker(self)
            if s is not None:
                return s
        return m.Print(self.fresh("p"), [self.expr(self.scalar_type(), ctx=False)])

    def block(self, lo: int = 1, hi: int = 4, loop: bool = False, mult: int = 1, prefix=(), end=None) -> m.Block:
        """A nested block of lo..hi statements (fewer when the budget is spent),
        with its own scope; `loop`: a loop body; `mult`: how many times it runs;
        `end(g) -> Stmt`: a last statement, made in the block's scope (it sees
        what the block declared and shadowed) when control reaches the end."""
        f = self.fn
        f.scopes.append([])
        f.depth += 1
        f.loops += loop
        f.mult *= mult
        body = list(prefix)
        try:
            n = self.r.randint(lo, hi) if self.budget > 0 else lo
            for _ in range(n):
                s = self.stmt()
                body.append(s)
                if s.ends():
                    break
            if end is not None and not any(s.ends() for s in body):
                body.append(end(self))
        finally:
            f.scopes.pop()
            f.depth -= 1
            f.loops -= loop
            f.mult //= mult
        return m.Block(body)

    def can_nest(self) -> bool:
        return self.fn.depth < MAX_DEPTH and self.budget > 0 and not self.fn.in_defer

    # ------------------------------------------------------------ programs
    def program(self) -> m.Program:
        for lay in self.layers:
            lay.declare(self)
        ret = "i32" if self.chance(0.2) else None
        # A layer may make main different (the async layer: `async fn main()`):
        # main_ret(g, ret) -> ret, enter_main(g) once main's context exists,
        # main_decl(g, decl) -> decl.
        hooks = [lay for lay in self.layers if hasattr(lay, "main_decl")]
        for lay in hooks:
            ret = lay.main_ret(self, ret)
        def body(g: Gen) -> m.Block:
            g.fn.sig = None
            stmts = []
            while g.budget > 0 and len(stmts) < 40:
                s = g.stmt()
                stmts.append(s)
                if s.ends():
                    break
            if ret and not any(s.ends() for s in stmts):
                stmts.append(m.Return(g.expr("i32")))
            return m.Block(stmts)
        outer, self.fn = self.fn, FnCtx(None, ret, callable=self.callable_from(None))
        try:
            for lay in hooks:
                lay.enter_main(self)
            main = body(self)
        finally:
            self.fn = outer
        decl = m.FnDecl("main", [], ret, main)
        for lay in hooks:
            decl = lay.main_decl(self, decl)
        self.decls.append(decl)
        return m.Program(self.decls, self.layer, self.seed)


def _contains(t, want) -> bool:
    if t == want:
        return True
    if isinstance(t, ArrayT):
        return _contains(t.elem, want)
    if isinstance(t, StructT):
        return any(_contains(ft, want) for _, ft in t.fields)
    return False


def generate(seed: int, layer: str, avoid=frozenset()) -> m.Program:
    """The program of `layer` for `seed` (the same for the same arguments);
    `avoid`: names of KNOWN_BUGS not to produce. A program whose oracle
    Python cannot compile (CPython allows 20 statically nested blocks, and a
    `defer` is a `try` there) is drawn again, from the seed and the attempt."""
    for attempt in range(ORACLE_ATTEMPTS):
        program = Gen(seed, layer, avoid, attempt).program()
        try:
            compile(program.py(), "<oracle>", "exec")
        except SyntaxError:
            continue
        return program
    raise RuntimeError(f"no program of {layer} for seed {seed} that Python can compile")


ORACLE_ATTEMPTS = 16
