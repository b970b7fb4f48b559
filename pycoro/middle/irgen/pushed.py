"""Internal iteration's functions (middle/internal_iteration.py), made once
per loop (`functions`), each emitted by an FnGen:

- the loop's body, `f.for.N(env, v) -> i8`, in the enclosing function's
  instance, its variables at the addresses in `env`;
- g's body, `g.pushed.N(params…, levels, env) -> i8`, with a PushedBody in
  place of g's coroutine ABI: each `yield` runs the loop's body, each
  `yield from g(…)` takes g's base cases or runs g.pushed a level deeper;
- `g.pushed.N.made(params…, env) -> i8`, cold: past PUSHED_DEPTH, g made
  and the loop's body run on each of its values.

Each returns what the loop's body did (internal_iteration's GO_ON, BROKE,
RETURNED): anything but GO_ON ends the loop at once."""
from __future__ import annotations

from llvmlite import ir

from ...frontend import ast
from .. import guards
from ..coro.base import BodyEmitter
from ..internal_iteration import BROKE, GO_ON, PUSHED_DEPTH, RETURNED, PushedLoop
from ..llvmcompat import I8, I64, PTR, gep
from .function import FnGen
from .statements import Loop, param_types


def functions(mg, fg: FnGen, s: ast.For, plan: PushedLoop) -> ir.Function:
    """`g.pushed.N` for the loop `s` of the function `fg` emits, and the
    loop's body and `.made` it calls."""
    g, number = plan.callee, len(mg.frameless_sites)   # (a number no other loop's functions have)
    mg.frameless_sites.append(("pushed", fg.inst, s.iter.span, g))
    params = mg.ramp_arguments(g)
    body = _function(mg, f"{fg.fn.name}.for.{number}", [PTR, mg.llvm(plan.protocol.item.type)])
    pushed = _function(mg, f"{g.symbol}.pushed.{number}", params + [I64, PTR])
    # one for all of g's `yield from`s: each copy is a generator's ramp, loop
    # and destroy in the build (permutations +10 ms for two)
    made = _function(mg, f"{pushed.name}.made", params + [PTR])
    made.attributes.update({"cold", "noinline"})
    emit_loop_body(FnGen(mg, fg.inst, body), s, plan, fg.known_params)
    first = next(ast.nodes_of(g.decl.body, ast.YieldFrom))   # explain's site: the frames g makes there
    emit_made(FnGen(mg, g, made), plan, body, first.value.span)
    emitter = FnGen(mg, g, pushed)
    emitter.emit(PushedBody(emitter, plan, body, made))
    return pushed


def _function(mg, name: str, params: list[ir.Type]) -> ir.Function:
    fn = ir.Function(mg.module, ir.FunctionType(I8, params), name)   # returns what the loop's body did
    fn.linkage = "internal"
    return fn


def emit_loop_body(fg: FnGen, s: ast.For, plan: PushedLoop, known_params: dict) -> None:
    """The body of `f.for.N(env, v)`: `s`'s body for one value. `break`
    returns BROKE, `continue` and the end GO_ON; a `return` leaves its value
    at env's `plan.result_at` (for_pushed returns it) and returns RETURNED,
    once the body's own cleanups have run."""
    fg.body, fg.result = BodyEmitter(fg), None   # an ordinary function's: its body does not suspend
    env, value = fg.fn.args
    env.name, value.name = "env", s.var
    for index, var in enumerate(plan.outer):
        fg.slots[id(var)] = fg.b.load(gep(fg.b, env, [I64(index)], PTR), typ=PTR, name=var.name)
        if id(var) in known_params:
            fg.known_params[id(var)] = known_params[id(var)]
    exits = {BROKE: fg.block("for.break"), GO_ON: fg.block("for.continue")}
    if plan.returns:
        exits[RETURNED] = fg.block("for.return")
        result = None if plan.result is None else fg.b.load(gep(fg.b, env, [I64(plan.result_at)], PTR), typ=PTR)
        fg.inline_exit = (result, exits[RETURNED], fg.inst.ret)   # where return_value leaves the body
    item = plan.protocol.item
    fg.store(value, fg.slot(item), item.type)
    fg.scopes.append([])
    fg.loops.append(Loop(exits[BROKE], exits[GO_ON], len(fg.scopes)))
    fg.emit_block(s.body)
    if not fg.b.block.is_terminated:
        fg.b.branch(exits[GO_ON])
    fg.loops.pop()
    fg.scopes.pop()
    for status, block in exits.items():
        fg.b.position_at_end(block)
        fg.b.ret(I8(status))
    fg.allocas.branch(fg.fn.blocks[1])


def emit_made(fg: FnGen, plan: PushedLoop, loop_body: ir.Function, span) -> None:
    """The body of `g.pushed.N.made(params…, env)`, for g's `yield from`s
    past PUSHED_DEPTH (`span`: the first's, explain's site): g made for its
    arguments and the loop's body run on each of its values (as the loop
    would have, from this level down), then destroyed. A function of its
    own, cold: in g.pushed, its registers and its calls would weigh on every
    level."""
    fg.body, fg.result = BodyEmitter(fg), None
    protocol = plan.protocol
    holder_type = protocol.holder.type
    holder = fg.alloca(holder_type, "generator")
    fg.b.store(fg.call(plan.callee, list(fg.fn.args[:-1]), span), holder)
    env = fg.fn.args[-1]
    env.name = "env"
    head, each, stopped, done = (fg.block(name) for name in ("next", "value", "stopped", "done"))
    fg.b.branch(head)
    fg.b.position_at_end(head)
    fg.b.cbranch(fg.iter_step(protocol.next, holder, holder_type), each, done)
    fg.b.position_at_end(each)
    value = fg.iter_step(protocol.value, holder, holder_type)
    fg.b.store(I64(PUSHED_DEPTH), fg.mg.pushed_levels())   # a loop in the body makes its generators too
    status = fg.b.call(loop_body, [env, value])
    fg.b.cbranch(fg.b.icmp_unsigned("!=", status, I8(GO_ON)), stopped, head)
    fg.b.position_at_end(stopped)
    fg.b.branch(done)
    fg.b.position_at_end(done)
    result = fg.b.phi(I8, "status")
    result.add_incoming(I8(GO_ON), head)
    result.add_incoming(status, stopped)
    fg.drop(holder, holder_type)
    fg.b.ret(result)
    fg.allocas.branch(fg.fn.blocks[1])


class PushedBody(BodyEmitter):
    """g's body in `g.pushed.N(params…, levels, env)`: a `yield` runs the
    loop's body on its value; a `yield from g(…)` takes g's base cases
    (guards.py) or runs g.pushed one level deeper (past PUSHED_DEPTH:
    `.made`); each returns at once what the loop's body did when that was
    not GO_ON. `co_return` and the end return GO_ON. g's hooks have no
    effects (internal_iteration.py): they are not called, and g's body
    declares nothing to clean up (guards.simple_statement)."""

    runs_delegations_in_place = False   # g's `yield from`s are its own calls here

    def __init__(self, fg: FnGen, plan: PushedLoop, loop_body: ir.Function, made: ir.Function):
        super().__init__(fg)
        self.plan, self.loop_body, self.made = plan, loop_body, made
        self.levels, self.env = fg.fn.args[-2:]
        self.levels.name, self.env.name = "levels", "env"
        # g's leading base cases, taken at each `yield from g(…)` before the
        # call, as in g's own coroutine (middle/guards.py): a leaf is no call
        self.base_cases = guards.Delegation(plan.callee, guards.base_cases(plan.callee), body=None)

    def yield_(self, e: ast.Yield) -> None:
        hook = self.fg.inst.hooks[e]
        value, = self.fg.arguments([e.value], [t for _, t in hook.params[1:]])
        self.yield_computed(hook, value, e.span.line)

    def yield_computed(self, hook, value: ir.Value, line: int) -> None:
        """The loop's body on `value` (a `yield`'s, or a base case's taken at
        a `yield from`); the hook is not called, and nothing suspends."""
        fg = self.fg
        fg.b.store(self.levels, fg.mg.pushed_levels())   # where a loop in the body starts counting
        self._return_unless_going_on(fg.b.call(self.loop_body, [self.env, value]))

    def yield_from(self, e: ast.YieldFrom, inner_value: ir.Value | None) -> None:
        fg, g = self.fg, self.plan.callee
        args = fg.arguments(e.value.args, param_types(g))
        done = fg.block("pushed.done")
        fg.take_base_cases(self.base_cases, args, done, last_untested=False)
        native, made, joined = fg.block("pushed.call"), fg.block("pushed.make"), fg.block("pushed.join")
        fg.b.cbranch(fg.b.icmp_signed("<", self.levels, I64(PUSHED_DEPTH)), native, made)
        fg.b.position_at_end(native)
        called = fg.b.call(fg.fn, args + [fg.b.add(self.levels, I64(1)), self.env])
        fg.b.branch(joined)
        fg.b.position_at_end(made)
        looped = fg.b.call(self.made, args + [self.env])
        fg.b.branch(joined)
        fg.b.position_at_end(joined)
        status = fg.b.phi(I8, "status")
        status.add_incoming(called, native)
        status.add_incoming(looped, made)
        self._return_unless_going_on(status)
        fg.b.branch(done)
        fg.b.position_at_end(done)

    def _return_unless_going_on(self, status: ir.Value) -> None:
        fg = self.fg
        stopped, going = fg.block("pushed.stopped"), fg.block("pushed.going")
        fg.b.cbranch(fg.b.icmp_unsigned("!=", status, I8(GO_ON)), stopped, going)
        fg.b.position_at_end(stopped)
        fg.b.ret(status)
        fg.b.position_at_end(going)

    def co_return(self, s: ast.CoReturn) -> None:
        self.fg.b.ret(I8(GO_ON))

    def fall_off_end(self) -> None:
        self.fg.b.ret(I8(GO_ON))
