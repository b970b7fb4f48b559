"""GPU builtins (LANGUAGE.md §8) as the checker sees them: name → result type.

The index builtins are `u32`, as CUDA's `threadIdx.x` and friends are
unsigned; `sync_threads()` is a barrier for the threads of a block. What each
one lowers to is the middle's business (middle/gpu.py).
"""
from __future__ import annotations

from . import ast
from .program import DirectCall, FnInstance
from .types import U32, VOID, Type

INDEX_BUILTINS: dict[str, Type] = {
    f"{what}_{axis}": U32
    for what in ("thread_id", "block_id", "block_dim", "grid_dim") for axis in "xyz"}

GPU_BUILTINS: dict[str, Type] = {**INDEX_BUILTINS, "sync_threads": VOID}

# Targets whose code runs on a GPU (`pycoro build --target …`).
GPU_TARGETS = frozenset({"nvptx"})


def coroutine_recursion(instances) -> list[tuple[ast.Call, FnInstance, FnInstance]]:
    """Calls that start a coroutine recursively: (call, caller, coroutine called).

    Such a call makes a new frame each time round the cycle, so frames cannot
    be bounded (nor placed in a thread's fixed local memory) — the GPU refuses
    them. One call per cycle (strongly connected component of the call
    graph) is returned, the first in source order.
    """
    edges = {id(i): [(call, t.fn) for call, t in i.calls.items() if isinstance(t, DirectCall)]
             for i in instances}
    found = []
    for component in _strongly_connected(instances, edges):
        members = {id(i) for i in component}
        recursive = [(call, caller, callee) for caller in component for call, callee in edges[id(caller)]
                     if id(callee) in members and callee.coro is not None]
        if recursive:
            found.append(min(recursive, key=lambda r: (r[0].span.file or "", r[0].span.line, r[0].span.col)))
    return found


def _strongly_connected(instances, edges) -> list[list]:
    """Tarjan's algorithm, iterative (call graphs of generated code can be deep)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list = []
    components = []
    for root in instances:
        if id(root) in index:
            continue
        work = [(root, iter(edges.get(id(root), ())))]
        index[id(root)] = low[id(root)] = len(index)
        stack.append(root)
        on_stack.add(id(root))
        while work:
            node, successors = work[-1]
            advanced = False
            for _, succ in successors:
                if id(succ) not in index:
                    index[id(succ)] = low[id(succ)] = len(index)
                    stack.append(succ)
                    on_stack.add(id(succ))
                    work.append((succ, iter(edges.get(id(succ), ()))))
                    advanced = True
                    break
                if id(succ) in on_stack:
                    low[id(node)] = min(low[id(node)], index[id(succ)])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[id(parent)] = min(low[id(parent)], low[id(node)])
            if low[id(node)] == index[id(node)]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(id(member))
                    component.append(member)
                    if member is node:
                        break
                components.append(component)
    return components
