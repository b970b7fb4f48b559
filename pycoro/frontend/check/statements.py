"""Statements (LANGUAGE.md §4): bindings, assignment and places, control
flow, `with`, `defer`, `return`."""
from __future__ import annotations

from .. import ast
from .. import messages as M
from ..program import HandleCall, IterProtocol, LocalVar
from ..types import BOOL, ERROR, NULL, VOID, PromiseT, PtrT, SliceT, Type, abi_of
from .calls import handle_kind
from .expressions import is_literalish
from .suspension import is_coroutine


class StatementRules:
    """BodyChecker's rules of this module (a mixin: `self` is the BodyChecker)."""

    def stmt_Block(self, s: ast.Block) -> None:
        self.check_block(s)

    def stmt_Let(self, s: ast.Let) -> None:
        if s.type is not None:
            t = self.p.resolve_type(s.type, self.subst)
            if s.init is not None and t is not ERROR:
                self.expect(s.init, t)
            elif s.init is not None:
                self.check_expr(s.init, None)
            elif not s.mutable:
                self.r.error(M.let_needs_init(s.name), s.span)
        elif s.init is not None:
            t = self.check_expr(s.init, None)
            if t == NULL:
                self.r.error(M.cannot_infer_null(), s.init.span, hint=M.annotate_null_hint(s.name))
                t = ERROR
        else:
            self.r.error(M.cannot_infer_let(s.name), s.span, hint=M.annotate_let_hint(s.name))
            t = ERROR
        self.declare(s, s.name, t, s.mutable)

    def stmt_Assign(self, s: ast.Assign) -> None:
        target_t = self.check_place(s.target, write=True)
        if s.op == "=":
            if target_t is not ERROR:
                self.expect(s.value, target_t)
            else:
                self.check_expr(s.value, None)
            return
        self.binary_types(s.op, s.target, s.value, s.span, target_t)

    def stmt_ExprStmt(self, s: ast.ExprStmt) -> None:
        self.check_expr(s.expr, None)

    def stmt_If(self, s: ast.If) -> None:
        self.condition(s.cond)
        self.check_block(s.then)
        if isinstance(s.else_, ast.If):
            self.stmt_If(s.else_)
        elif s.else_ is not None:
            self.check_block(s.else_)

    def stmt_While(self, s: ast.While) -> None:
        self.condition(s.cond)
        self.loop_body(s.body)

    def stmt_Loop(self, s: ast.Loop) -> None:
        self.loop_body(s.body)

    def loop_body(self, body: ast.Block, before=None) -> None:
        self.loops += 1
        saved, self.defers = self.defers, 0
        self.scopes.append({})
        if before:
            before()
        self.check_block(body, new_scope=False)
        self.scopes.pop()
        self.loops -= 1
        self.defers = saved

    def stmt_For(self, s: ast.For) -> None:
        if s.end is not None:
            t = self.range_bounds(s.iter, s.end)
            self.loop_body(s.body, lambda: self.declare(s, s.var, t, False))
            return
        it = self.check_expr(s.iter, None)
        if it is ERROR:
            self.loop_body(s.body, lambda: self.declare(s, s.var, ERROR, False))
            return
        if isinstance(it, SliceT):   # its elements in order (LANGUAGE.md §2.1)
            self.loop_body(s.body, lambda: self.declare(s, s.var, it.elem, False))
            return
        if handle_kind(it) == "retcon":   # built in (LANGUAGE.md §6)
            next_fn, value_fn = HandleCall("next", None), HandleCall("value", None)
            item_type = it.args[0] if it.args else ERROR
        else:
            nxt, val = self.p.find_method(it, "next"), self.p.find_method(it, "value")
            if nxt is None or val is None:
                self.r.error(M.not_iterable(it), s.iter.span)
                self.loop_body(s.body, lambda: self.declare(s, s.var, ERROR, False))
                return
            next_fn = self.p.instantiate_method(nxt, at=s.iter.span)
            value_fn = self.p.instantiate_method(val, at=s.iter.span)
            if (next_fn.ret != BOOL or len(next_fn.params) != 1 or len(value_fn.params) != 1
                    or next_fn.self_mode is None or value_fn.self_mode is None
                    or next_fn.is_async or value_fn.is_async):   # (a `for` is no await)
                self.r.error(M.not_iterable(it), s.iter.span)
            item_type = value_fn.ret
        holder = LocalVar(f"{s.var}.iter", it, True)

        def bind():
            item = self.declare(s, s.var, item_type, False)
            if self.inst is not None:
                self.inst.iters[s] = IterProtocol(next_fn, value_fn, item, holder)
        self.loop_body(s.body, bind)

    def range_bounds(self, lo: ast.Expr, hi: ast.Expr) -> Type:
        if is_literalish(lo) and not is_literalish(hi):
            t = self.check_expr(hi, None)
            self.expect(lo, t)
        else:
            t = self.check_expr(lo, None)
            self.expect(hi, t)
        if t is not ERROR and not t.is_int:
            self.r.error(M.range_bound(t), lo.span.to(hi.span))
            return ERROR
        return t

    def stmt_With(self, s: ast.With) -> None:
        t = self.check_expr(s.expr, None)
        item = ERROR
        if isinstance(t, PromiseT) and abi_of(t) == "retcon_once":
            item = t.args[0] if t.args else ERROR
        elif t is not ERROR:
            self.r.error(M.with_needs_once(t), s.expr.span)
        self.scopes.append({})
        self.declare(s, s.var, item, False)
        if self.inst is not None and item is not ERROR:
            self.inst.withs[s] = LocalVar(f"{s.var}.with", t, True)
        self.check_block(s.body, new_scope=False)
        self.scopes.pop()

    def stmt_Break(self, s: ast.Break) -> None:
        self._jump(s, "break")

    def stmt_Continue(self, s: ast.Continue) -> None:
        self._jump(s, "continue")

    def _jump(self, s: ast.Stmt, kw: str) -> None:
        if self.defers:
            self.r.error(M.jump_out_of_defer(kw), s.span)
        elif not self.loops:
            self.r.error(M.break_outside_loop(kw), s.span)

    def stmt_Return(self, s: ast.Return) -> None:
        if self.defers:
            self.r.error(M.jump_out_of_defer("return"), s.span)
        if is_coroutine(self.inst.decl):
            self.r.error(M.return_in_coroutine(), s.span, hint=M.use_co_return_hint())
            if s.value is not None:
                self.check_expr(s.value, None)
            return
        ret = self.inst.ret
        if s.value is None:
            if ret not in (VOID, ERROR):
                self.r.error(M.return_missing_value(ret), s.span)
        elif ret == VOID:
            t = self.check_expr(s.value, None)
            if t not in (VOID, ERROR):
                self.r.error(M.return_value_in_void(self.inst.display), s.value.span)
        else:
            self.expect(s.value, ret)

    def stmt_Defer(self, s: ast.Defer) -> None:
        if isinstance(s.stmt, (ast.Let, ast.Defer)):
            self.r.error(M.defer_declares(), s.stmt.span)
            return
        self.defers += 1
        saved, self.loops = self.loops, 0
        self.check_stmt(s.stmt)
        self.loops = saved
        self.defers -= 1

    def check_place(self, e: ast.Expr, write: bool) -> Type:
        """Type of an assignable (or addressable) expression; reports why not."""
        match e:
            case ast.Name(name=name):
                t = self.check_expr(e, None)
                var = self.lookup(name)
                if write and var is not None and not var.mutable:
                    if var.is_param and name == "self":
                        self.r.error(M.assign_self(), e.span)
                    elif var.is_param:
                        self.r.error(M.assign_param(name), e.span, hint=M.copy_param_hint(name))
                    else:
                        self.r.error(M.assign_immutable(name), e.span, hint=M.declare_var_hint(name))
                    return ERROR
                if var is None:
                    g = self.p.globals.get(name)
                    if g is None:
                        if t is not ERROR:
                            self.r.error(M.not_assignable() if write else M.not_addressable(), e.span)
                        return ERROR
                    if write and not g.decl.mutable:
                        self.r.error(M.assign_immutable(name), e.span, hint=M.declare_var_hint(name))
                        return ERROR
                return t
            case ast.Field(base=base) | ast.Index(base=base):
                t = self.check_expr(e, None)
                if t is ERROR:
                    return ERROR
                if isinstance(self.inst_types.get(base), (PtrT, SliceT)):
                    return t  # through a raw pointer or a slice (ownership.py checks a slice's origin)
                if self._place_root_ok(base, write):
                    return t
                return ERROR
        t = self.check_expr(e, None)
        if t is not ERROR:
            self.r.error(M.not_assignable() if write else M.not_addressable(), e.span)
        return ERROR

    def _place_root_ok(self, base: ast.Expr, write: bool) -> bool:
        """`a.b[i].c = v` needs `a` to be a mutable place (or a pointer)."""
        match base:
            case ast.Name():
                return self.check_place(base, write) is not ERROR
            case ast.Field(base=inner) | ast.Index(base=inner):
                if isinstance(self.inst_types.get(inner), (PtrT, SliceT)):
                    return True
                return self._place_root_ok(inner, write)
            case ast.Call() if self.inst is not None and isinstance(self.inst.calls.get(base), HandleCall):
                return True  # `h.promise()` is the promise itself, by reference
        if not write:
            # Reading a field of a temporary is fine; taking its address is not.
            return True
        self.r.error(M.not_assignable(), base.span)
        return False

