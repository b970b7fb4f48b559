"""The module: LLVM types of PyCoro types, declarations, the wrappers and
constants the functions share, globals, and `generate`, which emits every
function the program can run (function.py) and C's `main`."""
from __future__ import annotations

import functools
import math
import struct

from llvmlite import ir

from ...frontend import ast
from ...frontend.layout import is_aggregate
from ...frontend.program import CheckedProgram, FnInstance, GlobalVar
from ...frontend.types import (BOOL, HANDLE, NULL, STR, VOID, ArrayT, FloatT, FnT, IntT, PromiseT, PtrT, SliceT, StructT, Type,
                               PRIMITIVES, is_prelude_promise)
from ... import __version__
from ...common.paths import in_stdlib, stdlib_display
from .. import gpu, intrinsics
from ..coro.abis import ABIs
from ..internal_iteration import PushedLoop
from ..llvmcompat import EMPTY, I1, I32, I64, PTR, SLICE, global_string
from ..runtime import NORETURN, PUSHED_LEVELS, RUNTIME
from ..runtime import symbol as rt_symbol
from .debuginfo import DebugInfo
from . import pushed
from .function import FnGen
from .suspends import in_loop_bodies

_FLOAT_TYPES = {32: ir.FloatType(), 64: ir.DoubleType()}


class ModuleGen:
    """Emits one LLVM module for a checked program."""

    def __init__(self, program: CheckedProgram, name: str, explain: bool = False,
                 trampoline: bool = False, gpu_emulation: bool = False,
                 exported: frozenset[str] = frozenset(), real_time: bool = False,
                 inline_bodies: bool = True, debug: bool = False, internal_iteration: bool = False,
                 reyield: bool = False):
        self.p = program
        # a GPU build's `yield from`s (and `run --reyield`'s): loops that yield
        # again where they can (`reyields`; docs/gpu.md, docs/decisions.md)
        self.reyield = reyield
        # `await g(…)` of a small async fn emits g's body in place (coro/async_.py),
        # and a recursive generator's `yield from` its own simple body and the base
        # cases that yield (middle/guards.py); off at -O0, where every call stays a
        # call and every generator that yields has its frame.
        self.inline_bodies = inline_bodies
        # a loop over a recursive generator runs as a recursive function
        # (middle/internal_iteration.py): optimised native code only
        self.internal_iteration = internal_iteration
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
        # explain's sites that make no frame: why, caller, span, coroutine. "pushed": a
        # loop run as a recursive function (middle/internal_iteration.py); "in place":
        # an awaited task's body (middle/awaited_in_place.py)
        self.frameless_sites: list[tuple[str, FnInstance, object, FnInstance]] = []
        # std/async's parks: the program's `await`s by number ("file:line:col" → 1, 2, …; coro/async_.py)
        self.await_sites: dict[str, int] = {}
        # A context of its own: named struct types would otherwise collide when one
        # process compiles twice (the global context keeps them).
        self.module = ir.Module(name=name, context=ir.Context())
        # -g: DWARF for the program's own functions (debuginfo.py)
        self.debug = DebugInfo(self.module, program.layouts, name, f"pycoro {__version__}") if debug else None
        self.fns: dict[int | tuple, ir.Function] = {}
        # Library functions whose bodies are needed: those a body being emitted
        # refers to (generate). None while every function is merely declared.
        self.needed: dict[int, FnInstance] | None = None
        # copies of coroutines with known function arguments, to emit (specialised)
        self.pending_specialisations: list[tuple[FnInstance, dict[int, FnInstance], ir.Function]] = []
        self.structs: dict[StructT, ir.Type] = {}
        self.strings: dict[bytes, ir.GlobalVariable] = {}
        self.caller_sites: dict[tuple[str, int, int], ir.GlobalVariable] = {}
        self.globals: dict[int, ir.GlobalVariable] = {}
        self.wrappers: dict[tuple, ir.Function] = {}
        # function → the offset in its frame of the coroutine that continues
        # when it ends (coro/switch.py), for the backtrace table (backend/backtrace.py)
        self.coroutine_links: dict[str, int] = {}
        # the switched-resume coroutines (their functions' names) that begin with
        # an initial suspend and may suspend inside a loop, for middle/coro/first_resume.py
        self.resumed_in_loops: set[str] = set()
        self.stream_steps = False   # whether a stream's step is marked for middle/devirtualise.py
        # calls through function values emitted (their callee a value, which may be a
        # load LICM must not promote: middle/passes.licm_promotion_safe)
        self.function_value_calls = 0

    def linked_data(self, name: str) -> ir.Value:
        """The address of data the driver links in later (frontend/intrinsics.py's
        LINKED): `__backtrace_table` is backend/backtrace.py's table. Hidden,
        so that the code refers to it the same way (PC-relative, not through
        the GOT) whether it is defined yet or not."""
        symbol = {"__backtrace_table": "__pc_backtrace_table"}[name]
        data = self.module.globals.get(symbol)
        if data is None:
            data = ir.GlobalVariable(self.module, ir.IntType(8), symbol)
            data.linkage, data.storage_class = "external", "hidden"   # llvmlite prints visibility there
        return data

    def fact(self, fn: FnInstance) -> bool:
        """The value of a prelude `intrinsic fn` that states a fact about the
        program (frontend/intrinsics.py's FACTS): `__has_yield_from<T>(null)`,
        whether any `yield from` links Generator<T>s into a tree (a re-yielded
        one does not: `reyields`). Only those make a Generator<T>'s `active`
        non-null; where none does, its `next()` is its own resume, and a
        pipeline of them folds into one loop (a `yield from` of another T
        elsewhere in the program does not stop it)."""
        return self.delegates(fn.params[0][1].elem)

    def delegates(self, item: Type) -> bool:
        """Whether a `yield from` may link Generator<item>s into a tree."""
        return self.delegated is None or item in self.delegated

    def reyields(self, inst: FnInstance, node: ast.YieldFrom) -> bool:
        """Whether `node`, a `yield from` in `inst`, is the loop of
        FnInstance.generator_delegations rather than a link of the tree. Not in a loop's
        body: LLVM places no generator made inside a loop of a generator that
        consumes it there (`for k in 0..n { for v in g(k) { yield v; } }`
        keeps g on the heap, on a CPU too), while the tree's
        `for k in 0..n { yield from g(k); }` is placed."""
        return self.reyield and node in inst.generator_delegations and id(node) not in self._looped_delegations

    @functools.cached_property
    def _looped_delegations(self) -> frozenset[int]:
        """The `yield from`s inside a loop's body (by id)."""
        return frozenset(id(y) for inst in self.p.functions if inst.generator_delegations
                         for y in in_loop_bodies(inst.decl.body, ast.YieldFrom))

    def final_transfer(self, inst: FnInstance) -> FnInstance | None:
        """The hook coroutine `inst` transfers through at its end, if any: none
        for the prelude's Generator<T> where no `yield from` links Generator<T>s
        and the lowering re-yields (its hook transfers to the `parent` only a
        link sets: a plain final suspend does the same, and leaves no indirect
        `musttail` call that would make a GPU build use the resume loop)."""
        transfer = inst.coro.final_transfer
        if self.reyield and is_prelude_promise(inst.ret, "Generator") and not self.delegates(inst.ret.args[0]):
            return None
        return transfer

    @functools.cached_property
    def delegated(self) -> frozenset[Type] | None:
        """The T of each Generator<T> a `yield from` links from or to (None:
        one of another promise, whose hooks may do anything with a Generator)."""
        found = set()
        for inst in self.p.functions:
            for node in inst.hooks:
                if isinstance(node, ast.YieldFrom) and not self.reyields(inst, node):
                    for t in (inst.ret, inst.types.get(node.value)):
                        if not is_prelude_promise(t, "Generator"):
                            return None
                        found.add(t.args[0])
        return frozenset(found)

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
            case SliceT():
                return SLICE
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
        existing = self.module.globals.get(inst.symbol)
        if existing is not None:  # the same C function declared twice
            self.fns[key] = existing
            return existing
        fn = self._function(inst, inst.symbol)
        if inst.is_extern and inst.symbol in _RETURNS_TWICE:
            fn.attributes.add("returns_twice")   # or LLVM keeps values in registers longjmp restores stale
        if not inst.is_extern:
            fn.linkage = "internal" if self.internal and inst.display not in self.exported else "external"
        if inst.decl.name in _LIBRARY_NEVER_OPTIMISED.get(inst.decl.span.file, ()):
            fn.attributes.update({"noinline", "optnone", "cold"})
        if inst.decl.name in _LIBRARY_ALWAYS_INLINED.get(inst.decl.span.file, ()):
            fn.attributes.add("alwaysinline")
        self.fns[key] = fn
        return fn

    def _function(self, inst: FnInstance, symbol: str) -> ir.Function:
        fnty = self.signature([t for _, t in inst.params], inst.ret, inst.decl.varargs,
                              inst.self_mode == "ref")
        abi = self.abis.of_function(inst)
        fnty = abi.function_type(self, inst, fnty)
        if self.explain and abi.counts_sites:
            fnty = ir.FunctionType(fnty.return_type, list(fnty.args) + [I32])
        fn = ir.Function(self.module, fnty, symbol)
        abi.declare(fn)
        return fn

    def specialised(self, inst: FnInstance, bound: tuple[tuple[int, FnInstance], ...]) -> ir.Function:
        """A copy of the coroutine `inst` whose function-typed parameters at the
        positions in `bound` are the functions given (FnGen.known_functions),
        as Rust compiles a generic for each closure it is given. The copy takes
        the same arguments and ignores those: its calls through them are direct
        before LLVM's coroutine passes, so `map(xs, triple)` inlines `triple`
        into map's loop before the loops of a pipeline are shaped (called
        through its frame's copy of the pointer, it was inlined only after, and
        gen_pipeline's loops stayed nested: 1.9x clang++'s one loop)."""
        if not bound:
            return self.declare(inst)
        key = ("bound", id(inst), tuple((i, id(f)) for i, f in bound))
        if key not in self.fns:
            names = ",".join(f"{i}={f.symbol}" for i, f in bound)
            fn = self._function(inst, f"{inst.symbol}[{names}]")
            fn.linkage = "internal"
            self.fns[key] = fn
            self.pending_specialisations.append((inst, dict(bound), fn))
        return self.fns[key]

    def ramp_arguments(self, inst: FnInstance) -> list[ir.Type]:
        """The LLVM types of coroutine `inst`'s arguments as its ramp takes
        them (pycoro's calling convention), for functions made from its code
        that take the same."""
        return list(self.signature([t for _, t in inst.params], VOID).args)

    def base_case_part(self, inst: FnInstance, expr: ast.Expr, name: str) -> ir.Function:
        """`g.guard(args)`, `g.base.0.0(args)`, …: a condition or a value of
        generator g's leading base cases (middle/guards.py), for g's arguments as
        g's ramp takes them; always inlined."""
        key = ("base case", id(inst), id(expr))
        if key not in self.wrappers:
            ret = self.llvm(inst.types[expr])
            fn = ir.Function(self.module, ir.FunctionType(ret, self.ramp_arguments(inst)), f"{inst.symbol}.{name}")
            fn.linkage = "internal"
            fn.attributes.add("alwaysinline")
            self.wrappers[key] = fn
            FnGen(self, inst, fn).emit_base_case_part(expr)
        return self.wrappers[key]

    def pushed_functions(self, fg: FnGen, s: ast.For, plan: PushedLoop) -> ir.Function:
        """`g.pushed.N` for the loop `s` of the function `fg` emits (irgen/pushed.py),
        made once per emitted function (a specialised copy's loop body calls
        its known functions directly) and instance (an async callee's body
        emitted in place, a generic one's types)."""
        key = ("pushed", id(fg.fn), id(fg.inst), id(s))
        if key not in self.wrappers:
            self.wrappers[key] = pushed.functions(self, fg, s, plan)
        return self.wrappers[key]

    def pushed_levels(self) -> ir.GlobalVariable:
        """How many native levels of loops run as recursive functions are on
        the stack (middle/internal_iteration.py's PUSHED_DEPTH bounds them):
        one count for the program, as its free lists are (docs/c-abi.md: a
        library's calls are serialised). The runtime's variable (declared
        here), which `__pc_try` restores when a panic abandons such loops."""
        levels = self.module.globals.get(PUSHED_LEVELS)
        if levels is None:
            levels = ir.GlobalVariable(self.module, I64, PUSHED_LEVELS)
        return levels

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
        # Called once CoroSplit has lowered the suspend, from a resume function
        # whose every suspend point is a case of one switch: the inliner's
        # block frequencies then call many of its call sites cold (under 2% of
        # the entry's), with a threshold of 45 that a delegation's
        # await_suspend (cost 150) does not meet.
        fn.attributes.add("alwaysinline")
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

    def caller_site(self, span, caller: StructT) -> ir.GlobalVariable:
        """A call's position as the prelude's `__Caller`, for a callee that
        takes its caller (resolve.takes_caller): one constant per position."""
        key = (span.file, span.line, span.col)
        if key not in self.caller_sites:
            ty = self.llvm(caller)
            site = ir.GlobalVariable(self.module, ty, f".caller.{len(self.caller_sites)}")
            site.initializer = ir.Constant(ty, [self.string(span.file.encode()), I32(span.line), I32(span.col)])
            site.global_constant, site.linkage, site.unnamed_addr = True, "private", True
            site.type = PTR
            self.caller_sites[key] = site
        return self.caller_sites[key]

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
            case ast.Cast():
                if isinstance(t, PtrT):
                    return ir.Constant(PTR, None)
                return ir.Constant(ty, _const_value(e))
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
        while len(emitted) < len(self.needed) or self.pending_specialisations:
            for inst in self.p.functions:
                if id(inst) in self.needed and id(inst) not in emitted:
                    emitted.add(id(inst))
                    if inst.decl.body is not None:
                        FnGen(self, inst).emit()
            while self.pending_specialisations:
                inst, bound, fn = self.pending_specialisations.pop(0)
                FnGen(self, inst, fn, bound).emit()

    def _c_main(self, main: FnInstance) -> None:
        self.abis.of_function(main).c_main(self, main)
        if self.debug is not None:   # at -O2 the program is inlined into it: its lines need a subprogram to live in
            self.debug.artificial(self.module.get_global("main"), main.decl.span)


# C functions that return a second time (after a longjmp): calls to them must
# be marked, as clang does for its known setjmp family.
_RETURNS_TWICE = frozenset({"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp"})

# Library functions that run at most once, on the way to a panic, and that no
# pipeline optimises: std/async's deadlock report (its writers inlined into
# one another, unrolled and vectorised, took LLVM's -O2 pipeline ~220 of
# async_pingpong's ~360 ms, and code generation ~90 of its ~160). The
# runtime, compiled once and linked in, has its own such list, applied to its
# compiled module (pipeline/driver.py's _NEVER_OPTIMISED).
_LIBRARY_NEVER_OPTIMISED = {
    stdlib_display("async"): frozenset({"__deadlock", "__say", "__say_int", "__note_queue", "__number",
                                        "__note", "__describe"}),
}

# The prelude's awaiters (a `yield from`'s Delegation, an awaited Task): a few
# loads and stores around each suspend point, part of every delegation and
# await. LLVM's inliner calls a call site cold where its block is under 2% of
# its function's entry, and a coroutine with many suspend points (each a case
# of one switch) has many such sites: there a cost of 140 (two null checks
# that panic) against a threshold of 45 left a call per delegation in
# Heap's algorithm with its last level run in place (guards._last_level).
_LIBRARY_ALWAYS_INLINED = {
    stdlib_display("prelude"): frozenset({"await_suspend", "await_resume"}),
}


def _const_value(e: ast.Expr):
    """A global's constant initialiser, its casts done as `convert` does them."""
    match e:
        case ast.IntLit(value=v) | ast.FloatLit(value=v) | ast.BoolLit(value=v):
            return v
        case ast.Unary(op="-", operand=inner):
            return -_const_value(inner)
        case ast.Cast(expr=inner, type=ast.NamedType(name=name)) if name in PRIMITIVES:
            return _converted(_const_value(inner), PRIMITIVES[name])
        case ast.Cast(expr=inner):
            return _const_value(inner)
    raise AssertionError(e)


def _converted(value, t: Type):
    """`value as t` of a constant: an integer wraps to t's width, a float goes
    toward zero and saturates (NaN: 0), as LLVM's `fptosi.sat` does."""
    if isinstance(t, FloatT):
        return float(value) if t.bits == 64 else struct.unpack("f", struct.pack("f", float(value)))[0]
    if not isinstance(t, IntT):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        return t.min if value <= t.min else t.max if value >= t.max else int(value)
    value = int(value) & ((1 << t.bits) - 1)
    return value - (1 << t.bits) if t.signed and value > t.max else value

