"""The model nodes of layer `generators` (generators.py): the layer's
registries, handle types, generator calls and moves, `yield from`, the
handle statements, coroutine function declarations, and the oracle's
coroutine helpers (SUPPORT_PY)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import model as m
from ..types import StructT, zero_py

IND = m.IND


# ---------------------------------------------------------------- the layer's state

def _state(g):
    """The layer's registries on the generator (made on first use)."""
    st = g.__dict__.get("_gens_state")
    if st is None:
        st = g.__dict__["_gens_state"] = {"cos": [], "users": [], "mappers": [], "preds": [], "choosers": []}
    return st


# ---------------------------------------------------------------- types

@dataclass(frozen=True)
class HandleT:
    """An owning coroutine handle: `Generator<T>` (or another promise's)."""
    elem: object
    promise: str = "Generator"

    def __str__(self) -> str:
        return f"{self.promise}<{self.elem}>"


def pair_t(a, b) -> StructT:
    return StructT(f"Pair<{a}, {b}>", (("first", a), ("second", b)))


def is_handle(t) -> bool:
    return isinstance(t, HandleT)


# ---------------------------------------------------------------- nodes

@dataclass
class GenCall(m.Expr):
    """A call that makes a coroutine: a generator function, an std/iter
    combinator or a plain function returning a handle (`make`: Python calls
    it as is)."""
    ty: HandleT
    fn: str
    args: list
    pyfn: str = ""
    make: bool = False
    targs: list = field(default_factory=list)   # explicit type arguments

    def pc(self) -> str:
        t = f"<{', '.join(map(str, self.targs))}>" if self.targs else ""
        return f"{self.fn}{t}({', '.join(a.pc() for a in self.args)})"

    def py(self) -> str:
        args = ", ".join(a.val() for a in self.args)
        if self.make:
            return f"{self.pyfn or self.fn}({args})"
        return f"_mk({self.pyfn or self.fn}, {zero_py(self.ty.elem)}{', ' if args else ''}{args})"

    def pure(self) -> bool:
        return False


@dataclass
class GenMethodCall(m.Expr):
    """`recv.name(args)` of a generator method taking `self` by value: the
    frame keeps a copy of the receiver."""
    ty: HandleT
    recv: m.Expr
    struct: str
    method: str
    args: list

    def pc(self) -> str:
        recv = self.recv.pc()
        return f"{recv}.{self.method}({', '.join(a.pc() for a in self.args)})"

    def py(self) -> str:
        args = ", ".join([self.recv.val()] + [a.val() for a in self.args])
        return f"_mk({self.struct}__{self.method}, {zero_py(self.ty.elem)}, {args})"

    def pure(self) -> bool:
        return False


@dataclass
class SumCall(m.Expr):
    ty: object
    arg: m.Expr

    def pc(self) -> str:
        return f"sum({self.arg.pc()})"

    def py(self) -> str:
        return f"_it_sum({self.arg.py()}, 0, _{self.ty})"

    def pure(self) -> bool:
        return False


@dataclass
class FnRef(m.Expr):
    ty: str
    name: str

    def pc(self) -> str:
        return self.name

    def py(self) -> str:
        return self.name


@dataclass
class MoveVar(m.Expr):
    """A handle variable moved out (an argument, an initialiser, a result):
    in Python the variable is emptied, so its scope's close does nothing."""
    ty: HandleT
    name: str

    def pc(self) -> str:
        return self.name

    def py(self) -> str:
        return f"({self.name}, {self.name} := None)[0]"

    def pure(self) -> bool:
        return False


@dataclass
class HMethod(m.Expr):
    """`h.next()`, `h.value()`, `h.done()`, `h.send(v)` on a handle variable."""
    ty: object
    name: str
    method: str
    args: list = field(default_factory=list)

    def pc(self) -> str:
        return f"{self.name}.{self.method}({', '.join(a.pc() for a in self.args)})"

    def py(self) -> str:
        if self.method == "done":
            return f"{self.name}.done"
        return f"{self.name}.{self.method}({', '.join(a.val() for a in self.args)})"

    def pure(self) -> bool:
        return False


@dataclass
class YieldFrom(m.Expr):
    ty: object
    src: m.Expr

    def pc(self) -> str:
        return f"yield from {self.src.pc()}"

    def py(self) -> str:
        if isinstance(self.src, m.Var):   # a variable is lent, not moved: its owner destroys it
            return f"(yield from _yfb({self.src.name}))"
        return f"(yield from _yf({self.src.py()}))"

    def pure(self) -> bool:
        return False


@dataclass
class Closer(m.Stmt):
    """What the finally of a HandleLet does: destroy the handle (if still there)."""
    name: str

    def pc(self, ind: str) -> list[str]:
        return []

    def py(self, ind: str) -> list[str]:
        return [f"{ind}_close({self.name})"]


@dataclass
class HandleLet(m.Defer):
    """`var h = e;` of a handle: destroyed at the end of its block (a Defer
    whose Python binds the handle before the try and closes it in the finally)."""
    name: str = ""
    ty: object = None
    init: m.Expr | None = None
    mutable: bool = True
    annotate: bool = False

    def pc(self, ind: str) -> list[str]:
        t = f": {self.ty}" if self.annotate else ""
        return [f"{ind}{'var' if self.mutable else 'let'} {self.name}{t} = {self.init.pc()};"]

    def py_head(self, ind: str) -> list[str]:
        return [f"{ind}{self.name} = {self.init.py()}"]


@dataclass
class HAssign(m.Stmt):
    """`h = e;`: the old coroutine is destroyed once e is computed."""
    name: str
    value: m.Expr

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}{self.name} = {self.value.pc()};"]

    def py(self, ind: str) -> list[str]:
        # the value first (it may move the variable's own coroutine, as in
        # `h = chain(h, …);`), then the variable's coroutine, if still there, is destroyed
        tmp = f"_new_{self.name}"
        return [f"{ind}{tmp} = {self.value.py()}", f"{ind}_close({self.name})", f"{ind}{self.name} = {tmp}"]


@dataclass
class ForH(m.Stmt):
    """`for v in src { body }` over a coroutine: a temporary is destroyed when
    the loop ends (any way), a variable is advanced in place and kept."""
    var: str
    src: m.Expr
    body: m.Block
    tmp: str = ""

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}for {self.var} in {self.src.pc()} {{"] + m.pc_stmts(self.body.body, ind + IND) + [ind + "}"]

    def py(self, ind: str) -> list[str]:
        if isinstance(self.src, m.Var):
            it, inner = self.src.name, ind
            head = []
        else:
            it, inner = self.tmp, ind + IND
            head = [f"{ind}{self.tmp} = {self.src.py()}", f"{ind}try:"]
        loop = ([f"{inner}while {it}.next():", f"{inner}{IND}{self.var} = {it}.value()"]
                + m.py_stmts(self.body.body, inner + IND))
        if not head:
            return loop
        return head + loop + [f"{ind}finally:", f"{ind}{IND}{self.tmp}.close()"]


@dataclass
class CoFnDecl(m.FnDecl):
    """A function whose Python twin is a generator (`coroutine`) and/or owns
    handle parameters (closed when it ends, last first)."""
    coroutine: bool = False

    def py_lines(self, globals_: list[str]) -> list[str]:
        params = (["self"] if self.self_kind else []) + [n for n, _ in self.params]
        out = [f"def {self.py_name()}({', '.join(params)}):"]
        if globals_:
            out.append(f"{IND}global {', '.join(globals_)}")
        if self.coroutine:
            out += [f"{IND}if False:", f"{IND}{IND}yield"]
        owned = [n for n, t in self.params if is_handle(t)]
        ind = IND
        for _ in owned:
            out.append(ind + "try:")
            ind += IND
        out += m.py_stmts(self.body.body, ind)
        for n in reversed(owned):
            ind = ind[:-len(IND)]
            out += [ind + "finally:", f"{ind}{IND}_close({n})"]
        return out


SUPPORT_PY = '''
import inspect as _inspect


class _Gen:
    """A PyCoro owning handle around a Python generator."""

    def __init__(self, gen, zero, owned):
        self.gen, self.zero, self.cur, self.done, self.owned = gen, zero, zero, False, owned

    def started(self):
        return _inspect.getgeneratorstate(self.gen) != "GEN_CREATED"

    def next(self):
        return self.send(None)

    def send(self, v):
        if self.done:
            return False
        try:
            self.cur = self.gen.send(v if self.started() else None)
            return True
        except StopIteration as e:
            self.done = True
            self.cur = self.zero if e.value is None else e.value
            return False

    def value(self):
        return _cp(self.cur)

    def close(self):
        fresh = not self.started()
        self.gen.close()
        if fresh:   # a frame that never ran destroys its parameters, last first
            owned, self.owned = self.owned, ()
            for w in reversed(owned):
                _close(w)


def _mk(fn, zero, *args):
    return _Gen(fn(*args), zero, tuple(a for a in args if type(a) is _Gen))


def _close(w):
    if w is not None:
        w.close()


def _yf(w):
    """`yield from w`: what w has left; its result (the zero value without one)."""
    try:
        if w.done:
            return _cp(w.cur)
        r = yield from w.gen
        w.done = True
        return w.zero if r is None else r
    finally:
        w.close()


def _yfb(w):
    """`yield from h` of a variable: h is lent (it stays h's, which destroys it at
    the end of its scope, so closing the delegating generator does not close it)."""
    while w.next():
        yield w.value()
    return w.value()


def _it_range(lo, hi):
    i = lo
    while i < hi:
        yield i
        i = _i64(i + 1)


def _it_count(start):
    i = start
    while True:
        yield i
        i = _i64(i + 1)


def _it_map(g, f):
    try:
        while g.next():
            yield f(g.value())
    finally:
        _close(g)


def _it_filter(g, keep):
    try:
        while g.next():
            v = g.value()
            if keep(_cp(v)):
                yield v
    finally:
        _close(g)


def _it_take(g, n):
    try:
        if n <= 0:
            return
        taken = 0
        while g.next():
            yield g.value()
            taken += 1
            if taken >= n:
                return
    finally:
        _close(g)


def _it_zip(a, b):
    try:
        try:
            while a.next() and b.next():
                yield {"first": a.value(), "second": b.value()}
        finally:
            _close(b)
    finally:
        _close(a)


def _it_enumerate(g):
    try:
        i = 0
        while g.next():
            yield {"first": i, "second": g.value()}
            i += 1
    finally:
        _close(g)


def _it_chain(a, b):
    try:
        try:
            while a.next():
                yield a.value()
            while b.next():
                yield b.value()
        finally:
            _close(b)
    finally:
        _close(a)


def _it_sum(g, total, wrap):
    try:
        while g.next():
            total = wrap(total + g.value())
        return total
    finally:
        _close(g)
'''


@dataclass
class Support(m.Decl):
    """`import "std/iter";` and the oracle's coroutine helpers."""
    extra_pc: list = field(default_factory=list)

    def pc(self) -> list[str]:
        return ['import "std/iter";'] + self.extra_pc

    def py(self) -> list[str]:
        return SUPPORT_PY.split("\n")


# ---------------------------------------------------------------- state

@dataclass
class CoSig:
    name: str
    params: list          # [(name, type)]
    ty: HandleT           # what a call makes
    cost: int = 1
    recursive: bool = False
    make: bool = False    # a plain function returning a handle
    generic: bool = False  # fn NAME<T>(x: T, n: i64) -> Generator<T>: any element type
    struct: object = None  # a generator method's struct (StructT): `self` by value
