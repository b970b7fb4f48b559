"""The type checker of one function body: its scopes and side tables, and
the dispatch to the rules of statements, expressions, calls and suspension
points (one module each), which it is made of. Ownership is checked after
it, by ownership.py's pass."""
from __future__ import annotations


from .. import ast
from .. import messages as M
from ..program import DirectCall, FnInstance, LocalVar
from ..resolve import span_of, stdlib_internal
from ..types import BOOL, ERROR, HANDLE, NULL, VOID, ArrayT, FloatT, IntT, PromiseT, PtrT, SliceT, Type
from .calls import CallRules
from .expressions import ExpressionRules
from .flow import always_returns
from .statements import StatementRules
from .suspension import SuspensionRules, is_coroutine, suspends_task



class BodyChecker(StatementRules, ExpressionRules, CallRules, SuspensionRules):
    """Checks one function instance's body (or a global's initializer)."""

    def __init__(self, program, inst: FnInstance | None, subst: dict[str, Type]):
        # `program`: the ProgramChecker (program.py), which makes BodyCheckers
        # and is not imported here: that would be an import cycle
        self.p = program
        self.r = program.reporter
        self.inst = inst
        self.subst = subst
        self.scopes: list[dict[str, LocalVar]] = [{}]
        self.loops = 0    # loops around the statement being checked (`break` needs one)
        self.defers = 0   # `defer`s around it (nothing may jump out of one)
        self.inst_types: dict = {} if inst is None else inst.types
        self.awaited: ast.Call | None = None   # the call `await` / `spawn` is about to check

    # ---- side tables
    def _set(self, e: ast.Node, t: Type) -> Type:
        self.inst_types[e] = t
        return t

    def _ref(self, e: ast.Node, target: object) -> None:
        if self.inst is not None:
            self.inst.refs[e] = target

    def _call(self, e: ast.Call, target) -> bool:
        """Records the call's target; False where the call itself is an error
        (an `async fn` called bare), so its result type absorbs what follows."""
        if self.inst is not None:
            self.inst.calls[e] = target
        if isinstance(target, DirectCall) and suspends_task(target.fn) and e is not self.awaited:
            name = _callee_text(e)
            if self.inst is None or self.inst.is_async:
                self.r.error(M.async_not_awaited(name), e.span)
            else:   # neither `await` nor `spawn` is open to it: say what is
                self.r.error(M.async_called_outside(name, self.inst.display), e.span,
                             hint=M.async_main_hint() if self.inst.display == "main" else None)
            return False
        return True

    # ---- scopes
    def declare(self, node: ast.Node, name: str, t: Type, mutable: bool, is_param: bool = False,
                owned: bool = True) -> LocalVar:
        var = LocalVar(name, t, mutable, is_param, owned=owned and t is not ERROR and self.p.layouts.owns(t))
        self.scopes[-1][name] = var
        if self.inst is not None:
            self.inst.locals[node] = var
        return var

    def internal(self, decl: ast.Decl, span) -> bool:
        """Whether `decl` is one of the stdlib's internals (a `__` name, as
        Rust's private items) named by the program's own code: an error."""
        if not stdlib_internal(decl.name, span_of(decl).file, span.file):
            return False
        self.r.error(M.stdlib_internal(decl.name), span)
        return True

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
            var = self.declare(param, name, t.elem if param.is_self and isinstance(t, PtrT) else t, mutable,
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
            self.scopes.pop()

    def check_stmt(self, s: ast.Stmt) -> None:
        getattr(self, f"stmt_{type(s).__name__}")(s)

    def condition(self, e: ast.Expr) -> None:
        t = self.check_expr(e, BOOL)
        if t not in (BOOL, ERROR):
            self.r.error(M.cond_not_bool(t), e.span)

    def expect(self, e: ast.Expr, t: Type) -> Type:
        return self.expect_checked(e, self.check_expr(e, t), t)

    def expect_checked(self, e: ast.Expr, got: Type, t: Type) -> Type:
        """What `expect` does after checking `e` (which gave `got`): `e` goes into
        a place of type `t`. For an expression checked already (to infer type
        arguments): checking it again would repeat its effects."""
        if got is ERROR or t is ERROR:
            return t
        if got == NULL and (isinstance(t, PtrT) or t == HANDLE):
            self._set(e, t)
            return t
        if got != t:
            slices = isinstance(t, SliceT) and isinstance(got, ArrayT) and got.elem == t.elem
            name = e.name if isinstance(e, ast.Name) else "array"
            hint = M.slice_it_hint(name) if slices else None
            if isinstance(t, (IntT, FloatT)) and isinstance(got, (IntT, FloatT)):   # no implicit conversions
                hint = M.as_hint(e.name if isinstance(e, ast.Name) else "(…)", t)
            self.r.error(M.mismatch(t, got), e.span, hint=hint)
        return t

    def check_expr(self, e: ast.Expr, expected: Type | None) -> Type:
        # `void` is a unit type (LANGUAGE.md §3): a variable or field of type
        # void takes no space; operators and `print` refuse it like any other type.
        return self._set(e, getattr(self, f"expr_{type(e).__name__}")(e, expected))


def _callee_text(e: ast.Call) -> str:
    """How the program names what it calls, for a message (`ch.send`,
    `self.ch.send`; `(…).send` on a receiver that is not a path)."""
    def path(x: ast.Expr) -> str:
        match x:
            case ast.Field(base=base, name=name):
                return f"{path(base)}.{name}"
            case ast.Name(name=name) | ast.GenericName(name=name):
                return name
        return "(…)"
    return path(e.callee)
