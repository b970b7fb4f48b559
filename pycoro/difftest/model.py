"""The program model: expressions, statements and declarations as objects,
each rendered twice, as PyCoro (`pc`) and as its Python oracle (`py`).

Every node is a dataclass: the reducer (reduce.py) walks and rewrites them
generically through their fields (lists of statements, expressions). A
layer that needs a new kind of node subclasses `Expr`, `Stmt` or `Decl` and
gives it `pc` and `py`.

Conventions of the Python side (see oracle.py): integers are Python ints
wrapped after every operation, bools are bools, a struct is a dict, an array
a list; an aggregate read from a place is copied (`_cp`) wherever it is used
as a value (value semantics); names are unique per function, so Python's
function scope matches PyCoro's block scopes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .types import BOOL, ArrayT, SliceT, StructT, is_aggregate, is_int, min_max, zero_py

IND = "    "


# ---------------------------------------------------------------- expressions

class Expr:

    def pc(self) -> str:
        raise NotImplementedError

    def py(self) -> str:
        raise NotImplementedError

    def is_place(self) -> bool:
        return False

    def val(self) -> str:
        """The Python for this expression used as a value: a fresh copy when it
        is an aggregate place."""
        return f"_cp({self.py()})" if is_aggregate(self.ty) and self.is_place() else self.py()

    def pure(self) -> bool:
        """No calls anywhere inside: evaluating it twice, or in another order, is harmless."""
        return all(e.pure() for e in sub_exprs(self))

    def typed(self) -> bool:
        """Its PyCoro type does not depend on its context (not a bare unsuffixed literal)."""
        return True


@dataclass
class Lit(Expr):
    ty: object
    value: object          # int or bool
    suffix: bool = False   # write the type after the digits (`7u8`)
    style: str = "dec"     # dec | hex | bin | sep (1_000)

    def pc(self) -> str:
        if self.ty == BOOL:
            return "true" if self.value else "false"
        v = self.value
        if v < 0:
            return f"(-{abs(v)}{self.ty if self.suffix else ''})"
        digits = {"hex": f"0x{v:x}", "bin": f"0b{v:b}", "sep": f"{v:_d}"}.get(self.style, str(v))
        return digits + (self.ty if self.suffix else "")

    def py(self) -> str:
        return repr(self.value)

    def typed(self) -> bool:
        return self.ty in (BOOL, "i64") or self.suffix


SHADOW = "__shadow"


def pc_name(name: str) -> str:
    """A variable's PyCoro name: `x__shadow3` is a new `x` that shadows the old
    one (in Python, where scopes are functions, it keeps a name of its own)."""
    return name.split(SHADOW)[0]


@dataclass
class Var(Expr):
    ty: object
    name: str

    def pc(self) -> str:
        return pc_name(self.name)

    def py(self) -> str:
        return self.name

    def is_place(self) -> bool:
        return True


@dataclass
class Unary(Expr):
    ty: object
    op: str    # - ~ !
    e: Expr

    def pc(self) -> str:
        return f"{self.op}{self.e.pc()}" if isinstance(self.e, (Var, Call)) else f"{self.op}({self.e.pc()})"

    def py(self) -> str:
        if self.op == "!":
            return f"(not {self.e.py()})"
        return f"_{self.ty}({self.op}{self.e.py()})"

    def typed(self) -> bool:
        return self.e.typed()


ARITH = {"+", "-", "*"}
DIVISION = {"/": "_div_", "%": "_rem_", "<<": "_shl_", ">>": "_shr_"}
BITWISE = {"&", "|", "^"}
COMPARE = {"==", "!=", "<", "<=", ">", ">="}
LOGICAL = {"&&": "and", "||": "or"}


@dataclass
class Binary(Expr):
    ty: object
    op: str
    l: Expr
    r: Expr

    def pc(self) -> str:
        return f"({self.l.pc()} {self.op} {self.r.pc()})"

    def py(self) -> str:
        op, lt = self.op, self.l.ty
        if op in ARITH:
            return f"_{lt}({self.l.py()} {op} {self.r.py()})"
        if op in DIVISION:
            return f"{DIVISION[op]}{lt}({self.l.py()}, {self.r.py()})"
        if op in LOGICAL:
            return f"({self.l.py()} {LOGICAL[op]} {self.r.py()})"
        return f"({self.l.py()} {op} {self.r.py()})"   # bitwise, comparisons

    def typed(self) -> bool:
        if self.op in COMPARE or self.op in LOGICAL:
            return True
        return self.l.typed() or (self.op not in ("<<", ">>") and self.r.typed())


@dataclass
class Cast(Expr):
    ty: object
    e: Expr

    def pc(self) -> str:
        inner = self.e.pc()
        if not isinstance(self.e, (Var, Call, Lit)) or inner.startswith("("):
            inner = inner if inner.startswith("(") and inner.endswith(")") else f"({inner})"
        return f"({inner} as {self.ty})"

    def py(self) -> str:
        return f"_{self.ty}({self.e.py()})"


@dataclass
class Call(Expr):
    ty: object
    fn: str
    args: list
    targs: list = field(default_factory=list)   # explicit type arguments

    def pc(self) -> str:
        t = f"<{', '.join(map(str, self.targs))}>" if self.targs else ""
        return f"{self.fn}{t}({', '.join(a.pc() for a in self.args)})"

    def py(self) -> str:
        return f"{self.fn}({', '.join(a.val() for a in self.args)})"

    def pure(self) -> bool:
        return False


@dataclass
class MethodCall(Expr):
    ty: object
    recv: Expr
    struct: str
    method: str
    args: list
    mut: bool = False   # `mut self`: the receiver by reference; else a copy of it

    def pc(self) -> str:
        return f"{self.recv.pc()}.{self.method}({', '.join(a.pc() for a in self.args)})"

    def py(self) -> str:
        recv = self.recv.py() if self.mut else self.recv.val()
        return f"{self.struct}__{self.method}({', '.join([recv] + [a.val() for a in self.args])})"

    def pure(self) -> bool:
        return False


@dataclass
class Field(Expr):
    ty: object
    e: Expr
    name: str

    def pc(self) -> str:
        return f"{self.e.pc()}.{self.name}"

    def py(self) -> str:
        return f"{self.e.py()}[{self.name!r}]"

    def is_place(self) -> bool:
        return self.e.is_place()


@dataclass
class Index(Expr):
    """`e[i]` of an array (bounds-checked by `_ck`) or of a slice (by `_Sl`'s
    own `[]`, which reads and writes the storage it views)."""
    ty: object
    e: Expr
    i: Expr

    def pc(self) -> str:
        return f"{self.e.pc()}[{self.i.pc()}]"

    def py(self) -> str:
        if isinstance(self.e.ty, SliceT):
            return f"{self.e.py()}[{self.i.py()}]"
        return f"{self.e.py()}[_ck({self.i.py()}, {self.e.ty.n})]"

    def is_place(self) -> bool:
        return isinstance(self.e.ty, SliceT) or self.e.is_place()


@dataclass
class SliceOf(Expr):
    """`e[lo..hi]` (`lo`, `hi` None where omitted) of an array place or of a
    slice: in Python a `_Sl` view of the array's own list, never a copy."""
    ty: SliceT
    e: Expr
    lo: Expr | None
    hi: Expr | None

    def pc(self) -> str:
        lo = self.lo.pc() if self.lo is not None else ""
        hi = self.hi.pc() if self.hi is not None else ""
        return f"{self.e.pc()}[{lo}..{hi}]"

    def py(self) -> str:
        lo = self.lo.py() if self.lo is not None else "None"
        hi = self.hi.py() if self.hi is not None else "None"
        return f"_sl({self.e.py()}, {lo}, {hi})"


@dataclass
class Len(Expr):
    """`s.len()` of a slice: an i64."""
    ty: object
    e: Expr

    def pc(self) -> str:
        return f"{self.e.pc()}.len()"

    def py(self) -> str:
        return f"{self.e.py()}.n"


@dataclass
class StructLit(Expr):
    ty: StructT
    fields: list   # [(name, Expr)] in the order written

    def pc(self) -> str:
        # parenthesised: a struct literal in the head of `if` or `while` must be
        return f"({self.ty.name} {{ {', '.join(f'{n}: {e.pc()}' for n, e in self.fields)} }})"

    def py(self) -> str:
        return "{" + ", ".join(f"{n!r}: {e.val()}" for n, e in self.fields) + "}"


@dataclass
class ArrayLit(Expr):
    ty: ArrayT
    elems: list

    def pc(self) -> str:
        return f"[{', '.join(e.pc() for e in self.elems)}]"

    def py(self) -> str:
        return f"[{', '.join(e.val() for e in self.elems)}]"

    def typed(self) -> bool:
        return all(e.typed() for e in self.elems)


def sub_exprs(e: Expr):
    """The expressions directly inside `e`."""
    for v in vars(e).values():
        if isinstance(v, Expr):
            yield v
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, Expr):
                    yield x
                elif isinstance(x, tuple):
                    yield from (y for y in x if isinstance(y, Expr))


def literal(ty, value, suffix=True) -> Lit:
    if ty == BOOL:
        return Lit(BOOL, bool(value))
    lo, hi = min_max(ty)
    return Lit(ty, max(lo, min(hi, value)), suffix)


# ----------------------------------------------------------------- statements

class Stmt:
    def pc(self, ind: str) -> list[str]:
        raise NotImplementedError

    def py(self, ind: str) -> list[str]:
        raise NotImplementedError

    def ends(self) -> bool:
        """Control never reaches the statement after this one."""
        return False


@dataclass
class Block(Stmt):
    body: list

    def pc(self, ind: str) -> list[str]:
        return [ind + "{"] + pc_stmts(self.body, ind + IND) + [ind + "}"]

    def py(self, ind: str) -> list[str]:
        return py_stmts(self.body, ind)

    def ends(self) -> bool:
        return any(s.ends() for s in self.body)


def pc_stmts(stmts: list, ind: str) -> list[str]:
    return [line for s in stmts for line in s.pc(ind)]


def py_stmts(stmts: list, ind: str) -> list[str]:
    """A block's statements in Python: a `defer` becomes try/finally around the
    rest of its block, so it runs on every exit after it was reached."""
    out: list[str] = []
    for k, s in enumerate(stmts):
        if isinstance(s, Defer):
            rest = py_stmts(stmts[k + 1:], ind + IND)
            return (out + s.py_head(ind) + [ind + "try:"] + (rest or [ind + IND + "pass"]) + [ind + "finally:"]
                    + s.stmt.py(ind + IND))
        out += s.py(ind)
    return out or [ind + "pass"]


@dataclass
class Let(Stmt):
    name: str
    ty: object
    init: Expr | None
    mutable: bool = True
    annotate: bool = True

    def pc(self, ind: str) -> list[str]:
        kw = "var" if self.mutable else "let"
        t = f": {self.ty}" if self.annotate or self.init is None else ""
        init = f" = {self.init.pc()}" if self.init is not None else ""
        return [f"{ind}{kw} {pc_name(self.name)}{t}{init};"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}{self.name} = {self.init.val() if self.init is not None else zero_py(self.ty)}"]


COMPOUND = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


@dataclass
class Assign(Stmt):
    target: Expr   # a place; its indices are pure
    op: str        # = or a compound operator
    value: Expr

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}{self.target.pc()} {self.op} {self.value.pc()};"]

    def py(self, ind: str) -> list[str]:
        if self.op == "=" and is_aggregate(self.target.ty):
            # in place: a `mut self` method's `self` is the caller's value, and
            # must see it changed through any other name (a global) too. The
            # value first, then the place, as PyCoro (and Rust, and Python's
            # own `a[i] = v`) evaluates them: `_put(place, value)` would
            # evaluate the place's indices first.
            return [f"{ind}_pv = {self.value.val()}", f"{ind}_put({self.target.py()}, _pv)"]
        if self.op == "=":
            return [f"{ind}{self.target.py()} = {self.value.val()}"]
        combined = Binary(self.target.ty, self.op[:-1], self.target, self.value)
        return [f"{ind}{self.target.py()} = {combined.py()}"]


@dataclass
class ExprStmt(Stmt):
    e: Expr

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}{self.e.pc()};"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}{self.e.py()}"]


@dataclass
class Print(Stmt):
    label: str
    args: list

    def pc(self, ind: str) -> list[str]:
        return [f'{ind}print({", ".join([repr_pc(self.label)] + [a.pc() for a in self.args])});']

    def py(self, ind: str) -> list[str]:
        return [f'{ind}_p({", ".join([repr(self.label)] + [a.py() for a in self.args])})']


def repr_pc(s: str) -> str:
    return '"' + s + '"'   # labels are plain words


@dataclass
class If(Stmt):
    cond: Expr
    then: Block
    els: Stmt | None = None   # a Block or an If

    def pc(self, ind: str, head: str = "if") -> list[str]:
        out = [f"{ind}{head} {self.cond.pc()} {{"] + pc_stmts(self.then.body, ind + IND)
        if isinstance(self.els, If):
            return out + self.els.pc(ind, "} else if")
        if isinstance(self.els, Block):
            return out + [ind + "} else {"] + pc_stmts(self.els.body, ind + IND) + [ind + "}"]
        return out + [ind + "}"]

    def py(self, ind: str, head: str = "if") -> list[str]:
        out = [f"{ind}{head} {self.cond.py()}:"] + py_stmts(self.then.body, ind + IND)
        if isinstance(self.els, If):
            return out + self.els.py(ind, "elif")
        if isinstance(self.els, Block):
            return out + [ind + "else:"] + py_stmts(self.els.body, ind + IND)
        return out

    def ends(self) -> bool:
        return self.els is not None and self.then.ends() and self.els.ends()


@dataclass
class While(Stmt):
    """`while` bounded by a counter of its own: at most `bound` iterations."""
    counter: str
    bound: int
    cond: Expr
    body: Block

    def pc(self, ind: str) -> list[str]:
        return ([f"{ind}var {self.counter}: i64 = 0;",
                 f"{ind}while {self.counter} < {self.bound} && {self.cond.pc()} {{",
                 f"{ind}{IND}{self.counter} += 1;"] + pc_stmts(self.body.body, ind + IND) + [ind + "}"])

    def py(self, ind: str) -> list[str]:
        return ([f"{ind}{self.counter} = 0", f"{ind}while {self.counter} < {self.bound} and {self.cond.py()}:",
                 f"{ind}{IND}{self.counter} += 1"] + py_stmts(self.body.body, ind + IND))


@dataclass
class Loop(Stmt):
    """`loop` that breaks after `bound` iterations (its body may break first)."""
    counter: str
    bound: int
    body: Block

    def pc(self, ind: str) -> list[str]:
        return ([f"{ind}var {self.counter}: i64 = 0;", f"{ind}loop {{",
                 f"{ind}{IND}{self.counter} += 1;", f"{ind}{IND}if {self.counter} > {self.bound} {{ break; }}"]
                + pc_stmts(self.body.body, ind + IND) + [ind + "}"])

    def py(self, ind: str) -> list[str]:
        return ([f"{ind}{self.counter} = 0", f"{ind}while True:", f"{ind}{IND}{self.counter} += 1",
                 f"{ind}{IND}if {self.counter} > {self.bound}:", f"{ind}{IND}{IND}break"]
                + py_stmts(self.body.body, ind + IND))


@dataclass
class For(Stmt):
    var: str
    lo: Expr
    hi: Expr
    inclusive: bool
    body: Block

    def pc(self, ind: str) -> list[str]:
        op = "..=" if self.inclusive else ".."
        return [f"{ind}for {self.var} in {self.lo.pc()}{op}{self.hi.pc()} {{"] + pc_stmts(self.body.body, ind + IND) + [ind + "}"]

    def py(self, ind: str) -> list[str]:
        hi = f"{self.hi.py()} + 1" if self.inclusive else self.hi.py()
        return [f"{ind}for {self.var} in range({self.lo.py()}, {hi}):"] + py_stmts(self.body.body, ind + IND)


@dataclass
class ForIn(Stmt):
    """`for v in e { … }` over a slice (each element read when its turn
    comes: writes made by the body show) or over a generator call."""
    var: str
    e: Expr
    body: Block

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}for {self.var} in {self.e.pc()} {{"] + pc_stmts(self.body.body, ind + IND) + [ind + "}"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}for {self.var} in {self.e.py()}:"] + py_stmts(self.body.body, ind + IND)


@dataclass
class Break(Stmt):
    def pc(self, ind: str) -> list[str]:
        return [ind + "break;"]

    def py(self, ind: str) -> list[str]:
        return [ind + "break"]

    def ends(self) -> bool:
        return True


@dataclass
class Continue(Stmt):
    def pc(self, ind: str) -> list[str]:
        return [ind + "continue;"]

    def py(self, ind: str) -> list[str]:
        return [ind + "continue"]

    def ends(self) -> bool:
        return True


@dataclass
class Return(Stmt):
    value: Expr | None = None

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}return {self.value.pc()};" if self.value is not None else ind + "return;"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}return {self.value.val()}" if self.value is not None else ind + "return"]

    def ends(self) -> bool:
        return True


@dataclass
class Defer(Stmt):
    """`defer S`: S runs when the enclosing block is left (py_stmts renders the
    try/finally; this node's own py is never called for the block case)."""
    stmt: Stmt

    def pc(self, ind: str) -> list[str]:
        inner = self.stmt.pc(ind)
        return [f"{ind}defer {inner[0].lstrip()}"] + inner[1:]

    def py(self, ind: str) -> list[str]:
        raise AssertionError("a defer is rendered by its block")

    def py_head(self, ind: str) -> list[str]:
        """Python lines before the try: a subclass that binds what its finally
        destroys (a coroutine handle destroyed at the end of its scope) puts
        the binding here."""
        return []


@dataclass
class Yield(Stmt):
    """`yield v;` in a coroutine of any kind the layers make (a generator, a
    stream, a `send` coroutine): the oracle's twin is a Python generator."""
    value: Expr

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}yield {self.value.pc()};"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}yield {self.value.val()}"]


@dataclass
class CoReturn(Stmt):
    """`co_return v;` / `co_return;`: the twin's `return`."""
    value: Expr | None = None

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}co_return {self.value.pc()};" if self.value is not None else ind + "co_return;"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}return {self.value.val()}" if self.value is not None else ind + "return"]

    def ends(self) -> bool:
        return True


# --------------------------------------------------------------- declarations

class Decl:
    def pc(self) -> list[str]:
        raise NotImplementedError

    def py(self) -> list[str]:
        return []

    def py_globals(self) -> list[str]:
        """Module-level names that functions assign (Python `global`)."""
        return []


@dataclass
class GlobalDecl(Decl):
    name: str
    ty: object
    init: Expr | None
    mutable: bool = True

    def pc(self) -> list[str]:
        init = f" = {self.init.pc()}" if self.init is not None else ""
        return [f"{'var' if self.mutable else 'let'} {self.name}: {self.ty}{init};"]

    def py(self) -> list[str]:
        return [f"{self.name} = {self.init.py() if self.init is not None else zero_py(self.ty)}"]

    def py_globals(self) -> list[str]:
        return [self.name]


@dataclass
class StructDecl(Decl):
    ty: StructT

    def pc(self) -> list[str]:
        return [f"struct {self.ty.name} {{ {', '.join(f'{n}: {t}' for n, t in self.ty.fields)} }}"]


@dataclass
class FnDecl(Decl):
    name: str
    params: list            # [(name, type)]
    ret: object | None
    body: Block
    generic: list = field(default_factory=list)   # type parameter names
    self_kind: str = ""     # "" (a function), "self" or "mut self" (a method)
    struct: str = ""        # the struct of a method

    def pc(self) -> list[str]:
        params = ([self.self_kind] if self.self_kind else []) + [f"{n}: {t}" for n, t in self.params]
        g = f"<{', '.join(self.generic)}>" if self.generic else ""
        ret = f" -> {self.ret}" if self.ret is not None else ""
        head = f"fn {self.name}{g}({', '.join(params)}){ret} {{"
        lines = [head] + pc_stmts(self.body.body, IND) + ["}"]
        if self.struct:
            return [f"impl {self.struct} {{"] + [IND + line for line in lines] + ["}"]
        return lines

    def py_name(self) -> str:
        return f"{self.struct}__{self.name}" if self.struct else self.name

    def py_lines(self, globals_: list[str]) -> list[str]:
        params = (["self"] if self.self_kind else []) + [n for n, _ in self.params]
        out = [f"def {self.py_name()}({', '.join(params)}):"]
        if globals_:
            out.append(f"{IND}global {', '.join(globals_)}")
        return out + py_stmts(self.body.body, IND)


@dataclass
class Program:
    decls: list            # Decl, in order (globals, structs, functions, …, main last)
    layer: str = ""
    seed: int = 0

    def pc(self) -> str:
        lines = [f"// difftest: layer {self.layer}, seed {self.seed}"]
        for d in self.decls:
            lines += d.pc()
        return "\n".join(lines) + "\n"

    def py(self) -> str:
        from .oracle import EPILOGUE, PRELUDE
        globals_ = [n for d in self.decls for n in d.py_globals()]
        lines = [f"# difftest oracle: layer {self.layer}, seed {self.seed}", PRELUDE]
        for d in self.decls:
            lines += d.py_lines(globals_) if isinstance(d, FnDecl) else d.py()
        return "\n".join(lines) + EPILOGUE


def is_int_or_bool(t) -> bool:
    return is_int(t) or t == BOOL
