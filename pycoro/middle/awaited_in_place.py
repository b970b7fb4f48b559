"""`await f(…)` of a task that never suspends, run in place of the await.

`await f(args)`, where f returns the prelude's `Task<T>`, makes f's frame,
suspends the awaiting coroutine, transfers to f, runs f's body, stores its
`co_return` value in f's promise and transfers back: two symmetric transfers
and a frame for what is often a few instructions (`co_return k * k;`). LLVM
never folds that: each transfer is a `musttail` call through a handle loaded
from a frame, and on a GPU, which has no tail calls, a program that keeps one
is compiled with a resume loop (coro/trampoline.py) whose indirect calls cost
the awaits example kernel 100x the CUDA C loop (docs/gpu.md).

So, above -O0, such an await is compiled as f's body in place, its
parameters bound to the arguments (FnGen.emit_inlined), its `co_return v`
the await's value, when:

- f is a direct call's callee, with a body, returning the prelude's
  `Task<T>` (its hooks only store the value and the continuation; its
  `await_ready` is `done()`, false for a task just made), and the awaiting
  coroutine's promise has no `await_transform` (the await is the plain
  protocol);
- the code in place never suspends: every `await` in f's body is again one
  that runs in place. A suspension inside it would need the awaiting
  coroutine's destroy path to unwind f's scopes and its own, emitted from
  two instances; tasks that wait keep their frames;
- f's parameters own nothing (no handle the frame would have destroyed at
  the end of the awaiting statement, later than the body's end);
- f is not already being emitted in place there (recursion keeps its
  frames), at most INLINE_DEPTH deep, and f's body is at most INLINE_BUDGET
  syntax nodes (inline_budget.py, as for async fns' awaits).

Nothing a program can read differs: f's body runs at the same point with the
same values (the task is lazy: nothing ran between its call and the await),
and its result is the value `await_resume` would have read. What differs: no
frame (the live-frame count, `pycoro explain`'s "awaited in place"), and a
panic's backtrace shows the awaiting coroutine where f's frame would have been
(with -g, f's lines inlined into it).
"""
from __future__ import annotations

from ..frontend import ast
from ..frontend.program import DirectCall, FnInstance
from ..frontend.types import is_prelude_promise
from .inline_budget import INLINE_BUDGET, INLINE_DEPTH, syntax_size


def awaited_task(inst: FnInstance, e: ast.Await) -> FnInstance | None:
    """f, where `e` is `await f(…)` of a direct call of a function returning a
    prelude Task, through the plain awaiter protocol."""
    info = inst.awaits.get(e)
    target = inst.calls.get(e.operand) if isinstance(e.operand, ast.Call) else None
    if info is None or info.transform is not None or not isinstance(target, DirectCall):
        return None
    f = target.fn
    return f if f.coro is not None and f.decl.body is not None and is_prelude_promise(f.ret, "Task") else None


def runs_in_place(inline_bodies: bool, f: FnInstance, chain: list[FnInstance]) -> bool:
    """Whether `await f(…)`, emitted in the last of `chain` (the coroutine,
    then the tasks already in place in it), runs f's body in place."""
    if not inline_bodies or len(chain) > INLINE_DEPTH or any(f is c for c in chain):
        return False
    if any(f.locals[p].owned for p in f.decl.params):
        return False
    if syntax_size(f.decl.body) > INLINE_BUDGET:
        return False
    inner = chain + [f]
    for e in f.awaits:
        if not isinstance(e, ast.Await):
            return False
        g = awaited_task(f, e)
        if g is None or not runs_in_place(inline_bodies, g, inner):
            return False
    return True
