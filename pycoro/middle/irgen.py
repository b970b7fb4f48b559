"""Checked program → LLVM IR (llvmlite.ir), for the core language (§2–§4).

Every local lives in an entry-block alloca (mem2reg cleans up at -O1 and
up). Values of struct and array type live in memory, as clang keeps them:
such an expression evaluates to a pointer to a fresh copy, stores are
`memcpy`, arguments pass a pointer to the caller's copy, and results come
back through a hidden first (`sret`) parameter. (First-class aggregate
loads and stores of large arrays abort LLVM's instruction selector.) Runtime checks
(bounds, division by zero) branch to a cold block that calls the runtime's
panic with the source position. `defer` is emitted on every exit of its
scope (normal end, break, continue, return), innermost first, as Zig does.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from llvmlite import ir

from ..frontend import ast
from ..frontend.program import (BuiltinCall, CheckedProgram, DirectCall, FnInstance, GlobalVar,
                                HandleCall, IndirectCall, LocalVar)
from ..frontend.types import (BOOL, ERROR, HANDLE, NULL, STR, VOID, ArrayT, FloatT, FnT, IntT,
                              PromiseT, PtrT, StructT, Type)
from ..frontend.layout import is_aggregate
from ..frontend.intrinsics import FACTS, RUNTIME as RUNTIME_INTRINSICS, kind_of as math_kind
from . import gpu, guards, intrinsics
from .coro import async_
from .coro.abis import ABIs
from .gpu import GPU_INTRINSICS
from .llvmcompat import (EMPTY, I1, I8, I32, I64, PTR, TypedCallee, alloca, field_ptr, gep,
                         global_string)
from .runtime import NORETURN, RUNTIME, symbol as rt_symbol
from ..paths import in_stdlib

_FLOAT_TYPES = {32: ir.FloatType(), 64: ir.DoubleType()}
_ICMP = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class ModuleGen:
    """Emits one LLVM module for a checked program."""

    def __init__(self, program: CheckedProgram, name: str, explain: bool = False,
                 trampoline: bool = False, gpu_emulation: bool = False,
                 exported: frozenset[str] = frozenset(), real_time: bool = False,
                 inline_async: bool = True):
        self.p = program
        # `await g(…)` of a small async fn emits g's body in place (coro/async_.py);
        # off at -O0, where every call stays a call.
        self.inline_async = inline_async
        self.real_time = real_time   # std/async's clock: the wall clock's, not virtual time
        self.exported = exported   # functions (by name) other code calls: never internal
        # Kernels for the host CPU (pycoro.gpu's device="cpu"): the GPU builtins
        # read what a launcher per kernel sets (middle/gpu.py).
        self.gpu_emulation = gpu_emulation
        # Each function's ABI; switched-resume coroutines transfer through a resume
        # loop instead of tail calls on targets that have none (NVPTX): coro/trampoline.py.
        self.abis = ABIs(trampoline)
        # `pycoro explain`: every coroutine ramp takes a hidden i32 call-site id that
        # it passes to the frame allocator, so the optimised IR says which call
        # sites still allocate (llvmlite exposes no optimisation remarks).
        self.explain = explain
        self.internal = False
        self.sites: list[tuple[FnInstance, object, FnInstance]] = []  # caller, span, callee
        # explain's async sites: caller, span, callee, "inlined" | "call" | "spawn"
        self.async_sites: list[tuple[FnInstance, object, FnInstance, str]] = []
        # A context of its own: named struct types would otherwise collide when one
        # process compiles twice (the global context keeps them).
        self.module = ir.Module(name=name, context=ir.Context())
        self.fns: dict[int, ir.Function] = {}
        # Library functions whose bodies are needed: those a body being emitted
        # refers to (generate). None while every function is merely declared.
        self.needed: dict[int, FnInstance] | None = None
        self.structs: dict[StructT, ir.Type] = {}
        self.strings: dict[bytes, ir.GlobalVariable] = {}
        self.globals: dict[int, ir.GlobalVariable] = {}
        self.wrappers: dict[tuple, ir.Function] = {}

    @functools.cached_property
    def facts(self) -> dict[str, bool]:
        """The values of the prelude's `intrinsic fn`s that state facts about the
        program (frontend/intrinsics.py's FACTS)."""
        return {"__has_yield_from": any(isinstance(node, ast.YieldFrom)
                                        for inst in self.p.functions for node in inst.hooks)}

    # ---- types
    def llvm(self, t: Type) -> ir.Type:
        """The in-memory LLVM type of a PyCoro type (`void` is the empty struct)."""
        match t:
            case IntT(bits=bits):
                return ir.IntType(bits)
            case FloatT(bits=bits):
                return _FLOAT_TYPES[bits]
            case ArrayT(elem=elem, size=size):
                return ir.ArrayType(self.llvm(elem), size)
            case StructT():
                return self._struct(t)
            case PtrT() | FnT() | PromiseT():
                return PTR
        if t == BOOL:
            return I1
        if t in (STR, NULL, HANDLE):
            return PTR
        if t == VOID:
            return EMPTY
        raise AssertionError(f"no LLVM type for {t}")

    def _struct(self, t: StructT) -> ir.Type:
        if t not in self.structs:
            ty = self.module.context.get_identified_type(str(t).replace(" ", ""))
            self.structs[t] = ty
            ty.set_body(*(self.llvm(ft) for _, ft in self.p.layouts.fields(t)))
        return self.structs[t]

    def ret_type(self, t: Type) -> ir.Type:
        return ir.VoidType() if t == VOID else self.llvm(t)

    # ---- functions
    def signature(self, params: list[Type], ret: Type, varargs: bool = False,
                  ref_self: bool = False) -> ir.FunctionType:
        """pycoro's calling convention: aggregates by pointer, an aggregate result
        through a hidden first parameter; `void` parameters take no slot."""
        llvm_params = [PTR if is_aggregate(t) or (i == 0 and ref_self) else self.llvm(t)
                       for i, t in enumerate(params) if t != VOID]
        if is_aggregate(ret):
            return ir.FunctionType(ir.VoidType(), [PTR] + llvm_params, var_arg=varargs)
        return ir.FunctionType(self.ret_type(ret), llvm_params, var_arg=varargs)

    def declare(self, inst: FnInstance) -> ir.Function:
        key = id(inst)
        if self.needed is not None:
            self.needed.setdefault(key, inst)
        if key in self.fns:
            return self.fns[key]
        fnty = self.signature([t for _, t in inst.params], inst.ret, inst.decl.varargs,
                              inst.self_mode == "ref")
        abi = self.abis.of_function(inst)
        fnty = abi.function_type(self, inst, fnty)
        if self.explain and abi.counts_sites:
            fnty = ir.FunctionType(fnty.return_type, list(fnty.args) + [I32])
        existing = self.module.globals.get(inst.symbol)
        if existing is not None:  # the same C function declared twice
            self.fns[key] = existing
            return existing
        fn = ir.Function(self.module, fnty, inst.symbol)
        abi.declare(fn)
        if inst.is_extern and inst.symbol in _RETURNS_TWICE:
            fn.attributes.add("returns_twice")   # or LLVM keeps values in registers longjmp restores stale
        if not inst.is_extern:
            fn.linkage = "internal" if self.internal and inst.display not in self.exported else "external"
        self.fns[key] = fn
        return fn

    def guard(self, inst: FnInstance) -> ir.Function:
        """`i1 g.guard(args)`: whether generator g would end at once (middle/guards.py);
        it takes g's arguments as g's ramp does, and is always inlined."""
        key = ("guard", id(inst))
        if key not in self.wrappers:
            ramp = self.signature([t for _, t in inst.params], VOID)
            fn = ir.Function(self.module, ir.FunctionType(I1, ramp.args), f"{inst.symbol}.guard")
            fn.linkage = "internal"
            fn.attributes.add("alwaysinline")
            self.wrappers[key] = fn
            FnGen(self, inst, fn).emit_guard(guards.leading_guard(inst))
        return self.wrappers[key]

    def dropper(self, t: Type, inst: FnInstance) -> ir.Function:
        """`void drop(ptr p)`: destroys the coroutines of the `t` at p, for code
        that does not know `t` (std/async's channels, for the values left in
        them when `main` returns). Emitted as part of `inst`, which asks for it."""
        key = ("drop", t)
        if key not in self.wrappers:
            fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR]), f"pc.drop.{len(self.wrappers)}")
            fn.linkage = "internal"
            self.wrappers[key] = fn
            gen = FnGen(self, inst, fn)
            gen.drop(fn.args[0], t)
            gen.b.ret_void()
            gen.allocas.branch(fn.blocks[1])
        return self.wrappers[key]

    def await_wrapper(self, hook: FnInstance, kind: str) -> ir.Function:
        """`R wrapper(ptr awaiter, ptr frame)`: calls `awaiter.await_suspend(frame)` (or a
        promise's final_suspend) outside the suspending coroutine, as LLVM requires."""
        key = (id(hook), kind)
        if key in self.wrappers:
            return self.wrappers[key]
        ret = {"void": ir.VoidType(), "bool": I1, "handle": PTR}[kind]
        fn = ir.Function(self.module, ir.FunctionType(ret, [PTR, PTR]),
                         f"{hook.symbol}.wrapper")
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        awaiter, frame = fn.args
        args = [awaiter] + ([frame] if len(hook.params) > 1 else [])
        result = b.call(self.declare(hook), args)
        if kind == "handle":
            # a null handle (no continuation) transfers to the no-op coroutine
            null = b.icmp_unsigned("==", result, ir.Constant(PTR, None))
            noop = b.call(intrinsics.declare(self.module, "llvm.coro.noop"), [])
            b.ret(b.select(null, noop, result))
        elif kind == "bool":
            b.ret(result)
        else:
            b.ret_void()
        self.wrappers[key] = fn
        return fn

    def load_handle_wrapper(self) -> ir.Function:
        """`ptr wrapper(ptr slot, ptr frame)`: the handle a yield_value chose, for a transfer."""
        name = "pc.transfer.wrapper"
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(PTR, [PTR, PTR]), name)
            fn.linkage = "internal"
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            target = b.load(fn.args[0], typ=PTR)
            null = b.icmp_unsigned("==", target, ir.Constant(PTR, None))
            b.ret(b.select(null, b.call(intrinsics.declare(self.module, "llvm.coro.noop"), []), target))
        return fn

    def size(self, t: Type) -> int:
        return self.p.layouts.size_align(t)[0]

    def runtime(self, name: str) -> ir.Function:
        sym = rt_symbol(name)
        fn = self.module.globals.get(sym)
        if fn is None:
            fnty = RUNTIME[name]
            if self.explain and name == "coro_alloc":
                fnty = ir.FunctionType(fnty.return_type, list(fnty.args) + [I32])
            fn = ir.Function(self.module, fnty, sym)
            if name in NORETURN:
                fn.attributes.add("noreturn")
                fn.attributes.add("cold")
        return fn

    def extern(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        fn = self.module.globals.get(name)
        return fn if fn is not None else ir.Function(self.module, fnty, name)

    def string(self, data: bytes) -> ir.GlobalVariable:
        if data not in self.strings:
            self.strings[data] = global_string(self.module, data, f".str.{len(self.strings)}")
        return self.strings[data]

    def global_var(self, g: GlobalVar) -> ir.GlobalVariable:
        key = id(g)
        if key not in self.globals:
            ty = self.llvm(g.type)
            var = ir.GlobalVariable(self.module, ty, g.symbol)
            var.initializer = self.constant(g.decl.init, g.type) if g.decl.init is not None \
                else ir.Constant(ty, None)
            var.global_constant = not g.decl.mutable
            var.type = PTR
            self.globals[key] = var
        return self.globals[key]

    def constant(self, e: ast.Expr, t: Type) -> ir.Constant:
        ty = self.llvm(t)
        match e:
            case ast.IntLit(value=v):
                return ir.Constant(ty, float(v) if t.is_float else v)
            case ast.FloatLit(value=v):
                return ir.Constant(ty, v)
            case ast.BoolLit(value=v):
                return ir.Constant(I1, int(v))
            case ast.NullLit():
                return ir.Constant(PTR, None)
            case ast.StrLit(value=v):
                return self.string(v)
            case ast.Unary(op="-", operand=ast.IntLit(value=v)):
                return ir.Constant(ty, -float(v) if t.is_float else -v)
            case ast.Unary(op="-", operand=ast.FloatLit(value=v)):
                return ir.Constant(ty, -v)
            case ast.Cast(expr=inner):
                if isinstance(t, PtrT):
                    return ir.Constant(PTR, None)
                value = _const_value(inner)
                return ir.Constant(ty, float(value) if t.is_float else int(value))
            case ast.ArrayLit(elems=elems):
                return ir.Constant(ty, [self.constant(x, t.elem) for x in elems])
            case ast.StructLit(fields=fields):
                by_name = {f.name: f.value for f in fields}
                return ir.Constant(ty, [self.constant(by_name[n], ft)
                                        for n, ft in self.p.layouts.fields(t)])
        raise AssertionError(f"not a constant: {e}")

    # ---- the module
    def generate(self, entry: bool = True, internal: bool = False) -> ir.Module:
        """`entry`: a program, with a C `main` if it has one (else a library, all of
        whose functions are kept); `internal`: only the C entry point is visible
        outside the module."""
        self.internal = internal
        for inst in self.p.functions:
            if inst.decl.kind != "intrinsic":   # lowered at each call
                self.declare(inst)
        for g in self.p.globals:
            self.global_var(g)
        # A program: its own functions, and the library's that they use, directly
        # or not (a third of an async program's library is never called: LLVM
        # would drop it early, but building and printing it costs Python time).
        # A library (the runtime): all of it. Bodies follow the declarations'
        # order, so the module reads as before.
        self.needed = {id(inst): inst for inst in self.p.functions
                       if not (entry and in_stdlib(inst.decl.span.file))}
        emitted: set[int] = set()
        self._emit_needed(emitted)
        if entry and self.p.main is not None:
            self._c_main(self.p.main)
            self._emit_needed(emitted)   # what an async main's C entry point starts
        for inst in self.p.functions:
            if id(inst) in self.fns and id(inst) not in self.needed and self.fns[id(inst)].is_declaration:
                self.fns[id(inst)].linkage = ""   # never used: a plain declaration, which LLVM ignores
        for inst in self.p.functions:
            if inst.decl.kind == "kernel" and self.gpu_emulation:
                gpu.emulated_launcher(self.module, inst.decl.name, self.declare(inst), self.runtime("flush"))
            elif inst.decl.kind == "kernel":
                gpu.kernel_entry(self.module, inst.decl.name, self.declare(inst), [t for _, t in inst.params])
        for abi in self.abis.all():
            abi.finish_module(self)
        return self.module

    def _emit_needed(self, emitted: set[int]) -> None:
        while len(emitted) < len(self.needed):
            for inst in self.p.functions:
                if id(inst) in self.needed and id(inst) not in emitted:
                    emitted.add(id(inst))
                    if inst.decl.body is not None:
                        FnGen(self, inst).emit()

    def _c_main(self, main: FnInstance) -> None:
        self.abis.of_function(main).c_main(self, main)


# C functions that return a second time (after a longjmp): calls to them must
# be marked, as clang does for its known setjmp family.
_RETURNS_TWICE = frozenset({"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp"})


def _const_value(e: ast.Expr):
    match e:
        case ast.IntLit(value=v) | ast.FloatLit(value=v) | ast.BoolLit(value=v):
            return v
        case ast.Unary(op="-", operand=inner):
            return -_const_value(inner)
        case ast.Cast(expr=inner):
            return _const_value(inner)
    raise AssertionError(e)


class _Loop:
    def __init__(self, brk: ir.Block, cont: ir.Block, depth: int):
        self.brk, self.cont, self.depth = brk, cont, depth


# Expressions whose owning value is new: a temporary unless something takes it
# (`Box { v: g() }.v.next()` destroys the box's generator after the statement).
_MAKES_VALUES = (ast.Call, ast.StructLit, ast.ArrayLit)


class FnGen:
    """Emits the body of one function instance."""

    def __init__(self, mg: ModuleGen, inst: FnInstance, fn: ir.Function | None = None):
        self.mg = mg
        self.inst = inst
        self.fn = fn or mg.declare(inst)   # another function made from inst's code: a guard
        # Allocas go in their own entry block; the body starts in the next one.
        self.entry = self.fn.append_basic_block("entry")
        self.allocas = ir.IRBuilder(self.entry)
        self.b = ir.IRBuilder(self.fn.append_basic_block("start"))
        # Where each local lives: an alloca, an argument, or (an async fn's
        # parameter) a function that computes its address in the context.
        self.slots: dict[int, ir.Value | Callable[[], ir.Value]] = {}
        # Per scope, what leaving it must do, in order of registration (run in
        # reverse): ("defer", stmt), ("drop", slot) for an owning handle variable,
        # ("temp", slot) for an owning temporary of the current statement,
        # ("finish", slot) for the coroutine of a `with`.
        self.scopes: list[list[tuple[str, object]]] = []
        self.loops: list[_Loop] = []
        self.types = inst.types
        self.body = None   # how its ABI starts, suspends and ends it (coro/base.py's BodyEmitter)
        # This function's instance, then the async callees whose bodies are being
        # emitted in place of `await g(…)` (innermost last; `inst` is the last),
        # and where the innermost one's `return` goes: (result slot, block).
        self.inline_chain: list[FnInstance] = [inst]
        self.inline_exit: tuple[ir.Value | None, ir.Block] | None = None
        self.temps: dict[int, ir.Value] = {}   # owning temporaries' slots, by expression
        self.current_span = inst.decl.span

    # ---- helpers
    def type_of(self, e: ast.Expr) -> Type:
        return self.types[e]

    def alloca(self, t: Type, name: str = "") -> ir.Value:
        return alloca(self.allocas, self.mg.llvm(t), name)

    def slot(self, var: LocalVar) -> ir.Value:
        if id(var) not in self.slots:
            self.slots[id(var)] = self.alloca(var.type, var.name)
        slot = self.slots[id(var)]
        return slot() if callable(slot) else slot

    def load(self, ptr: ir.Value, t: Type) -> ir.Value:
        """The value at `ptr`; for an aggregate, a pointer to a fresh copy."""
        if is_aggregate(t):
            copy = self.alloca(t, "copy")
            self.memcpy(copy, ptr, t)
            return copy
        return self.b.load(ptr, typ=self.mg.llvm(t))

    def store(self, value: ir.Value, ptr: ir.Value, t: Type) -> None:
        if is_aggregate(t):
            self.memcpy(ptr, value, t)
        else:
            self.b.store(value, ptr)

    def memcpy(self, dest: ir.Value, src: ir.Value, t: Type) -> None:
        fn = intrinsics.declare(self.mg.module, "llvm.memcpy.p0.p0.i64")
        self.b.call(fn, [dest, src, I64(self.mg.size(t)), I1(0)])

    def zero(self, ptr: ir.Value, t: Type) -> None:
        if is_aggregate(t):
            fn = intrinsics.declare(self.mg.module, "llvm.memset.p0.i64")
            self.b.call(fn, [ptr, I8(0), I64(self.mg.size(t)), I1(0)])
        else:
            self.b.store(ir.Constant(self.mg.llvm(t), None), ptr)

    def block(self, name: str) -> ir.Block:
        return self.fn.append_basic_block(name)

    def ensure_open(self) -> None:
        """Code after a `return`/`break` goes into a fresh (unreachable) block."""
        if self.b.block.is_terminated:
            self.b.position_at_end(self.block("dead"))

    def empty(self) -> ir.Constant:
        return ir.Constant(EMPTY, None)

    def location(self, span) -> list[ir.Value]:
        return [self.mg.string(span.file.encode()), I32(span.line), I32(span.col)]

    def panic(self, message: bytes, span) -> None:
        self.b.call(self.mg.runtime("panic"), [self.mg.string(message)] + self.location(span))
        self.b.unreachable()

    def check(self, ok: ir.Value, fail, name: str) -> None:
        """Branch to a cold block that calls `fail()` (which must not return) unless `ok`."""
        bad, good = self.block(f"{name}.fail"), self.block(f"{name}.ok")
        self.b.cbranch(ok, good, bad)
        self.b.position_at_end(bad)
        fail()
        self.b.position_at_end(good)

    # ---- function
    def emit(self) -> None:
        args = iter(self.fn.args)
        self.result = None
        if is_aggregate(self.inst.ret):
            self.result = next(args)
            self.result.name = "result"
        self.body = self.mg.abis.of_function(self.inst).body(self)
        self.body.prologue(args)
        for i, (param, (name, t)) in enumerate(zip(self.inst.decl.params, self.inst.params)):
            var = self.inst.locals[param]
            if t == VOID:
                continue
            slot = self.body.param_slot(i, param)
            if slot is not None:
                self.slots[id(var)] = slot
                continue
            arg = next(args)
            arg.name = name
            if param.is_self and param.mut_self:
                self.slots[id(var)] = arg   # `mut self` is the caller's place
            elif is_aggregate(t) and not self.body.copies_params:
                self.slots[id(var)] = arg   # the caller's fresh copy, alive until we return
            else:
                # A coroutine outlives its ramp: it keeps its own copy (in its frame).
                self.store(arg, self.slot(var), t)
        self.scopes.append([("drop", (self.slot(v), v.type)) for v in
                            (self.inst.locals[p] for p in self.inst.decl.params) if v.owned])
        self.body.begin()
        self.emit_block(self.inst.decl.body)
        if not self.b.block.is_terminated:
            self.run_cleanups(self.scopes[-1])
            self.body.fall_off_end()
        self.body.end()
        self.scopes.pop()
        self.allocas.branch(self.fn.blocks[1])

    # ---- statements
    def emit_block(self, block: ast.Block) -> None:
        self.scopes.append([])
        for s in block.stmts:
            self.ensure_open()
            self.emit_stmt(s)
        if not self.b.block.is_terminated:
            self.run_cleanups(self.scopes[-1])
        self.scopes.pop()

    def run_cleanups(self, items: list[tuple[str, object]], destroying: bool = False) -> None:
        for kind, what in reversed(items):
            self.ensure_open()
            if kind == "defer":
                self.emit_stmt(what)
            elif kind == "finish":
                # `with`: run the coroutine on to its end; when the coroutine around
                # the `with` is destroyed instead, the drop after this unwinds it
                if not destroying:
                    slot, t = what
                    self.handle_op(t, "next", self.b.load(slot, typ=PTR))
            else:
                self.drop(*what)

    def unwind_to(self, depth: int, destroying: bool = False) -> None:
        """Run the cleanups of every scope deeper than `depth`, innermost first
        (`destroying`: a suspended coroutine is being destroyed)."""
        for scope in reversed(self.scopes[depth:]):
            self.run_cleanups(scope, destroying)

    def drop(self, slot: ir.Value, t: Type) -> None:
        """Destroy the coroutines a value holds: a handle, a struct's handle
        fields in declaration order, an array's elements first to last (both as
        Rust drops them)."""
        if isinstance(t, StructT):
            for i, (name, ft) in enumerate(self.mg.p.layouts.fields(t)):
                if self.mg.p.layouts.owns(ft):
                    self.drop(field_ptr(self.b, slot, self.mg.llvm(t), i, name), ft)
            return
        if isinstance(t, ArrayT):
            self._drop_elements(slot, t)
            return
        # a handle: null once moved out
        handle = self.b.load(slot, typ=PTR)
        live, done = self.block("drop"), self.block("drop.done")
        self.b.cbranch(self.b.icmp_unsigned("!=", handle, ir.Constant(PTR, None)), live, done)
        self.b.position_at_end(live)
        self.handle_op(t, "destroy", handle)
        self.b.store(ir.Constant(PTR, None), slot)
        self.b.branch(done)
        self.b.position_at_end(done)

    def _drop_elements(self, slot: ir.Value, t: ArrayT) -> None:
        """`drop` of each element, in a loop (the drop of one element may be
        much code, e.g. a struct of handles)."""
        b, array = self.b, self.mg.llvm(t)
        if t.size == 0:
            return
        before = b.block
        head, body, done = self.block("drop.each"), self.block("drop.element"), self.block("drop.each.done")
        b.branch(head)
        b.position_at_end(head)
        index = b.phi(I64, name="drop.index")
        index.add_incoming(I64(0), before)
        b.cbranch(b.icmp_unsigned("!=", index, I64(t.size)), body, done)
        b.position_at_end(body)
        self.drop(gep(b, slot, [I64(0), index], array), t.elem)
        index.add_incoming(b.add(index, I64(1)), b.block)
        b.branch(head)
        b.position_at_end(done)

    def emit_stmt(self, s: ast.Stmt) -> None:
        mark = len(self.scopes[-1])
        self.current_span = s.span
        getattr(self, f"stmt_{type(s).__name__}")(s)
        # The statement's owning temporaries die at its end (`for v in range(0, 3)`).
        self.drop_temporaries(mark)

    def drop_temporaries(self, mark: int) -> None:
        """Destroy the owning temporaries made since the current scope had `mark` items."""
        scope = self.scopes[-1]
        temps = [item for item in scope[mark:] if item[0] == "temp"]
        if temps and not self.b.block.is_terminated:
            self.run_cleanups(temps)
        scope[mark:] = [item for item in scope[mark:] if item[0] != "temp"]

    def stmt_Block(self, s: ast.Block) -> None:
        self.emit_block(s)

    def stmt_Let(self, s: ast.Let) -> None:
        var = self.inst.locals[s]
        slot = self.slot(var)
        if s.init is None:
            self.zero(slot, var.type)
        else:
            self.store(self.expr(s.init), slot, var.type)
        if var.owned:
            self.scopes[-1].append(("drop", (slot, var.type)))

    def stmt_Assign(self, s: ast.Assign) -> None:
        t = self.type_of(s.target)
        if s.op == "=":
            value = self.expr(s.value)
            target = self.place(s.target)
            if self.mg.p.layouts.owns(t):
                self.drop(target, t)  # the coroutines the place held before, if it still has them
            self.store(value, target, t)
            return
        ptr = self.place(s.target)
        current = self.b.load(ptr, typ=self.mg.llvm(t))
        result = self.binop(s.op, current, self.expr(s.value), t, s.span)
        self.b.store(result, ptr)

    def stmt_ExprStmt(self, s: ast.ExprStmt) -> None:
        callee = guards.guarded_callee(self.inst, s)
        if callee is None:
            self.expr(s.expr)
            return
        # `yield from g(args);` where g starts with `if COND { co_return; }`:
        # test COND first and make no generator for the base case (middle/guards.py).
        call = s.expr.value
        args = self.arguments(call.args, [t for _, t in callee.params])
        run, base_case = self.block("yield_from.run"), self.block("yield_from.base_case")
        self.b.cbranch(self.b.call(self.mg.guard(callee), args), base_case, run)
        self.b.position_at_end(run)
        scope = self.scopes[-1]
        mark = len(scope)
        inner = self.call(callee, args, call.span, elide_safe=id(call) in self.inst.elide_safe)
        self.own(call, inner, self.types[call])
        self.expr_YieldFrom(s.expr, inner)
        # The generator is the statement's temporary: destroyed on this path only.
        self.run_cleanups([item for item in scope[mark:] if item[0] == "temp"])
        scope[mark:] = [item for item in scope[mark:] if item[0] != "temp"]
        self.b.branch(base_case)
        self.b.position_at_end(base_case)

    def emit_guard(self, cond: ast.Expr) -> None:
        """The body of `g.guard(params) -> i1`: g's leading COND (middle/guards.py)."""
        args = iter(self.fn.args)
        for param, (name, t) in zip(self.inst.decl.params, self.inst.params):
            if t == VOID:
                continue
            arg = next(args)
            arg.name = name
            var = self.inst.locals[param]
            if is_aggregate(t):
                self.slots[id(var)] = arg
            else:
                self.store(arg, self.slot(var), t)
        self.scopes.append([])
        self.b.ret(self.expr(cond))
        self.allocas.branch(self.fn.blocks[1])

    def stmt_Defer(self, s: ast.Defer) -> None:
        self.scopes[-1].append(("defer", s.stmt))

    def stmt_If(self, s: ast.If) -> None:
        cond = self.expr(s.cond)
        then_bb, end_bb = self.block("if.then"), self.block("if.end")
        else_bb = self.block("if.else") if s.else_ is not None else end_bb
        self.b.cbranch(cond, then_bb, else_bb)
        self.b.position_at_end(then_bb)
        self.emit_block(s.then)
        if not self.b.block.is_terminated:
            self.b.branch(end_bb)
        if s.else_ is not None:
            self.b.position_at_end(else_bb)
            if isinstance(s.else_, ast.If):
                # a statement of its own: its condition's temporaries are made,
                # and destroyed, on this path only
                self.emit_stmt(s.else_)
            else:
                self.emit_block(s.else_)
            if not self.b.block.is_terminated:
                self.b.branch(end_bb)
        self.b.position_at_end(end_bb)

    def loop(self, name: str, cond, body: ast.Block, step=None, prologue=None) -> None:
        """`cond` (None: forever) → body → `step` → back to cond."""
        cond_bb, body_bb = self.block(f"{name}.cond"), self.block(f"{name}.body")
        step_bb = self.block(f"{name}.step") if step else cond_bb
        end_bb = self.block(f"{name}.end")
        self.b.branch(cond_bb)
        self.b.position_at_end(cond_bb)
        if cond is not None:
            # A `while` condition's temporaries die as it is decided, each time:
            # `while g(n).next() {…}` makes a generator per test.
            mark = len(self.scopes[-1])
            decided = cond()
            self.drop_temporaries(mark)
            self.b.cbranch(decided, body_bb, end_bb)
        else:
            self.b.branch(body_bb)
        self.b.position_at_end(body_bb)
        self.loops.append(_Loop(end_bb, step_bb, len(self.scopes)))
        self.scopes.append([])
        if prologue:
            prologue()
        self.emit_block(body)
        if not self.b.block.is_terminated:
            self.b.branch(step_bb)
        self.scopes.pop()
        self.loops.pop()
        if step:
            self.b.position_at_end(step_bb)
            step(end_bb, cond_bb)
        self.b.position_at_end(end_bb)

    def stmt_While(self, s: ast.While) -> None:
        self.loop("while", lambda: self.expr(s.cond), s.body)

    def stmt_Loop(self, s: ast.Loop) -> None:
        self.loop("loop", None, s.body)

    def stmt_For(self, s: ast.For) -> None:
        if s.end is None:
            self.for_iter(s)
            return
        t = self.type_of(s.iter)
        counter = self.alloca(t, f"{s.var}.next")
        self.b.store(self.expr(s.iter), counter)
        end = self.expr(s.end)
        var = self.inst.locals[s]
        ty = self.mg.llvm(t)
        cmp = self.b.icmp_signed if t.signed else self.b.icmp_unsigned

        def cond():
            return cmp("<=" if s.inclusive else "<", self.b.load(counter, typ=ty), end)

        def bind():
            self.b.store(self.b.load(counter, typ=ty), self.slot(var))

        def step(end_bb, cond_bb):
            cur = self.b.load(counter, typ=ty)
            if s.inclusive:  # `a..=MAX` must stop without wrapping
                more = self.block("for.more")
                self.b.cbranch(self.b.icmp_unsigned("==", cur, end), end_bb, more)
                self.b.position_at_end(more)
            self.b.store(self.b.add(cur, ir.Constant(ty, 1)), counter)
            self.b.branch(cond_bb)
        self.loop("for", cond, s.body, step, bind)

    def for_iter(self, s: ast.For) -> None:
        proto = self.inst.iters[s]
        if self.is_mutable_place(s.iter):
            holder = self.place(s.iter)
        else:
            holder = self.slot(proto.holder)
            self.store(self.expr(s.iter), holder, proto.holder.type)

        def step(fn: FnInstance | HandleCall) -> ir.Value:
            if isinstance(fn, HandleCall):   # a returned-continuation handle's own
                return self.handle_op(proto.holder.type, fn.name, self.b.load(holder, typ=PTR))
            return self.call(fn, [holder if fn.self_mode == "ref" else self.load(holder, proto.holder.type)])

        def bind():
            self.store(step(proto.value), self.slot(proto.item), proto.item.type)
        self.loop("for", lambda: step(proto.next), s.body, None, bind)

    def stmt_With(self, s: ast.With) -> None:
        """`with v in e { body }`: run e to its yield, bind v, run body, then run e to
        its end on every way out of body (LANGUAGE.md §6)."""
        var, holder_var = self.inst.locals[s], self.inst.withs[s]
        t = holder_var.type
        holder = self.slot(holder_var)
        self.store(self.expr(s.expr), holder, t)   # not owned: a temporary dies with the statement
        self.scopes.append([])
        handle = self.b.load(holder, typ=PTR)
        self.check(self.handle_op(t, "next", handle),
                   lambda: self.panic(b"`with`: the coroutine ended without yielding", s.expr.span), "with")
        self.store(self.handle_op(t, "value", handle), self.slot(var), var.type)
        self.scopes[-1].append(("finish", (holder, t)))
        self.emit_block(s.body)
        if not self.b.block.is_terminated:
            self.run_cleanups(self.scopes[-1])
        self.scopes.pop()

    def stmt_Break(self, s: ast.Break) -> None:
        loop = self.loops[-1]
        self.unwind_to(loop.depth)
        self.b.branch(loop.brk)

    def stmt_Continue(self, s: ast.Continue) -> None:
        loop = self.loops[-1]
        self.unwind_to(loop.depth)
        self.b.branch(loop.cont)

    def stmt_Return(self, s: ast.Return) -> None:
        value = self.expr(s.value) if s.value is not None else None
        if self.inline_exit is not None:   # an inlined async callee's
            result, after = self.inline_exit
            if result is not None:
                self.store(value, result, self.inst.ret)
            self.unwind_to(0)
            self.b.branch(after)
            return
        self.body.return_(value)

    def stmt_CoReturn(self, s: ast.CoReturn) -> None:
        self.body.co_return(s)

    def expr_Yield(self, e: ast.Yield) -> ir.Value | None:
        return self.body.yield_(e)

    def expr_Await(self, e: ast.Await) -> ir.Value | None:
        return self.body.await_(e)

    def emit_inlined(self, callee: FnInstance, args: list[ir.Value]) -> ir.Value | None:
        """`callee`'s body in place of a call of it (an `await` of an async fn:
        coro/async_.py decides which), its parameters bound to `args`. It runs
        in this function's context: its own awaits suspend this function."""
        saved = (self.inst, self.types, self.slots, self.scopes, self.loops, self.temps,
                 self.current_span, self.inline_exit)
        result = self.alloca(callee.ret, f"{callee.decl.name}.result") if callee.ret != VOID else None
        after = self.block(f"{callee.decl.name}.end")
        self.inst, self.types, self.slots, self.scopes, self.loops, self.temps = callee, callee.types, {}, [], [], {}
        self.inline_exit = (result, after)
        self.inline_chain.append(callee)
        values = iter(args)
        for param, (_, t) in zip(callee.decl.params, callee.params):
            if t == VOID:
                continue
            var = callee.locals[param]
            if param.is_self and param.mut_self:
                self.slots[id(var)] = next(values)   # the caller's place
            else:
                self.store(next(values), self.slot(var), t)   # the callee's own copy, as in a context
        self.scopes.append([("drop", (self.slot(v), v.type)) for v in
                            (callee.locals[p] for p in callee.decl.params) if v.owned])
        self.emit_block(callee.decl.body)
        if not self.b.block.is_terminated:
            self.run_cleanups(self.scopes[-1])
            self.b.branch(after)
        self.inline_chain.pop()
        (self.inst, self.types, self.slots, self.scopes, self.loops, self.temps,
         self.current_span, self.inline_exit) = saved
        self.b.position_at_end(after)
        return None if result is None else self.load(result, callee.ret)

    def expr_Spawn(self, e: ast.Spawn) -> ir.Value:
        return self.body.spawn(e)

    def expr_YieldFrom(self, e: ast.YieldFrom, inner_value: ir.Value | None = None) -> ir.Value | None:
        """`yield from e.value`; `inner_value`: e.value already evaluated."""
        return self.body.yield_from(e, inner_value)

    # ---- places
    def is_mutable_place(self, e: ast.Expr) -> bool:
        match e:
            case ast.Name():
                ref = self.inst.refs.get(e)
                return (isinstance(ref, LocalVar) and ref.mutable) or \
                    (isinstance(ref, GlobalVar) and ref.decl.mutable)
            case ast.Field(base=base) | ast.Index(base=base):
                return isinstance(self.type_of(base), PtrT) or self.is_mutable_place(base)
        return False

    def place(self, e: ast.Expr) -> ir.Value:
        """The address of a place expression (a temporary's, for other expressions)."""
        match e:
            case ast.Name():
                ref = self.inst.refs[e]
                if isinstance(ref, LocalVar):
                    return self.slot(ref)
                if isinstance(ref, GlobalVar):
                    return self.mg.global_var(ref)
            case ast.Field(base=base, name=name):
                bt = self.type_of(base)
                index = [n for n, _ in self.mg.p.layouts.fields(bt)].index(name)
                return field_ptr(self.b, self.place(base), self.mg.llvm(bt), index, name)
            case ast.Index(base=base, index=idx):
                bt = self.type_of(base)
                if isinstance(bt, PtrT):
                    pointer = self.expr(base)
                    i = self.index_value(idx)
                    # No bounds to check on a raw pointer, but null is never valid.
                    not_null = self.b.icmp_unsigned("!=", pointer, ir.Constant(PTR, None))
                    self.check(not_null, lambda: self.panic(b"null pointer dereference", e.span), "null")
                    return gep(self.b, pointer, [i], self.mg.llvm(bt.elem), inbounds=False)
                arr = self.place(base)
                i = self.bounds_checked(idx, bt.size, e.span)
                return gep(self.b, arr, [I64(0), i], self.mg.llvm(bt))
            case ast.Call() if isinstance(self.inst.calls.get(e), HandleCall):
                if self.inst.calls[e].name == "promise":
                    return self.expr_Call(e)   # the promise itself, by reference
        return self.spill(e)

    def spill(self, e: ast.Expr) -> ir.Value:
        t = self.type_of(e)
        if is_aggregate(t):
            return self.expr(e)  # already a fresh temporary
        tmp = self.alloca(t, "tmp")
        self.b.store(self.expr(e), tmp)
        return tmp

    def index_value(self, idx: ast.Expr) -> ir.Value:
        t = self.type_of(idx)
        v = self.expr(idx)
        if t.bits < 64:
            v = self.b.sext(v, I64) if t.signed else self.b.zext(v, I64)
        return v

    def bounds_checked(self, idx: ast.Expr, length: int, span) -> ir.Value:
        i = self.index_value(idx)
        # unsigned compare: a negative index is a huge one
        ok = self.b.icmp_unsigned("<", i, I64(length))
        self.check(ok, lambda: self._bounds_panic(i, length, span), "bounds")
        return i

    def _bounds_panic(self, i, length, span) -> None:
        self.b.call(self.mg.runtime("panic_bounds"), [i, I64(length)] + self.location(span))
        self.b.unreachable()

    # ---- expressions
    def expr(self, e: ast.Expr) -> ir.Value:
        value = getattr(self, f"expr_{type(e).__name__}")(e)
        if value is None:
            return self.empty()
        t = self.types.get(e)
        if t is not None and t is not ERROR and self.mg.p.layouts.owns(t):
            self.own(e, value, t)
        return value

    def own(self, e: ast.Expr, value: ir.Value, t: Type) -> None:
        """Ownership of coroutine handles: a move empties the variable it leaves; an
        owning value nobody takes is a temporary, destroyed at the end of the statement."""
        consumed = id(e) in self.inst.consumed
        if isinstance(e, ast.Name):
            ref = self.inst.refs.get(e)
            if consumed and isinstance(ref, LocalVar) and ref.owned:
                self.zero(self.slot(ref), t)
        elif isinstance(e, ast.Field) and consumed:
            self.zero(self.place(e), t)   # moved out of a local's field (the checker allows no other)
        elif (isinstance(e, _MAKES_VALUES) or (self.body.awaits_make_values and isinstance(e, (ast.Await, ast.Spawn)))) \
                and not consumed and not isinstance(self.inst.calls.get(e), HandleCall):
            # (in an async fn, `await f()` and `spawn f()` make owning values too)
            if is_aggregate(t):
                temp = value   # already the call's or the literal's own temporary
            else:
                temp = self.alloca(t, "temp")
                self.b.store(value, temp)
            self.scopes[-1].append(("temp", (temp, t)))
            self.temps[id(e)] = temp

    def expr_IntLit(self, e: ast.IntLit) -> ir.Value:
        t = self.type_of(e)
        return ir.Constant(self.mg.llvm(t), float(e.value) if t.is_float else e.value)

    def expr_FloatLit(self, e: ast.FloatLit) -> ir.Value:
        return ir.Constant(self.mg.llvm(self.type_of(e)), e.value)

    def expr_StrLit(self, e: ast.StrLit) -> ir.Value:
        return self.mg.string(e.value)

    def expr_BoolLit(self, e: ast.BoolLit) -> ir.Value:
        return I1(int(e.value))

    def expr_NullLit(self, e: ast.NullLit) -> ir.Value:
        return ir.Constant(PTR, None)

    def expr_Name(self, e: ast.Name) -> ir.Value:
        ref = self.inst.refs[e]
        if isinstance(ref, FnInstance):
            return self.mg.declare(ref)
        return self.load(self.place(e), self.type_of(e))

    def expr_Unary(self, e: ast.Unary) -> ir.Value:
        t = self.type_of(e)
        if e.op == "-" and isinstance(e.operand, ast.IntLit):
            v = -e.operand.value
            return ir.Constant(self.mg.llvm(t), float(v) if t.is_float else v)
        v = self.expr(e.operand)
        if e.op == "-":
            return self.b.fneg(v) if t.is_float else self.b.neg(v)
        return self.b.not_(v)  # `!` on bool, `~` on integers

    def expr_AddrOf(self, e: ast.AddrOf) -> ir.Value:
        return self.place(e.operand)

    def expr_Binary(self, e: ast.Binary) -> ir.Value:
        if e.op in ("&&", "||"):
            return self.short_circuit(e)
        lt = self.type_of(e.left)
        left = self.expr(e.left)
        right = self.expr(e.right)
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return self.compare(e.op, left, right, lt, self.type_of(e.right))
        return self.binop(e.op, left, right, lt, e.span, self.type_of(e.right))

    def short_circuit(self, e: ast.Binary) -> ir.Value:
        """`a && b` / `a || b`; the owning temporaries `b` makes are emptied on the
        path that skips it, so that destroying them at the statement's end
        destroys nothing there (they were destroyed garbage: a crash)."""
        left = self.expr(e.left)
        name = "and" if e.op == "&&" else "or"
        rhs_bb, skip_bb, end_bb = self.block(f"{name}.rhs"), self.block(f"{name}.skip"), self.block("logic.end")
        if e.op == "&&":
            self.b.cbranch(left, rhs_bb, skip_bb)
        else:
            self.b.cbranch(left, skip_bb, rhs_bb)
        self.b.position_at_end(rhs_bb)
        mark = len(self.scopes[-1])
        right = self.expr(e.right)
        rhs_end = self.b.block
        self.b.branch(end_bb)
        self.b.position_at_end(skip_bb)
        for kind, what in self.scopes[-1][mark:]:
            if kind == "temp":
                self.zero(*what)
        self.b.branch(end_bb)
        self.b.position_at_end(end_bb)
        phi = self.b.phi(I1)
        phi.add_incoming(I1(0 if e.op == "&&" else 1), skip_bb)
        phi.add_incoming(right, rhs_end)
        return phi

    def compare(self, op: str, left, right, lt: Type, rt: Type) -> ir.Value:
        if lt.is_float:
            return self.b.fcmp_unordered(op, left, right) if op == "!=" else self.b.fcmp_ordered(op, left, right)
        if isinstance(lt, IntT) and lt.signed:
            return self.b.icmp_signed(op, left, right)
        return self.b.icmp_unsigned(op, left, right)

    def binop(self, op: str, left, right, t: Type, span, rt: Type | None = None) -> ir.Value:
        b = self.b
        if t.is_float:
            return {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv, "%": b.frem}[op](left, right)
        if op in ("<<", ">>"):
            return self.shift(op, left, right, t, rt or t)
        if op in ("/", "%"):
            return self.divide(op, left, right, t, span)
        return {"+": b.add, "-": b.sub, "*": b.mul, "&": b.and_, "|": b.or_, "^": b.xor}[op](left, right)

    def shift(self, op: str, left, right, t: IntT, rt: IntT) -> ir.Value:
        ty = self.mg.llvm(t)
        if rt.bits > t.bits:
            right = self.b.trunc(right, ty)
        elif rt.bits < t.bits:
            right = self.b.zext(right, ty)
        right = self.b.and_(right, ir.Constant(ty, t.bits - 1))  # amounts are taken modulo the width
        if op == "<<":
            return self.b.shl(left, right)
        return self.b.ashr(left, right) if t.signed else self.b.lshr(left, right)

    def divide(self, op: str, left, right, t: IntT, span) -> ir.Value:
        ty = self.mg.llvm(t)
        nonzero = self.b.icmp_unsigned("!=", right, ir.Constant(ty, 0))
        message = b"division by zero" if op == "/" else b"remainder by zero"
        self.check(nonzero, lambda: self.panic(message, span), "div")
        if not t.signed:
            return self.b.udiv(left, right) if op == "/" else self.b.urem(left, right)
        # MIN / -1 overflows in hardware; the language wraps: MIN / -1 == MIN, MIN % -1 == 0.
        minus_one = self.b.icmp_signed("==", right, ir.Constant(ty, -1))
        safe = self.b.select(minus_one, ir.Constant(ty, 1), right)
        if op == "/":
            return self.b.select(minus_one, self.b.neg(left), self.b.sdiv(left, safe))
        return self.b.select(minus_one, ir.Constant(ty, 0), self.b.srem(left, safe))

    def expr_Cast(self, e: ast.Cast) -> ir.Value:
        src, dst = self.type_of(e.expr), self.type_of(e)
        v = self.expr(e.expr)
        return self.convert(v, src, dst)

    def convert(self, v: ir.Value, src: Type, dst: Type) -> ir.Value:
        b, ty = self.b, self.mg.llvm(dst)
        if src == dst:
            return v
        if isinstance(dst, IntT):
            if isinstance(src, IntT):
                if src.bits == dst.bits:
                    return v
                if src.bits > dst.bits:
                    return b.trunc(v, ty)
                return b.sext(v, ty) if src.signed else b.zext(v, ty)
            if src == BOOL:
                return b.zext(v, ty)
            if isinstance(src, FloatT):
                kind = "fptosi" if dst.signed else "fptoui"
                fn = intrinsics.declare(self.mg.module, f"llvm.{kind}.sat.i{dst.bits}.f{src.bits}")
                return b.call(fn, [v])
            return b.ptrtoint(v, ty)
        if isinstance(dst, FloatT):
            if isinstance(src, IntT):
                return b.sitofp(v, ty) if src.signed else b.uitofp(v, ty)
            return b.fpext(v, ty) if dst.bits > src.bits else b.fptrunc(v, ty)
        if isinstance(dst, PtrT) and isinstance(src, IntT):
            return b.inttoptr(v, PTR)
        return v  # pointer to pointer, str to ptr<u8>, null to pointer

    def expr_Index(self, e: ast.Index | ast.Field) -> ir.Value:
        return self.load(self.place(e), self.type_of(e))

    expr_Field = expr_Index

    def expr_StructLit(self, e: ast.StructLit) -> ir.Value:
        # The fields are evaluated as written, as in Rust, whatever the
        # declaration's order (which only decides where each is stored).
        t = self.type_of(e)
        slots = {name: (i, ft) for i, (name, ft) in enumerate(self.mg.p.layouts.fields(t))}
        value = self.alloca(t, t.decl.name)
        for f in e.fields:
            i, ft = slots[f.name]
            self.store(self.expr(f.value), field_ptr(self.b, value, self.mg.llvm(t), i, f.name), ft)
        return value

    def expr_ArrayLit(self, e: ast.ArrayLit) -> ir.Value:
        t = self.type_of(e)
        value = self.alloca(t, "array")
        for i, x in enumerate(e.elems):
            self.store(self.expr(x), gep(self.b, value, [I64(0), I64(i)], self.mg.llvm(t)), t.elem)
        return value

    # ---- calls
    def expr_Call(self, e: ast.Call) -> ir.Value | None:
        target = self.inst.calls[e]
        if isinstance(target, BuiltinCall):
            if target.name == "sync_threads" and self.mg.gpu_emulation:
                return self.check(gpu.emulated_barrier_holds(self.b), lambda: self.panic(
                    b"sync_threads() cannot be emulated on the CPU with more than one thread per block",
                    e.span), "sync_threads")
            if target.name in GPU_INTRINSICS and self.mg.gpu_emulation:
                return gpu.emulated_builtin(self.b, target.name)
            if target.name in GPU_INTRINSICS:
                return self.b.call(intrinsics.declare(self.mg.module, GPU_INTRINSICS[target.name]), [])
            return getattr(self, f"builtin_{target.name}")(e)
        if isinstance(target, HandleCall):
            handle, t = None, HANDLE   # noop_handle() makes a switched-resume handle
            if target.receiver is not None:
                handle, t = self.expr(target.receiver), self.types[target.receiver]
            return self.handle_op(t, target.name, handle, target.promise_align, target.owning)
        if isinstance(target, IndirectCall):
            fnt: FnT = self.type_of(e.callee)
            callee = self.expr(e.callee)
            args = self.arguments(e.args, list(fnt.params))
            fnty = self.mg.signature(list(fnt.params), fnt.ret)
            return self.call_with(TypedCallee(callee, fnty), args, fnt.ret)
        fn = target.fn
        if fn.decl.kind == "intrinsic" and fn.decl.name in RUNTIME_INTRINSICS:   # std/async
            return async_.intrinsic(self, fn, self.arguments(e.args, [t for _, t in fn.params]))
        if fn.decl.kind == "intrinsic" and fn.decl.name in FACTS:   # the prelude's
            return I1(int(self.mg.facts[fn.decl.name]))
        if fn.decl.kind == "intrinsic":   # std/math
            kind = math_kind(fn.params[0][1])
            args = self.arguments(e.args, [t for _, t in fn.params])
            return intrinsics.math_call(self.b, fn.decl.name, kind, args)
        args = self.call_arguments(e, target)
        return self.call(fn, args, e.span, elide_safe=id(e) in self.inst.elide_safe)

    def call_arguments(self, e: ast.Call, target: DirectCall) -> list[ir.Value]:
        """A direct call's arguments, the receiver first (by address for `mut self`)."""
        fn = target.fn
        args = []
        params = fn.params
        if target.receiver is not None:
            recv = target.receiver
            args.append(self.place(recv) if fn.self_mode == "ref" else self.expr(recv))
            params = params[1:]
        args += self.arguments(e.args, [t for _, t in params])
        for a in e.args[len(params):]:
            args.append(self.c_vararg(a))
        return args

    def arguments(self, exprs, types: list[Type]) -> list[ir.Value]:
        """Evaluate every argument in order; a `void` one is evaluated but takes no slot."""
        values = []
        for a, t in zip(exprs, types):
            v = self.expr(a)
            if t != VOID:
                values.append(v)
        return values

    def call(self, fn: FnInstance, args: list[ir.Value], span=None, elide_safe: bool = False) -> ir.Value | None:
        abi = self.mg.abis.of_function(fn)
        site = []
        if self.mg.explain and abi.counts_sites:
            site = [I32(len(self.mg.sites))]
            self.mg.sites.append((self.inst, span or self.current_span, fn))
        return abi.call(self, fn, self.mg.declare(fn), args + site, elide_safe, site)

    def handle_op(self, t: Type, name: str, handle: ir.Value | None, promise_align: int = 8,
                  owning: bool = False) -> ir.Value | None:
        """An operation on a handle of type `t` (its ABI's), from any function;
        `destroy` destroys what an owning handle holds."""
        return self.mg.abis.of_handle(t).handle_op(self, t, name, handle, promise_align, owning)

    def call_with(self, callee, args: list[ir.Value], ret: Type) -> ir.Value | None:
        """Call with pycoro's convention: an aggregate result comes back in a temporary."""
        if is_aggregate(ret):
            result = self.alloca(ret, "result")
            self.b.call(callee, [result] + args)
            return result
        value = self.b.call(callee, args)
        return None if ret == VOID else value

    def c_vararg(self, a: ast.Expr) -> ir.Value:
        """C's default argument promotions."""
        t, v = self.type_of(a), self.expr(a)
        if t == BOOL:
            return self.b.zext(v, I32)
        if isinstance(t, IntT) and t.bits < 32:
            return self.b.sext(v, I32) if t.signed else self.b.zext(v, I32)
        if t == FloatT(32):
            return self.b.fpext(v, ir.DoubleType())
        return v

    def builtin_print(self, e: ast.Call) -> None:
        # Every argument is evaluated before anything is written, as in Python
        # and C: in `print("a", f())`, what f prints comes first.
        values = [(self.type_of(a), self.expr(a)) for a in e.args]
        for i, (t, v) in enumerate(values):
            if i:
                self.b.call(self.mg.runtime("print_sep"), [])
            if isinstance(t, IntT):
                if t.bits < 64:
                    v = self.b.sext(v, I64) if t.signed else self.b.zext(v, I64)
                self.b.call(self.mg.runtime("print_i64" if t.signed else "print_u64"), [v])
            elif isinstance(t, FloatT):
                self.b.call(self.mg.runtime(f"print_f{t.bits}"), [v])
            elif t == BOOL:
                self.b.call(self.mg.runtime("print_bool"), [v])
            elif t == STR:
                self.b.call(self.mg.runtime("print_str"), [v])
            else:
                self.b.call(self.mg.runtime("print_ptr"), [v])
        self.b.call(self.mg.runtime("print_end"), [])

    def builtin_assert(self, e: ast.Call) -> None:
        ok = self.expr(e.args[0])
        if len(e.args) == 2:
            msg = self.expr(e.args[1])
            fail = lambda: (self.b.call(self.mg.runtime("panic"), [msg] + self.location(e.span)),
                            self.b.unreachable())
        else:
            fail = lambda: self.panic(b"assertion failed", e.span)
        self.check(ok, fail, "assert")

    def builtin_panic(self, e: ast.Call) -> None:
        msg = self.expr(e.args[0])
        self.b.call(self.mg.runtime("panic"), [msg] + self.location(e.span))
        self.b.unreachable()
