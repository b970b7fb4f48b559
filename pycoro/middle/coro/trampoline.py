"""Symmetric transfer without tail calls: a resume loop (trampoline).

On a target with tail calls, a switched-resume coroutine transfers to another
by `musttail`-calling its resume function (`llvm.coro.await.suspend.handle`),
so a chain of transfers runs in constant stack. NVPTX has no tail calls: LLVM
prints `musttail` there as `call` + `ret`, and every hop of a chain of awaits
(`for k in 0..n { s += await step(k); }`: into the task, back to the loop,
into the next task, …) would take another frame of the thread's stack.
There, the transfer of an `await` is handed to a resume loop instead:

    await transfer (after the awaiting coroutine is suspended):
        next == no-op              → return to whoever resumed us
        our slot != null           → *slot = next; return    (the loop resumes next)
        our slot == null           → trampoline(next)         (start a loop here)

    trampoline(h):
        loop { slot = null; h.slot = &slot; resume h
               if slot == null: return;  h = slot }

    final transfer (a finished task to its continuation): a plain transfer
        (call + ret on NVPTX) that first gives `next` our slot, so the
        continuation's next await is queued on the loop we run on.

    resume site (`h.resume()`, `g.next()`, `block_on`):  h.slot = null; resume h

A chain of awaits therefore costs at most one loop per resume site plus the
final transfers between two awaits, whatever its length. Final transfers
stay plain so that generators, which never await, keep code small enough
for CoroElide to place a whole pipeline's frames (their final transfer goes
to the no-op coroutine or to a `yield from` parent, bounded by nesting).

The slot is a hidden first field in front of every promise, so it sits at a
fixed offset of every frame (LLVM lays a switched-resume frame out as resume
function, destroy function, promise). It is written only while the frame is
certainly alive: right before a resume, or by the coroutine itself.
"""
from __future__ import annotations

from llvmlite import ir

from .. import intrinsics
from ..llvmcompat import I1, I8, I32, I64, PTR, alloca, field_ptr, gep
from .switch import SwitchABI, SwitchEmitter

# resume function, destroy function, then the promise: its first field (the
# slot) is at 16 when the promise is aligned to at most 16 bytes
SLOT_OFFSET = 16
MAX_PROMISE_ALIGN = 16


def promise_type(state: ir.Type) -> ir.Type:
    """The frame's promise: the transfer slot, then the promise state."""
    return ir.LiteralStructType([PTR, state])


def promise_align(state_align: int) -> int:
    """The alignment of `promise_type` (and the state's offset inside it)."""
    assert state_align <= MAX_PROMISE_ALIGN, "promise over-aligned for the resume loop"
    return max(state_align, 8)


def state_of(b: ir.IRBuilder, handle: ir.Value, state_align: int) -> ir.Value:
    """The promise state of the coroutine `handle`, behind its transfer slot."""
    align = promise_align(state_align)
    promise = b.call(intrinsics.declare(b.module, "llvm.coro.promise"), [handle, I32(align), I1(0)])
    return gep(b, promise, [I64(align)], I8, "promise.state")


def is_coroutine(b: ir.IRBuilder, handle: ir.Value) -> ir.Value:
    """Whether `handle` is not the no-op coroutine (whose frame has no slot)."""
    return b.icmp_unsigned("!=", handle, b.call(intrinsics.declare(b.module, "llvm.coro.noop"), []))


def slot_of(b: ir.IRBuilder, frame: ir.Value) -> ir.Value:
    return gep(b, frame, [I64(SLOT_OFFSET)], I8, "transfer.slot.field")


def resume(b: ir.IRBuilder, handle: ir.Value) -> None:
    """Resume `handle` (not the no-op coroutine) with no loop waiting below it."""
    b.store(ir.Constant(PTR, None), slot_of(b, handle))
    b.call(intrinsics.declare(b.module, "llvm.coro.resume"), [handle])


def suspend_wrapper(module: ir.Module, handle_wrapper: ir.Function) -> ir.Function:
    """`void wrapper(ptr awaiter, ptr frame)` for `llvm.coro.await.suspend.void`:
    the handle `handle_wrapper` chose, handed to the resume loop."""
    name = f"{handle_wrapper.name}.trampoline"
    fn = module.globals.get(name)
    if fn is None:
        fn = _function(module, ir.VoidType(), name)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        awaiter, frame = fn.args
        next_ = b.call(handle_wrapper, [awaiter, frame])
        with b.if_then(is_coroutine(b, next_)):
            b.call(_transfer(module), [b.load(slot_of(b, frame), typ=PTR), next_])
        b.ret_void()
    return fn


def final_wrapper(module: ir.Module, handle_wrapper: ir.Function) -> ir.Function:
    """`ptr wrapper(ptr promise, ptr frame)` for `llvm.coro.await.suspend.handle`:
    the handle `handle_wrapper` chose, given our slot before we transfer to it."""
    name = f"{handle_wrapper.name}.final"
    fn = module.globals.get(name)
    if fn is None:
        fn = _function(module, PTR, name)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        promise, frame = fn.args
        next_ = b.call(handle_wrapper, [promise, frame])
        with b.if_then(is_coroutine(b, next_)):
            b.store(b.load(slot_of(b, frame), typ=PTR), slot_of(b, next_))
        b.ret(next_)
    return fn


def _function(module: ir.Module, ret: ir.Type, name: str, params=(PTR, PTR)) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(ret, list(params)), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")   # PyCoro has no exceptions
    return fn


def _trampoline(module: ir.Module) -> ir.Function:
    name = "pc.trampoline"
    fn = module.globals.get(name)
    if fn is None:
        fn = _function(module, ir.VoidType(), name, [PTR])
        # out of line: inlined, LLVM resolves the resumes it makes into direct
        # calls, and the resume functions become recursive for ptxas
        fn.attributes.add("noinline")
        entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
        b = ir.IRBuilder(entry)
        slot = alloca(b, PTR, "slot")
        b.branch(loop)
        b.position_at_end(loop)
        current = b.phi(PTR, name="current")
        current.add_incoming(fn.args[0], entry)
        b.store(ir.Constant(PTR, None), slot)
        b.store(slot, slot_of(b, current))
        b.call(intrinsics.declare(module, "llvm.coro.resume"), [current])
        next_ = b.load(slot, typ=PTR, name="next")
        current.add_incoming(next_, loop)
        b.cbranch(b.icmp_unsigned("==", next_, ir.Constant(PTR, None)), done, loop)
        b.position_at_end(done)
        b.ret_void()
    return fn


def _transfer(module: ir.Module) -> ir.Function:
    """`void transfer(ptr slot, ptr next)`: hand `next` to the loop waiting on
    `slot`, or start a loop when none is (a resume site or a ramp resumed us)."""
    name = "pc.transfer"
    fn = module.globals.get(name)
    if fn is None:
        fn = _function(module, ir.VoidType(), name)
        slot, next_ = fn.args
        entry, queue, nested = (fn.append_basic_block(n) for n in ("entry", "queue", "nested"))
        b = ir.IRBuilder(entry)
        b.cbranch(b.icmp_unsigned("==", slot, ir.Constant(PTR, None)), nested, queue)
        b.position_at_end(queue)
        b.store(next_, slot)
        b.ret_void()
        b.position_at_end(nested)
        b.call(_trampoline(module), [next_])
        b.ret_void()
    return fn


# ---- the trampolined switched-resume ABI: SwitchABI with the slot and the loop

class TrampolinedSwitchEmitter(SwitchEmitter):
    records_backtraces = False   # its frames are laid out otherwise

    def _frame_promise(self, state, align: int) -> tuple[ir.Value, int]:
        # the promise is preceded by the hidden transfer slot
        self._frame_type = promise_type(self.fg.mg.llvm(state))
        return alloca(self.fg.allocas, self._frame_type, "promise"), promise_align(align)

    def _after_begin(self, frame_promise: ir.Value) -> None:
        # after coro.begin, so that CoroFrame moves it into the frame with the promise
        self._promise = field_ptr(self.fg.b, frame_promise, self._frame_type, 1, "promise.state")

    def _after_zero(self) -> None:
        self.fg.b.store(ir.Constant(PTR, None), slot_of(self.fg.b, self.handle))

    def _suspend_to_handle(self, awaiter: ir.Value, wrapper: ir.Function) -> None:
        """Through the resume loop: NVPTX has no tail calls."""
        self.fg.b.call(self._intrinsic("llvm.coro.await.suspend.void"),
                       [awaiter, self.handle, suspend_wrapper(self.fg.mg.module, wrapper)])

    def _final_wrapper(self, wrapper: ir.Function) -> ir.Function:
        return final_wrapper(self.fg.mg.module, wrapper)   # the next coroutine runs on top of our loop


class TrampolinedSwitchABI(SwitchABI):
    body_emitter = TrampolinedSwitchEmitter
    hides_recursive_frames = False

    def resume(self, b: ir.IRBuilder, handle: ir.Value) -> None:
        resume(b, handle)

    def promise_of(self, b: ir.IRBuilder, handle: ir.Value, promise_align: int) -> ir.Value:
        return state_of(b, handle, promise_align)

    def resume_any(self, b: ir.IRBuilder, handle: ir.Value) -> None:
        # a Handle may be the no-op coroutine, whose frame has no transfer slot
        with b.if_then(is_coroutine(b, handle)):
            resume(b, handle)


TRAMPOLINED_SWITCH = TrampolinedSwitchABI()
