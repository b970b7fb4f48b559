"""Switched-resume coroutines (`abi switch;`): LLVM's `llvm.coro.id` lowering, as C++20.

The ramp (the function itself, until its first suspend):

    entry:       %promise = alloca %P.promise
    start:       %id = call token @llvm.coro.id(i32 A, ptr %promise, ptr null, ptr null)
                 %need = call i1 @llvm.coro.alloc(token %id)       ; false once CoroElide
                 br i1 %need, label %coro.alloc, label %coro.begin  ; places the frame
    coro.alloc:  %size = call i64 @llvm.coro.size.i64()
                 %mem = call ptr @__pc_coro_alloc(i64 %size)
    coro.begin:  %frame = phi ptr [null, %start], [%mem, %coro.alloc]
                 %hdl = call ptr @llvm.coro.begin(token %id, ptr %frame)
                 ... promise initialised, initial suspend (`initial suspend;`) ...
    body ...     every suspend point:
                 %s = call i8 @llvm.coro.suspend(token none, i1 false)
                 switch i8 %s, label %coro.ret [i8 0, label %resume
                                                i8 1, label %destroy]   ; destroy: run the
                                                                        ; scopes' cleanups
    coro.final:  %f = call i8 @llvm.coro.suspend(token none, i1 true)   ; `final suspend;`
                 switch i8 %f, label %coro.ret [i8 0, label %unreachable
                                                i8 1, label %coro.cleanup]
    coro.cleanup: %mem2 = call ptr @llvm.coro.free(token %id, ptr %hdl)  ; null when elided
                 call void @__pc_coro_free(ptr %mem2)
    coro.ret:    call void @llvm.coro.end(ptr %hdl, i1 false, token none)
                 ret ptr %hdl
"""
from __future__ import annotations

import functools

from llvmlite import ir

from ...common.paths import in_stdlib
from ...frontend.types import HANDLE
from .. import intrinsics
from ..llvmcompat import I1, I8, I32, I64, PTR, TOKEN_NONE, field_ptr, mark_presplit_coroutine, opaque_copy
from .base import LINK_FRAME, CoroutineABI, PromisedEmitter

FRAME_ALIGN = 16
_FUNCTIONS = 16   # a frame starts with its resume and destroy functions' addresses

# The prelude's promise fields that name the coroutine continuing when this one
# ends (SwitchEmitter._backtrace_link).
_LINKS = ("parent", "continuation")


def promise_offset(promise_align: int) -> int:
    """Where a switched-resume frame holds its promise: after the two
    functions' addresses, at the offset `llvm.coro.promise` assumes."""
    align = max(promise_align, 1)
    return (_FUNCTIONS + align - 1) // align * align


class SwitchEmitter(PromisedEmitter):
    records_backtraces = True   # its frames start as backtrace_link's offsets assume

    def _intrinsic(self, name: str) -> ir.Function:
        return intrinsics.declare(self.fg.mg.module, name)

    def begin(self) -> None:
        fg, b = self.fg, self.fg.b
        mark_presplit_coroutine(fg.fn)
        state = self.info.state
        align = max(fg.mg.p.layouts.size_align(state)[1], 1)
        null = ir.Constant(PTR, None)
        frame_promise, align = self._frame_promise(state, align)
        self.id = b.call(self._intrinsic("llvm.coro.id"), [I32(align), frame_promise, null, null], name="id")
        need = b.call(self._intrinsic("llvm.coro.alloc"), [self.id], name="need.alloc")
        start = b.block
        alloc_bb, begin_bb = fg.block("coro.alloc"), fg.block("coro.begin")
        b.cbranch(need, alloc_bb, begin_bb)
        b.position_at_end(alloc_bb)
        size = b.call(self._intrinsic("llvm.coro.size.i64"), [], name="size")
        if self.info.allocate is not None and not fg.mg.explain:
            mem = fg.call(self.info.allocate, [size])   # the promise's own allocator
            b.call(fg.mg.runtime("coro_count"), [I64(1)])
        else:
            site = [fg.fn.args[-1]] if fg.mg.explain else []   # see ModuleGen.explain
            mem = b.call(fg.mg.runtime("coro_alloc"), [size] + site, name="mem")
        b.branch(begin_bb)
        b.position_at_end(begin_bb)
        frame = b.phi(PTR, name="frame")
        frame.add_incoming(null, start)
        frame.add_incoming(mem, alloc_bb)
        self.handle = b.call(self._intrinsic("llvm.coro.begin"), [self.id, frame], name="hdl")
        self._after_begin(frame_promise)
        self._record_backtrace_link()
        # Blocks every path ends in; filled by `end`.
        self.final_bb = fg.block("coro.final")
        self.cleanup_bb = fg.block("coro.cleanup")
        self.ret_bb = fg.block("coro.ret")
        fg.zero(self._promise, state)
        self._after_zero()
        if self.info.initial_suspend:
            # destroyed before it starts: its owned parameters are still destroyed
            self._suspend("init")
            from ..irgen.suspends import suspends_in_a_loop   # (here: irgen's package imports this module)
            if suspends_in_a_loop(fg.inst.decl.body):
                fg.mg.resumed_in_loops.add(fg.fn.name)

    # ---- what a backtrace needs (stdlib/rt.pc's `fail`, backend/backtrace.py)
    @functools.cached_property
    def _backtrace_link(self) -> tuple[int, int] | None:
        """The prelude's promises name the coroutine that continues when theirs
        ends: a Generator its `parent` (whose `yield from` it runs for), a Task
        its `continuation` (an `await`ing coroutine). That field's index in
        the promise and offset in the frame: the promise comes after the resume
        and destroy functions' addresses (promise_offset)."""
        state = self.info.state
        if not self.records_backtraces or not in_stdlib(self.info.promise.decl.span.file):
            return None
        layouts = self.fg.mg.p.layouts
        fields = layouts.fields(state)
        names = [name for name, _ in fields]
        for link in _LINKS:
            if link in names:
                index = names.index(link)
                return index, promise_offset(layouts.size_align(state)[1]) + layouts.offsets(fields)[index]
        return None

    def backtrace_link(self) -> tuple[ir.Value, int]:
        link = self._backtrace_link
        promise = getattr(self, "_promise", None)   # none before the ramp made it
        if link is None or promise is None:
            return super().backtrace_link()
        field = field_ptr(self.fg.b, promise, self.fg.mg.llvm(self.info.state), link[0])
        return self.fg.b.load(field, typ=PTR), LINK_FRAME

    def _record_backtrace_link(self) -> None:
        if self._backtrace_link is not None:
            self.fg.mg.coroutine_links[self.fg.fn.name] = self._backtrace_link[1]

    # ---- what the trampolined form (trampoline.py) changes
    def _frame_promise(self, state, align: int) -> tuple[ir.Value, int]:
        """The promise alloca llvm.coro.id names, and the frame's alignment."""
        self._promise = self.fg.alloca(state, "promise")
        return self._promise, align

    def _after_begin(self, frame_promise: ir.Value) -> None:
        """Right after llvm.coro.begin."""

    def _after_zero(self) -> None:
        """After the promise state is zeroed."""

    def _suspend_to_handle(self, awaiter: ir.Value, wrapper: ir.Function) -> None:
        """Suspend and resume the handle `wrapper(awaiter, frame)` returns: a tail call."""
        self.fg.b.call(self._intrinsic("llvm.coro.await.suspend.handle"), [awaiter, self.handle, wrapper])

    def _final_wrapper(self, wrapper: ir.Function) -> ir.Function:
        """The wrapper the final transfer suspends through."""
        return wrapper

    # ---- the primitives
    def promise(self) -> ir.Value:
        return self._promise

    def suspend(self, name: str) -> None:
        self._suspend(name)

    def _suspend(self, name: str, save=TOKEN_NONE) -> None:
        """The one suspend point (as clang's emitSuspendExpression): on resume (0)
        continue after it; on destroy (1) run every pending cleanup, innermost
        first, then free the frame; otherwise return to whoever resumed us."""
        fg, b = self.fg, self.fg.b
        s = b.call(self._intrinsic("llvm.coro.suspend"), [save, I1(0)], name=f"{name}.state")
        resume, destroy = fg.block(f"{name}.resume"), fg.block(f"{name}.destroy")
        switch = b.switch(s, self.ret_bb)
        switch.add_case(I8(0), resume)
        switch.add_case(I8(1), destroy)
        b.position_at_end(destroy)
        fg.unwind_to(0, destroying=True)
        b.branch(self.cleanup_bb)
        b.position_at_end(resume)

    def _final_suspend(self) -> None:
        """The final suspend point: the body's scopes are already unwound, so a
        destroy only frees the frame; resuming it is an error."""
        b = self.fg.b
        s = b.call(self._intrinsic("llvm.coro.suspend"), [self._final_save, I1(1)], name="final.state")
        resumed = self.fg.block("final.resumed")
        switch = b.switch(s, self.ret_bb)
        switch.add_case(I8(0), resumed)
        switch.add_case(I8(1), self.cleanup_bb)
        b.position_at_end(resumed)
        b.unreachable()

    def suspend_on(self, info, awaiter: ir.Value) -> None:
        #   %ready = call i1 @W.await_ready(ptr %awaiter)
        #   br i1 %ready, label %await.ready, label %await.suspend
        # await.suspend:
        #   %save = call token @llvm.coro.save(ptr %hdl)
        #   call <R> @llvm.coro.await.suspend.<kind>(ptr %awaiter, ptr %hdl, ptr @wrapper)
        #   (bool: br on the result; false resumes at once)
        #   %s = call i8 @llvm.coro.suspend(token %save, i1 false) ...
        # await.ready:
        #   call @W.await_resume(ptr %awaiter)
        fg, b = self.fg, self.fg.b
        name = f"await.{fg.current_span.line}"
        ready = fg.call(info.ready, [awaiter])
        ready_bb, suspend_bb = fg.block(f"{name}.ready"), fg.block(f"{name}.suspend")
        b.cbranch(ready, ready_bb, suspend_bb)
        b.position_at_end(suspend_bb)
        save = b.call(self._intrinsic("llvm.coro.save"), [self.handle], name=f"{name}.save")
        wrapper = fg.mg.await_wrapper(info.suspend, info.kind)
        if info.kind == "handle":
            self._suspend_to_handle(awaiter, wrapper)
        else:
            result = b.call(self._intrinsic(f"llvm.coro.await.suspend.{info.kind}"),
                            [awaiter, self.handle, wrapper])
        if info.kind == "bool":  # false: do not suspend after all
            really = fg.block(f"{name}.really")
            b.cbranch(result, really, ready_bb)
            b.position_at_end(really)
        self._suspend(name, save)
        b.branch(ready_bb)
        b.position_at_end(ready_bb)

    def transfer(self, handle: ir.Value) -> None:
        fg, b = self.fg, self.fg.b
        name = f"transfer.{fg.current_span.line}"
        slot = fg.alloca(HANDLE, "transfer.to")
        b.store(handle, slot)
        save = b.call(self._intrinsic("llvm.coro.save"), [self.handle], name=f"{name}.save")
        self._suspend_to_handle(slot, fg.mg.load_handle_wrapper())
        self._suspend(name, save)

    def leave(self) -> None:
        self.fg.b.branch(self.final_bb)

    def end(self) -> None:
        fg, b = self.fg, self.fg.b
        if not b.block.is_terminated:
            b.branch(self.final_bb)
        b.position_at_end(self.final_bb)
        transfer = fg.mg.final_transfer(fg.inst)
        if transfer is not None:
            # `final_suspend(mut self) -> Handle`: symmetric transfer to the handle it
            # returns (a task's continuation), as a final suspend point.
            self._final_save = b.call(self._intrinsic("llvm.coro.save"), [self.handle], name="final.save")
            wrapper = self._final_wrapper(fg.mg.await_wrapper(transfer, "handle"))
            b.call(self._intrinsic("llvm.coro.await.suspend.handle"), [self._promise, self.handle, wrapper])
            self._final_suspend()
        elif self.info.final_suspend:
            self._final_save = TOKEN_NONE
            self._final_suspend()
        else:
            b.branch(self.cleanup_bb)
        b.position_at_end(self.cleanup_bb)
        mem = b.call(self._intrinsic("llvm.coro.free"), [self.id, self.handle], name="mem.free")
        if self.info.deallocate is not None and not fg.mg.explain:
            # null when the frame was elided into the caller's stack frame
            heap, done = fg.block("coro.dealloc"), fg.block("coro.freed")
            b.cbranch(b.icmp_unsigned("!=", mem, ir.Constant(PTR, None)), heap, done)
            b.position_at_end(heap)
            b.call(fg.mg.runtime("coro_count"), [I64(-1)])
            fg.call(self.info.deallocate, [mem])
            b.branch(done)
            b.position_at_end(done)
        else:
            size = b.call(self._intrinsic("llvm.coro.size.i64"), [], name="size.free")
            b.call(fg.mg.runtime("coro_free"), [mem, size])
        b.branch(self.ret_bb)
        b.position_at_end(self.ret_bb)
        b.call(self._intrinsic("llvm.coro.end"), [self.handle, I1(0), TOKEN_NONE])
        b.ret(self.handle)


class SwitchABI(CoroutineABI):
    body_emitter = SwitchEmitter
    counts_sites = True
    # Not in the trampolined form (`run --trampoline`; NVPTX when the module
    # needs it), whose targets may want another constraint than x86's and
    # ARM's `=r` for a 64-bit pointer (NVPTX's is `l`). GPU code refuses
    # recursive coroutines anyway (frontend/check/program.py).
    hides_recursive_frames = True

    def call(self, fg, callee, fn: ir.Function, args: list[ir.Value], elide_safe: bool,
             site: list[ir.Value]) -> ir.Value | None:
        """A coroutine's call of itself (`await chain(n - 1)`) gives a handle LLVM
        cannot see into (llvmcompat.opaque_copy). Otherwise, once a caller
        inlines the ramp and the resume function (`block_on(chain(n))` in
        main), each of the pipeline's devirtualisation rounds found the next
        level's resume function in the frame the inlined ramp had just
        filled, and inlined it: four more copies of the coroutine in the
        caller, which ran once and took half of task_chain's pipeline (68 ->
        35 ms) and a larger `main` to generate code for. Inside the
        recursion nothing changes: each level's frame is on the heap and its
        resumption an indirect call, as before."""
        result = super().call(fg, callee, fn, args, elide_safe, site)
        if callee is fg.inst and self.hides_recursive_frames and result is not None:
            result = opaque_copy(fg.b, result)
        return result

    def handle_op(self, fg, t, name: str, handle: ir.Value | None, promise_align: int = 8,
                  owning: bool = False) -> ir.Value | None:
        """`h.resume()`, `h.done()`, `h.handle()`, `h.promise()`, `h.destroy()`."""
        return _handle_op(self, fg, name, handle, promise_align, owning)

    # ---- what the trampolined form (trampoline.py) changes
    def resume(self, b: ir.IRBuilder, handle: ir.Value) -> None:
        b.call(intrinsics.declare(b.module, "llvm.coro.resume"), [handle])

    def promise_of(self, b: ir.IRBuilder, handle: ir.Value, promise_align: int) -> ir.Value:
        return b.call(intrinsics.declare(b.module, "llvm.coro.promise"), [handle, I32(promise_align), I1(0)])

    def resume_any(self, b: ir.IRBuilder, handle: ir.Value) -> None:
        """Resume a Handle, which may be the no-op coroutine's."""
        self.resume(b, handle)


SWITCH = SwitchABI()


def _handle_op(abi: SwitchABI, fg, name: str, handle: ir.Value | None, promise_align: int,
               owning: bool) -> ir.Value | None:
    b = fg.b
    declare = lambda n: intrinsics.declare(fg.mg.module, n)  # noqa: E731
    if name == "resume":
        if owning:
            done = b.call(declare("llvm.coro.done"), [handle])
            fg.check(b.not_(done), lambda: fg.panic(b"resumed a finished coroutine", fg.current_span),
                     "resume")
            abi.resume(b, handle)
        else:
            # Out of line: an owning `g.resume()` next to a `Handle.resume()` (the
            # generator's `next`) must stay two calls, or SimplifyCFG merges them
            # into one resume of a select that CoroElide cannot devirtualize.
            b.call(_resume_handle(abi, fg.mg), [handle])
        return None
    if name == "noop":
        return b.call(declare("llvm.coro.noop"), [])
    if name == "done":
        return b.call(declare("llvm.coro.done"), [handle])
    if name == "destroy":
        b.call(declare("llvm.coro.destroy"), [handle])
        return None
    if name == "promise":
        return abi.promise_of(b, handle, promise_align)
    return handle  # handle(): the same frame, not owned


def _resume_handle(abi: SwitchABI, mg) -> ir.Function:
    name = "pc.resume.handle"
    fn = mg.module.globals.get(name)
    if fn is None:
        fn = ir.Function(mg.module, ir.FunctionType(ir.VoidType(), [PTR]), name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        abi.resume_any(b, fn.args[0])
        b.ret_void()
    return fn
