"""The OLD ownership tracking, interleaved with type checking; kept only while
ownership.py's pass runs beside it (PYCORO_OWNERSHIP_BESIDE). Ownership (LANGUAGE.md §5.2): moves and partial moves of owning
coroutine handles, loop and branch merging of what was moved, `defer` uses,
coroutines that borrow a `mut self` place, and the facts the code generator
reads (`consumed`, `moved_params`, `elide_safe`)."""
from __future__ import annotations

from ...diagnostics import Span
from ...record import record
from .. import ast
from .. import messages as M
from ..program import DirectCall, FnInstance, LocalVar
from ..types import ERROR, PromiseT, PtrT, Type


@record(frozen=True, eq=False)
class Borrow:
    """What a coroutine made by a `mut self` method refers to: the method, the
    place as messages name it, and the local variable it is (None: a temporary)."""
    method: str
    place: str
    var: object = None   # LocalVar | None


def path_text(var: LocalVar, path: tuple[str, ...]) -> str:
    return ".".join((var.name, *path))


def mark_elide_safe(inst: FnInstance) -> None:
    """Coroutine calls whose frame certainly dies before the caller returns, so
    LLVM may place it in the caller's frame (`coro_elide_safe`):
    - a temporary: destroyed at the end of its statement (`for v in g(…)`,
      `await f(…)`, `g(…).next()`);
    - an argument of a call that is itself safe, or of an ordinary function,
      when the callee never moves that parameter: it dies with the callee
      (`sum(take(map(range(0, n), f), k))`);
    - the initial value of a `let`/`var` that is never moved: the variable's
      scope destroys it (`let s = g(…); while s.next() { … }`)."""
    def visit(call: ast.Call, safe: bool) -> None:
        if safe and isinstance(inst.types.get(call), PromiseT):
            inst.elide_safe.add(id(call))
        target = inst.calls.get(call)
        if not isinstance(target, DirectCall) or target.fn.is_extern:
            return
        callee_safe = target.fn.coro is None or id(call) in inst.elide_safe
        offset = 1 if target.receiver is not None else 0
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Call):
                visit(arg, callee_safe and (i + offset) not in target.fn.moved_params)

    for call in inst.calls:
        if isinstance(inst.types.get(call), PromiseT) and id(call) not in inst.consumed:
            inst.elide_safe.add(id(call))
    moved = {id(ref) for name, ref in inst.refs.items() if id(name) in inst.consumed}
    for node, var in inst.locals.items():
        if isinstance(node, ast.Let) and isinstance(node.init, ast.Call) and var.owned \
                and not var.is_param and id(var) not in moved and isinstance(var.type, PromiseT):
            inst.elide_safe.add(id(node.init))
    for call in inst.calls:
        if isinstance(call, ast.Call):
            visit(call, id(call) in inst.elide_safe)


class OwnershipRules:
    """BodyChecker's rules of this module (a mixin: `self` is the BodyChecker)."""

    def _dies_first(self, holder: LocalVar, borrow: Borrow) -> bool:
        """Whether `holder` goes out of scope before the place that a borrowing
        coroutine refers to: that place is a local declared earlier in the
        same scope, or in an enclosing one (a parameter, `self`)."""
        if borrow.var is None:
            return False
        (place_depth, place_order), (depth, order) = self.declared_at[id(borrow.var)], self.declared_at[id(holder)]
        return place_depth < depth or (place_depth == depth and place_order < order)

    def _refill(self, place: tuple[LocalVar, tuple[str, ...]] | None) -> None:
        """Assigning to a local (or a field of one) gives it its handles again."""
        if place is not None:
            var, path = place
            self.moved = {key: m for key, m in self.moved.items()
                          if key[0] != id(var) or key[1][:len(path)] != path}

    def _check_next_iteration(self) -> None:
        """At the end of a loop's body or a `continue`: what was moved in this
        iteration out of a variable declared outside the loop (and not given
        a value again) would be moved again in the next."""
        for var, path, span in self._moves_since(self.loop_entries[-1]):
            if var.loop_depth < self.loop_nesting:
                self.r.error(M.move_in_loop(path_text(var, path)), span)

    def _moves_since(self, before: dict) -> list[tuple[LocalVar, tuple[str, ...], Span]]:
        """The moves made since `moved` was `before`: (variable, fields, where)."""
        return [(var, key[1], span) for key, (var, span) in self.moved.items() if before.get(key) != (var, span)]

    def consume(self, e: ast.Expr, t: Type) -> None:
        """`e` moves into its context (a variable, an argument, a return): an owning
        handle leaves the variable that held it."""
        if self.inst is None or t is ERROR or not self.p.layouts.owns(t):
            return
        self.inst.consumed.add(id(e))
        borrow = self._borrow_of(e)
        if borrow is not None and e is not self.binding and e is not self.lending:
            self.r.error(M.borrowing_coroutine_moved(borrow.method, borrow.place), e.span,
                         hint=M.borrowing_coroutine_hint(borrow.method))
        if isinstance(e, (ast.Name, ast.Field)):
            place = self._local_path(e)
            if place is None:
                # a field through a pointer, or anything of `self` (the caller's):
                # a copy would be a second owner
                if isinstance(e, ast.Field) or self.lookup(e.name) is not None:
                    self.r.error(M.move_out_of_place(), e.span)
                return
            var, path = place
            for _, used, where in self.defer_uses:
                if id(var) in used:   # it runs when its scope ends: after this move
                    self.r.error(M.move_used_by_defer(path_text(var, path)), e.span,
                                 notes=[(M.deferred_here(), where)])
                    break
            self.moved[id(var), path] = (var, e.span)   # in a loop: see _check_next_iteration
            if var.is_param:
                self.inst.moved_params.add(var.param_index)
        elif isinstance(e, ast.Index):
            self.r.error(M.move_out_of_place(), e.span)

    def _local_path(self, e: ast.Expr) -> tuple[LocalVar, tuple[str, ...]] | None:
        """`x` or `x.a.b` of a local variable that owns what it holds: x, and
        the fields (`("a", "b")`). A field can be moved out of such a
        variable alone (as in Rust); nothing can be moved out through a
        pointer or an index, out of `self`, or out of a temporary."""
        path = []
        while isinstance(e, ast.Field):
            path.append(e.name)
            e = e.base
        var = self.lookup(e.name) if isinstance(e, ast.Name) else None
        if var is None or not var.owned:
            return None
        return var, tuple(reversed(path))

    def _check_not_moved(self, e: ast.Expr) -> bool:
        """A use of `x` or `x.a.b` as a whole: nothing of it may have been moved."""
        if id(e) in self.field_bases:   # `x` of `x.a`: the access as a whole is checked
            return True
        place = self._local_path(e)
        if place is None:
            return True
        var, path = place
        for (key, moved_path), (_, where) in self.moved.items():
            if key == id(var) and path[:len(moved_path)] == moved_path[:len(path)]:
                whole = len(moved_path) <= len(path)
                message = (M.use_after_move(path_text(var, path)) if whole
                           else M.use_after_partial_move(path_text(var, path), path_text(var, moved_path)))
                self.r.error(message, e.span, notes=[(M.moved_here(), where)])
                return False
        return True

    def _borrow_of(self, e: ast.Expr) -> Borrow | None:
        """The borrow of a coroutine that refers to a `mut self` place: made by the
        call `e`, or held by the variable `e`."""
        if isinstance(e, ast.Name):
            var = self.lookup(e.name)
            return None if var is None else self.borrowing.get(id(var))
        return self.borrowing.get(id(e))

    def _lend(self, call: ast.Call, arg: ast.Expr, callee: FnInstance, index: int, borrow: Borrow) -> None:
        """A coroutine that refers to a `mut self` place is passed to `callee`: fine
        while the callee does not move it on (checked when every body is), and
        the call's own coroutine, if it makes one, may hold it: it borrows too."""
        self.p.lent.append((arg, callee, index, borrow))
        if callee.is_coroutine:
            self.borrowing[id(call)] = borrow

    def _receiver_root(self, base: ast.Expr) -> ast.Expr | None:
        """The variable or temporary whose value a `mut self` method on `base`
        changes; None when `base` is reached through a pointer."""
        root = base
        while isinstance(root, (ast.Field, ast.Index)):
            if isinstance(self.inst_types.get(root.base), PtrT):
                return None
            root = root.base
        return root

    def _borrowed_place(self, base: ast.Expr) -> str | None:
        """What a coroutine started by a `mut self` method on `base` refers to, when
        that may die before the coroutine does: a local variable (or the caller's
        place, for `self`) or a temporary. None for a global, or a place reached
        through a pointer (raw pointers are the program's own business)."""
        root = self._receiver_root(base)
        if root is None:
            return None
        if not isinstance(root, ast.Name):
            return "a temporary"
        return M.q(root.name) if self.lookup(root.name) is not None else None

    def _check_mut_receiver(self, base: ast.Expr, method: str) -> None:
        root = self._receiver_root(base)
        if isinstance(root, ast.Name):
            var = self.lookup(root.name)
            if var is not None and not var.mutable:
                self.r.error(M.mut_method_on_immutable(method, root.name), base.span,
                             hint=M.declare_var_hint(root.name))
            elif var is None and root.name in self.p.globals and not self.p.globals[root.name].decl.mutable:
                self.r.error(M.mut_method_on_immutable(method, root.name), base.span)

