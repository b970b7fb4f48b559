"""One function's body (FnGen): its slots, scopes and cleanups, places,
temporaries and ownership, the entry and exit its ABI decides
(coro/base.py's BodyEmitter), made of the statements, expressions and
calls of the modules of those names."""
from __future__ import annotations

import contextlib
from collections.abc import Callable

from llvmlite import ir

from ...common.paths import in_stdlib
from ...frontend import ast
from ...frontend.layout import is_aggregate
from ...frontend.program import FnInstance, GlobalVar, HandleCall, LocalVar
from ...frontend.resolve import takes_caller
from ...frontend.types import ERROR, VOID, ArrayT, IntT, PtrT, SliceT, StructT, Type
from .. import intrinsics
from ..coro.base import LINK_NONE
from ..llvmcompat import EMPTY, I1, I8, I32, I64, PTR, alloca, field_ptr, gep
from ..runtime import UNSIGNED_FIRST
from .calls import CallEmission
from .expressions import ExpressionEmission
from .statements import Loop, StatementEmission

# Expressions whose owning value is new: a temporary unless something takes it
# (`Box { v: g() }.v.next()` destroys the box's generator after the statement).
_MAKES_VALUES = (ast.Call, ast.StructLit, ast.ArrayLit)


class FnGen(StatementEmission, ExpressionEmission, CallEmission):
    """Emits the body of one function instance."""

    def __init__(self, mg, inst: FnInstance, fn: ir.Function | None = None,
                 bound: dict[int, FnInstance] | None = None):
        # `mg`: the ModuleGen (module.py), which makes FnGens and is not
        # imported here: that would be an import cycle
        self.mg = mg
        self.inst = inst
        self.fn = fn or mg.declare(inst)   # another function made from inst's code: a guard, a specialised copy
        self.bound = bound or {}           # a specialised copy's known function parameters, by position
        self.known_params: dict[int, FnInstance] = {}   # the same, by id of their LocalVar
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
        self.loops: list[Loop] = []
        self.types = inst.types
        self.body = None   # how its ABI starts, suspends and ends it (coro/base.py's BodyEmitter)
        # This function's instance, then the async callees whose bodies are being
        # emitted in place of `await g(…)` (innermost last; `inst` is the last),
        # and where the innermost one's `return` goes: (result slot, block).
        self.inline_chain: list[FnInstance] = [inst]
        self.inline_exit: tuple[ir.Value | None, ir.Block, Type] | None = None   # (slot, block, its type)
        self.temps: dict[int, ir.Value] = {}   # owning temporaries' slots, by expression
        self.current_span = inst.decl.span
        # -g: this function's DWARF subprogram (none for the stdlib's, or without -g)
        self.scope = None
        self.inlined_at = None   # the call the code being emitted is inlined at (emit_inlined)
        self.located = True      # whether its statements get their own locations (the stdlib's do not)
        if mg.debug is not None and not in_stdlib(inst.decl.span.file):
            self.scope = mg.debug.subprogram(self.fn, inst.display, inst.decl.span)
            self.b.debug_metadata = mg.debug.location(inst.decl.span, self.scope)
            self.declared_at = {id(v): node.span for node, v in inst.locals.items()}

    # ---- helpers
    def type_of(self, e: ast.Expr) -> Type:
        return self.types[e]

    def alloca(self, t: Type, name: str = "") -> ir.Value:
        return alloca(self.allocas, self.mg.llvm(t), name)

    def slot(self, var: LocalVar) -> ir.Value:
        if id(var) not in self.slots:
            self.slots[id(var)] = self.alloca(var.type, var.name)
            if self.scope is not None and len(self.inline_chain) == 1 and id(var) in self.declared_at:
                self.mg.debug.declare(self.allocas, self.slots[id(var)], var.name, var.type,
                                      self.declared_at[id(var)], self.scope,
                                      var.param_index + 1 if var.is_param else None)
        slot = self.slots[id(var)]
        return slot() if callable(slot) else slot

    def load(self, ptr: ir.Value, t: Type) -> ir.Value:
        """The value at `ptr`; for an aggregate, a pointer to a fresh copy."""
        if is_aggregate(t):
            copy = self.alloca(t, "copy")
            self.memcpy(copy, ptr, t)
            return copy
        return self.b.load(ptr, typ=self.mg.llvm(t))

    def store(self, value: ir.Value | None, ptr: ir.Value, t: Type) -> None:
        if value is None:   # a `void` value (`for v in …` of a `value()` that returns nothing): nothing to keep
            return
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

    def panic_site(self, span) -> list[ir.Value]:
        """A panic's last arguments: its position, and the coroutine that
        continues when this one ends, which a backtrace shows (stdlib/rt.pc's `fail`)."""
        link, kind = self.body.backtrace_link() if self.body is not None else (ir.Constant(PTR, None), LINK_NONE)
        return self.panic_position(span) + [link, I32(kind)]

    def panic_position(self, span) -> list[ir.Value]:
        """A panic's file, line and column: its own, or in a function that
        takes its caller (resolve.takes_caller) the call's, which that
        parameter points to."""
        if not takes_caller([t for _, t in self.inst.params]):
            return [self.mg.string(span.file.encode()), I32(span.line), I32(span.col)]
        var = self.inst.locals[self.inst.decl.params[-1]]
        site = self.load(self.slot(var), var.type)
        caller = self.mg.llvm(var.type.elem)
        return [self.b.load(field_ptr(self.b, site, caller, i), typ=t) for i, t in enumerate((PTR, I32, I32))]

    def panic(self, message: bytes, span) -> None:
        self.b.call(self.mg.runtime("panic"), [self.mg.string(message)] + self.panic_site(span))
        self.b.unreachable()

    def check(self, ok: ir.Value, fail, name: str) -> None:
        """Branch to a cold block that calls `fail()` (which must not return) unless `ok`."""
        bad, good = self.block(f"{name}.fail"), self.block(f"{name}.ok")
        self.b.cbranch(ok, good, bad)
        self.b.position_at_end(bad)
        fail()
        self.b.position_at_end(good)

    # ---- function
    def emit(self, body=None) -> None:
        """The function, by its ABI's BodyEmitter (or `body`: another way to run
        the instance's statements, irgen/pushed.py's)."""
        args = iter(self.fn.args)
        self.result = None
        if is_aggregate(self.inst.ret):
            self.result = next(args)
            self.result.name = "result"
        self.body = body or self.mg.abis.of_function(self.inst).body(self)
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
            if i in self.bound:   # a specialised copy: the argument is known, and ignored
                self.known_params[id(var)] = self.bound[i]
                self.store(self.mg.declare(self.bound[i]), self.slot(var), t)
            elif param.is_self and param.mut_self:
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
        if self.scope is not None:   # what runs after the last statement is at the closing brace, as clang puts it
            self.b.debug_metadata = self.mg.debug.location(self.closing_brace(), self.scope)
        if not self.b.block.is_terminated:
            self.run_cleanups(self.scopes[-1])
            self.body.fall_off_end()
        self.body.end()
        self.scopes.pop()
        self.allocas.branch(self.fn.blocks[1])

    def closing_brace(self):
        """The last position of this function's body (its declaration's where unknown)."""
        span = self.inst.decl.body.span
        if not span.end_line:
            return self.inst.decl.span
        return type(span)(span.file, span.end_line, max(span.end_col - 1, 1))

    # ---- statements
    def emit_block(self, block: ast.Block) -> None:
        self.scopes.append([])
        for s in block.stmts:
            self.ensure_open()
            self.emit_stmt(s)
        if not self.b.block.is_terminated:
            self.run_cleanups(self.scopes[-1])
        self.scopes.pop()

    def context(self) -> tuple:
        """What emitting another instance's statements in this function changes."""
        return (self.inst, self.types, self.slots, self.current_span, self.scope, self.inlined_at, self.located)

    def restore(self, context: tuple) -> None:
        """Back to `context` after another instance's statements, and (-g) to
        the location of the statement that emitted them."""
        (self.inst, self.types, self.slots, self.current_span, self.scope, self.inlined_at,
         self.located) = context
        if self.scope is not None:
            self.b.debug_metadata = self.mg.debug.location(self.current_span, self.scope, self.inlined_at)

    def bind_params(self, callee: FnInstance, values: list[ir.Value]) -> None:
        """`callee`'s parameters, whose code is emitted in this function, bound to
        `values`: each its own copy (as in a frame or a context), a `mut self`
        the caller's place."""
        values = iter(values)
        for param, (_, t) in zip(callee.decl.params, callee.params):
            if t == VOID:
                continue
            var = callee.locals[param]
            if param.is_self and param.mut_self:
                self.slots[id(var)] = next(values)
            else:
                self.store(next(values), self.slot(var), t)

    @contextlib.contextmanager
    def emitting_as(self, callee: FnInstance, args: list[ir.Value]):
        """Emit `callee`'s statements in this function (an awaited body, a
        recursive generator's body run in place), its parameters bound to
        `args` and its locals in slots of their own; then back to this
        function's own."""
        outer = self.context()
        self.enter_inlined(callee)
        self.inst, self.types, self.slots = callee, callee.types, {}
        self.inline_chain.append(callee)
        self.bind_params(callee, args)
        yield
        self.inline_chain.pop()
        self.restore(outer)

    def enter_inlined(self, callee: FnInstance) -> None:
        """-g: `callee`'s code, emitted in place of a call of it, is located in
        its own scope inlined at the current statement, as LLVM's inliner makes
        locations (the stdlib's keeps the statement's)."""
        if self.scope is not None and self.located:
            call = self.mg.debug.location(self.current_span, self.scope, self.inlined_at)
            self.located = not in_stdlib(callee.decl.span.file)
            if self.located:
                self.scope = self.mg.debug.inlined_subprogram(callee.display, callee.decl.span)
                self.inlined_at = call

    def run_cleanups(self, items: list[tuple[str, object]], destroying: bool = False) -> None:
        for kind, what in reversed(items):
            self.ensure_open()
            if kind == "defer":
                self.emit_stmt(what)
            elif kind == "unlink":
                # a `yield from` of a generator this one does not own: if this
                # one is destroyed while linked, that one becomes a tree of its own
                if destroying:
                    self.call(*what)
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
        (`destroying`: a suspended coroutine is being destroyed). A cleanup
        may end its path (`defer panic(…)`): what follows goes into a dead block."""
        for scope in reversed(self.scopes[depth:]):
            self.run_cleanups(scope, destroying)
        self.ensure_open()

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
        if self.scope is not None and self.located:   # the stdlib's inlined code keeps its `await`'s line
            self.b.debug_metadata = self.mg.debug.location(s.span, self.scope, self.inlined_at)
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

    def emit_inlined(self, callee: FnInstance, args: list[ir.Value], ret: Type | None = None) -> ir.Value | None:
        """`callee`'s body in place of a call of it (an `await` of an async fn:
        coro/async_.py decides which; of a task that never suspends, with `ret`
        its value's type: middle/awaited_in_place.py), its parameters bound to
        `args`. It runs in this function's context: its own awaits suspend this
        function."""
        task = ret is not None
        ret = callee.ret if ret is None else ret
        saved_own = self.scopes, self.loops, self.temps, self.inline_exit
        result = self.alloca(ret, f"{callee.decl.name}.result") if ret != VOID else None
        if task and result is not None:
            # T's zero value, as the task's promise starts: a body that ends by
            # `co_return;` or falling off its end leaves it (a slot reused by a loop too)
            self.zero(result, ret)
        after = self.block(f"{callee.decl.name}.end")
        with self.emitting_as(callee, args):
            self.scopes, self.loops, self.temps, self.inline_exit = [], [], {}, (result, after, ret)
            self.scopes.append([("drop", (self.slot(v), v.type)) for v in
                                (callee.locals[p] for p in callee.decl.params) if v.owned])
            self.emit_block(callee.decl.body)
            if not self.b.block.is_terminated:
                self.run_cleanups(self.scopes[-1])
                self.b.branch(after)
        self.scopes, self.loops, self.temps, self.inline_exit = saved_own
        self.b.position_at_end(after)
        return None if result is None else self.load(result, ret)

    # ---- places
    def is_mutable_place(self, e: ast.Expr) -> bool:
        match e:
            case ast.Name():
                ref = self.inst.refs.get(e)
                return (isinstance(ref, LocalVar) and ref.mutable) or \
                    (isinstance(ref, GlobalVar) and ref.decl.mutable)
            case ast.Field(base=base) | ast.Index(base=base):
                return isinstance(self.type_of(base), (PtrT, SliceT)) or self.is_mutable_place(base)
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
                if isinstance(bt, SliceT):
                    view = self.expr(base)
                    i = self.bounds_checked(idx, self.b.extract_value(view, 1), e.span)
                    return gep(self.b, self.b.extract_value(view, 0), [i], self.mg.llvm(bt.elem))
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

    def is_u64(self, e: ast.Expr | None) -> bool:
        """Whether index `e` is a `u64` (its value may be past i64's range)."""
        t = self.type_of(e) if e is not None else None
        return isinstance(t, IntT) and not t.signed and t.bits == 64

    def bounds_checked(self, idx: ast.Expr, length: int | ir.Value, span) -> ir.Value:
        i = self.index_value(idx)
        length = I64(length) if isinstance(length, int) else length
        # unsigned compare: a negative index is a huge one
        ok = self.b.icmp_unsigned("<", i, length)
        unsigned = I32(UNSIGNED_FIRST if self.is_u64(idx) else 0)
        self.check(ok, lambda: self._bounds_panic(i, length, unsigned, span), "bounds")
        return i

    def _bounds_panic(self, i, length: ir.Value, unsigned: ir.Value, span) -> None:
        self.b.call(self.mg.runtime("panic_bounds"), [i, length, unsigned] + self.panic_site(span))
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

    def hold(self, where: ir.Value, t: Type, suspends_later: bool, in_memory: bool = True) -> tuple | None:
        """An owning value made before sibling expressions that are evaluated
        after it (the later arguments of a call, fields of a literal, the place
        of an assignment) is nobody's until its consumer takes it: if one of them
        may suspend (`suspends_later`), it is held as a temporary meanwhile, so
        that destroying the coroutine there destroys it too. `where` is its
        slot, or (`in_memory` False) the value itself, spilled to a slot when it
        is a scalar. Returns what `landed` takes back once the consumer has it."""
        if not suspends_later or not self.mg.p.layouts.owns(t):
            return None
        if not in_memory and not is_aggregate(t):
            slot = self.alloca(t, "in.flight")
            self.b.store(where, slot)
            where = slot
        item = ("temp", (where, t))
        self.scopes[-1].append(item)
        return item

    def landed(self, held: list) -> None:
        """The consumer took the values `hold` held."""
        held = [item for item in held if item is not None]
        if held:
            self.scopes[-1][:] = [item for item in self.scopes[-1] if not any(item is h for h in held)]

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
