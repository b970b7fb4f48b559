"""Suspension points (LANGUAGE.md §5–§7): `yield`, `yield from`, `await`,
`spawn`, `co_return`, and the promise hooks and awaiter protocols they call."""
from __future__ import annotations

import contextlib

from ...common.diagnostics import Span
from ...common.memo import while_alive
from .. import ast, intrinsics
from .. import messages as M
from ..program import AwaitInfo, CoroutineInfo, DirectCall, FnInstance, GeneratorDelegation
from ..resolve import span_of
from ..types import BOOL, ERROR, HANDLE, VOID, PromiseT, PtrT, Type, abi_of, is_prelude_promise

_COROUTINE_NODES = (ast.Yield, ast.YieldFrom, ast.CoReturn, ast.Await)


@while_alive
def is_coroutine(decl: ast.FnDecl) -> bool:
    """A function whose body has `yield`, `yield from`, `co_return` or (outside an
    `async fn`) `await` (LANGUAGE.md §5)."""
    return decl.kind in ("fn", "kernel") and ast.contains(decl.body, _COROUTINE_NODES)


def suspends_task(fn: FnInstance) -> bool:
    """Calls of it must be awaited: an `async fn`, or std/async's `__park`."""
    return fn.decl.kind == "async" or fn.decl.name in intrinsics.SUSPENDING


class SuspensionRules:
    """BodyChecker's rules of this module (a mixin: `self` is the BodyChecker)."""

    def stmt_CoReturn(self, s: ast.CoReturn) -> None:
        if self.defers:
            self.r.error(M.jump_out_of_defer("co_return"), s.span)
        if self.inst is not None and self.inst.is_async:
            self.r.error(M.async_forbids("`co_return`"), s.span, hint=M.async_return_hint())
            return
        if self.inst is None or not is_coroutine(self.inst.decl):
            self.r.error(M.co_return_outside(), s.span, hint=M.use_return_hint())
            return
        coro = self.inst.coro
        if coro is not None and coro.returns_continuations:   # only `co_return;`
            if s.value is not None:
                self.r.error(M.retcon_forbids("`co_return` with a value", coro.abi), s.value.span)
                self.check_expr(s.value, None)
            return
        hook_name = "return_value" if s.value is not None else "return_void"
        what = "`co_return` with a value" if s.value is not None else "`co_return;`"
        self.call_hook(s, hook_name, what, s.value)

    def call_hook(self, node: ast.Node, hook_name: str, what: str, value: ast.Expr | None,
                  any_result: bool = False) -> Type:
        """Check a promise hook call that `yield` / `co_return` make; record it."""
        coro = self.inst.coro if self.inst else None
        if coro is None:  # the coroutine's return type was already reported (or a global's initializer will be)
            if value is not None:
                self.check_expr(value, None)
            return ERROR
        hook = self.p.promise_hook(coro.promise, hook_name)
        if hook_name == "return_void" and hook is not None and coro.return_void is None:
            return ERROR   # declared wrong: reported at the declaration (coroutine_info)
        if hook is None:
            self.r.error(M.missing_hook(coro.promise.decl.name, hook_name, what), node.span,
                         hint=M.hook_hint(coro.promise.decl.name, hook_name))
            if value is not None:
                self.check_expr(value, None)
            return ERROR
        if hook.self_mode is None:   # it is given the promise
            self.r.error(M.bad_hook(hook_name, f"fn {hook_name}(mut self{', v: T' * (value is not None)})"),
                         span_of(hook.decl))
            if value is not None:
                self.check_expr(value, None)
            return ERROR
        self.inst.hooks[node] = hook
        params = [t for _, t in hook.params[1:]]
        if value is not None:
            if len(params) == 1:
                self.expect(value, params[0])
            else:
                self.r.error(M.arity(hook_name, len(params), 1), node.span)
        elif params:
            self.r.error(M.arity(hook_name, len(params), 0), node.span)
        if hook.ret != VOID and not any_result:
            self.r.error(M.hook_result(hook_name), node.span)
        return hook.ret if any_result else VOID

    def expr_Yield(self, e: ast.Yield, expected: Type | None) -> Type:
        if self.inst is not None and self.inst.is_async:
            return self._async_forbids(e, "`yield`", e.value)
        if self.defers:
            self.r.error(M.jump_out_of_defer("yield"), e.span)
        if e.value is None:
            self.r.error(M.arity("yield_value", 1, 0), e.span)
            return ERROR
        coro = self.inst.coro if self.inst else None
        if coro is not None and coro.returns_continuations:   # the value goes with the continuation
            self.expect(e.value, coro.yields)
            return VOID
        result = self.call_hook(e, "yield_value", "`yield`", e.value, any_result=True)
        if result in (VOID, HANDLE, ERROR):
            return VOID if result == HANDLE else result
        # yield_value returned an awaiter: `yield v` is `await` of it (Python's send)
        return self._await_of(e, result, e.value.span)

    def expr_YieldFrom(self, e: ast.YieldFrom, expected: Type | None) -> Type:
        """`yield from g` calls the promise's `yield_from(mut self, inner: ptr<G>) -> W`
        (or `yield_from(mut self, inner: ptr<G>, fresh: bool)`, told whether g
        has never run: made by this `yield from`, and `initial suspend`) and
        awaits W, which links g into the generator tree (so the consumer
        resumes the innermost generator directly) and evaluates to g's
        `co_return` value. Between the prelude's Generators a GPU build may
        run it as a loop instead (GeneratorDelegation)."""
        if self.inst is not None and self.inst.is_async:
            return self._async_forbids(e, "`yield from`", e.value)
        inner, coro = self._suspending_operand(e, "yield from", e.value)
        if inner is ERROR:
            return ERROR
        hook = self.p.promise_hook(coro.promise, "yield_from")
        if hook is None:
            self.r.error(M.missing_hook(coro.promise.decl.name, "yield_from", "`yield from`"), e.span,
                         hint=M.hook_hint(coro.promise.decl.name, "yield_from"))
            return ERROR
        if hook.self_mode is None or len(hook.params) not in (2, 3) or not isinstance(hook.params[1][1], PtrT) \
                or (len(hook.params) == 3 and hook.params[2][1] != BOOL):
            self.r.error(M.bad_hook("yield_from", "fn yield_from(mut self, inner: ptr<G>, fresh: bool) -> W"
                                    if len(hook.params) == 3 else "fn yield_from(mut self, inner: ptr<G>) -> W"),
                         span_of(hook.decl))
            return ERROR
        if hook.params[1][1] != PtrT(inner):
            self.r.error(M.mismatch(hook.params[1][1].elem, inner), e.value.span,
                         hint=M.yield_from_other_hint(inner) if isinstance(inner, PromiseT) else None)
            return ERROR
        self.inst.hooks[e] = hook
        if is_prelude_promise(coro.promise, "Generator") and is_prelude_promise(inner, "Generator"):
            self._record_generator_delegation(e, inner, coro, hook.ret)
        return self._await_of(e, hook.ret, e.span)

    def _record_generator_delegation(self, e: ast.YieldFrom, inner: PromiseT, coro: CoroutineInfo, awaiter: Type) -> None:
        """What `yield from e` needs besides its hook (GeneratorDelegation): the
        prelude's own methods, so always there."""
        step, value = (self.p.instantiate_method(self.p.find_method(inner, name), at=e.span)
                       for name in ("next", "value"))
        unlink = self.p.instantiate_method(self.p.find_method(awaiter, "unlink"), at=e.span)
        self.inst.generator_delegations[e] = GeneratorDelegation(
            step, value, self.p.promise_hook(coro.promise, "yield_value"), unlink)

    def _suspending_operand(self, e: ast.Expr, what: str, operand: ast.Expr) -> tuple[Type, CoroutineInfo]:
        """Check the operand of `await` / `yield from`; ERROR when there is nothing
        more to check (a mistake already reported, or no valid coroutine around it)."""
        if self.defers:
            self.r.error(M.jump_out_of_defer(what), e.span)
        t = self.check_expr(operand, None)
        coro = self.inst.coro if self.inst else None
        if coro is not None and coro.returns_continuations:
            self.r.error(M.retcon_forbids(f"`{what}`", coro.abi), e.span,
                         hint=M.retcon_yield_from_hint() if what == "yield from" else None)
            return ERROR, coro
        return (ERROR if coro is None else t), coro

    def _await_of(self, e: ast.Expr, awaiter: Type, span: Span, transform=None) -> Type:
        """`e` awaits a value of type `awaiter`: record its protocol; `e`'s type is
        what its await_resume returns."""
        info = self.awaiter_protocol(awaiter, span, transform)
        if info is None:
            return ERROR
        self.inst.awaits[e] = info
        return info.resume.ret

    def _async_forbids(self, e: ast.Expr, what: str, operand: ast.Expr | None) -> Type:
        self.r.error(M.async_forbids(what), e.span)
        if operand is not None:
            self.check_expr(operand, None)
        return ERROR

    @contextlib.contextmanager
    def _awaiting(self, operand: ast.Expr):
        """While the operand of `await` / `spawn` is checked, its call may be an async fn's."""
        outer, self.awaited = self.awaited, operand if isinstance(operand, ast.Call) else None
        try:
            yield
        finally:
            self.awaited = outer

    def _awaited_operand(self, operand: ast.Expr) -> Type:
        with self._awaiting(operand):
            return self.check_expr(operand, None)

    def _async_call(self, operand: ast.Expr) -> FnInstance | None:
        target = self.inst.calls.get(operand) if isinstance(operand, ast.Call) else None
        return target.fn if isinstance(target, DirectCall) and suspends_task(target.fn) else None

    def await_async(self, e: ast.Await) -> Type:
        """`await` in an `async fn` (LANGUAGE.md §7): of a call of an async fn, or of
        a `Join<T>` (which it consumes)."""
        if self.defers:
            self.r.error(M.jump_out_of_defer("await"), e.span)
        t = self._awaited_operand(e.operand)
        if t is ERROR:
            return ERROR
        if self._async_call(e.operand) is not None:
            self.inst.async_awaits[e] = "call"
            return t
        if isinstance(t, PromiseT) and abi_of(t) == "async":
            self.inst.async_awaits[e] = "join"
            return t.args[0] if t.args else ERROR
        self.r.error(M.async_await_operand(t), e.operand.span)
        return ERROR

    def expr_Spawn(self, e: ast.Spawn, expected: Type | None) -> Type:
        """`spawn f(…)`: a new task runs the call; its type is `Join<R>`."""
        if self.inst is None or not self.inst.is_async:
            self.r.error(M.spawn_outside(), e.span)
            self._awaited_operand(e.operand)
            return ERROR
        t = self._awaited_operand(e.operand)
        callee = self._async_call(e.operand)
        if t is ERROR:
            return ERROR
        join = self.p.ns.decls.get("Join")
        if callee is None or callee.decl.kind != "async" or not isinstance(join, ast.PromiseDecl):
            self.r.error(M.spawn_operand(), e.operand.span)
            return ERROR
        return PromiseT(join, (t,))

    def expr_Await(self, e: ast.Await, expected: Type | None) -> Type:
        if self.inst is not None and self.inst.is_async:
            return self.await_async(e)
        with self._awaiting(e.operand):
            operand, coro = self._suspending_operand(e, "await", e.operand)
        callee = self._async_call(e.operand) if self.inst is not None else None
        if callee is not None:
            self.r.error(M.async_await_outside(self.inst.display), e.span)
            return ERROR
        if operand is ERROR:
            return ERROR
        transform = self.p.promise_hook(coro.promise, "await_transform")
        awaiter = operand
        if transform is not None:
            if transform.self_mode is None or len(transform.params) != 2:
                self.r.error(M.bad_hook("await_transform", "fn await_transform(mut self, x: A) -> W"),
                             span_of(transform.decl))
                return ERROR
            if transform.params[1][1] != operand:
                self.r.error(M.mismatch(transform.params[1][1], operand), e.operand.span)
                return ERROR
            awaiter = transform.ret
        return self._await_of(e, awaiter, e.operand.span, transform)

    def awaiter_protocol(self, awaiter: Type, span: Span, transform=None) -> AwaitInfo | None:
        methods = {name: self.p.find_method(awaiter, name)
                   for name in ("await_ready", "await_suspend", "await_resume")}
        if None in methods.values():
            missing = [n for n, m in methods.items() if m is None]
            self.r.error(M.not_awaitable(awaiter), span, hint=M.awaiter_needs(missing))
            return None
        ready, suspend, resume = (self.p.instantiate_method(methods[n], at=span)
                                  for n in ("await_ready", "await_suspend", "await_resume"))
        kind = {VOID: "void", BOOL: "bool", HANDLE: "handle"}.get(suspend.ret)
        if ready.ret != BOOL or kind is None or len(suspend.params) != 2 \
                or suspend.params[1][1] != HANDLE or len(ready.params) != 1 or len(resume.params) != 1 \
                or any(hook.is_async for hook in (ready, suspend, resume)):   # (they run inside the await)
            self.r.error(M.bad_awaiter(awaiter), span, hint=M.awaiter_needs([]))
            return None
        return AwaitInfo(transform, awaiter, ready, suspend, resume, kind)

