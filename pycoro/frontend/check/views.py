"""What slices view (LANGUAGE.md §2.1), the ownership pass's rules for them
(a mixin of OwnershipPass: `self` is the pass).

Every value whose type holds a slice (a slice, or a struct or array with
one) has origins: the arrays it may view. A local array's slice may not
outlive the array: returning it, yielding it, storing it in a global or in
a variable that could outlive the array, or handing it to a coroutine that
could (the borrowing-coroutine rule) is an error. Writing through a slice
of an array that cannot be assigned (a `let`, a parameter) is an error too.
What a function does with its slice parameters (writes through them, keeps
them in a global) is known once every body is checked: FnInstance's
`written_params` and `escaping_params`, through the calls that pass them on
(`param_flows`), and the arguments to check against them (`Passed`).
"""
from __future__ import annotations

from .. import ast, intrinsics
from .. import messages as M
from ..program import BuiltinCall, DirectCall, FnInstance, GlobalVar, HandleCall, LocalVar
from ..types import PromiseT, PtrT, SliceT
from .borrows import Borrow, Origin, Passed, place_root


NONE: frozenset = frozenset()


class ViewRules:
    """OwnershipPass's rules for slices (a mixin: `self` is the pass)."""

    # ---- where a value's slices come from
    def origins(self, e: ast.Expr) -> frozenset:
        """The arrays the slices in `e` may view (empty: none, or memory whose
        owner is the program's business, as through a raw pointer)."""
        match e:
            case ast.Name():
                ref = self.inst.refs.get(e)
                return self.views.get(id(ref), NONE) if isinstance(ref, LocalVar) else NONE
            case ast.Slice(base=base):
                if isinstance(self.types.get(base), SliceT):
                    return self.origins(base)
                return self._place_origin(base)
            case ast.Field(base=base) | ast.Index(base=base):
                return self.origins(base)
            case ast.Cast(expr=inner):
                return self.origins(inner)
            case ast.StructLit(fields=fields):
                return frozenset().union(*(self.origins(f.value) for f in fields))
            case ast.ArrayLit(elems=elems):
                return frozenset().union(*(self.origins(x) for x in elems))
            case ast.Call():
                return self._call_origins(e)
            case ast.Await(operand=operand):
                return self.origins(operand)
        return NONE

    def _call_origins(self, call: ast.Call) -> frozenset:
        """What a call's result may view: what its arguments (and a receiver) do,
        as Rust's lifetime elision assumes (`fn first_half(xs: [i64]) -> [i64]`)."""
        target = self.inst.calls.get(call)
        if isinstance(target, BuiltinCall) or target is None:
            return NONE   # `slice(p, n)`: the pointer's memory
        if isinstance(target, HandleCall):   # a Stream's `value()` is what its frame yields
            return self.origins(target.receiver) if target.receiver is not None else NONE
        found = frozenset().union(*(self.origins(a) for a in call.args))
        if isinstance(target, DirectCall) and target.receiver is not None:
            receiver = target.receiver
            found |= self._place_origin(receiver) if target.fn.self_mode == "ref" else self.origins(receiver)
        return found

    def _place_origin(self, place: ast.Expr) -> frozenset:
        """What a slice of the array place `place` views: its variable, or what
        the slice or pointer it is reached through views."""
        root, through = place_root(place, self.types, (PtrT, SliceT))
        if through:
            return self.origins(root) if isinstance(self.types.get(root), SliceT) else NONE
        ref = self.inst.refs.get(root) if isinstance(root, ast.Name) else None
        if isinstance(ref, GlobalVar):
            return frozenset({Origin(ref.name, ref.decl.mutable, False)})
        if not isinstance(ref, LocalVar):
            return NONE
        if ref.is_param and ref.name == "self" and ref.mutable:   # `mut self`: the caller's place
            return frozenset({Origin("self", True, False, param=0)})
        return frozenset({Origin(ref.name, ref.mutable, True, ref)})

    def _carries_views(self, t) -> bool:
        """Whether a value of type t has origins: it holds a slice, or it is a
        coroutine handle whose values may (`gen(xs)`'s values may be slices of
        `xs`: what a consumer writes through them is written into `xs`)."""
        return self.layouts.views(t) or (isinstance(t, PromiseT) and any(self.layouts.views(a) for a in t.args))

    def _declare_views(self, var: LocalVar | None, init: ast.Expr | None) -> None:
        if var is None or not self._carries_views(var.type):
            return
        if var.is_param:   # the caller's memory, through this parameter
            self.views[id(var)] = frozenset({Origin(var.name, True, False, param=var.param_index)})
        elif init is not None:
            self.views[id(var)] = self.origins(init)

    # ---- the rules
    def _check_stored(self, target: ast.Expr, value: ast.Expr) -> None:
        """`target = value`: where the value's slices go may not outlive what they view."""
        if not self._carries_views(self.types.get(value)):
            return
        found = self.origins(value)
        root, through = place_root(target, self.types, (PtrT, SliceT))
        ref = self.inst.refs.get(root) if isinstance(root, ast.Name) and not through else None
        if isinstance(ref, LocalVar) and not ref.is_param:
            self.views[id(ref)] = self.views.get(id(ref), NONE) | found
            for origin in found:
                if origin.var is not None and not self._dies_first(ref, origin.var):
                    self.r.error(M.slice_outlives(origin.name, ref.name), value.span,
                                 hint=M.slice_holder_hint(origin.name))
            return
        where = M.q(ref.name) if isinstance(ref, GlobalVar) else None
        self._escapes(value, found, M.slice_stored(where), kept=True)

    def _escapes(self, value: ast.Expr, found: frozenset, how: str, kept: bool = False) -> None:
        """The slices of `value` leave this call of the function (returned,
        yielded, or `kept` beyond the caller's locals: in a global): a local
        array's may not; the caller's, through a parameter, may be returned or
        yielded (the caller sees what the result views) but not kept."""
        for origin in found:
            if origin.local:
                hint = M.slice_stored_hint() if kept else M.slice_escapes_hint()
                self.r.error(M.slice_escapes(origin.name, how), value.span, hint=hint)
                return
            if origin.param >= 0 and kept:
                self.inst.escaping_params.add(origin.param)

    def _check_escape(self, value: ast.Expr, how: str) -> None:
        if self.layouts.views(self.types.get(value)):
            self._escapes(value, self.origins(value), how)

    def _check_write_through(self, target: ast.Expr) -> None:
        """`s[i] = v` (or `s[i].f op= v`): a write through the slice `s`."""
        view, through = place_root(target, self.types, (SliceT,))
        if not through:
            return
        for origin in self.origins(view):
            if origin.param >= 0:
                self.inst.written_params.add(origin.param)
            elif not origin.writable:
                self.r.error(M.write_through_slice(origin.name), target.span, hint=_assignable_hint(origin))

    def _check_pointer_into(self, place: ast.Expr) -> None:
        """`&s[i]`: a pointer into what the slice `s` views. A `ptr` is
        unchecked (its writes are not followed), so Python lends a function
        that points into its slice parameter no read-only buffer. (Into a
        `let` array it is allowed, as `&a[i]` is: PyCoro callers are not
        refused.)"""
        view, through = place_root(place, self.types, (SliceT,))
        if through:
            self._pointed_into(view)

    def _pass_to_c(self, arg: ast.Expr) -> None:
        """`arg` goes to an `extern fn`, which may write through its slices:
        as with `&xs[i]`, a slice parameter's caller in Python or C lends no
        read-only memory for it (PyCoro callers are C's business)."""
        if self.layouts.views(self.types.get(arg)):
            self._pointed_into(arg)

    def _pointed_into(self, e: ast.Expr) -> None:
        """What `e` views is written where no check follows: its parameters'
        callers lend no read-only memory (`pointed_params`)."""
        for origin in self.origins(e):
            if origin.param >= 0:
                self.inst.pointed_params.add(origin.param)

    def _pass_views(self, call: ast.Call, arg: ast.Expr, fn: FnInstance | None, index: int) -> None:
        """`arg` goes to parameter `index` of `fn` (None: through a function
        value, whose doings are unknown)."""
        if not self._carries_views(self.types.get(arg)):
            return
        if fn is not None and fn.decl.kind == "intrinsic" and index in intrinsics.KEEPS.get(fn.decl.name, ()):
            self._escapes(arg, self.origins(arg), M.slice_stored(None), kept=True)
            return
        for origin in self.origins(arg):
            if fn is None:   # it may write through it or keep it
                if origin.param >= 0:
                    self.inst.written_params.add(origin.param)
                    self.inst.escaping_params.add(origin.param)
                elif not origin.writable or origin.local:
                    self.r.error(M.slice_to_unknown(origin.name), arg.span)
                    return
                continue
            if origin.param >= 0:
                self.inst.param_flows.append((origin.param, fn, index))
            elif not origin.writable or origin.local:
                self.passed.append(Passed(arg, fn, index, origin))
            if origin.local and (fn.is_coroutine or isinstance(self.types.get(call), PromiseT)):
                # the coroutine it makes may keep the slice: it borrows the array
                self.borrowing.setdefault(id(call), Borrow(M.q(origin.name), origin.var))


def settle_params(instances: list[FnInstance]) -> None:
    """A parameter passed on to one that is written through (or kept) is
    written through (kept) too: to a fixed point, for recursion."""
    changed = True
    while changed:
        changed = False
        for inst in instances:
            for param, callee, index in inst.param_flows:
                for facts in ("written_params", "escaping_params", "pointed_params"):
                    mine, theirs = getattr(inst, facts), getattr(callee, facts)
                    if index in theirs and param not in mine:
                        mine.add(param)
                        changed = True


def check_passed(passed: list[Passed], reporter) -> None:
    for p in passed:
        if not p.origin.writable and p.index in p.callee.written_params:
            reporter.error(M.slice_written_by(p.origin.name, p.callee.display), p.arg.span,
                           hint=_assignable_hint(p.origin) if p.origin.local else None)
        elif p.origin.local and p.index in p.callee.escaping_params:
            reporter.error(M.slice_kept_by(p.origin.name, p.callee.display), p.arg.span)


def _assignable_hint(origin: Origin) -> str | None:
    """How to make what a slice views assignable: a parameter is copied into a
    `var`; a `let` (or a global) is declared `var`."""
    if origin.var is not None and origin.var.is_param:
        return M.copy_param_hint(origin.name)
    return M.declare_var_hint(origin.name) if origin.local or origin.var is None else None
