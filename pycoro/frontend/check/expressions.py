"""Expressions that are not calls or suspension points (LANGUAGE.md §3):
literals and their context types, names, operators, casts, indexing,
fields, struct and array literals."""
from __future__ import annotations

import difflib


from ...common.diagnostics import Span
from ...common.memo import while_alive
from .. import ast, intrinsics
from .. import messages as M
from ..resolve import BUILTIN_FUNCTIONS
from ..types import (BOOL, ERROR, F64, HANDLE, I64, NULL, PRIMITIVES, STR, U64, ArrayT, FloatT, FnT, IntT, PtrT, SliceT,
                     StructT, Type, TypeVar, has_vars, is_scalar, substitute, unify)
from .common import ARITH, BITWISE, EQUALITY, LOGICAL, ORDERING, SHIFTS
from .suspension import is_coroutine


def is_constant(e: ast.Expr) -> bool:
    match e:
        case ast.IntLit() | ast.FloatLit() | ast.BoolLit() | ast.StrLit() | ast.NullLit():
            return True
        case ast.Unary(operand=inner) | ast.Cast(expr=inner):
            return is_constant(inner)
        case ast.ArrayLit(elems=elems):
            return all(map(is_constant, elems))
        case ast.StructLit(fields=fields):
            return all(is_constant(f.value) for f in fields)
    return False


@while_alive
def is_literalish(e: ast.Expr) -> bool:
    """An expression whose type comes from its context (an unsuffixed literal)."""
    match e:
        case ast.IntLit(suffix=None) | ast.FloatLit(suffix=None):
            return True
        case ast.Unary(op="-" | "~", operand=inner):
            return is_literalish(inner)
        case ast.Binary(op=op, left=left, right=right) if op in ARITH + BITWISE:
            return is_literalish(left) and is_literalish(right)
        case ast.Binary(op=op, left=left) if op in SHIFTS:
            return is_literalish(left)
    return False


# Integer literals a float type holds: up to its largest finite value and the
# larger ones that round to it (past them, infinity, or no conversion at all).
# An f32 literal goes through an f64 first, so its margin is a quarter ulp.
_LARGEST_FINITE = {32: (2 ** 24 - 1) * 2 ** 104 + 2 ** 102, 64: (2 ** 53 - 1) * 2 ** 971 + 2 ** 970 - 1}


def _op_class(op: str) -> str:
    if op in ARITH:
        return "arith"
    if op in BITWISE:
        return "bitwise"
    if op in EQUALITY:
        return "equality"
    return "ordering"


class ExpressionRules:
    """BodyChecker's rules of this module (a mixin: `self` is the BodyChecker)."""

    def expr_IntLit(self, e: ast.IntLit, expected: Type | None, negate: bool = False) -> Type:
        value = -e.value if negate else e.value
        if e.suffix:
            t = PRIMITIVES[e.suffix]
        elif isinstance(expected, (IntT, FloatT)):
            t = expected
        else:
            t = I64
        if isinstance(t, IntT) and not (t.min <= value <= t.max):
            if not (t == I64 and not e.suffix and expected is None and I64.max < value <= U64.max):
                self.r.error(M.literal_out_of_range(value, t), e.span)
                return ERROR
            t = U64
        elif isinstance(t, FloatT) and abs(value) > _LARGEST_FINITE[t.bits]:
            self.r.error(M.literal_out_of_range(value, t), e.span)   # (it would round to infinity)
            return ERROR
        return t

    def expr_FloatLit(self, e: ast.FloatLit, expected: Type | None) -> Type:
        if e.suffix:
            return PRIMITIVES[e.suffix]
        if isinstance(expected, FloatT):
            return expected
        return F64

    def expr_StrLit(self, e, expected):
        return STR

    def expr_BoolLit(self, e, expected):
        return BOOL

    def expr_NullLit(self, e, expected):
        return expected if isinstance(expected, PtrT) else NULL

    def expr_Name(self, e: ast.Name, expected: Type | None) -> Type:
        var = self.lookup(e.name)
        if var is not None:
            self._ref(e, var)
            return var.type
        g = self.p.globals.get(e.name)
        if g is not None:
            if self.internal(g.decl, e.span):
                return ERROR
            self._ref(e, g)
            return g.type
        decl = self.p.ns.decls.get(e.name)
        if isinstance(decl, ast.FnDecl):
            if self.internal(decl, e.span):
                return ERROR
            if decl.kind == "async" or decl.name in intrinsics.STDLIB_ONLY:
                self.r.error(M.async_value(e.name), e.span)
                return ERROR
            if decl.generics:
                self.r.error(M.generic_fn_value(e.name), e.span)
                return ERROR
            inst = self.p.instantiate(decl, {}, ())
            self._ref(e, inst)
            if decl.varargs:
                self.r.error(M.not_a_value(e.name), e.span)
                return ERROR
            if is_coroutine(decl):
                # A coroutine's ABI is not a plain call's (a retcon one takes a
                # buffer, returns the continuation with the value): LANGUAGE.md §2.
                self.r.error(M.coroutine_fn_value(e.name), e.span,
                             hint=M.coroutine_fn_value_hint(e.name, inst.params, inst.ret))
                return ERROR
            return FnT(tuple(t for _, t in inst.params), inst.ret)
        if decl is not None or e.name in BUILTIN_FUNCTIONS:
            self.r.error(M.not_a_value(e.name), e.span)
            return ERROR
        self.r.error(M.unknown_name(e.name), e.span, hint=self.p.ns.suggest(e.name, self.local_names()))
        return ERROR

    def expr_GenericName(self, e: ast.GenericName, expected: Type | None) -> Type:
        self.r.error(M.generic_fn_value(e.name), e.span)
        return ERROR

    def expr_Unary(self, e: ast.Unary, expected: Type | None) -> Type:
        if e.op == "-" and isinstance(e.operand, ast.IntLit):
            t = self.expr_IntLit(e.operand, expected, negate=True)
            self._set(e.operand, t)
            if t is not ERROR and isinstance(t, IntT) and not t.signed and e.operand.value != 0:
                self.r.error(M.bad_operand("-", t), e.span)
            return t
        t = self.check_expr(e.operand, expected if e.op != "!" else BOOL)
        if t is ERROR:
            return ERROR
        ok = {"-": t.is_numeric, "!": t == BOOL, "~": t.is_int}[e.op]
        if not ok:
            self.r.error(M.bad_operand(e.op, t), e.span)
            return ERROR
        return t

    def expr_AddrOf(self, e: ast.AddrOf, expected: Type | None) -> Type:
        t = self.check_place(e.operand, write=False)
        return ERROR if t is ERROR else PtrT(t)

    def expr_Binary(self, e: ast.Binary, expected: Type | None) -> Type:
        return self.binary_types(e.op, e.left, e.right, e.span, None, expected)

    def binary_types(self, op: str, left: ast.Expr, right: ast.Expr, span: Span,
                     left_known: Type | None, expected: Type | None = None) -> Type:
        if op in LOGICAL:
            lt = left_known or self.check_expr(left, BOOL)
            rt = self.check_expr(right, BOOL)
            for side, t in ((left, lt), (right, rt)):
                if t not in (BOOL, ERROR):
                    self.r.error(M.bad_operand(op, t), side.span)
                    return ERROR
            return BOOL
        hint = expected if op in ARITH + BITWISE + SHIFTS else None
        if left_known is not None:
            lt = left_known
            rt = self.check_expr(right, lt if lt is not ERROR and op not in SHIFTS else None) \
                if op not in SHIFTS else self._shift_amount(right, lt)
        elif is_literalish(left) and not is_literalish(right) and op not in SHIFTS:
            rt = self.check_expr(right, hint)
            lt = self.check_expr(left, rt if rt is not ERROR else None)
        else:
            lt = self.check_expr(left, hint)
            rt = self._shift_amount(right, lt) if op in SHIFTS else \
                self.check_expr(right, lt if lt is not ERROR else None)
        if lt is ERROR or rt is ERROR:
            return BOOL if op in EQUALITY + ORDERING else ERROR
        if op in SHIFTS:
            if not lt.is_int:
                self.r.error(M.bad_operand(op, lt), span)
                return ERROR
            return lt
        if op in EQUALITY and {lt, rt} <= {NULL, HANDLE} | ({lt} if isinstance(lt, PtrT) else set()) | \
                ({rt} if isinstance(rt, PtrT) else set()) and NULL in (lt, rt):
            return BOOL
        if lt != rt:
            self.r.error(M.operand_mismatch(op, lt, rt), span)
            return ERROR
        allowed = {
            "arith": lt.is_numeric,
            "bitwise": lt.is_int or lt == BOOL,
            "equality": is_scalar(lt) or isinstance(lt, (PtrT, FnT)) or lt == HANDLE,
            "ordering": lt.is_numeric,
        }[_op_class(op)]
        if not allowed:
            self.r.error(M.bad_operand(op, lt), span)
            return ERROR
        return BOOL if op in EQUALITY + ORDERING else lt

    def _shift_amount(self, right: ast.Expr, lt: Type) -> Type:
        rt = self.check_expr(right, lt if isinstance(lt, IntT) else None)
        if rt is not ERROR and not rt.is_int:
            self.r.error(M.bad_operand("<<", rt), right.span)
            return ERROR
        return rt

    def expr_Cast(self, e: ast.Cast, expected: Type | None) -> Type:
        target = self.p.resolve_type(e.type, self.subst)
        # A cast converts, it does not ask for a type: a literal operand keeps its
        # own type, so `300 as u8` is 44 (i64 300, truncated).
        src = self.check_expr(e.expr, None)
        if target is ERROR or src is ERROR:
            return ERROR
        ok = (
            (src.is_numeric and target.is_numeric)
            or (src == BOOL and target.is_int)
            or (src == target)
            or (isinstance(src, PtrT) and isinstance(target, PtrT))
            or (isinstance(src, PtrT) and target in (I64, U64))
            or (src in (I64, U64) and isinstance(target, PtrT))
            or (src == STR and target == PtrT(PRIMITIVES["u8"]))
            or (src == NULL and isinstance(target, PtrT))
        )
        if not ok:
            self.r.error(M.bad_cast(src, target), e.span)
            return ERROR
        return target

    def expr_Index(self, e: ast.Index, expected: Type | None) -> Type:
        base = self.check_expr(e.base, None)
        it = self.check_expr(e.index, I64 if is_literalish(e.index) else None)
        if it is not ERROR and not it.is_int:
            self.r.error(M.index_not_int(it), e.index.span)
        if base is ERROR:
            return ERROR
        if isinstance(base, (ArrayT, PtrT, SliceT)):
            return base.elem
        self.r.error(M.not_indexable(base), e.base.span)
        return ERROR

    def expr_Slice(self, e: ast.Slice, expected: Type | None) -> Type:
        """`base[lo..hi]` of an array place or a slice (LANGUAGE.md §2.1)."""
        base = self.check_expr(e.base, None)
        for bound in (e.lo, e.hi):
            if bound is not None:
                t = self.check_expr(bound, I64 if is_literalish(bound) else None)
                if t is not ERROR and not t.is_int:
                    self.r.error(M.slice_bound(t), bound.span)
        if base is ERROR:
            return ERROR
        if isinstance(base, ArrayT):
            if not self._is_place(e.base):
                self.r.error(M.slice_temporary(), e.base.span, hint=M.slice_temporary_hint())
                return ERROR
            return self.p.slice_type(base.elem, e.span)
        if isinstance(base, SliceT):
            return base
        self.r.error(M.not_sliceable(base), e.base.span,
                     hint=M.slice_ptr_hint() if isinstance(base, PtrT) else None)
        return ERROR

    def _is_place(self, e: ast.Expr) -> bool:
        """A variable, or a field or element of a place (or reached through a
        pointer or a slice): memory that outlives the statement."""
        match e:
            case ast.Name(name=name):
                return self.lookup(name) is not None or name in self.p.globals
            case ast.Field(base=base) | ast.Index(base=base):
                return isinstance(self.inst_types.get(base), (PtrT, SliceT)) or self._is_place(base)
        return False

    def expr_Field(self, e: ast.Field, expected: Type | None) -> Type:
        base = self.check_expr(e.base, None)
        if base is ERROR:
            return ERROR
        if isinstance(base, StructT):
            for name, t in self.p.struct_fields(base):
                if name == e.name:
                    return t
        hint = M.ptr_field_hint(e.name) if isinstance(base, PtrT) and isinstance(base.elem, StructT) else None
        if self.p.find_method(base, e.name) is not None:
            hint = f"`{e.name}` is a method: call it with `(…)`"
        elif hint is None and isinstance(base, StructT):
            names = [name for name, _ in self.p.struct_fields(base)]
            close = difflib.get_close_matches(e.name, names, n=1, cutoff=0.6)
            hint = M.did_you_mean(close[0]) if close else M.fields_hint(base, names)
        self.r.error(M.no_field(base, e.name), e.span, hint=hint)
        return ERROR

    def expr_StructLit(self, e: ast.StructLit, expected: Type | None) -> Type:
        decl = self.p.ns.decls.get(e.name)
        if decl is not None and self.internal(decl, e.span):
            for f in e.fields:
                self.check_expr(f.value, None)
            return ERROR
        if not isinstance(decl, ast.StructDecl):
            if decl is None:
                self.r.error(M.unknown_type(e.name), e.span, hint=self.p.ns.suggest(e.name, []))
            else:
                self.r.error(M.not_a_struct(e.name), e.span)
            for f in e.fields:
                self.check_expr(f.value, None)
            return ERROR
        if e.type_args:
            args = tuple(self.p.resolve_type(a, self.subst) for a in e.type_args)
            if len(args) != len(decl.generics):
                self.r.error(M.type_arity(e.name, len(decl.generics), len(args)), e.span)
                return ERROR
            if ERROR in args:
                return ERROR
            t = StructT(decl, args)
        elif isinstance(expected, StructT) and expected.decl is decl:
            t = expected
        elif decl.generics:
            t = self._infer_struct(e, decl)
            if t is ERROR:
                return ERROR
        else:
            t = StructT(decl)
        fields = dict(self.p.struct_fields(t, e.span))
        given: set[str] = set()
        for f in e.fields:
            if f.name in given:
                self.r.error(M.duplicate_field(f.name), f.span)
            given.add(f.name)
            if f.name not in fields:
                self.r.error(M.no_field(t, f.name), f.span)
                self.check_expr(f.value, None)
                continue
            if f.value not in self.inst_types:
                self.expect(f.value, fields[f.name])
                continue
            # checked already, to infer the type arguments
            if self.inst_types[f.value] != fields[f.name] and self.inst_types[f.value] is not ERROR:
                self.r.error(M.mismatch(fields[f.name], self.inst_types[f.value]), f.value.span)
        missing = [n for n in fields if n not in given]
        if missing:
            self.r.error(M.missing_fields(missing), e.span)
        return t

    def _infer_struct(self, e: ast.StructLit, decl: ast.StructDecl) -> Type:
        pattern = {f.name: self.p.resolve_type(f.type, {g: TypeVar(g) for g in decl.generics})
                   for f in decl.fields}
        subst: dict[str, Type] = {}
        deferred = []
        for f in e.fields:
            if f.name not in pattern:
                continue
            if is_literalish(f.value):
                deferred.append(f)
                continue
            t = self.check_expr(f.value, None)
            if t is not ERROR and not unify(pattern[f.name], t, subst):
                self.r.error(M.mismatch(substitute(pattern[f.name], subst), t), f.value.span)
                return ERROR
        for f in deferred:
            want = substitute(pattern[f.name], subst)
            t = self.check_expr(f.value, None if has_vars(want) else want)
            unify(pattern[f.name], t, subst)
        if any(g not in subst for g in decl.generics):
            self.r.error(M.cannot_infer_type_args(decl.name), e.span)
            return ERROR
        return StructT(decl, tuple(subst[g] for g in decl.generics))

    def expr_ArrayLit(self, e: ast.ArrayLit, expected: Type | None) -> Type:
        if isinstance(expected, ArrayT):
            elem = expected.elem
        elif not e.elems:
            self.r.error(M.cannot_infer_array(), e.span)
            return ERROR
        else:
            first = next((x for x in e.elems if not is_literalish(x)), e.elems[0])
            elem = self.check_expr(first, None)
        for x in e.elems:
            if x in self.inst_types:   # checked already, to infer the element type
                if self.inst_types[x] not in (elem, ERROR):
                    self.r.error(M.mismatch(elem, self.inst_types[x]), x.span)
            else:
                self.expect(x, elem)
        if elem is ERROR:
            return ERROR
        if isinstance(expected, ArrayT) and expected.size != len(e.elems):
            self.r.error(M.mismatch(expected, ArrayT(elem, len(e.elems))), e.span)
            return ERROR
        return ArrayT(elem, len(e.elems))

