"""Expressions: literals, names, operators (with their runtime checks),
casts, indexing and fields, struct and array literals."""
from __future__ import annotations

from llvmlite import ir

from ...frontend import ast
from ...frontend.program import FnInstance
from ...frontend.types import BOOL, FloatT, IntT, PtrT, SliceT, Type
from .. import intrinsics
from ..llvmcompat import I1, I32, I64, PTR, SLICE, field_ptr, gep
from ..runtime import UNSIGNED_FIRST, UNSIGNED_HI
from .suspends import suspends_after

_ICMP = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class ExpressionEmission:
    """FnGen's expressions (a mixin: `self` is the FnGen)."""

    def expr_IntLit(self, e: ast.IntLit) -> ir.Value:
        t = self.type_of(e)
        return ir.Constant(self.mg.llvm(t), float(e.value) if t.is_float else e.value)

    def expr_FloatLit(self, e: ast.FloatLit) -> ir.Value:
        return ir.Constant(self.mg.llvm(self.type_of(e)), e.value)

    def expr_StrLit(self, e: ast.StrLit) -> ir.Value:
        return self.mg.string(e.value)

    def expr_BoolLit(self, e: ast.BoolLit) -> ir.Value:
        return I1(int(e.value))

    def expr_NullLit(self, e: ast.NullLit) -> ir.Value:
        return ir.Constant(PTR, None)

    def expr_Name(self, e: ast.Name) -> ir.Value:
        ref = self.inst.refs[e]
        if isinstance(ref, FnInstance):
            return self.mg.declare(ref)
        if id(ref) in self.known_params:   # a specialised copy's: calls through it are direct from the start
            return self.mg.declare(self.known_params[id(ref)])
        return self.load(self.place(e), self.type_of(e))

    def expr_Unary(self, e: ast.Unary) -> ir.Value:
        t = self.type_of(e)
        if e.op == "-" and isinstance(e.operand, ast.IntLit):
            v = -e.operand.value
            return ir.Constant(self.mg.llvm(t), float(v) if t.is_float else v)
        v = self.expr(e.operand)
        if e.op == "-":
            return self.b.fneg(v) if t.is_float else self.b.neg(v)
        return self.b.not_(v)  # `!` on bool, `~` on integers

    def expr_AddrOf(self, e: ast.AddrOf) -> ir.Value:
        return self.place(e.operand)

    def expr_Binary(self, e: ast.Binary) -> ir.Value:
        if e.op in ("&&", "||"):
            return self.short_circuit(e)
        lt = self.type_of(e.left)
        left = self.expr(e.left)
        right = self.expr(e.right)
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return self.compare(e.op, left, right, lt, self.type_of(e.right))
        return self.binop(e.op, left, right, lt, e.span, self.type_of(e.right))

    def short_circuit(self, e: ast.Binary) -> ir.Value:
        """`a && b` / `a || b`; the owning temporaries `b` makes are emptied on the
        path that skips it, so that destroying them at the statement's end
        destroys nothing there (they were destroyed garbage: a crash)."""
        left = self.expr(e.left)
        name = "and" if e.op == "&&" else "or"
        rhs_bb, skip_bb, end_bb = self.block(f"{name}.rhs"), self.block(f"{name}.skip"), self.block("logic.end")
        if e.op == "&&":
            self.b.cbranch(left, rhs_bb, skip_bb)
        else:
            self.b.cbranch(left, skip_bb, rhs_bb)
        self.b.position_at_end(rhs_bb)
        mark = len(self.scopes[-1])
        right = self.expr(e.right)
        rhs_end = self.b.block
        self.b.branch(end_bb)
        self.b.position_at_end(skip_bb)
        for kind, what in self.scopes[-1][mark:]:
            if kind == "temp":
                self.zero(*what)
        self.b.branch(end_bb)
        self.b.position_at_end(end_bb)
        phi = self.b.phi(I1)
        phi.add_incoming(I1(0 if e.op == "&&" else 1), skip_bb)
        phi.add_incoming(right, rhs_end)
        return phi

    def compare(self, op: str, left, right, lt: Type, rt: Type) -> ir.Value:
        if lt.is_float:
            return self.b.fcmp_unordered(op, left, right) if op == "!=" else self.b.fcmp_ordered(op, left, right)
        if isinstance(lt, IntT) and lt.signed:
            return self.b.icmp_signed(op, left, right)
        return self.b.icmp_unsigned(op, left, right)

    def binop(self, op: str, left, right, t: Type, span, rt: Type | None = None) -> ir.Value:
        b = self.b
        if t.is_float:
            return {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv, "%": b.frem}[op](left, right)
        if op in ("<<", ">>"):
            return self.shift(op, left, right, t, rt or t)
        if op in ("/", "%"):
            return self.divide(op, left, right, t, span)
        return {"+": b.add, "-": b.sub, "*": b.mul, "&": b.and_, "|": b.or_, "^": b.xor}[op](left, right)

    def shift(self, op: str, left, right, t: IntT, rt: IntT) -> ir.Value:
        ty = self.mg.llvm(t)
        if rt.bits > t.bits:
            right = self.b.trunc(right, ty)
        elif rt.bits < t.bits:
            right = self.b.zext(right, ty)
        right = self.b.and_(right, ir.Constant(ty, t.bits - 1))  # amounts are taken modulo the width
        if op == "<<":
            return self.b.shl(left, right)
        return self.b.ashr(left, right) if t.signed else self.b.lshr(left, right)

    def divide(self, op: str, left, right, t: IntT, span) -> ir.Value:
        ty = self.mg.llvm(t)
        nonzero = self.b.icmp_unsigned("!=", right, ir.Constant(ty, 0))
        message = b"division by zero" if op == "/" else b"remainder by zero"
        self.check(nonzero, lambda: self.panic(message, span), "div")
        if not t.signed:
            return self.b.udiv(left, right) if op == "/" else self.b.urem(left, right)
        # MIN / -1 overflows in hardware; the language wraps: MIN / -1 == MIN, MIN % -1 == 0.
        minus_one = self.b.icmp_signed("==", right, ir.Constant(ty, -1))
        safe = self.b.select(minus_one, ir.Constant(ty, 1), right)
        if op == "/":
            return self.b.select(minus_one, self.b.neg(left), self.b.sdiv(left, safe))
        return self.b.select(minus_one, ir.Constant(ty, 0), self.b.srem(left, safe))

    def expr_Cast(self, e: ast.Cast) -> ir.Value:
        src, dst = self.type_of(e.expr), self.type_of(e)
        v = self.expr(e.expr)
        return self.convert(v, src, dst)

    def convert(self, v: ir.Value, src: Type, dst: Type) -> ir.Value:
        b, ty = self.b, self.mg.llvm(dst)
        if src == dst:
            return v
        if isinstance(dst, IntT):
            if isinstance(src, IntT):
                if src.bits == dst.bits:
                    return v
                if src.bits > dst.bits:
                    return b.trunc(v, ty)
                return b.sext(v, ty) if src.signed else b.zext(v, ty)
            if src == BOOL:
                return b.zext(v, ty)
            if isinstance(src, FloatT):
                kind = "fptosi" if dst.signed else "fptoui"
                fn = intrinsics.declare(self.mg.module, f"llvm.{kind}.sat.i{dst.bits}.f{src.bits}")
                return b.call(fn, [v])
            return b.ptrtoint(v, ty)
        if isinstance(dst, FloatT):
            if isinstance(src, IntT):
                return b.sitofp(v, ty) if src.signed else b.uitofp(v, ty)
            return b.fpext(v, ty) if dst.bits > src.bits else b.fptrunc(v, ty)
        if isinstance(dst, PtrT) and isinstance(src, IntT):
            return b.inttoptr(v, PTR)
        return v  # pointer to pointer, str to ptr<u8>, null to pointer

    def expr_Index(self, e: ast.Index | ast.Field) -> ir.Value:
        return self.load(self.place(e), self.type_of(e))

    expr_Field = expr_Index

    def expr_Slice(self, e: ast.Slice) -> ir.Value:
        """`base[lo..hi]`: bounds-checked (`lo <= hi <= len`), then a view of
        `hi - lo` elements from `lo`."""
        bt = self.type_of(e.base)
        if isinstance(bt, SliceT):
            view = self.expr(e.base)
            start, length = self.b.extract_value(view, 0), self.b.extract_value(view, 1)
        else:   # an array place
            start, length = self.place(e.base), I64(bt.size)
        lo = self.index_value(e.lo) if e.lo is not None else I64(0)
        hi = self.index_value(e.hi) if e.hi is not None else length
        if e.inclusive:
            if self.is_u64(e.hi):   # `..=` the largest u64 ends one past it: not 0
                last = self.b.icmp_unsigned("!=", hi, I64(-1))
                self.check(last, lambda: self.panic(b"range end index 18446744073709551616 (u64's largest plus one) "
                                                    b"out of range for a slice", e.span), "slice")
            hi = self.b.add(hi, I64(1))
        # unsigned compares: a negative bound is a huge one
        ok = self.b.and_(self.b.icmp_unsigned("<=", lo, hi), self.b.icmp_unsigned("<=", hi, length))
        unsigned = I32(UNSIGNED_FIRST * self.is_u64(e.lo) | UNSIGNED_HI * self.is_u64(e.hi))
        self.check(ok, lambda: self._slice_panic(lo, hi, length, unsigned, e.span), "slice")
        start = gep(self.b, start, [lo], self.mg.llvm(bt.elem))
        return self.slice_value(start, self.b.sub(hi, lo))

    def _slice_panic(self, lo, hi, length, unsigned, span) -> None:
        self.b.call(self.mg.runtime("panic_slice"), [lo, hi, length, unsigned] + self.panic_site(span))
        self.b.unreachable()

    def slice_value(self, start: ir.Value, length: ir.Value) -> ir.Value:
        view = self.b.insert_value(ir.Constant(SLICE, ir.Undefined), start, 0)
        return self.b.insert_value(view, length, 1)

    def expr_StructLit(self, e: ast.StructLit) -> ir.Value:
        # The fields are evaluated as written, as in Rust, whatever the
        # declaration's order (which only decides where each is stored).
        t = self.type_of(e)
        slots = {name: (i, ft) for i, (name, ft) in enumerate(self.mg.p.layouts.fields(t))}
        value = self.alloca(t, t.decl.name)
        held = []
        for f, later in zip(e.fields, suspends_after([f.value for f in e.fields])):
            i, ft = slots[f.name]
            field = self.expr(f.value)
            slot = field_ptr(self.b, value, self.mg.llvm(t), i, f.name)
            self.store(field, slot, ft)
            held.append(self.hold(slot, ft, later))
        self.landed(held)
        return value

    def expr_ArrayLit(self, e: ast.ArrayLit) -> ir.Value:
        t = self.type_of(e)
        value = self.alloca(t, "array")
        held = []
        for i, (x, later) in enumerate(zip(e.elems, suspends_after(list(e.elems)))):
            element = self.expr(x)
            slot = gep(self.b, value, [I64(0), I64(i)], self.mg.llvm(t))
            self.store(element, slot, t.elem)
            held.append(self.hold(slot, t.elem, later))
        self.landed(held)
        return value

