"""The interface every coroutine ABI implements, and its defaults: those of
an ordinary function.

LLVM keeps one ABI class per lowering (`SwitchABI`, `AnyRetconABI`,
`AsyncABI`, all `BaseABI`); clang emits every coroutine with one skeleton
(`EmitCoroutineBody`) and one suspend emitter used by `co_await`, `co_yield`
and the initial and final suspends. pycoro has both halves:

- `CoroutineABI`: what an ABI decides for a whole function and for its
  callers: its LLVM signature and attributes, how it is called, what its
  handles' operations do, what the module needs once, C's `main` for it;
- `BodyEmitter`: how one body starts, suspends, returns and ends. FnGen
  (irgen/function.py) calls it at fixed points and never asks which ABI it has.
  `PromisedEmitter` is the skeleton of the coroutines that have a promise
  type (switched-resume and returned-continuation): the promise hooks and
  awaiter protocols of `yield`, `yield from`, `await` and `co_return`, in
  terms of each ABI's suspend primitives.

Each ABI is one module under middle/coro/ (switch.py, trampoline.py,
retcon.py, async_.py); abis.py is the one place that picks among them.
Nothing here imports the code generator: the emitters get it (`fg`, `mg`) as
an argument.
"""
from __future__ import annotations

from llvmlite import ir

from ...frontend import ast
from ...frontend.program import DirectCall, GeneratorDelegation
from ...frontend.types import HANDLE, VOID, Type
from ..awaited_in_place import awaited_task, runs_in_place
from ..llvmcompat import I1, I32, PTR, mark_elide_safe


# A panic's backtrace link (BodyEmitter.backtrace_link): none; the frame of the
# switched-resume coroutine to continue (the backtrace table says where its
# own link is); an async fn's context (its header: parent context, caller's
# continuation).
LINK_NONE, LINK_FRAME, LINK_CONTEXT = range(3)


class BodyEmitter:
    """An ordinary function's body (the defaults); a coroutine's overrides."""

    copies_params = False        # parameters are copied into the function's own slots
    awaits_make_values = False   # `await`/`spawn` make owning temporaries (async fns)
    # a `yield from g(…);` may take g's base cases, and run g's body, in place (middle/guards.py)
    runs_delegations_in_place = True

    def __init__(self, fg, info=None):
        self.fg = fg
        self.info = info   # the CoroutineInfo, for coroutines with a promise type

    def prologue(self, args) -> None:
        """Before the parameters are bound: take the ABI's hidden arguments from `args`."""

    def backtrace_link(self) -> tuple[ir.Value, int]:
        """For a panic's backtrace: what leads to the coroutines that continue
        when this one ends, and what kind of link it is (stdlib/rt.pc's
        `fail`). An ordinary function: none."""
        return ir.Constant(PTR, None), LINK_NONE

    def param_slot(self, index: int, param: ast.Param):
        """Where parameter `index` lives when the ABI decides (None: its argument)."""
        return None

    def begin(self) -> None:
        """After the parameters are bound: the ramp, up to the body."""

    def return_(self, value: ir.Value | None) -> None:
        """`return value` (the scopes not yet unwound)."""
        fg = self.fg
        if fg.result is not None:
            fg.store(value, fg.result, fg.inst.ret)
        fg.unwind_to(0)
        if fg.inst.ret == VOID or fg.result is not None:
            fg.b.ret_void()
        else:
            fg.b.ret(value)

    def fall_off_end(self) -> None:
        """Control reached the end of the body (its scope's cleanups ran)."""
        if self.fg.inst.ret == VOID:
            self.fg.b.ret_void()
        else:
            self.fg.b.unreachable()   # the checker proved every path returns

    def end(self) -> None:
        """After the body: what every path of a coroutine ends in."""

    def yield_(self, e: ast.Yield) -> ir.Value | None:
        raise AssertionError("the checker allows `yield` only in coroutines")

    def yield_from(self, e: ast.YieldFrom, inner_value: ir.Value | None) -> ir.Value | None:
        raise AssertionError("the checker allows `yield from` only in coroutines")

    def await_(self, e: ast.Await) -> ir.Value | None:
        raise AssertionError("the checker allows `await` only in coroutines and async fns")

    def spawn(self, e: ast.Spawn) -> ir.Value:
        raise AssertionError("the checker allows `spawn` only in async fns")

    def co_return(self, s: ast.CoReturn) -> None:
        raise AssertionError("the checker allows `co_return` only in coroutines")


class PromisedEmitter(BodyEmitter):
    """The body of a coroutine with a promise type: the promise's hooks and
    the awaiters' protocol (LANGUAGE.md §5–§6), over the suspend primitives
    each ABI implements."""

    copies_params = True   # a coroutine outlives its ramp: it keeps its own copies

    # ---- the primitives
    def promise(self) -> ir.Value:
        """The address of the promise state, inside the coroutine."""
        raise NotImplementedError

    def suspend(self, name: str) -> None:
        """A suspend point (after a `yield`'s hook ran): on resumption the builder
        continues after it; when the coroutine is destroyed there, the pending
        cleanups of every scope run and the frame is freed."""
        raise NotImplementedError

    def suspend_on(self, info, awaiter: ir.Value) -> None:
        """Ask the awaiter whether to suspend, suspend through its `await_suspend`;
        the builder is left where `await_resume` is called."""
        raise NotImplementedError

    def transfer(self, handle: ir.Value) -> None:
        """Suspend and resume `handle` instead (symmetric transfer, no stack growth)."""
        raise NotImplementedError

    def leave(self) -> None:
        """Leave the body (after `co_return`'s hook ran and the scopes unwound)."""
        raise NotImplementedError

    # ---- the skeleton
    def fall_off_end(self) -> None:
        if self.info.return_void is not None:
            self.fg.call(self.info.return_void, [self.promise()])

    def co_return(self, s: ast.CoReturn) -> None:
        fg = self.fg
        hook = fg.inst.hooks.get(s)
        values = [] if hook is None else fg.arguments([s.value] if s.value is not None else [],
                                                      [t for _, t in hook.params[1:]])
        if fg.inline_exit is not None:   # an awaited task's body in place: the await's value
            fg.return_value(values[0] if values else None)
            return
        if hook is not None:
            fg.call(hook, [self.promise()] + values)
        fg.unwind_to(0)
        self.leave()

    def yield_(self, e: ast.Yield) -> ir.Value | None:
        fg = self.fg
        hook = fg.inst.hooks[e]
        value = fg.arguments([e.value], [t for _, t in hook.params[1:]])
        if hook.ret == VOID:
            self.yield_computed(hook, value[0] if value else None, e.span.line)
            return None
        result = fg.call(hook, [self.promise()] + value)
        if hook.ret == HANDLE:
            self.transfer(result)
            return None
        info = fg.inst.awaits[e]   # yield_value returned an awaiter
        awaiter = fg.alloca(info.awaiter, "awaiter")
        fg.store(result, awaiter, info.awaiter)
        self.suspend_on(info, awaiter)
        return fg.call(info.resume, [awaiter])

    def yield_computed(self, hook, value: ir.Value | None, line: int) -> None:
        """A `yield` of a value already computed, through a `yield_value` hook
        that returns nothing (also a base case of a generator delegated to,
        taken in the delegating one: middle/guards.py). None: a hook of a
        `void` parameter, called without it (as a Task<void>'s return_value)."""
        self.fg.call(hook, [self.promise()] + ([value] if value is not None else []))
        self.suspend(f"yield.{line}")

    def await_(self, e: ast.Await) -> ir.Value | None:
        fg = self.fg
        info = fg.inst.awaits[e]
        task = awaited_task(fg.inst, e)
        if task is not None and runs_in_place(fg.mg.inline_bodies, task, fg.inline_chain):
            # a task that never suspends: its body, in place (middle/awaited_in_place.py)
            fg.mg.frameless_sites.append(("in place", fg.inline_chain[0], e.operand.span, task))
            return fg.emit_inlined(task, fg.call_arguments(e.operand, fg.inst.calls[e.operand]), info.resume.ret)
        if info.transform is not None:
            value = fg.call(info.transform, [self.promise()] + fg.arguments(
                [e.operand], [info.transform.params[1][1]]))
            awaiter = fg.alloca(info.awaiter, "awaiter")
            fg.store(value, awaiter, info.awaiter)
        elif fg.is_mutable_place(e.operand):
            awaiter = fg.place(e.operand)
        else:
            value = fg.expr(e.operand)
            temp = fg.temps.get(id(e.operand))
            if temp is not None:
                awaiter = temp   # an owning temporary (`await f(…)`): await it in place
            else:
                awaiter = fg.alloca(info.awaiter, "awaiter")
                fg.store(value, awaiter, info.awaiter)
        self.suspend_on(info, awaiter)
        return fg.call(info.resume, [awaiter])

    def yield_from(self, e: ast.YieldFrom, inner_value: ir.Value | None) -> ir.Value | None:
        """`yield from e.value`; `inner_value`: e.value already evaluated."""
        fg = self.fg
        hook, info = fg.inst.hooks[e], fg.inst.awaits[e]
        inner_t = fg.types[e.value]
        inner = fg.alloca(inner_t, "inner")   # not owning: the statement's temporary is
        fg.b.store(fg.expr(e.value) if inner_value is None else inner_value, inner)
        if fg.mg.reyields(fg.inst, e):
            return self.reyield(fg.inst.generator_delegations[e], inner, inner_t, e.span.line)
        args = [self.promise(), inner]
        if len(hook.params) == 3:
            # `fresh`: the `yield from` made the generator (a coroutine's call)
            # and it has not run (its promise has `initial suspend`)
            call = fg.inst.calls.get(e.value) if isinstance(e.value, ast.Call) else None
            fresh = isinstance(call, DirectCall) and call.fn.coro is not None and call.fn.coro.initial_suspend
            args.append(I1(int(fresh)))
        delegate = fg.call(hook, args)
        awaiter = fg.alloca(info.awaiter, "delegate")
        fg.store(delegate, awaiter, info.awaiter)
        # A generator made here, or held in a variable of this one, is
        # destroyed with it; one reached otherwise (`self.g`, `p[0]`, a global)
        # may outlive it: then it must not stay linked to its freed frame.
        linked = fg.inst.generator_delegations.get(e)
        owned = isinstance(e.value, ast.Call) or getattr(fg.inst.refs.get(e.value), "owned", False)
        borrowed = linked is not None and not owned and bool(fg.scopes)
        if borrowed:
            fg.scopes[-1].append(unlink := ("unlink", (linked.unlink, [awaiter])))
        self.suspend_on(info, awaiter)
        if borrowed:
            fg.scopes[-1].remove(unlink)
        return fg.call(info.resume, [awaiter])

    def reyield(self, protocol: GeneratorDelegation, inner: ir.Value, inner_t: Type, line: int) -> ir.Value:
        """`yield from g` as `while g.next() { yield g.value(); }`, evaluating to
        `g.value()` once g has ended: its `co_return` value, or T's zero value
        (the prelude's Generator keeps it in `current`)."""
        fg = self.fg
        more, again, done = fg.block("yield_from.next"), fg.block("yield_from.value"), fg.block("yield_from.end")
        fg.b.branch(more)
        fg.b.position_at_end(more)
        fg.b.cbranch(fg.iter_step(protocol.next, inner, inner_t), again, done)
        fg.b.position_at_end(again)
        self.yield_computed(protocol.yield_value, fg.iter_step(protocol.value, inner, inner_t), line)
        fg.b.branch(more)
        fg.b.position_at_end(done)
        return fg.iter_step(protocol.value, inner, inner_t)


class CoroutineABI:
    """What an ABI decides for a whole function and its callers; the defaults
    are an ordinary function's."""

    body_emitter = BodyEmitter
    counts_sites = False   # `explain`: a call of it passes the site's index as a last argument

    def function_type(self, mg, inst, fnty: ir.FunctionType) -> ir.FunctionType:
        """The LLVM signature of `inst`, given pycoro's calling convention's `fnty`."""
        return fnty

    def declare(self, fn: ir.Function) -> None:
        """Attributes of a function of this ABI."""

    def body(self, fg) -> BodyEmitter:
        return self.body_emitter(fg, fg.inst.coro)

    def call(self, fg, callee, fn: ir.Function, args: list[ir.Value], elide_safe: bool,
             site: list[ir.Value]) -> ir.Value | None:
        """A call of `callee` (`fn`, its declaration) from `fg`'s function; `elide_safe`:
        its frame certainly ends within the caller."""
        result = fg.call_with(fn, args, callee.ret)
        if elide_safe:
            mark_elide_safe(fg.b.block.instructions[-1])
        return result

    def handle_op(self, fg, t: Type, name: str, handle: ir.Value | None, promise_align: int = 8,
                  owning: bool = False) -> ir.Value | None:
        """`h.name()` on a handle of type `t` of this ABI."""
        raise AssertionError(f"no handle operations in ABI {type(self).__name__}")

    def finish_module(self, mg) -> None:
        """Once every function of the module is emitted."""

    def c_main(self, mg, main) -> None:
        """C's `main` for a program whose `main` has this ABI:
        `int main(int, char**) { __pc_init(); s = pc.main(); __pc_flush(); return s; }`"""
        fn = ir.Function(mg.module, ir.FunctionType(I32, [I32, PTR]), "main")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.call(mg.runtime("init"), [])
        status = b.call(mg.declare(main), [])
        b.call(mg.runtime("flush"), [])
        b.ret(status if main.ret != VOID else I32(0))

