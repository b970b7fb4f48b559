"""Async functions (`async fn`, LANGUAGE.md §7): LLVM's `llvm.coro.id.async`
lowering, as Swift's async functions and the `coro-async*.ll` tests of LLVM 22.

Every async function takes one argument, its **async context**, allocated by
its caller from the task's stack-disciplined allocator (std/async's
`__task_alloc`), and returns nothing: it ends by tail-calling its caller's
continuation.

    context = { ptr parent, ptr resume, ptr task, R result, params… } [frame]

    define swifttailcc void @f(ptr swiftasync %ctx) presplitcoroutine {
      %id = call token @llvm.coro.id.async(i32 <context size>, i32 16, i32 0, ptr @f.fp)
      %hdl = call ptr @llvm.coro.begin(token %id, ptr null)
      ...   `await g(x)`:
      %callee = call ptr @__task_alloc(ptr %task, i64 <g.fp's size>)
      store %ctx, %resume = llvm.coro.async.resume(), %task, x into %callee
      call {ptr} @llvm.coro.suspend.async(i32 0, ptr %resume,
                ptr @pc.async.project, ptr @pc.async.tail, ptr @g, ptr %callee)
      ...   read g's result from %callee; __task_free(%task, %callee)
      ...   `return v`: store v in %ctx's result, then
      call void @llvm.coro.end.async(ptr %hdl, i1 false, ptr @pc.async.tail, ptr <%ctx's resume>, ptr %ctx)
      unreachable
    }

CoroSplit puts the frame in the context after its first `<context size>`
bytes and writes the whole size into the function's **async function
pointer** `@f.fp = <{i32, i32 size}>`, which callers read to allocate the
context (with a volatile load: a constant folded before CoroSplit ran would
be the size without the frame). Suspension and return are `musttail` calls
under `swifttailcc`, so chains of awaits never grow the native stack.

Above -O0 an `await` of a small async fn emits the callee's body in place
(`inlines`, FnGen.emit_inlined): it then runs in the awaiting fn's context.

A task that waits (`await __park()` in std/async) tail-calls `pc.async.park`,
which records its continuation in the task and returns to the executor's
loop (`pc.async.run`, around std/async's `__sched_next`).
"""
from __future__ import annotations

import functools

from llvmlite import ir

from ...common.paths import in_stdlib
from ...frontend import ast
from ...frontend.program import DirectCall, FnInstance
from ...frontend.types import VOID, PromiseT, Type
from .. import intrinsics
from ..llvmcompat import I1, I16, I32, I64, PTR, TypedCallee, alloca, field_ptr, mark_presplit_coroutine, volatile_load
from ..inline_budget import INLINE_BUDGET, INLINE_DEPTH, syntax_size
from .base import LINK_CONTEXT, LINK_NONE, BodyEmitter, CoroutineABI

PARENT, RESUME, TASK = range(3)   # every context's header
CONTEXT_ALIGN = 16
CC = "swifttailcc"
_VOID = ir.VoidType()
_ENTRY = ir.FunctionType(_VOID, [PTR])            # an async function, or a continuation
_TAIL = ir.FunctionType(_VOID, [PTR, PTR])        # (function, its context): tail-call it
_PROJECT = ir.FunctionType(PTR, [PTR])


class Context:
    """The layout of one async function's context (before the frame)."""

    def __init__(self, mg, inst: FnInstance):
        fields: list[ir.Type] = list(header_type().elements)
        sizes = [(8, 8)] * len(fields)
        self.result = None
        if inst.ret != VOID:
            self.result = len(fields)
            fields.append(mg.llvm(inst.ret))
            sizes.append(mg.p.layouts.size_align(inst.ret))
        self.params: list[int | None] = []   # per parameter: its field (None: `void`)
        for i, (_, t) in enumerate(inst.params):
            if t == VOID:
                self.params.append(None)
                continue
            by_address = i == 0 and inst.self_mode == "ref"
            self.params.append(len(fields))
            fields.append(PTR if by_address else mg.llvm(t))
            sizes.append((8, 8) if by_address else mg.p.layouts.size_align(t))
        self.type = ir.LiteralStructType(fields)
        offset = 0
        for size, align in sizes:
            offset = (offset + align - 1) // align * align + size
        self.size = (offset + CONTEXT_ALIGN - 1) // CONTEXT_ALIGN * CONTEXT_ALIGN


def declare(fn: ir.Function) -> None:
    fn.calling_convention = CC
    fn.args[0].add_attribute("swiftasync")
    fn.args[0].name = "ctx"


def function_type() -> ir.FunctionType:
    return _ENTRY


def function_pointer(mg, inst: FnInstance) -> ir.GlobalVariable:
    """`@f.fp`: CoroSplit writes the context's full size (frame included) into its
    second field. Its first, Swift's relative address of the function, is unused:
    pycoro calls async functions by their symbols."""
    name = f"{inst.symbol}.fp"
    g = mg.module.globals.get(name)
    if g is None:
        ty = ir.LiteralStructType([I32, I32], packed=True)
        g = ir.GlobalVariable(mg.module, ty, name)
        g.initializer = ir.Constant(ty, [I32(0), I32(context(mg, inst).size)])
        g.linkage = "internal"
        g.type = PTR
    return g


def context(mg, inst: FnInstance) -> Context:
    key = ("async.context", id(inst))
    if key not in mg.wrappers:
        mg.wrappers[key] = Context(mg, inst)
    return mg.wrappers[key]


def context_size(mg, b: ir.IRBuilder, inst: FnInstance) -> ir.Value:
    fp = function_pointer(mg, inst)
    size_field = b.gep(fp, [I32(0), I32(1)], inbounds=True, source_etype=fp.value_type)
    size_field.type = PTR
    size = volatile_load(b, size_field, I32, "size")   # only CoroSplit knows it: never fold the initial value
    return b.zext(size, I64)


# ---- the small functions every async module shares

def _helper(mg, name: str, fnty: ir.FunctionType, build, cc: str | None = CC) -> ir.Function:
    fn = mg.module.globals.get(name)
    if fn is None:
        fn = ir.Function(mg.module, fnty, name)
        fn.linkage = "internal"
        if cc:
            fn.calling_convention = cc
        build(fn, ir.IRBuilder(fn.append_basic_block("entry")))
    return fn


def tail(mg) -> ir.Function:
    """`pc.async.tail(fn, ctx)`: `musttail` call `fn(ctx)` (a return, or a call)."""
    def build(fn, b):
        b.call(TypedCallee(fn.args[0], _ENTRY), [fn.args[1]], cconv=CC, tail="musttail",
               arg_attrs={0: ("swiftasync",)})
        b.ret_void()
    return _helper(mg, "pc.async.tail", _TAIL, build)


def project(mg) -> ir.Function:
    """The context a callee resumes its caller with is the callee's: its parent is the caller's."""
    def build(fn, b):
        b.ret(b.load(fn.args[0], typ=PTR))
    return _helper(mg, "pc.async.project", _PROJECT, build, cc=None)


def identity(mg) -> ir.Function:
    return _helper(mg, "pc.async.identity", _PROJECT, lambda fn, b: b.ret(fn.args[0]), cc=None)


def park(mg) -> ir.Function:
    """`pc.async.park(resume, ctx, site)`: the task waits, in the `await` of the
    program's code numbered `site` (await_site); back to the executor."""
    def build(fn, b):
        task = b.load(field_ptr(b, fn.args[1], header_type(), TASK), typ=PTR)
        call_runtime(mg, b, "__task_park", [task, fn.args[0], fn.args[1], fn.args[2]])
        b.ret_void()
    return _helper(mg, "pc.async.park", ir.FunctionType(ir.VoidType(), [PTR, PTR, I16]), build)


def site_number(mg, where: str | None) -> ir.Constant:
    """The number of the `await` at `where` ("file:line:col"; None: 0, none)."""
    if where is None:
        return I16(0)
    sites = mg.await_sites
    return I16(sites.setdefault(where, len(sites) + 1) if len(sites) < 65535 else 0)


def await_site(mg) -> ir.Function:
    """`pc.async.await_site(site) -> ptr`: "file:line:col" of a numbered
    `await`, or null; its body, a table, is written when the module is done
    (AsyncABI.finish_module)."""
    fn = mg.module.globals.get("pc.async.await_site")
    return fn if fn is not None else ir.Function(mg.module, ir.FunctionType(PTR, [I16]), "pc.async.await_site")


def _finish_await_sites(mg) -> None:
    fn = mg.module.globals.get("pc.async.await_site")
    if fn is None or not fn.is_declaration:
        return
    sites = mg.await_sites
    table = ir.GlobalVariable(mg.module, ir.ArrayType(PTR, len(sites) + 1), "pc.async.await_sites")
    table.global_constant = True
    table.linkage = "internal"
    table.initializer = ir.Constant(ir.ArrayType(PTR, len(sites) + 1),
                                    [ir.Constant(PTR, None)] + [mg.string(w.encode()) for w in sites])
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    slot = b.gep(table, [I32(0), b.zext(fn.args[0], I64)], inbounds=True)
    b.ret(b.load(slot, typ=PTR))


def task_end(mg) -> ir.Function:
    """The continuation of a task's first async function: the task is over."""
    def build(fn, b):
        declare(fn)
        task = b.load(field_ptr(b, fn.args[0], header_type(), TASK), typ=PTR)
        call_runtime(mg, b, "__task_finish", [task])
        b.ret_void()
    return _helper(mg, "pc.async.task_end", _ENTRY, build)


def run_loop(mg) -> ir.Function:
    """`pc.async.run()`: enter the next continuation until `main` has returned."""
    def build(fn, b):
        slot = b.alloca(PTR, name="ctx")
        slot.type = PTR
        loop, body, done = (fn.append_basic_block(n) for n in ("loop", "run", "done"))
        b.branch(loop)
        b.position_at_end(loop)
        resume = call_runtime(mg, b, "__sched_next", [slot])
        b.cbranch(b.icmp_unsigned("==", resume, ir.Constant(PTR, None)), done, body)
        b.position_at_end(body)
        b.call(TypedCallee(resume, _ENTRY), [b.load(slot, typ=PTR)], cconv=CC, arg_attrs={0: ("swiftasync",)})
        b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
    return _helper(mg, "pc.async.run", ir.FunctionType(_VOID, []), build, cc=None)


def header_type() -> ir.LiteralStructType:
    return ir.LiteralStructType([PTR, PTR, PTR])


def call_runtime(mg, b: ir.IRBuilder, name: str, args: list[ir.Value]) -> ir.Value:
    """Call std/async's `name` (a non-generic PyCoro function)."""
    inst = mg.p.async_runtime[name]
    return b.call(mg.declare(inst), args)


def start_task(mg, b: ir.IRBuilder, inst: FnInstance, store_args) -> ir.Value:
    """A new task whose first context calls `inst`; `store_args(ctx)` fills in the
    arguments. Returns the task."""
    size = context_size(mg, b, inst)
    task = call_runtime(mg, b, "__task_new", [size, stack_slack(mg, b, inst)])
    ctx = call_runtime(mg, b, "__task_root", [task])
    header = header_type()
    b.store(ir.Constant(PTR, None), field_ptr(b, ctx, header, PARENT))
    b.store(task_end(mg), field_ptr(b, ctx, header, RESUME))
    b.store(task, field_ptr(b, ctx, header, TASK))
    store_args(ctx)
    call_runtime(mg, b, "__task_start", [task, mg.declare(inst), ctx])
    return task


def c_main(mg, main: FnInstance, init: ir.Function, flush: ir.Function) -> None:
    """`int main()` of a program whose `main` is an `async fn`: run the executor
    until `main` returns, then free what is left."""
    fn = ir.Function(mg.module, ir.FunctionType(I32, [I32, PTR]), "main")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.call(init, [])
    task = start_task(mg, b, main, lambda ctx: None)
    call_runtime(mg, b, "__task_main", [task])
    b.call(run_loop(mg), [])
    call_runtime(mg, b, "__async_end", [])
    b.call(flush, [])
    b.ret(I32(0))


class AsyncEmitter(BodyEmitter):
    """The body of one `async fn`: its parameters and result live in its
    context, it returns by tail-calling its caller's continuation."""

    awaits_make_values = True

    def __init__(self, fg, info=None):
        super().__init__(fg, info)
        self.mg = fg.mg
        self.layout = context(self.mg, fg.inst)

    @property
    def b(self) -> ir.IRBuilder:
        return self.fg.b

    def prologue(self, args) -> None:
        fg, b = self.fg, self.fg.b
        mark_presplit_coroutine(fg.fn)
        # This function's context: its argument, and after each suspension what
        # the resume function is given, projected (not the argument, which
        # CoroSplit would then keep in the frame, 8 bytes of every context).
        self.ctx_slot = alloca(fg.allocas, PTR, "ctx")
        b.store(fg.fn.args[0], self.ctx_slot)
        coro_id = b.call(intrinsics.declare(self.mg.module, "llvm.coro.id.async"),
                         [I32(self.layout.size), I32(CONTEXT_ALIGN), I32(0), function_pointer(self.mg, fg.inst)],
                         name="id")
        self.handle = b.call(intrinsics.declare(self.mg.module, "llvm.coro.begin"),
                             [coro_id, ir.Constant(PTR, None)], name="hdl")

    @property
    def ctx(self) -> ir.Value:
        return self.b.load(self.ctx_slot, typ=PTR, name="ctx")

    def param_slot(self, index: int, param: ast.Param):
        # in the context its caller filled in, addressed afresh at each use: from
        # the context the code after a suspension is given, so that CoroSplit
        # keeps no address in the frame
        return functools.partial(self._param_slot, index, param.is_self and param.mut_self)

    def _param_slot(self, index: int, by_address: bool) -> ir.Value:
        """Where parameter `index` lives: in the context (its caller's copy);
        `mut self` is the address of the caller's place."""
        slot = field_ptr(self.b, self.ctx, self.layout.type, self.layout.params[index])
        return self.b.load(slot, typ=PTR) if by_address else slot

    def backtrace_link(self) -> tuple[ir.Value, int]:
        return self.ctx, LINK_CONTEXT

    def current_task(self) -> ir.Value:
        return self.b.load(field_ptr(self.b, self.ctx, self.layout.type, TASK), typ=PTR, name="task")

    # ---- return
    def result_slot(self) -> ir.Value:
        return field_ptr(self.b, self.ctx, self.layout.type, self.layout.result, "result")

    def return_(self, value: ir.Value | None) -> None:
        fg = self.fg
        if fg.inst.ret != VOID:
            fg.store(value, self.result_slot(), fg.inst.ret)
        fg.unwind_to(0)
        self._return()

    def fall_off_end(self) -> None:
        self._return()

    def _return(self) -> None:
        """Tail-call the caller's continuation (after the result is stored and the
        scopes unwound)."""
        b = self.b
        resume = b.load(field_ptr(b, self.ctx, self.layout.type, RESUME), typ=PTR, name="resume")
        b.call(intrinsics.declare(self.mg.module, "llvm.coro.end.async"),
               [self.handle, I1(0), tail(self.mg), resume, self.ctx])
        b.unreachable()

    # ---- suspension
    def _resume_function(self) -> ir.Value:
        """The function CoroSplit makes of the code after the next suspend point."""
        return self.b.call(intrinsics.declare(self.mg.module, "llvm.coro.async.resume"), [], name="resume.fn")

    def _suspend(self, resume: ir.Value, projection: ir.Function, then: ir.Function,
                 args: list[ir.Value]) -> None:
        """Suspend, tail-calling `then(args)`; `resume(ctx)` continues here, with
        `projection(ctx)` as this function's context."""
        resumed = self.b.call(intrinsics.declare(self.mg.module, "llvm.coro.suspend.async.sl_p0s"),
                              [I32(0), resume, projection, then] + args)
        self.b.store(self.b.call(projection, [self.b.extract_value(resumed, 0)]), self.ctx_slot)

    def park(self) -> None:
        """Wait until something puts the task back on the ready queue."""
        resume = self._resume_function()
        site = site_number(self.mg, self.user_await)
        self._suspend(resume, identity(self.mg), park(self.mg), [resume, self.ctx, site])

    # The innermost `await` of the program's own code being emitted (std/async's
    # awaits are inlined into it): where a task parked inside it waits.
    user_await: str | None = None

    def await_(self, e: ast.Await) -> ir.Value | None:
        outer = self.user_await
        if not in_stdlib(e.span.file):
            self.user_await = f"{e.span.file}:{e.span.line}:{e.span.col}"
        try:
            if self.fg.inst.async_awaits[e] == "call":
                return self.await_call(e.operand)
            return self.await_join(self.fg.expr(e.operand), self.fg.type_of(e))
        finally:
            self.user_await = outer

    def await_call(self, call: ast.Call) -> ir.Value | None:
        """`await g(…)`: g runs in a context on this task's stack, then resumes us."""
        fg, b = self.fg, self.b
        target: DirectCall = fg.inst.calls[call]
        callee = target.fn
        args = fg.call_arguments(call, target)
        if callee.decl.kind == "intrinsic":   # std/async's `__park`
            self.park()
            return None
        inline = inlines(self.mg, callee, fg.inline_chain)
        self._explain(call, callee, "inlined" if inline else "call")
        if inline:
            return fg.emit_inlined(callee, args)
        layout = context(self.mg, callee)
        task = self.current_task()
        if self.user_await is not None and in_stdlib(callee.decl.span.file):
            # a channel operation not inlined (-O0): it parks where only this await knows the position
            call_runtime(self.mg, b, "__task_site", [task, site_number(self.mg, self.user_await)])
        ctx = call_runtime(self.mg, b, "__task_alloc", [task, context_size(self.mg, b, callee)])
        b.store(self.ctx, field_ptr(b, ctx, layout.type, PARENT))
        b.store(task, field_ptr(b, ctx, layout.type, TASK))
        self.store_arguments(callee, ctx, args)
        resume = self._resume_function()
        b.store(resume, field_ptr(b, ctx, layout.type, RESUME))
        self._suspend(resume, project(self.mg), tail(self.mg), [self.mg.declare(callee), ctx])
        value = None
        if layout.result is not None:
            value = fg.load(field_ptr(b, ctx, layout.type, layout.result), callee.ret)
        call_runtime(self.mg, b, "__task_free", [task, ctx])
        return value

    def store_arguments(self, callee: FnInstance, ctx: ir.Value, args: list[ir.Value]) -> None:
        layout = context(self.mg, callee)
        values = iter(args)
        for i, (field, (_, t)) in enumerate(zip(layout.params, callee.params)):
            if field is None:
                continue
            slot = field_ptr(self.b, ctx, layout.type, field)
            if i == 0 and callee.self_mode == "ref":
                self.b.store(next(values), slot)
            else:
                self.fg.store(next(values), slot, t)

    def _explain(self, call: ast.Call, callee: FnInstance, kind: str) -> None:
        if self.mg.explain:
            self.mg.async_sites.append((self.fg.inst, call.span, callee, kind))

    def spawn(self, e: ast.Spawn) -> ir.Value:
        call = e.operand
        target: DirectCall = self.fg.inst.calls[call]
        self._explain(call, target.fn, "spawn")
        args = self.fg.call_arguments(call, target)
        return start_task(self.mg, self.b, target.fn, lambda ctx: self.store_arguments(target.fn, ctx, args))

    def await_join(self, join: ir.Value, t: Type) -> ir.Value | None:
        """`await j`: wait until j's task has returned, take its result, free it."""
        fg, b = self.fg, self.b
        wait = call_runtime(self.mg, b, "__join_wait", [join, self.current_task()])
        parked, ready = fg.block("join.wait"), fg.block("join.ready")
        b.cbranch(wait, parked, ready)
        b.position_at_end(parked)
        self.park()
        b.branch(ready)
        b.position_at_end(ready)
        value = None
        if t != VOID:
            root = call_runtime(self.mg, b, "__task_root", [join])
            # every context's result follows the header (Context)
            result = ir.LiteralStructType(list(header_type().elements) + [self.mg.llvm(t)])
            value = fg.load(field_ptr(b, root, result, len(header_type().elements)), t)
        call_runtime(self.mg, b, "__join_release", [join])
        return value


def inlines(mg, callee: FnInstance, chain: list[FnInstance]) -> bool:
    """Whether `await callee(…)` inside the last of `chain` (the function being
    emitted, then the callees inlined into it) becomes callee's body. The one
    decision: emission (AsyncEmitter.await_call) and the room a new task
    leaves for awaited calls (awaited_calls) must agree."""
    return (mg.inline_bodies and callee.decl.body is not None and len(chain) <= INLINE_DEPTH
            and all(callee is not f for f in chain)   # recursion: a real call
            and syntax_size(callee.decl.body) <= INLINE_BUDGET)


def awaited_calls(mg, inst: FnInstance, chain: tuple[FnInstance, ...] = ()) -> list[FnInstance]:
    """The async fns that `inst`'s code awaits as calls of their own (not inlined
    into it): each needs a context on the task's stack while it runs."""
    chain += (inst,)
    found: list[FnInstance] = []
    for e, kind in inst.async_awaits.items():
        callee = inst.calls[e.operand].fn if kind == "call" else None
        if callee is None or callee.decl.kind == "intrinsic":   # `await j`, `await __park()`
            continue
        if inlines(mg, callee, list(chain)):
            found += awaited_calls(mg, callee, chain)
        else:
            found.append(callee)
    return found


def stack_slack(mg, b: ir.IRBuilder, inst: FnInstance) -> ir.Value:
    """Room to leave after a new task's first context: the largest context of the
    calls its async fn awaits (0 when it awaits none), so that they need no
    chunk of their own; deeper calls do (std/async's `__task_alloc`)."""
    slack = I64(0)
    for callee in {id(c): c for c in awaited_calls(mg, inst)}.values():   # once each
        size = context_size(mg, b, callee)
        slack = b.select(b.icmp_unsigned(">", size, slack), size, slack)
    return slack


def intrinsic(fg, fn: FnInstance, args: list[ir.Value]) -> ir.Value | None:
    """std/async's `intrinsic fn`s (frontend/intrinsics.py's RUNTIME)."""
    mg, b = fg.mg, fg.b
    site = [I32(-1)] if mg.explain else []   # not a coroutine's frame: no call site to report
    lowerings = {
        "__frame_alloc": lambda: b.call(mg.runtime("coro_alloc"), args + site),
        "__frame_free": lambda: b.call(mg.runtime("coro_free"), args),
        "__size_of": lambda: I64(mg.p.layouts.size_align(fn.params[0][1].elem)[0]),   # (p: ptr<T>)
        "__current_task": lambda: fg.body.current_task(),
        "__real_time": lambda: I1(int(mg.real_time)),
        "__clock_ms": lambda: b.call(mg.runtime("clock_ms"), []),
        "__sleep_ms": lambda: b.call(mg.runtime("sleep_ms"), args),
        # A channel's slots are uninitialised memory: a move in or out
        # neither destroys what was there nor leaves anything to destroy.
        "__take": lambda: fg.load(args[0], fn.ret),
        "__put": lambda: fg.store(args[1], args[0], fn.params[1][1]) if len(args) > 1 else None,   # (void: no value)
        "__owns": lambda: I1(int(mg.p.layouts.owns(fn.params[0][1].elem))),
        "__dropper": lambda: mg.dropper(fn.params[0][1].elem, fg.inst),
        # a panic whose message says where itself: no position of its own
        "__panic_report": lambda: b.call(mg.runtime("panic"), [args[0], mg.string(b""), I32(0), I32(0),
                                                                ir.Constant(PTR, None), I32(LINK_NONE)]),
        "__await_site": lambda: b.call(await_site(mg), args),
    }
    value = lowerings[fn.decl.name]()
    return None if fn.ret == VOID else value


def handle_op(fg, name: str, handle: ir.Value, t: PromiseT) -> None:
    """A `Join<T>` dropped without `await`: its task runs on, detached; a
    result that holds coroutines is destroyed when the task returns."""
    assert name == "destroy", name
    result = t.args[0] if t.args else VOID
    if fg.mg.p.layouts.owns(result):
        call_runtime(fg.mg, fg.b, "__task_detach_dropping", [handle, fg.mg.dropper(result, fg.inst)])
    else:
        call_runtime(fg.mg, fg.b, "__task_detach", [handle])


class AsyncABI(CoroutineABI):
    """`async fn`: LLVM's `llvm.coro.id.async` lowering, as Swift's."""
    body_emitter = AsyncEmitter

    def function_type(self, mg, inst, fnty: ir.FunctionType) -> ir.FunctionType:
        return function_type()   # everything travels in its context

    def declare(self, fn: ir.Function) -> None:
        declare(fn)

    def handle_op(self, fg, t, name: str, handle: ir.Value | None, promise_align: int = 8,
                  owning: bool = False) -> ir.Value | None:
        return handle_op(fg, name, handle, t)

    def finish_module(self, mg) -> None:
        _finish_await_sites(mg)

    def c_main(self, mg, main) -> None:
        c_main(mg, main, mg.runtime("init"), mg.runtime("flush"))


ASYNC = AsyncABI()
