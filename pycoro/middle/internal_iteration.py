"""Loops over recursive generators, run as recursive functions (internal
iteration): `for v in g(args) { body }`, where g yields from itself, is
compiled as a call of `g.pushed(args, levels, env)`, a copy of g's body
as an ordinary function that runs the loop's body at each `yield`:

    fn walk(values: ptr<i64>, n: i64, i: i64) -> Generator<i64> {
        if i >= n { co_return; }
        yield from walk(values, n, 2 * i + 1);
        yield values[i];
        yield from walk(values, n, 2 * i + 2);
    }
    for v in walk(values, nodes, 0) { s += v; }

becomes, in effect (true: the loop's body ran `break`; the functions
return GO_ON, BROKE or RETURNED),

    walk.pushed(values, n, i, levels, env) -> bool:
        if i >= n { return false; }
        if !(2 * i + 1 >= n) && walk.pushed(values, n, 2 * i + 1, levels + 1, env) { return true; }
        if main.for.body(env, values[i]) { return true; }   // s += v, through env's &s
        return !(2 * i + 2 >= n) && walk.pushed(values, n, 2 * i + 2, levels + 1, env);

(each `yield from` takes g's leading base cases before the call, as in g's
own coroutine: middle/guards.py).

A generator's every value costs a trip out of its frame to the consumer and
back in through its resume function's switch, and a recursion's every level
a frame (bench/README.md: tree_walk at 7.5x the recursive C function, ~6 ns
a node even where no frame is made); here a value is a call LLVM inlines and
a level a native call, as the C function's: tree_walk 8.3 -> 2.6 ns/node
(C 1.3), permutations 5.2 -> 3.2 ns (C 2.9).

The statements run in the same order as the generator and the loop would
have run them, each `yield` handing its value to the body at once, so this
is exact where nothing else can tell the difference:

- g is a generator of the prelude's `Generator<T>` whose hooks have no
  effects, called directly with scalar and pointer arguments (which own
  nothing g would destroy), and its body is made of the statements a
  recursive generator's body run in place may hold (guards.simple_statement:
  no calls, no `defer`, scalar and pointer locals only), plus `co_return;`,
  with every `yield from` of g itself;
- the loop's body does not suspend (no `yield`, `yield from`, `await` or
  `spawn`) nor `co_return`: its `break` and `continue` end or continue the
  loop as they would have, and a `return` (of an ordinary or async fn)
  leaves its value where the enclosing function's code after the call
  finds it, once the body's own scopes have run their cleanups, and ends
  the loop with RETURNED: that code returns it. The enclosing function's variables it
  uses are passed by address (`env`), so each write is where the loop would
  have made it.

What differs is what no program reads: the frames are not made (the
live-frame count, `pycoro explain`), a panic's backtrace shows g's levels
as the native calls LLVM kept (a last `yield from`, a tail call, becomes a
loop), and a pointer to a local of the loop's body kept past its iteration
(dangling either way) reads other memory.

Depth: a generator's frames are on the heap, so a recursion a million
levels deep runs; native calls are on the thread's stack. `g.pushed` counts
its depth from the levels of such loops on the stack already (the loop's
body may run another, or call a function that does: one count for the
program, the runtime's `__pycoro.pushed_levels`, which each `yield` sets before
the body runs, and which `__pc_try` restores when it catches a panic),
and at `PUSHED_DEPTH` a `yield from` makes the generator and runs the
loop's body for each of its values instead (the frames the loop would have
made, from there down). So the stack holds at most PUSHED_DEPTH such levels
in all, whatever recurses through the loops' bodies.

Not at -O0 (every generator keeps its frame for the debugger), nor for the
GPU (recursion needs a stack there whose size ptxas cannot know).
"""
from __future__ import annotations

from ..common.record import record
from ..frontend import ast
from ..frontend.program import FnInstance, IterProtocol, LocalVar
from ..frontend.types import VOID, Type
from . import guards

# The native levels of loops run as recursive functions, in all, before the
# generators are made: 32 KiB of stack at tree_walk's 64 bytes a level, at
# most ~0.5 MiB where the loop's body inlined into g.pushed has locals of
# its own (LLVM's inliner takes at most ~1 KiB of them into a recursion).
PUSHED_DEPTH = 512

# What a loop's body run as a function of its own may not hold: each suspends
# the enclosing coroutine, or ends it through its promise.
_SUSPENDS_OR_ENDS_A_COROUTINE = (ast.Yield, ast.YieldFrom, ast.Await, ast.Spawn, ast.CoReturn)

# What the loop's body did, as its function and g.pushed return it (irgen/pushed.py).
GO_ON, BROKE, RETURNED = range(3)


@record(frozen=True)
class PushedLoop:
    """How a `for v in g(args)` runs g's body as a function (`g.pushed`)."""
    callee: FnInstance              # g
    protocol: IterProtocol          # the loop's `next`/`value` (for the generators made past PUSHED_DEPTH) and `v`
    outer: tuple[LocalVar, ...]     # the enclosing function's variables the body uses (by address)
    returns: bool                   # the body holds a `return` (of the enclosing function)
    result: Type | None             # then, the type of the value it returns (None: none)

    @property
    def result_at(self) -> int:
        """Where in `env`, after the variables' addresses, a `return` in the
        body finds the address to leave its value at."""
        return len(self.outer)


def pushed_loop(f: FnInstance, s: ast.For) -> PushedLoop | None:
    """How `s`, a statement of f, runs as internal iteration (None: as written)."""
    if s.end is not None or s not in f.iters:
        return None
    g = guards.generator_call(s.iter, f)
    if g is None or not _recursive(g) or not all(guards.simple_statement(stmt, g, pushed=True)
                                                   for stmt in g.decl.body.stmts):
        return None
    if _holds(s.body, _SUSPENDS_OR_ENDS_A_COROUTINE):
        return None
    returns = _holds(s.body, ast.Return)   # never in a coroutine (the checker refuses it)
    item = f.iters[s].item
    declared = {id(item)} | {id(f.locals[n]) for n in ast.nodes_of(s.body, (ast.Let, ast.For, ast.With))
                             if n in f.locals}
    outer: dict[int, LocalVar] = {}
    for name in ast.nodes_of(s.body, ast.Name):
        ref = f.refs.get(name)
        if isinstance(ref, LocalVar) and id(ref) not in declared:
            outer.setdefault(id(ref), ref)
    result = f.ret if returns and f.ret != VOID else None
    return PushedLoop(g, f.iters[s], tuple(outer.values()), returns, result)


def _holds(node: ast.Node, kinds) -> bool:
    return next(ast.nodes_of(node, kinds), None) is not None


def _recursive(g: FnInstance) -> bool:
    """Whether g yields from itself (a generator that does not is inlined into
    its loop by LLVM, its frame elided, already)."""
    return any(guards.generator_call(y.value, g) is g for y in ast.nodes_of(g.decl.body, ast.YieldFrom))
