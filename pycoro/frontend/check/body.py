"""The checker of one function body: its scopes and side tables, and the
dispatch to the rules of statements, expressions, calls, suspension points
and ownership (one module each), which it is made of."""
from __future__ import annotations


from ...diagnostics import Span
from .. import ast
from .. import messages as M
from ..program import DirectCall, FnInstance, LocalVar
from ..resolve import span_of
from ..types import BOOL, ERROR, HANDLE, NULL, VOID, PromiseT, PtrT, Type
from .calls import CallRules
from .expressions import ExpressionRules
from .tracking import Borrow, OwnershipRules
from .flow import always_returns
from .statements import StatementRules
from .suspension import SuspensionRules, is_coroutine, suspends_task



class BodyChecker(StatementRules, ExpressionRules, CallRules, SuspensionRules, OwnershipRules):
    """Checks one function instance's body (or a global's initializer)."""

    def __init__(self, program, inst: FnInstance | None, subst: dict[str, Type]):
        # `program`: the ProgramChecker (program.py), which makes BodyCheckers
        # and is not imported here: that would be an import cycle
        self.p = program
        self.r = program.reporter
        self.inst = inst
        self.subst = subst
        self.scopes: list[dict[str, LocalVar]] = [{}]
        self.loops = 0
        self.defers = 0
        self.loop_nesting = 0
        # Owning handles moved out of their variable so far, on some path:
        # (id(var), the fields moved out of it; () for the whole) → (var, where)
        self.moved: dict[tuple[int, tuple[str, ...]], tuple[LocalVar, Span]] = {}
        # Per enclosing loop: `moved` when it was entered, and at each of its
        # `break`s (a move followed by `break` or `return` is fine, as in Rust;
        # one that reaches the next iteration is not).
        self.loop_entries: list[dict] = []
        self.loop_breaks: list[list[dict]] = []
        # The pending `defer`s that use owning variables: (the scope whose end
        # runs it, the ids of those variables, where it is). Moving one of
        # them before the `defer` runs is an error.
        self.defer_uses: list[tuple[dict, set[int], Span]] = []
        self.defer_collect: set[int] | None = None   # while checking a `defer`: what it uses
        self.field_bases: set[int] = set()   # ids of the bases of field accesses being checked
        self.inst_types: dict = {} if inst is None else inst.types
        self.awaited: ast.Call | None = None   # the call `await` / `spawn` is about to check
        # Calls of `mut self` coroutine methods whose coroutine refers to a place
        # that may die first, and the variables initialised with one: id(call or
        # var) → its Borrow. Such a coroutine is consumed where it is
        # made (for, with, await, yield from) or kept in the variable that a
        # `let`/`var` declares with it (which dies first), or assigned to a
        # variable that dies before the place does; never moved.
        self.borrowing: dict[int, Borrow] = {}
        # Each local's scope depth and declaration order: which of two dies first.
        self.declared_at: dict[int, tuple[int, int]] = {}
        self.binding: ast.Expr | None = None   # the initialiser of the `let` being checked
        self.lending: ast.Expr | None = None   # the argument of a direct call being checked (_lend)

    # ---- side tables
    def _set(self, e: ast.Node, t: Type) -> Type:
        self.inst_types[e] = t
        return t

    def _ref(self, e: ast.Node, target: object) -> None:
        if self.inst is not None:
            self.inst.refs[e] = target

    def _call(self, e: ast.Call, target) -> None:
        if isinstance(target, DirectCall) and suspends_task(target.fn) and e is not self.awaited:
            self.r.error(M.async_not_awaited(target.fn.decl.name), e.span)
        if self.inst is not None:
            self.inst.calls[e] = target

    # ---- scopes
    def declare(self, node: ast.Node, name: str, t: Type, mutable: bool, is_param: bool = False,
                owned: bool = True) -> LocalVar:
        var = LocalVar(name, t, mutable, is_param, self.loop_nesting,
                       owned=owned and t is not ERROR and self.p.layouts.owns(t))
        self.scopes[-1][name] = var
        self.declared_at[id(var)] = (len(self.scopes), len(self.declared_at))
        if self.inst is not None:
            self.inst.locals[node] = var
        return var

    def lookup(self, name: str) -> LocalVar | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def local_names(self) -> list[str]:
        return [n for s in self.scopes for n in s]

    def check_body(self) -> None:
        inst = self.inst
        for param, (name, t) in zip((p for p in inst.decl.params), inst.params):
            mutable = param.is_self and param.mut_self
            # `self` is borrowed from the caller; any other handle parameter is owned.
            var = self.declare(param, name, t.elem if param.is_self and param.mut_self else t, mutable,
                               True, owned=not param.is_self)
            var.param_index = len([v for v in inst.locals.values() if v.is_param]) - 1
        self.check_block(inst.decl.body, new_scope=False)
        if inst.ret not in (VOID, ERROR) and not is_coroutine(inst.decl) \
                and not always_returns(inst.decl.body):
            hint = M.make_it_a_coroutine() if isinstance(inst.ret, PromiseT) else None
            self.r.error(M.missing_return(inst.display, inst.ret), span_of(inst.decl), hint=hint)

    def check_block(self, block: ast.Block, new_scope: bool = True) -> None:
        if new_scope:
            self.scopes.append({})
        for stmt in block.stmts:
            self.check_stmt(stmt)
        if new_scope:
            self._pop_scope()

    def _pop_scope(self) -> None:
        """Leave the innermost scope; its `defer`s have run."""
        scope = self.scopes.pop()
        self.defer_uses = [entry for entry in self.defer_uses if entry[0] is not scope]

    def check_stmt(self, s: ast.Stmt) -> None:
        getattr(self, f"stmt_{type(s).__name__}")(s)

    def condition(self, e: ast.Expr) -> None:
        t = self.check_expr(e, BOOL)
        if t not in (BOOL, ERROR):
            self.r.error(M.cond_not_bool(t), e.span)

    def expect(self, e: ast.Expr, t: Type) -> Type:
        return self.expect_checked(e, self.check_expr(e, t), t)

    def expect_checked(self, e: ast.Expr, got: Type, t: Type) -> Type:
        """What `expect` does after checking `e` (which gave `got`): `e` moves into
        a place of type `t`. For an expression checked already (to infer type
        arguments): checking it again would repeat its moves."""
        self.consume(e, got)
        if got is ERROR or t is ERROR:
            return t
        if got == NULL and (isinstance(t, PtrT) or t == HANDLE):
            self._set(e, t)
            return t
        if got != t:
            self.r.error(M.mismatch(t, got), e.span)
        return t

    def check_expr(self, e: ast.Expr, expected: Type | None) -> Type:
        # `void` is a unit type (LANGUAGE.md §3): a variable or field of type
        # void takes no space; operators and `print` refuse it like any other type.
        return self._set(e, getattr(self, f"expr_{type(e).__name__}")(e, expected))

