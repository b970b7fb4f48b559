"""Internal iteration's two functions (middle/internal_iteration.py), each
emitted by an FnGen that module.py makes:

- the loop's body, `f.for.N(env, v) -> bool` (true: it ran `break`), in the
  enclosing function's instance, its variables at the addresses in `env`;
- g's body, `g.pushed.N(params…, depth, env) -> bool` (true: the loop's body
  broke), with a PushedBody in place of g's coroutine ABI: each `yield` calls
  the loop's body, each `yield from g(…)` recurses."""
from __future__ import annotations

from llvmlite import ir

from ...frontend import ast
from ...frontend.program import HandleCall
from ...frontend.types import VOID
from .. import guards
from ..coro.base import BodyEmitter
from ..internal_iteration import PUSHED_DEPTH, PushedLoop
from ..llvmcompat import I1, I64, PTR, gep
from .statements import Loop


def emit_loop_body(fg, s: ast.For, plan: PushedLoop, known_params: dict) -> None:
    """The body of `f.for.N(env, v)`: `s`'s body for one value, its `break`
    returning true and its `continue` false (as reaching its end); a
    `return` stores its value and a flag at the addresses after the
    variables' in `env` (for_pushed returns it) and returns true."""
    fg.body, fg.result = BodyEmitter(fg), None   # an ordinary function's: its body does not suspend
    env, value = fg.fn.args
    env.name, value.name = "env", s.var
    for index, var in enumerate(plan.outer):
        fg.slots[id(var)] = fg.b.load(gep(fg.b, env, [I64(index)], PTR), typ=PTR, name=var.name)
        if id(var) in known_params:
            fg.known_params[id(var)] = known_params[id(var)]
    if plan.returns:
        returned, result = (fg.b.load(gep(fg.b, env, [I64(len(plan.outer) + i)], PTR), typ=PTR) for i in (0, 1))
        returning = fg.block("for.return")
        fg.inline_exit = (result if fg.inst.ret != VOID else None, returning)
    item = plan.protocol.item
    fg.store(value, fg.slot(item), item.type)
    broke, went_on = fg.block("for.break"), fg.block("for.continue")
    fg.scopes.append([])
    fg.loops.append(Loop(broke, went_on, len(fg.scopes)))
    fg.emit_block(s.body)
    if not fg.b.block.is_terminated:
        fg.b.branch(went_on)
    fg.loops.pop()
    fg.scopes.pop()
    if plan.returns:
        fg.b.position_at_end(returning)
        fg.b.store(I1(1), returned)
        fg.b.branch(broke)
    for block, stop in ((broke, 1), (went_on, 0)):
        fg.b.position_at_end(block)
        fg.b.ret(I1(stop))
    fg.allocas.branch(fg.fn.blocks[1])


def emit_made(fg, plan: PushedLoop, loop_body: ir.Function, span) -> None:
    """The body of `g.pushed.N.made(params…, env) -> bool`, for g's `yield
    from`s past PUSHED_DEPTH (`span`: the first's, explain's site): g made
    for its arguments and the loop's body run on each of its values (as the
    loop would have, from this level down), then destroyed; true when the
    body broke. A function of its own, cold: in g.pushed, its registers and
    its calls would weigh on every level."""
    fg.body, fg.result = BodyEmitter(fg), None
    g, protocol = plan.callee, plan.protocol
    holder_type = protocol.holder.type
    holder = fg.alloca(holder_type, "made")
    fg.b.store(fg.call(g, list(fg.fn.args[:-1]), span), holder)
    env = fg.fn.args[-1]
    env.name = "env"

    def step(fn):
        if isinstance(fn, HandleCall):
            return fg.handle_op(holder_type, fn.name, fg.b.load(holder, typ=PTR))
        return fg.call(fn, [holder if fn.self_mode == "ref" else fg.load(holder, holder_type)])

    head, each, broke, done = (fg.block(name) for name in ("next", "value", "break", "done"))
    fg.b.branch(head)
    fg.b.position_at_end(head)
    fg.b.cbranch(step(protocol.next), each, done)
    fg.b.position_at_end(each)
    value = step(protocol.value)
    fg.b.store(I64(PUSHED_DEPTH), fg.mg.pushed_levels())   # a loop in the body makes its generators too
    fg.b.cbranch(fg.b.call(loop_body, [env, value]), broke, head)
    fg.b.position_at_end(broke)
    fg.b.branch(done)
    fg.b.position_at_end(done)
    stop = fg.b.phi(I1, "stop")
    stop.add_incoming(I1(0), head)
    stop.add_incoming(I1(1), broke)
    fg.drop(holder, holder_type)
    fg.b.ret(stop)
    fg.allocas.branch(fg.fn.blocks[1])


class PushedBody(BodyEmitter):
    """g's body in `g.pushed.N(params…, depth, env)`: a `yield` runs the
    loop's body on its value, a `yield from g(…)` takes g's base cases
    (guards.py) or runs g.pushed one level deeper (past PUSHED_DEPTH: makes
    g and runs the loop's body on each of its values), each returning true
    at once when the loop's body broke;
    `co_return` and the end return false. g's hooks have no effects
    (internal_iteration.py): they are not called."""

    runs_delegations_in_place = False   # g's `yield from`s are its own calls here

    def __init__(self, fg, plan: PushedLoop, loop_body: ir.Function, made: ir.Function):
        super().__init__(fg)
        self.plan, self.loop_body, self.made = plan, loop_body, made   # `made`: emit_made's function
        self.depth, self.env = fg.fn.args[-2:]
        self.depth.name, self.env.name = "depth", "env"
        # g's leading base cases, taken at each `yield from g(…)` before the
        # call, as in g's own coroutine (middle/guards.py): a leaf is no call
        self.base_cases = guards.Delegation(plan.callee, guards.base_cases(plan.callee), None)

    def yield_(self, e: ast.Yield) -> None:
        hook = self.fg.inst.hooks[e]
        value, = self.fg.arguments([e.value], [t for _, t in hook.params[1:]])
        self.yield_computed(hook, value, e.span.line)

    def yield_computed(self, hook, value: ir.Value, line: int) -> None:
        """The loop's body on `value` (a `yield`'s, or a base case's taken at a `yield from`)."""
        fg = self.fg
        fg.b.store(self.depth, fg.mg.pushed_levels())   # where a loop in the body starts counting
        self._return_if_stopped(fg.b.call(self.loop_body, [self.env, value]))

    def yield_from(self, e: ast.YieldFrom, inner_value: ir.Value | None) -> None:
        fg, g = self.fg, self.plan.callee
        args = fg.arguments(e.value.args, [t for _, t in g.params])
        done = fg.block("pushed.done")
        fg.take_base_cases(self.base_cases, args, done, last_untested=False)
        shallow, deep, joined = fg.block("pushed.call"), fg.block("pushed.make"), fg.block("pushed.join")
        fg.b.cbranch(fg.b.icmp_signed("<", self.depth, I64(PUSHED_DEPTH)), shallow, deep)
        fg.b.position_at_end(shallow)
        called = fg.b.call(fg.fn, args + [fg.b.add(self.depth, I64(1)), self.env])
        fg.b.branch(joined)
        fg.b.position_at_end(deep)
        made = fg.b.call(self.made, args + [self.env])
        fg.b.branch(joined)
        fg.b.position_at_end(joined)
        stop = fg.b.phi(I1, "stop")
        stop.add_incoming(called, shallow)
        stop.add_incoming(made, deep)
        self._return_if_stopped(stop)
        fg.b.branch(done)
        fg.b.position_at_end(done)

    def _return_if_stopped(self, stop: ir.Value) -> None:
        fg = self.fg
        stopped, going = fg.block("pushed.stopped"), fg.block("pushed.going")
        fg.b.cbranch(stop, stopped, going)
        fg.b.position_at_end(stopped)
        fg.unwind_to(0)
        fg.b.ret(I1(1))
        fg.b.position_at_end(going)

    def co_return(self, s: ast.CoReturn) -> None:
        self.fg.unwind_to(0)
        self.fg.b.ret(I1(0))

    def fall_off_end(self) -> None:
        self.fg.b.ret(I1(0))
