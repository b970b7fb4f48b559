"""The PyCoro syntax tree: frozen records, a span on every node.

Nodes compare by identity (eq=False) so that later stages can key side
tables (types, resolved names) by node, per generic instantiation.
`fields(node)` names a node's fields, in order.
"""
from __future__ import annotations

from ..common.diagnostics import Span
from ..common.record import fields as fields   # re-exported for the walkers over nodes
from ..common.record import record

node = record(frozen=True, eq=False)


@node
class Node:
    span: Span


# ---- type expressions ----

@node
class TypeExpr(Node):
    pass


@node
class NamedType(TypeExpr):
    name: str
    args: tuple[TypeExpr, ...] = ()


@node
class ArrayType(TypeExpr):
    elem: TypeExpr
    size: int


@node
class SliceType(TypeExpr):
    elem: TypeExpr


@node
class FnType(TypeExpr):
    params: tuple[TypeExpr, ...]
    ret: TypeExpr | None


# ---- expressions ----

@node
class Expr(Node):
    pass


@node
class IntLit(Expr):
    value: int
    suffix: str | None


@node
class FloatLit(Expr):
    value: float
    suffix: str | None


@node
class StrLit(Expr):
    value: bytes


@node
class BoolLit(Expr):
    value: bool


@node
class NullLit(Expr):
    pass


@node
class Name(Expr):
    name: str


@node
class GenericName(Expr):
    name: str
    type_args: tuple[TypeExpr, ...]


@node
class Unary(Expr):
    op: str
    operand: Expr


@node
class AddrOf(Expr):
    operand: Expr


@node
class Await(Expr):
    operand: Expr


@node
class Spawn(Expr):
    operand: Expr


@node
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@node
class Cast(Expr):
    expr: Expr
    type: TypeExpr


@node
class Call(Expr):
    callee: Expr
    args: tuple[Expr, ...]


@node
class Index(Expr):
    base: Expr
    index: Expr


@node
class Slice(Expr):
    """`base[lo..hi]`, `base[lo..]`, `base[..hi]`, `base[..]` (`..=`: hi included)."""
    base: Expr
    lo: Expr | None
    hi: Expr | None
    inclusive: bool


@node
class Field(Expr):
    base: Expr
    name: str


@node
class FieldInit(Node):
    name: str
    value: Expr


@node
class StructLit(Expr):
    name: str
    type_args: tuple[TypeExpr, ...]
    fields: tuple[FieldInit, ...]


@node
class ArrayLit(Expr):
    elems: tuple[Expr, ...]


@node
class Yield(Expr):
    value: Expr | None


@node
class YieldFrom(Expr):
    value: Expr


# ---- statements ----

@node
class Stmt(Node):
    pass


@node
class Block(Stmt):
    stmts: tuple[Stmt, ...]


@node
class Let(Stmt):
    name: str
    mutable: bool
    type: TypeExpr | None
    init: Expr | None
    name_span: Span | None = None


@node
class Assign(Stmt):
    target: Expr
    op: str  # "=" or the binary operator of a compound assignment ("+", "<<", …)
    value: Expr


@node
class ExprStmt(Stmt):
    expr: Expr


@node
class If(Stmt):
    cond: Expr
    then: Block
    else_: Block | "If" | None


@node
class While(Stmt):
    cond: Expr
    body: Block


@node
class Loop(Stmt):
    body: Block


@node
class For(Stmt):
    var: str
    iter: Expr
    end: Expr | None       # set for `for i in a..b`
    inclusive: bool        # `a..=b`
    body: Block
    name_span: Span | None = None


@node
class With(Stmt):
    var: str
    expr: Expr
    body: Block
    name_span: Span | None = None


@node
class Break(Stmt):
    pass


@node
class Continue(Stmt):
    pass


@node
class Return(Stmt):
    value: Expr | None


@node
class CoReturn(Stmt):
    value: Expr | None


@node
class Defer(Stmt):
    stmt: Stmt


# ---- declarations ----

@node
class Decl(Node):
    pass


@node
class Import(Decl):
    path: str


@node
class Param(Node):
    name: str
    type: TypeExpr | None  # None for `self`
    is_self: bool = False
    mut_self: bool = False


@node
class FnDecl(Decl):
    name: str
    kind: str  # "fn" | "async" | "kernel" | "extern" | "intrinsic"
    generics: tuple[str, ...]
    params: tuple[Param, ...]
    ret: TypeExpr | None
    body: Block | None
    varargs: bool = False
    name_span: Span | None = None


@node
class FieldDecl(Node):
    name: str
    type: TypeExpr


@node
class StructDecl(Decl):
    name: str
    generics: tuple[str, ...]
    fields: tuple[FieldDecl, ...]
    name_span: Span | None = None


@node
class AbiDecl(Node):
    name: str
    size: int | None


@node
class SuspendDecl(Node):
    point: str  # "initial" | "final"
    mode: str   # "suspend" | "run"


@node
class PromiseVar(Node):
    name: str
    type: TypeExpr
    init: Expr | None


@node
class PromiseDecl(Decl):
    name: str
    generics: tuple[str, ...]
    abi: AbiDecl | None
    suspends: tuple[SuspendDecl, ...]
    fields: tuple[PromiseVar, ...]
    methods: tuple[FnDecl, ...]
    name_span: Span | None = None


@node
class ImplDecl(Decl):
    generics: tuple[str, ...]
    target: TypeExpr
    methods: tuple[FnDecl, ...]


@node
class GlobalDecl(Decl):
    name: str
    mutable: bool
    type: TypeExpr | None
    init: Expr | None
    name_span: Span | None = None


@node
class Module(Node):
    path: str
    decls: tuple[Decl, ...]


def contains(node, kinds: tuple[type, ...]) -> bool:
    """Whether a syntax tree (a node, a tuple of them, or a leaf) holds a node of one of `kinds`."""
    if isinstance(node, kinds):
        return True
    if isinstance(node, tuple):
        return any(contains(n, kinds) for n in node)
    if isinstance(node, Node):
        return any(contains(getattr(node, f), kinds) for f in fields(node) if f != "span")
    return False


def declared_at(node: Node, name: str) -> Span:
    """The name a `let`/`var`, `for`, `with` or parameter declares, where it is
    written (a parameter's span starts at its name)."""
    span = getattr(node, "name_span", None) or node.span
    return Span(span.file, span.line, span.col, span.line, span.col + len(name))


def nodes_of(node, kind: type):
    """Every node of `kind` in a syntax tree (a node, a tuple of them, or a leaf), outermost first."""
    if isinstance(node, kind):
        yield node
    if isinstance(node, tuple):
        for item in node:
            yield from nodes_of(item, kind)
    elif isinstance(node, Node):
        for name in fields(node):
            if name != "span":
                yield from nodes_of(getattr(node, name), kind)
