"""Calls (LANGUAGE.md §3.4, §5.1): of functions (generic ones inferred), of
methods, through function values, of coroutine handles' operations and of
the builtins."""
from __future__ import annotations

from ...common.diagnostics import Span
from ...common.paths import stdlib_display
from .. import ast, intrinsics
from .. import messages as M
from ..gpu import GPU_BUILTINS
from ..program import BuiltinCall, DirectCall, HandleCall, IndirectCall, SliceCall
from ..resolve import BUILTIN_FUNCTIONS, stdlib_internal, takes_caller
from ..types import (BOOL, ERROR, HANDLE, I64, PRIMITIVES, STR, VOID, FnT, PromiseT, PtrT, SliceT, StructT, Type, TypeVar,
                     abi_of,
                     has_vars, is_scalar, substitute, unify)
from .expressions import is_literalish
from .ownership import receiver_root
from .promises import RETCON_START

_HANDLE_OPS: dict[str, dict[str, Type | None]] = {
    "promise": {"resume": VOID, "done": BOOL, "handle": HANDLE, "promise": None},
    "handle": {"resume": VOID, "done": BOOL, "destroy": VOID},
}


# a returned-continuation handle's built-in operations (`value` yields its first type
# argument): iteration, and `resume`/`done` as every owning handle has them (LANGUAGE.md
# §5.1; no `handle()` or `promise()`: there is no switched-resume frame or promise state);
# `__destroy` is for the compiler's export wrappers, which hold a handle through a pointer
_RETCON_OPS: dict[str, Type] = {"next": BOOL, "value": ERROR, "resume": VOID, "done": BOOL, "__destroy": VOID}


def handle_kind(t: Type) -> str:
    if isinstance(t, PromiseT):
        abi = abi_of(t)
        return "retcon" if abi in RETCON_START else "task" if abi == "async" else "promise"
    return "handle" if t == HANDLE else ""


def _explicit(params: list[Type], e: ast.Call) -> tuple[list[Type], Span | None]:
    """The parameters a call has arguments for, and where the call is when
    the callee takes its caller (resolve.takes_caller: never an argument)."""
    if takes_caller(params):
        return params[:-1], e.span
    return params, None


class CallRules:
    """BodyChecker's rules of this module (a mixin: `self` is the BodyChecker)."""

    def expr_Call(self, e: ast.Call, expected: Type | None) -> Type:
        callee = e.callee
        if isinstance(callee, ast.Name) and self.lookup(callee.name) is None \
                and callee.name not in self.p.globals:
            if callee.name in BUILTIN_FUNCTIONS:
                return self.builtin_call(e, callee.name)
            decl = self.p.ns.decls.get(callee.name)
            if isinstance(decl, ast.FnDecl):
                if self.internal(decl, callee.span):
                    self._args_unchecked(e)
                    return ERROR
                return self.call_decl(e, decl, (), expected)
            if isinstance(decl, (ast.StructDecl, ast.PromiseDecl)):
                self.r.error(M.not_callable(callee.name), callee.span,
                             hint=M.struct_literal_hint(callee.name))
                self._args_unchecked(e)
                return ERROR
        if isinstance(callee, ast.GenericName):
            decl = self.p.ns.decls.get(callee.name)
            if not isinstance(decl, ast.FnDecl):
                self.r.error(M.unknown_name(callee.name), callee.span,
                             hint=self.p.ns.suggest(callee.name, self.local_names()))
                self._args_unchecked(e)
                return ERROR
            if self.internal(decl, callee.span):
                self._args_unchecked(e)
                return ERROR
            targs = tuple(self.p.resolve_type(a, self.subst) for a in callee.type_args)
            if ERROR in targs:
                self._args_unchecked(e)
                return ERROR
            if len(targs) != len(decl.generics):
                self.r.error(M.type_arity(callee.name, len(decl.generics), len(targs)), callee.span)
                self._args_unchecked(e)
                return ERROR
            return self.call_decl(e, decl, targs, expected)
        if isinstance(callee, ast.Field):
            return self.method_call(e, callee, expected)
        t = self.check_expr(callee, None)
        return self.indirect_call(e, t)

    def _args_unchecked(self, e: ast.Call) -> None:
        for a in e.args:
            self.check_expr(a, None)

    def indirect_call(self, e: ast.Call, t: Type) -> Type:
        if t is ERROR:
            self._args_unchecked(e)
            return ERROR
        if not isinstance(t, FnT):
            self.r.error(M.not_callable(t), e.callee.span)
            self._args_unchecked(e)
            return ERROR
        self._check_args(e, "function", list(t.params), e.args)
        self._call(e, IndirectCall())
        return t.ret

    def _check_args(self, e: ast.Call, name: str, params: list[Type], args,
                    varargs: bool = False, extern: bool = False,
                    checked: list[Type] | None = None) -> None:
        """`checked`: the arguments' types when `_infer_call` has checked them
        already; they are not checked again (that would repeat their moves and
        every other effect of checking them, and double the work at each level
        of nested generic calls)."""
        if len(args) != len(params) and not (varargs and len(args) >= len(params)):
            msg = M.arity_at_least if varargs else M.arity
            self.r.error(msg(name, len(params), len(args)), e.span)
        for i, (a, pt) in enumerate(zip(args, params)):
            if checked is not None:
                self.expect_checked(a, checked[i], pt)
            else:
                self._check_arg(a, pt, extern)
        for a in args[len(params):]:
            t = self.check_expr(a, None)
            if t is not ERROR and not (is_scalar(t) or isinstance(t, PtrT) or t == STR):
                self.r.error(M.extern_arg(t), a.span)

    def _check_arg(self, a: ast.Expr, pt: Type, extern: bool) -> None:
        if pt is ERROR:
            self.check_expr(a, None)
        elif extern and pt == PtrT(PRIMITIVES["u8"]):
            # A `str` is passable to C as `ptr<u8>` (LANGUAGE.md §2).
            t = self.check_expr(a, pt)
            if t not in (STR, pt, ERROR):
                self.r.error(M.mismatch(pt, t), a.span)
        else:
            self.expect(a, pt)

    def call_decl(self, e: ast.Call, decl: ast.FnDecl, targs: tuple[Type, ...],
                  expected: Type | None) -> Type:
        checked = None
        if decl.generics and not targs:
            inferred = self._infer_call(e, decl, expected)
            if inferred is None:
                return ERROR
            targs, checked = inferred
        if decl.kind == "kernel":
            self.r.error(M.kernel_called(decl.name), e.span)
            return ERROR
        subst = dict(zip(decl.generics, targs))
        inst = self.p.instantiate(decl, subst, targs, at=e.span)
        params, site = _explicit([t for _, t in inst.params], e)
        self._check_args(e, decl.name, params, e.args, decl.varargs,
                         extern=decl.kind == "extern", checked=checked)
        if decl.kind == "intrinsic" and inst.ret is not ERROR \
                and intrinsics.kind_of(inst.ret) not in intrinsics.ACCEPTS.get(decl.name, ()):
            if decl.name in intrinsics.ACCEPTS and \
                    intrinsics.well_formed(decl.name, decl.generics, decl.params, decl.ret):   # else its declaration is reported
                self.r.error(M.intrinsic_type(decl.name, intrinsics.accepted(decl.name), inst.ret), e.span)
        return inst.ret if self._call(e, DirectCall(inst, site=site)) else ERROR

    def _infer_call(self, e: ast.Call, decl: ast.FnDecl, expected: Type | None) \
            -> tuple[tuple[Type, ...], list[Type]] | None:
        """The type arguments of a generic call, from its arguments (and the type
        its context expects), and the arguments' types: each argument is checked
        here, once; `_check_args` then only matches it to its parameter."""
        tv = {g: TypeVar(g) for g in decl.generics}
        ptypes = [self.p.resolve_type(p.type, tv) for p in decl.params if not p.is_self]
        ptypes, _ = _explicit(ptypes, e)
        if len(ptypes) != len(e.args):
            self.r.error(M.arity(decl.name, len(ptypes), len(e.args)), e.span)
            self._args_unchecked(e)
            return None
        subst: dict[str, Type] = {}
        deferred = []
        types: dict[ast.Expr, Type] = {}
        for a, pt in zip(e.args, ptypes):
            if is_literalish(a) or isinstance(a, ast.NullLit):
                deferred.append((a, pt))
                continue
            t = types[a] = self.check_expr(a, None if has_vars(pt) else pt)
            if t is ERROR:
                return None
            if not unify(pt, t, subst):
                self.r.error(M.mismatch(substitute(pt, subst), t), a.span)
                return None
        for a, pt in deferred:
            want = substitute(pt, subst)
            t = types[a] = self.check_expr(a, None if has_vars(want) else want)
            if t is not ERROR:
                unify(pt, t, subst)
        if expected is not None and decl.ret is not None:
            unify(self.p.resolve_type(decl.ret, tv), expected, subst)
        if any(g not in subst for g in decl.generics):
            self.r.error(M.cannot_infer_type_args(decl.name), e.span,
                         hint=M.explicit_type_args_hint(decl.name, decl.generics))
            return None
        return tuple(subst[g] for g in decl.generics), [types[a] for a in e.args]

    def method_call(self, e: ast.Call, callee: ast.Field, expected: Type | None) -> Type:
        recv = self.check_expr(callee.base, None)
        if recv is ERROR:
            self._args_unchecked(e)
            return ERROR
        ops = _HANDLE_OPS.get(handle_kind(recv))
        built_in = (ops and callee.name in ops) or (handle_kind(recv) == "retcon" and callee.name in _RETCON_OPS)
        if built_in and stdlib_internal(callee.name, stdlib_display("prelude"), callee.span.file):
            self.r.error(M.stdlib_internal(callee.name), callee.span)   # (`__destroy`: the export wrappers')
            self._args_unchecked(e)
            return ERROR
        if ops and callee.name in ops:
            return self.handle_call(e, callee, recv, ops[callee.name])
        if handle_kind(recv) == "retcon" and callee.name in _RETCON_OPS:
            result = recv.args[0] if callee.name == "value" and recv.args else _RETCON_OPS[callee.name]
            return self.handle_call(e, callee, recv, result)
        if isinstance(recv, SliceT) and callee.name == "len":
            if e.args:
                self.r.error(M.arity("len", 0, len(e.args)), e.span)
                self._args_unchecked(e)
            self._call(e, SliceCall("len", callee.base))
            return I64
        if isinstance(recv, StructT):
            for name, t in self.p.struct_fields(recv):
                if name == callee.name:
                    self._set(callee, t)
                    return self.indirect_call(e, t)
        m = self.p.find_method(recv, callee.name)
        if m is None:
            self.r.error(M.no_method(recv, callee.name), callee.span,
                         hint=self._method_hint(recv, callee.name))
            self._args_unchecked(e)
            return ERROR
        targs: tuple = ()
        checked = None
        if m.decl.generics:
            inferred = self._infer_call(e, m.decl, expected)
            if inferred is None:
                return ERROR
            targs, checked = inferred
        inst = self.p.instantiate_method(m, targs, at=e.span)
        if inst.self_mode is None:
            self.r.error(M.no_method(recv, callee.name), callee.span,
                         hint=M.no_self_hint(callee.name))
            self._args_unchecked(e)
            return ERROR
        if inst.self_mode == "ref":
            self._check_mut_receiver(callee.base, callee.name)
        params, site = _explicit([t for _, t in inst.params[1:]], e)
        self._check_args(e, callee.name, params, e.args, checked=checked)
        return inst.ret if self._call(e, DirectCall(inst, callee.base, site)) else ERROR

    def _check_mut_receiver(self, base: ast.Expr, method: str) -> None:
        root = receiver_root(base, self.inst_types)
        if isinstance(root, ast.Name):
            var = self.lookup(root.name)
            if var is not None and not var.mutable:
                self.r.error(M.mut_method_on_immutable(method, root.name), base.span,
                             hint=M.declare_var_hint(root.name))
            elif var is None and root.name in self.p.globals and not self.p.globals[root.name].decl.mutable:
                self.r.error(M.mut_method_on_immutable(method, root.name), base.span)

    def handle_call(self, e: ast.Call, callee: ast.Field, recv: Type, result: Type | None) -> Type:
        if e.args:
            self.r.error(M.arity(callee.name, 0, len(e.args)), e.span)
            self._args_unchecked(e)
        align = 8
        if result is None:  # promise(): the promise state, by reference
            result = self.p.promise_state(recv)
            align = self.p.layouts.size_align(result)[1]
        self._call(e, HandleCall(callee.name, callee.base, max(align, 1), isinstance(recv, PromiseT)))
        return result

    def _slice_of_pointer(self, e: ast.Call) -> Type:
        """`slice(p, n)`: the `n` elements at `p: ptr<T>`, as a `[T]` (unchecked, as `p` is)."""
        if len(e.args) != 2:
            self.r.error(M.arity("slice", 2, len(e.args)), e.span)
            self._args_unchecked(e)
            return ERROR
        self._call(e, BuiltinCall("slice"))
        pointer = self.check_expr(e.args[0], None)
        length = self.check_expr(e.args[1], I64 if is_literalish(e.args[1]) else None)
        if length is not ERROR and not length.is_int:
            self.r.error(M.slice_bound(length), e.args[1].span)
        if pointer is ERROR:
            return ERROR
        if not isinstance(pointer, PtrT):
            self.r.error(M.slice_needs_ptr(pointer), e.args[0].span)
            return ERROR
        return self.p.slice_type(pointer.elem, e.span)

    def _method_hint(self, recv: Type, name: str) -> str | None:
        import difflib
        close = difflib.get_close_matches(name, self.p.method_names(recv), n=1)
        return M.did_you_mean(close[0]) if close else None

    def builtin_call(self, e: ast.Call, name: str) -> Type:
        if name in GPU_BUILTINS:
            if e.args:
                self.r.error(M.arity(name, 0, len(e.args)), e.span)
                self._args_unchecked(e)
            if not self.p.gpu:
                if self.inst is None or self.inst.decl.kind != "kernel":   # else the kernel is reported
                    self.r.error(M.gpu_builtin(name), e.span, hint=M.gpu_hint())
                return ERROR
            self._call(e, BuiltinCall(name))
            return GPU_BUILTINS[name]
        if name == "slice":
            return self._slice_of_pointer(e)
        if name == "noop_handle":
            if e.args:
                self.r.error(M.arity("noop_handle", 0, len(e.args)), e.span)
            self._call(e, HandleCall("noop", None))
            return HANDLE
        self._call(e, BuiltinCall(name))
        if name == "print":
            for a in e.args:
                t = self.check_expr(a, None)
                if t is not ERROR and not (is_scalar(t) or t == STR or isinstance(t, PtrT)):
                    self.r.error(M.not_printable(t), a.span)
            return VOID
        if name == "assert":
            if len(e.args) not in (1, 2):
                self.r.error(M.arity("assert", 1, len(e.args)), e.span)
                self._args_unchecked(e)
                return VOID
            self.condition(e.args[0])
            if len(e.args) == 2:
                self.expect(e.args[1], STR)
            return VOID
        # panic
        if len(e.args) != 1:
            self.r.error(M.arity("panic", 1, len(e.args)), e.span)
            self._args_unchecked(e)
            return VOID
        self.expect(e.args[0], STR)
        return VOID

