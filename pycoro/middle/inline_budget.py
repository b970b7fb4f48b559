"""How much of a callee's body is emitted in place of an `await` of it: an
async fn's (coro/async_.py) or a task's that never suspends
(awaited_in_place.py)."""
from __future__ import annotations

from ..common.memo import while_alive
from ..frontend import ast

# An awaited body of at most this many syntax nodes is emitted in place of
# the call (like Swift's SIL inliner, which LLVM cannot do for async
# functions: a call is a suspension). `Channel.send`/`recv` and `yield_now`
# are within it, so a channel operation that need not wait costs no context,
# no tail call and no indirect jump.
INLINE_BUDGET = 160
INLINE_DEPTH = 3   # callees inlined into inlined callees, at most


@while_alive
def syntax_size(body: ast.Block) -> int:
    def size(node) -> int:
        if isinstance(node, tuple):
            return sum(map(size, node))
        if isinstance(node, ast.Node):
            return 1 + sum(size(getattr(node, f)) for f in ast.fields(node) if f != "span")
        return 0
    return size(body)
