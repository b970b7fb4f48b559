"""Statements: bindings, assignment, control flow and its loops, `with`,
`defer`, `return`; the suspension points hand over to the function's
BodyEmitter."""
from __future__ import annotations

from llvmlite import ir

from ...frontend import ast
from ...frontend.program import FnInstance, HandleCall
from ...frontend.types import I64 as INDEX_TYPE
from ...frontend.types import VOID, SliceT
from .. import guards, internal_iteration
from ..llvmcompat import I1, I8, I64, PTR, alloca, gep
from .suspends import may_suspend


# len(FnGen.inline_chain) in a generator's own body, and in a recursive
# generator's body run in place at its `yield from`s: once (guards.delegation),
# then at the recursion's last level (guards._last_level)
_OWN_BODY, _LAST_LEVEL = 1, 3


def param_types(fn: FnInstance) -> list:
    """fn's parameter types, in order (what `arguments` evaluates a call's for)."""
    return [t for _, t in fn.params]


class Loop:
    def __init__(self, brk: ir.Block, cont: ir.Block, depth: int):
        self.brk, self.cont, self.depth = brk, cont, depth


class StatementEmission:
    """FnGen's statements (a mixin: `self` is the FnGen)."""

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
            held = self.hold(value, t, may_suspend(s.target), in_memory=False)   # `a[(yield 1)] = g()`
            target = self.place(s.target)
            self.landed([held])
            if self.mg.p.layouts.owns(t):
                self.drop(target, t)  # the coroutines the place held before, if it still has them
            self.store(value, target, t)
            return
        ptr = self.place(s.target)
        current = self.b.load(ptr, typ=self.mg.llvm(t))
        result = self.binop(s.op, current, self.expr(s.value), t, s.span)
        self.b.store(result, ptr)

    def stmt_ExprStmt(self, s: ast.ExprStmt) -> None:
        plan = guards.delegation(self.inst, s, self.mg.inline_bodies) if self.body.runs_delegations_in_place else None
        if plan is None:
            self.expr(s.expr)
            return
        # `yield from g(args);` where g starts with base cases
        # (`if COND { yield E; …; co_return; }`): take them here, for the
        # arguments, and make no generator for them; where g's body is simple
        # enough, run it here too (middle/guards.py).
        callee = plan.callee
        args = self.arguments(s.expr.value.args, param_types(callee))
        done = self.block("yield_from.done")
        depth = len(self.inline_chain)
        assert depth != _LAST_LEVEL or plan.leaves is not None, "only guards._last_level runs a body this deep"
        # at the recursion's last level one of the base cases holds: the last is taken untested
        self.take_base_cases(plan, args, done, last_untested=depth == _LAST_LEVEL)
        if depth == _LAST_LEVEL:   # every path took a base case
            self.b.position_at_end(done)
            return
        if plan.body is not None and depth == _OWN_BODY:
            self.emit_delegated_body(callee, args, plan.body)
        else:
            if plan.body is not None and plan.leaves is not None:
                in_place, made = self.block("yield_from.last_level"), self.block("yield_from.make")
                self.b.cbranch(self.last_level(callee, args, plan), in_place, made)
                self.b.position_at_end(in_place)
                self.emit_delegated_body(callee, args, plan.body)
                self.b.branch(done)
                self.b.position_at_end(made)
            self.delegate(s.expr, callee, args)
        self.b.branch(done)
        self.b.position_at_end(done)

    def take_base_cases(self, plan: guards.Delegation, args: list[ir.Value], done: ir.Block,
                        last_untested: bool) -> None:
        """g's base cases for `args`, in order: where one holds, its yields,
        then on to `done`; the builder is left where none held."""
        for number, case in enumerate(plan.cases):
            untested = last_untested and number == len(plan.cases) - 1
            if not untested:
                taken, untaken = self.block("yield_from.base_case"), self.block("yield_from.next")
                self.b.cbranch(self.guard(plan, number, args), taken, untaken)
                self.b.position_at_end(taken)
            for index, y in enumerate(case.yields):
                value = self.b.call(self.mg.base_case_part(plan.callee, y.value, f"base.{number}.{index}"), args)
                self.body.yield_computed(plan.callee.hooks[y], value, y.span.line)
            self.b.branch(done)
            if not untested:
                self.b.position_at_end(untaken)

    def guard(self, plan: guards.Delegation, number: int, args: list[ir.Value]) -> ir.Value:
        """Whether g's base case `number` holds for `args` (`g.guard`, `g.guard.1`, …)."""
        name = "guard" if number == 0 else f"guard.{number}"
        return self.b.call(self.mg.base_case_part(plan.callee, plan.cases[number].cond, name), args)

    def last_level(self, callee: FnInstance, args: list[ir.Value], plan: guards.Delegation) -> ir.Value:
        """Whether g for `args` delegates only to instances that take a base
        case (`plan.leaves`: computed from g's parameters alone, guards._last_level)."""
        with self.emitting_as(callee, args):
            leaves = [self.arguments(call.args, param_types(callee)) for call in plan.leaves]
        every = ir.Constant(I1, 1)
        for leaf in leaves:
            some = ir.Constant(I1, 0)
            for number in range(len(plan.cases)):
                some = self.b.or_(some, self.guard(plan, number, leaf))
            every = self.b.and_(every, some)
        return every

    def delegate(self, e: ast.YieldFrom, callee: FnInstance, args: list[ir.Value]) -> None:
        """`yield from g(args)` as written: make g, and delegate to it."""
        call = e.value
        scope = self.scopes[-1]
        mark = len(scope)
        inner = self.call(callee, args, call.span, elide_safe=id(call) in self.inst.elide_safe)
        self.own(call, inner, self.types[call])
        self.expr_YieldFrom(e, inner)
        # The generator is the statement's temporary: destroyed on this path only.
        self.run_cleanups([item for item in scope[mark:] if item[0] == "temp"])
        scope[mark:] = [item for item in scope[mark:] if item[0] != "temp"]

    def emit_delegated_body(self, callee: FnInstance, args: list[ir.Value], body: tuple[ast.Stmt, ...]) -> None:
        """g's statements after its base cases, run by this generator (g itself,
        middle/guards.py) for g's arguments in place of making g: as
        `emit_inlined`, within this function's scopes, which hold nothing to
        clean up (g's body declares only scalars and pointers, makes no calls
        but its `yield from`s, and its parameters own nothing), so that a
        suspend point there needs no cleanup of this generator's own when it
        is destroyed. g's locals get slots of their own here."""
        assert not any(self.scopes), "a generator that runs its own body in place has nothing to clean up"
        with self.emitting_as(callee, args):
            self.scopes.append([])
            for stmt in body:
                self.emit_stmt(stmt)
            assert not self.scopes.pop(), "a delegated body declares nothing to clean up"

    def emit_base_case_part(self, expr: ast.Expr) -> None:
        """The body of `g.guard(params)`, `g.base.0.0(params)`, …: one of g's
        leading base cases' conditions or values (middle/guards.py), whose
        parameters are scalars and pointers."""
        for arg, (name, _) in zip(self.fn.args, [p for p in self.inst.params if p[1] != VOID]):
            arg.name = name
        self.bind_params(self.inst, self.fn.args)
        self.scopes.append([])
        self.current_span = expr.span
        if self.scope is not None:   # -g: a panic in it is at the expression, in g
            self.b.debug_metadata = self.mg.debug.location(expr.span, self.scope)
        self.b.ret(self.expr(expr))
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
        self.loops.append(Loop(end_bb, step_bb, len(self.scopes)))
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
        if s.end is None and isinstance(self.type_of(s.iter), SliceT):
            self.for_slice(s)
            return
        if s.end is None:
            plan = internal_iteration.pushed_loop(self.inst, s) if self.mg.internal_iteration else None
            if plan is not None:
                self.for_pushed(s, plan)
            else:
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

    def for_slice(self, s: ast.For) -> None:
        """`for v in xs`: a counted loop over the elements, which are in bounds by
        construction (no check), the slice read once: a loop LLVM vectorises."""
        elem = self.type_of(s.iter).elem
        view = self.expr(s.iter)
        start, length = self.b.extract_value(view, 0), self.b.extract_value(view, 1)
        counter = self.alloca(INDEX_TYPE, f"{s.var}.index")
        self.b.store(I64(0), counter)
        var = self.inst.locals[s]

        def cond():
            return self.b.icmp_signed("<", self.b.load(counter, typ=I64), length)

        def bind():
            at = gep(self.b, start, [self.b.load(counter, typ=I64)], self.mg.llvm(elem))
            self.store(self.load(at, elem), self.slot(var), elem)

        def step(end_bb, cond_bb):
            self.b.store(self.b.add(self.b.load(counter, typ=I64), I64(1)), counter)
            self.b.branch(cond_bb)
        self.loop("for", cond, s.body, step, bind)

    def for_iter(self, s: ast.For) -> None:
        proto = self.inst.iters[s]
        if self.is_mutable_place(s.iter):
            holder = self.place(s.iter)
        else:
            holder = self.slot(proto.holder)
            self.store(self.expr(s.iter), holder, proto.holder.type)

        def bind():
            self.store(self.iter_step(proto.value, holder, proto.holder.type), self.slot(proto.item), proto.item.type)
        self.loop("for", lambda: self.iter_step(proto.next, holder, proto.holder.type), s.body, None, bind)

    def iter_step(self, fn: FnInstance | HandleCall, holder: ir.Value, holder_type) -> ir.Value:
        """`next()` or `value()` (an IterProtocol's) of the iterated value at `holder`."""
        if isinstance(fn, HandleCall):   # a returned-continuation handle's own
            return self.handle_op(holder_type, fn.name, self.b.load(holder, typ=PTR))
        return self.call(fn, [holder if fn.self_mode == "ref" else self.load(holder, holder_type)])

    def for_pushed(self, s: ast.For, plan: internal_iteration.PushedLoop) -> None:
        """`for v in g(args)` over a recursive generator, as one call of
        `g.pushed(args, levels, env)` (middle/internal_iteration.py), `env`
        the addresses of this function's variables that the loop's body
        uses, `levels` the native levels of such loops on the stack already
        (the program's count, which the call leaves as it found it)."""
        args = self.arguments(s.iter.args, param_types(plan.callee))
        addresses = [self.slot(var) for var in plan.outer]
        if plan.result is not None:   # at plan.result_at: where a `return` in the body leaves its value
            result = self.alloca(plan.result, "returned")
            addresses.append(result)
        env = ir.Constant(PTR, None)
        if addresses:
            env = alloca(self.allocas, ir.ArrayType(PTR, len(addresses)), "env")
            for index, address in enumerate(addresses):
                self.b.store(address, gep(self.b, env, [I64(index)], PTR))
        levels = self.b.load(self.mg.pushed_levels(), typ=I64, name="pushed.levels")
        status = self.b.call(self.mg.pushed_functions(self, s, plan), args + [levels, env])
        self.b.store(levels, self.mg.pushed_levels())
        if plan.returns:
            leave, stay = self.block("for.return"), self.block("for.end")
            self.b.cbranch(self.b.icmp_unsigned("==", status, I8(internal_iteration.RETURNED)), leave, stay)
            self.b.position_at_end(leave)
            self.return_value(None if plan.result is None else self.load(result, plan.result))
            self.b.position_at_end(stay)

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
        self.return_value(self.expr(s.value) if s.value is not None else None)

    def return_value(self, value: ir.Value | None) -> None:
        """`return value`, from this function or from the callee whose body it
        emits in place (`inline_exit`: an async callee's, an awaited task's,
        a loop's body run as a function of its own, irgen/pushed.py)."""
        if self.inline_exit is not None:
            result, after, t = self.inline_exit
            if result is not None and value is not None:   # (a task's `co_return;`: its zero value)
                self.store(value, result, t)
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

    def expr_Spawn(self, e: ast.Spawn) -> ir.Value:
        return self.body.spawn(e)

    def expr_YieldFrom(self, e: ast.YieldFrom, inner_value: ir.Value | None = None) -> ir.Value | None:
        """`yield from e.value`; `inner_value`: e.value already evaluated."""
        return self.body.yield_from(e, inner_value)

