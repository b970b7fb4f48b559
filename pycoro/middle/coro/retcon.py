"""Returned-continuation coroutines (`abi retcon(N);`, `abi retcon_once(N);`):
LLVM's `llvm.coro.id.retcon` / `llvm.coro.id.retcon.once` lowering, as Swift's
accessors and the `coro-retcon*.ll` tests of LLVM 22.

The coroutine takes the caller's buffer first and returns the first
continuation with the first yielded value; each continuation has the
prototype's signature `(ptr buffer, i1 unwind)` and returns the next pair
(retcon_once: nothing); a finished coroutine returns a null continuation.

    define {ptr, V} @f(ptr %buffer, params...) {
      %id = call token @llvm.coro.id.retcon(i32 N, i32 8, ptr %buffer,
                ptr @pc.retcon.proto.V, ptr @__pc_retcon_alloc, ptr @__pc_retcon_free)
      %hdl = call ptr @llvm.coro.begin(token %id, ptr null)
      ...   every `yield v`:
      %unwind = call i1 (...) @llvm.coro.suspend.retcon.i1(V %v)
      br i1 %unwind, label %destroy, label %resume     ; destroy: the scopes' cleanups
    coro.end:
      call void @llvm.coro.end(ptr %hdl, i1 false, token none)
      unreachable
    }

A value of an aggregate type travels as the address of a copy in the frame.
LLVM places the frame in the buffer when it fits (N bytes, 8-aligned) and
otherwise calls the runtime's `__pc_retcon_alloc`.

The handle points to a **control block** that the caller keeps with the
buffer, so a handle moves like any other while the frame stays where it is
(a frame may hold pointers into itself):

    { ptr continuation, V value, i8 flags, ptr buffer }      [N/8 x i64] buffer

Both live in the caller's stack frame when the checker proves the coroutine
ends there (`elide_safe`, as for switched-resume frames), else in one heap
block (flag HEAP). They are separate objects so that a continuation, which
receives only the buffer, is not seen to write the control block: its
fields stay in registers around each step. retcon_once coroutines start by running to their yield, so the
first value is ready at creation (flag PRIMED: `next()` hands it out without
resuming). The handle operations (`next`, `value`, `resume`, `done`,
destroy) are small always-inlined functions per handle type.
"""
from __future__ import annotations

from llvmlite import ir

from ...frontend.layout import is_aggregate
from ...frontend.types import PromiseT, Type, abi_of
from .. import intrinsics
from ..llvmcompat import (I1, I8, I32, I64, PTR, TOKEN_NONE, TypedCallee, alloca, field_ptr,
                          mark_presplit_coroutine)
from ..devirtualise import STEP
from .base import CoroutineABI, PromisedEmitter

BUFFER_ALIGN = 8
HEAP, PRIMED = 1, 2
CONTINUATION, VALUE, FLAGS, BUFFER = range(4)   # the control block's fields
CONTROL_SIZE = 32   # ptr, a value of at most 8 bytes (an aggregate's travels by address), i8, ptr


def buffer_bytes(t: PromiseT) -> int:
    """`abi retcon(N)`: N rounded up to whole words (the buffer is 8-aligned)."""
    return 8 * (((t.decl.abi.size or 0) + 7) // 8)


def item_type(mg, t: PromiseT) -> ir.Type:
    """How a yielded value travels: a scalar by value, an aggregate by address."""
    item = t.args[0]
    return PTR if is_aggregate(item) else mg.llvm(item)


def result_type(mg, t: PromiseT) -> ir.Type:
    """What the ramp and (retcon) every continuation return."""
    return ir.LiteralStructType([PTR, item_type(mg, t)])


def continuation_type(mg, t: PromiseT) -> ir.FunctionType:
    ret = ir.VoidType() if abi_of(t) == "retcon_once" else result_type(mg, t)
    return ir.FunctionType(ret, [PTR, I1])


def control_block_type(mg, t: PromiseT) -> ir.Type:
    return ir.LiteralStructType([PTR, item_type(mg, t), I8, PTR])


def buffer_type(t: PromiseT) -> ir.Type:
    return ir.ArrayType(I64, buffer_bytes(t) // 8)


def heap_block_size(t: PromiseT) -> int:
    """A heap control block with its buffer right after it."""
    return CONTROL_SIZE + buffer_bytes(t)


def ramp_type(mg, t: PromiseT, params: list[ir.Type]) -> ir.FunctionType:
    return ir.FunctionType(result_type(mg, t), [PTR] + params)


def _prototype(mg, t: PromiseT) -> ir.Function:
    """The continuation's signature, as a declared function LLVM reads it from."""
    fnty = continuation_type(mg, t)
    name = f"pc.retcon.prototype.{abi_of(t)}.{item_type(mg, t)}".replace(" ", "")
    fn = mg.module.globals.get(name)
    if fn is None:
        fn = ir.Function(mg.module, fnty, name)
        fn.args[1].add_attribute("zeroext")
    return fn


class RetconEmitter(PromisedEmitter):
    def _intrinsic(self, name: str) -> ir.Function:
        return intrinsics.declare(self.fg.mg.module, name)

    def prologue(self, args) -> None:
        next(args)   # the caller's buffer (begin hands it to llvm.coro.id.retcon)

    def begin(self) -> None:
        fg, b, t = self.fg, self.fg.b, self.info.promise
        mark_presplit_coroutine(fg.fn)
        suffix = "retcon.once" if self.info.abi == "retcon_once" else "retcon"
        buffer = fg.fn.args[0]
        buffer.name = "buffer"
        self.id = b.call(self._intrinsic(f"llvm.coro.id.{suffix}"), [
            I32(buffer_bytes(t)), I32(BUFFER_ALIGN), buffer, _prototype(fg.mg, t),
            fg.mg.runtime("retcon_alloc"), fg.mg.runtime("retcon_free")], name="id")
        self.handle = b.call(self._intrinsic("llvm.coro.begin"), [self.id, ir.Constant(PTR, None)], name="hdl")
        self.end_bb = fg.block("coro.end")
        if self.info.initial_suspend:
            # lazy, like a Generator: the ramp only stores the arguments
            self._suspend("init", ir.Constant(item_type(fg.mg, t), None))

    def promise(self) -> ir.Value:
        raise AssertionError("a returned-continuation coroutine has no promise")

    def yield_(self, e) -> None:
        """`yield value`: suspend, handing `value` to whoever called the
        continuation (no promise, no hook)."""
        self._suspend_with(f"yield.{e.span.line}", self.fg.expr(e.value), self.info.yields)

    def _suspend_with(self, name: str, value: ir.Value, t: Type) -> None:
        if is_aggregate(t):
            copy = self.fg.alloca(t, "yielded")   # lives in the frame while suspended
            self.fg.store(value, copy, t)
            value = copy
        self._suspend(name, value)

    def _suspend(self, name: str, value: ir.Value) -> None:
        fg, b = self.fg, self.fg.b
        unwind = b.call(self._intrinsic("llvm.coro.suspend.retcon.i1"), [value], name=f"{name}.unwind")
        resume, destroy = fg.block(f"{name}.resume"), fg.block(f"{name}.destroy")
        b.cbranch(unwind, destroy, resume)
        b.position_at_end(destroy)
        fg.unwind_to(0, destroying=True)
        b.branch(self.end_bb)
        b.position_at_end(resume)

    def fall_off_end(self) -> None:
        """No `return_void` hook: falling off the end just ends it."""

    def leave(self) -> None:
        self.fg.b.branch(self.end_bb)

    def end(self) -> None:
        b = self.fg.b
        if not b.block.is_terminated:
            b.branch(self.end_bb)
        b.position_at_end(self.end_bb)
        b.call(self._intrinsic("llvm.coro.end"), [self.handle, I1(0), TOKEN_NONE])
        b.unreachable()


# ---- the caller's side

def create(fg, t: PromiseT, ramp: ir.Function, args: list[ir.Value], on_stack: bool,
           site: list[ir.Value]) -> ir.Value:
    """Call a retcon coroutine: a control block (in this stack frame when the
    coroutine certainly ends here), the ramp, and the handle to the block."""
    b, mg = fg.b, fg.mg
    if on_stack:
        block = alloca(fg.allocas, control_block_type(mg, t), "retcon.block")
        buffer = alloca(fg.allocas, buffer_type(t), "retcon.buffer")
        buffer.align = 16
        flags = 0
    else:
        block = b.call(mg.runtime("coro_alloc"), [I64(heap_block_size(t))] + site, name="retcon.block")
        buffer = b.gep(block, [I64(CONTROL_SIZE)], source_etype=I8, name="retcon.buffer")
        buffer.type = PTR
        flags = HEAP
    b.store(buffer, _field(b, mg, t, block, BUFFER))
    if ramp is fg.fn:   # a recursive call: see _recursive_start
        first = b.call(_recursive_start(mg, ramp), [buffer] + args, name="first")
    else:
        prepared = b.call(intrinsics.declare(mg.module, "llvm.coro.prepare.retcon"), [ramp])
        first = b.call(TypedCallee(prepared, ramp.function_type), [buffer] + args, name="first")
    store_step(b, mg, t, block, first)
    if abi_of(t) == "retcon_once":
        flags |= PRIMED
    b.store(I8(flags), _field(b, mg, t, block, FLAGS))
    return block


def _recursive_start(mg, ramp: ir.Function) -> ir.Function:
    """A retcon coroutine's call of itself, through a function that is not a coroutine:

        define internal {ptr, V} @pc.r.recursive(ptr %buffer, params...) noinline {
          %r = call {ptr, V} (llvm.coro.prepare.retcon(@pc.r))(ptr %buffer, params...)
          ret {ptr, V} %r
        }

    CoroSplit replaces every llvm.coro.prepare.retcon of the module the first
    time it runs, on the first function of the call graph's walk, so a direct
    call of itself stands in the coroutine before it is split. Unsplit, a
    retcon coroutine has no `ret` (each path ends in llvm.coro.end and
    `unreachable`; CoroSplit makes the returns), so SCCP takes the result of
    that call for `undef` and the first continuation is never stored: `for v
    in r(d - 1)` inside `r` then ran an uninitialised continuation (a crash
    at -O1 and above, or no values). Through this function, SCCP sees a call
    whose result it does not know."""
    name = f"{ramp.name}.recursive"
    fn = mg.module.globals.get(name)
    if fn is None:
        fn = ir.Function(mg.module, ramp.function_type, name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        prepared = b.call(intrinsics.declare(mg.module, "llvm.coro.prepare.retcon"), [ramp])
        b.ret(b.call(TypedCallee(prepared, ramp.function_type), list(fn.args)))
    return fn


def keep_split_ramps_out(module: ir.Module) -> None:
    """Mark `noinline` every call, in a coroutine still to be split, that could
    bring a retcon coroutine's ramp into it by inlining.

    After CoroSplit, a retcon ramp still holds its llvm.coro.id.retcon(.once)
    and llvm.coro.begin (CoroCleanup removes them at the end of the
    pipeline). CoroSplit's analysis of a coroutine skips a switched-resume
    coro.begin whose coro.id says it is split, but not a retcon one, so a ramp
    inlined into an unsplit coroutine, directly or inside a function that
    called it (`fn f(a) { with o in once(a) {…} }` called from a generator),
    makes "coroutine should have exactly one defining @llvm.coro.begin", a
    fatal error of the whole process. The calls that could: of a function
    that calls a ramp, directly or through other functions, and every
    indirect call (SCCP can make one direct, the ramp's own calls included).
    Elsewhere ramps inline as before."""
    prepare = module.globals.get("llvm.coro.prepare.retcon")
    if prepare is None:
        return
    defined = [f for f in module.functions if f.blocks]
    calls = {f.name: [i for block in f.blocks for i in block.instructions if isinstance(i, ir.CallInstr)]
             for f in defined}
    unsplit = [f for f in defined if "presplitcoroutine" in f.attributes]
    plain = [f for f in defined if "presplitcoroutine" not in f.attributes]
    starts: set[str] = set()
    grew = True
    while grew:   # a fixed point over the call graph
        reach = {f.name for f in plain if f.name not in starts and any(
            c.callee is prepare or (isinstance(c.callee, ir.Function) and c.callee.name in starts)
            for c in calls[f.name])}
        starts |= reach
        grew = bool(reach)
    for f in unsplit:
        for c in calls[f.name]:
            if not isinstance(c.callee, ir.Function) or c.callee.name in starts:
                c.attributes.add("noinline")


def _field(b, mg, t: PromiseT, block: ir.Value, index: int) -> ir.Value:
    return field_ptr(b, block, control_block_type(mg, t), index)


def store_step(b, mg, t: PromiseT, block: ir.Value, result: ir.Value) -> None:
    b.store(b.extract_value(result, 0), _field(b, mg, t, block, CONTINUATION))
    b.store(b.extract_value(result, 1), _field(b, mg, t, block, VALUE))


class RetconABI(CoroutineABI):
    """`abi retcon(N)` and `abi retcon_once(N)`."""
    body_emitter = RetconEmitter
    counts_sites = True

    def function_type(self, mg, inst, fnty: ir.FunctionType) -> ir.FunctionType:
        return ramp_type(mg, inst.ret, list(fnty.args))   # takes the caller's buffer

    def call(self, fg, callee, fn: ir.Function, args: list[ir.Value], elide_safe: bool,
             site: list[ir.Value]) -> ir.Value:
        return create(fg, callee.ret, fn, args, elide_safe, site)

    def handle_op(self, fg, t, name: str, handle: ir.Value | None, promise_align: int = 8,
                  owning: bool = False) -> ir.Value | None:
        return handle_op(fg, name, handle, t)

    def finish_module(self, mg) -> None:
        keep_split_ramps_out(mg.module)


RETCON = RetconABI()


def handle_op(fg, name: str, handle: ir.Value, t: PromiseT) -> ir.Value | None:
    """`h.next()`, `h.value()`, `h.resume()`, `h.done()` and destroying the
    handle's coroutine."""
    b = fg.b
    if name == "value":
        item = t.args[0]
        value = b.load(_field(b, fg.mg, t, handle, VALUE), typ=item_type(fg.mg, t))
        return fg.load(value, item) if is_aggregate(item) else value
    if name in ("done", "resume"):
        _, cont = _continuation(b, fg.mg, t, handle)
        finished = b.icmp_unsigned("==", cont, ir.Constant(PTR, None))
        if name == "done":
            return finished
        fg.check(b.not_(finished), lambda: fg.panic(b"resumed a finished coroutine", fg.current_span), "resume")
    result = b.call(_operation(fg.mg, t, _OPERATIONS.get(name, name)), [handle])
    return None if isinstance(result.type, ir.VoidType) else result   # (`let v = h.resume();`: a void value)


# `__destroy()`: the export wrappers' way to destroy a handle they reach through a pointer
_OPERATIONS = {"__destroy": "destroy"}


def _operation(mg, t: PromiseT, name: str) -> ir.Function:
    key = ("retcon", name, t)
    if key in mg.wrappers:
        return mg.wrappers[key]
    ret = I1 if name == "next" else ir.VoidType()
    fn = ir.Function(mg.module, ir.FunctionType(ret, [PTR]), mg.module.get_unique_name(f"pc.retcon.{name}"))
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    mg.wrappers[key] = fn
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    block = fn.args[0]
    {"next": _emit_next, "resume": _emit_resume, "destroy": _emit_destroy}[name](b, mg, t, block)
    return fn


def _continuation(b, mg, t, block) -> tuple[ir.Value, ir.Value]:
    slot = _field(b, mg, t, block, CONTINUATION)
    return slot, b.load(slot, typ=PTR, name="cont")


def _step(b: ir.IRBuilder, mg, t: PromiseT, cont: ir.Value, buffer: ir.Value) -> ir.Value:
    """Run the coroutine on from where `cont` continues it. A stream's step is
    marked for middle/devirtualise.py, which calls the continuation directly
    where only one function can be it."""
    result = b.call(TypedCallee(cont, continuation_type(mg, t)), [buffer, I1(0)], name="step")
    if abi_of(t) == "retcon":
        result.set_metadata(STEP, mg.module.add_metadata([]))
        mg.stream_steps = True
    return result


def _emit_next(b: ir.IRBuilder, mg, t: PromiseT, block: ir.Value) -> None:
    null = ir.Constant(PTR, None)
    slot, cont = _continuation(b, mg, t, block)
    if abi_of(t) == "retcon_once":
        flags_slot = _field(b, mg, t, block, FLAGS)
        flags = b.load(flags_slot, typ=I8)
        with b.if_then(b.icmp_unsigned("!=", b.and_(flags, I8(PRIMED)), I8(0))):
            b.store(b.and_(flags, I8(~PRIMED & 0xFF)), flags_slot)   # the value from the start
            b.ret(b.icmp_unsigned("!=", cont, null))
    with b.if_then(b.icmp_unsigned("==", cont, null)):
        b.ret(I1(0))
    buffer = b.load(_field(b, mg, t, block, BUFFER), typ=PTR, name="buffer")
    result = _step(b, mg, t, cont, buffer)
    if abi_of(t) == "retcon_once":
        b.store(null, slot)   # its only continuation ran it to completion
        b.ret(I1(0))
        return
    store_step(b, mg, t, block, result)
    b.ret(b.icmp_unsigned("!=", b.extract_value(result, 0), null))


def _emit_resume(b: ir.IRBuilder, mg, t: PromiseT, block: ir.Value) -> None:
    """`h.resume()` of a suspended coroutine (handle_op checked that it is):
    run it to its next yield, or a retcon_once one to its end, whether or
    not `next()` handed out the value it is suspended with."""
    slot, cont = _continuation(b, mg, t, block)
    buffer = b.load(_field(b, mg, t, block, BUFFER), typ=PTR, name="buffer")
    result = _step(b, mg, t, cont, buffer)
    if abi_of(t) == "retcon_once":
        flags_slot = _field(b, mg, t, block, FLAGS)
        b.store(b.and_(b.load(flags_slot, typ=I8), I8(~PRIMED & 0xFF)), flags_slot)
        b.store(ir.Constant(PTR, None), slot)
    else:
        store_step(b, mg, t, block, result)
    b.ret_void()


def _emit_destroy(b: ir.IRBuilder, mg, t: PromiseT, block: ir.Value) -> None:
    """Unwind a suspended coroutine (its pending defers run, an outsized frame is
    freed), then free a heap control block."""
    _, cont = _continuation(b, mg, t, block)
    with b.if_then(b.icmp_unsigned("!=", cont, ir.Constant(PTR, None))):
        buffer = b.load(_field(b, mg, t, block, BUFFER), typ=PTR, name="buffer")
        b.call(TypedCallee(cont, continuation_type(mg, t)), [buffer, I1(1)])
    flags = b.load(_field(b, mg, t, block, FLAGS), typ=I8)
    with b.if_then(b.icmp_unsigned("!=", b.and_(flags, I8(HEAP)), I8(0))):
        b.call(mg.runtime("coro_free"), [block, I64(heap_block_size(t))])
    b.ret_void()

