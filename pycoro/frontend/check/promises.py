"""Promise declarations and the coroutine each promise type makes
(LANGUAGE.md §5–§6): hooks, ABIs, allocators; and how many times a
`retcon_once` coroutine yields on every path (yields.py's `once_problems`).
"""
from __future__ import annotations

from ...common.diagnostics import Span
from .. import ast
from .. import messages as M
from ..program import CoroutineInfo, FnInstance
from ..resolve import span_of
from ..types import (ERROR, HANDLE, PRIMITIVES, U64, VOID, PromiseT, PtrT, StructT, Type, abi_of, has_vars)
from .common import Method

# Operations every coroutine handle has (LANGUAGE.md §5.1): name → result type
# (None: the promise state, by reference).
_ABIS = ("switch", "retcon", "retcon_once", "async")


# how each returned-continuation ABI must start (`initial …;`)
RETCON_START = {"retcon": "suspend", "retcon_once": "run"}
# `abi retcon(N)`: the inline buffer lives in the caller's stack frame
RETCON_BUFFER_LIMIT = 1 << 20


class PromiseDecls:
    """ProgramChecker's rules of this module (a mixin: `self` is the ProgramChecker)."""

    def _check_promise_decl(self, decl: ast.PromiseDecl) -> None:
        abi = abi_of(PromiseT(decl))
        if abi not in _ABIS:
            self.reporter.error(M.unknown_abi(abi), decl.abi.span)
            return
        if abi in RETCON_START:
            self._check_retcon_promise(decl, abi)
        elif abi == "async":
            if decl.abi.size is not None or decl.fields or decl.methods or decl.suspends:
                self.reporter.error(M.async_promise_members(), span_of(decl))
        elif decl.abi is not None and decl.abi.size is not None:
            self.reporter.error(M.switch_takes_no_size(), decl.abi.span)
        for field in decl.fields:
            if field.init is not None:   # (it was ignored: LANGUAGE.md §5.1's state starts zeroed)
                self.reporter.error(M.promise_var_initialised(field.name), field.init.span,
                                    hint=M.promise_var_hint(field.name))
        # A frame must go back to the allocator it came from.
        hooks = {m.name: m for m in decl.methods}
        for have, need in (("allocate", "deallocate"), ("deallocate", "allocate")):
            if have in hooks and need not in hooks:
                self.reporter.error(M.missing_hook(decl.name, need, f"`{have}`"), span_of(hooks[have]),
                                    hint=M.hook_hint(decl.name, need))

    def _check_retcon_promise(self, decl: ast.PromiseDecl, abi: str) -> None:
        """A returned-continuation promise only names its ABI, its buffer and how it
        starts (LANGUAGE.md §6): retcon must start suspended (LLVM's retcon ramp
        cannot end without yielding), retcon_once must run to its single yield."""
        if decl.abi.size is None:
            self.reporter.error(M.retcon_needs_size(abi), decl.abi.span)
        elif decl.abi.size > RETCON_BUFFER_LIMIT:   # (the caller's stack holds it)
            self.reporter.error(M.retcon_buffer_too_large(decl.abi.size, RETCON_BUFFER_LIMIT), decl.abi.span)
        start = RETCON_START[abi]
        for s in decl.suspends:
            if s.point == "final":
                self.reporter.error(M.retcon_member(abi, "a `final` suspend point"), s.span)
            elif s.mode != start:
                self.reporter.error(M.retcon_initial(abi, start), s.span)
        if start == "run" and not any(s.point == "initial" for s in decl.suspends):
            self.reporter.error(M.retcon_initial(abi, start), decl.abi.span)
        for member, what in [(f, "promise state (`var`)") for f in decl.fields] + \
                            [(m, "hooks") for m in decl.methods]:
            self.reporter.error(M.retcon_member(abi, what), span_of(member))
        if not decl.generics:
            self.reporter.error(M.retcon_generic(decl.name), decl.name_span or span_of(decl))

    def _promise_type(self, t: PromiseT, use: Span) -> Type:
        if has_vars(t) or self.promise_state(t) in self._laying_out:
            # (the second: named in its own promise state, `var child: ptr<Generator<T>>`;
            # checked where that state's layout was asked for)
            return t
        if self._laying_out:
            # named in a struct being laid out, `struct L { g: Generator<L> }`: a
            # handle is a pointer, so L is not infinite, but its promise state
            # may hold an L; checked once every struct being laid out is
            self._promise_types_pending.append((t, use))
            return t
        return self._checked_promise_type(t, use)

    def _checked_promise_type(self, t: PromiseT, use: Span) -> Type:
        held = [name for name, ft in self.struct_fields(self.promise_state(t))
                if self.layouts.owns(ft)]
        if held:
            # Nothing destroys a promise state, and `h.promise().field` reads copy it.
            self.reporter.error(M.owning_in_promise_state(t, held[0]), use)
            return ERROR
        if abi_of(t) in RETCON_START and t.args and self.layouts.owns(t.args[0]):
            # `value()` copies the yielded value out each time it is called, and
            # nothing destroys the one the coroutine handed over.
            self.reporter.error(M.owning_yielded_by_retcon(t), use)
            return ERROR
        if abi_of(t) in RETCON_START and t.args and not has_vars(t.args[0]) \
                and self.layouts.size_align(t.args[0])[0] == 0:
            # LLVM's returned-continuation lowering lays a yielded value out in
            # the frame, and aborts the process on one of no bytes
            self.reporter.error(M.empty_yielded_by_retcon(t), use)
            return ERROR
        return t

    def promise_state(self, t: PromiseT) -> StructT:
        return StructT(self._states[t.decl], t.args)

    def promise_hook(self, t: PromiseT, name: str) -> FnInstance | None:
        for method in t.decl.methods:
            if method.name == name:
                subst = dict(zip(t.decl.generics, t.args))
                return self.instantiate_method(Method(method, subst, self.promise_state(t)))
        return None

    def coroutine_info(self, decl: ast.FnDecl, ret: Type) -> CoroutineInfo | None:
        if not isinstance(ret, PromiseT):
            if ret is not ERROR:
                self.reporter.error(M.coroutine_return_type(decl.name, ret),
                                    decl.ret.span if decl.ret else span_of(decl),
                                    hint=M.coroutine_return_hint())
            return None
        abi = abi_of(ret)
        if abi == "async":
            self.reporter.error(M.async_abi_coroutine(ret), decl.ret.span)
            return None
        state = self.promise_state(ret)
        modes = {s.point: s.mode for s in ret.decl.suspends}
        if abi in RETCON_START:
            return CoroutineInfo(abi=abi, promise=ret, state=state,
                                 initial_suspend=RETCON_START[abi] == "suspend", final_suspend=False,
                                 return_void=None, buffer=ret.decl.abi.size or 0,
                                 yields=ret.args[0] if ret.args else ERROR)
        return CoroutineInfo(
            abi=abi, promise=ret, state=state,
            initial_suspend=modes.get("initial", "suspend") == "suspend",
            final_suspend=modes.get("final", "suspend") == "suspend",
            return_void=self._ending_hook(ret, "return_void", VOID),
            final_transfer=self._ending_hook(ret, "final_suspend", HANDLE),
            allocate=self._allocator_hook(ret, "allocate", [U64], PtrT(PRIMITIVES["u8"])),
            deallocate=self._allocator_hook(ret, "deallocate", [PtrT(PRIMITIVES["u8"])], VOID))

    def _ending_hook(self, t: PromiseT, name: str, ret: Type) -> FnInstance | None:
        """`return_void(mut self)` or `final_suspend(mut self) -> Handle`: called
        where the body ends, with the promise alone."""
        hook = self.promise_hook(t, name)
        if hook is None:
            return None
        if hook.self_mode is None or len(hook.params) != 1 or hook.ret != ret:
            want = f"fn {name}(mut self)" + (f" -> {ret}" if ret != VOID else "")
            self.reporter.error(M.bad_hook(name, want), span_of(hook.decl))
            return None
        return hook

    def _allocator_hook(self, t: PromiseT, name: str, params: list[Type], ret: Type) -> FnInstance | None:
        hook = self.promise_hook(t, name)
        if hook is None:
            return None
        if hook.self_mode is not None or [p for _, p in hook.params] != params or hook.ret != ret:
            want = f"fn {name}({', '.join(map(str, params))})" + (f" -> {ret}" if ret != VOID else "")
            self.reporter.error(M.bad_hook(name, want), span_of(hook.decl))
            return None
        return hook


# ---- `retcon_once`: how many times a coroutine yields on every path
#How many times a `retcon_once` coroutine yields, on every path (LANGUAGE.md §6).
#
#LLVM's `retcon.once` lowering has exactly one continuation: a path that ends
#before its yield leaves the ramp without a value, a second yield has no
#continuation to return to. Both would be undefined behaviour, so, as Swift
#does for `_read`/`_modify` accessors, every path must yield exactly once,
#which is checked on the syntax: a path's count is 0, 1 or "2 or more"; an `if`
#joins its branches' counts; a loop must not contain a yield at all; `panic`
#ends a path.

MANY = 2


class _Walk:
    def __init__(self):
        self.problems: list[tuple[Span, str]] = []
        self.exits: list[tuple[frozenset, Span]] = []   # the counts reaching each `co_return`

    def report(self, span: Span, problem: str) -> None:
        if not any(s == span for s, _ in self.problems):
            self.problems.append((span, problem))

    def yields_in(self, node, counts: frozenset) -> frozenset:
        """The counts after evaluating an expression (or a statement that has no
        blocks) that holds `yield`s, in source order."""
        for y in _yields(node):
            if any(c >= 1 for c in counts):
                self.report(y.span, "this is a second `yield` on some path")
            counts = frozenset(min(c + 1, MANY) for c in counts)
        return counts

    def block(self, b: ast.Block, counts: frozenset) -> frozenset:
        for s in b.stmts:
            counts = self.stmt(s, counts)
        return counts

    def stmt(self, s: ast.Stmt, counts: frozenset) -> frozenset:
        if not counts:   # unreachable
            return counts
        match s:
            case ast.Block():
                return self.block(s, counts)
            case ast.If():
                counts = self.yields_in(s.cond, counts)
                then = self.block(s.then, counts)
                if s.else_ is None:
                    other = counts
                elif isinstance(s.else_, ast.If):
                    other = self.stmt(s.else_, counts)
                else:
                    other = self.block(s.else_, counts)
                return then | other
            case ast.While() | ast.Loop() | ast.For():
                for y in _yields(s):
                    self.report(y.span, "this `yield` is inside a loop")
                return counts
            case ast.With():
                return self.block(s.body, self.yields_in(s.expr, counts))
            case ast.CoReturn():
                self.exits.append((self.yields_in(s.value, counts) if s.value else counts, s.span))
                return frozenset()
            case ast.ExprStmt() if _is_panic(s.expr):
                return frozenset()
        return self.yields_in(s, counts)


def _is_panic(e: ast.Expr) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.name == "panic"


def _yields(node) -> list[ast.Yield]:
    found = []

    def walk(n) -> None:
        if isinstance(n, ast.Yield):
            found.append(n)
        if isinstance(n, tuple):
            for x in n:
                walk(x)
        elif isinstance(n, ast.Node):
            for f in ast.fields(n):
                if f != "span":
                    walk(getattr(n, f))
    walk(node)
    return found


def once_problems(body: ast.Block, end: Span) -> list[tuple[Span, str]]:
    """Where a retcon_once body may yield other than once: (span, what)."""
    walk = _Walk()
    walk.exits.append((walk.block(body, frozenset({0})), end))
    for counts, span in walk.exits:
        if 0 in counts:
            walk.report(span, "it can end here without yielding")
    return walk.problems
