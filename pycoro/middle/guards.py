"""Base cases of recursive generators, taken before the generator is made.

A recursive generator almost always starts with its base cases:

    fn walk(values: ptr<i64>, n: i64, i: i64) -> Generator<i64> {
        if i >= n { co_return; }
        …
        yield from walk(values, n, 2 * i + 1);

    fn permutations(k: i64) -> Generator<i64> {
        if k == 1 { yield a[0] * 16 + a[size - 1]; co_return; }
        …
        yield from permutations(k - 1);

Each `yield from walk(…)` that hits the base case would create a frame, start
it, see it end at once (or yield one value and end), hand control back and
destroy it: for a tree, half of all the generators made; for permutations,
every leaf. The statement `yield from g(args);` is therefore compiled as

    if COND1(args) { yield E11(args); … }        // g's leading base cases, in order
    else if COND2(args) { … }
    else { yield from g(args); }

where each `CONDi`/`Eij` is g's expression with the parameters bound to the
arguments (a function of its own, `g.guard`, `g.guard.1`, `g.base.0.0`, always
inlined). This is exact because nothing happens between making g and its
first step (the prelude's `yield_from` hook has no effects and starts g at
once), and each later `yield` of the base case evaluates its value when the
delegating generator resumes, as g would have:

- g's leading statements are `if COND { yield E; …; co_return; }` (any
  number of `yield E;`, then `co_return;` with no value), with no `else`;
  COND and each E only read g's parameters, globals and literals, through
  operators, casts, indexing and fields (no calls, no assignments): they
  read the same values, and panic the same way (a division by zero, an
  index out of bounds), at the call site as in the child;
- g is a generator of the prelude's `Generator<T>` (its hooks have no
  effects), and so is the generator that delegates (its `yield_from` hook
  has none either); where a base case yields, the delegating generator is a
  `Generator<T>` of the same T and T is a scalar or a pointer: its own
  `yield` writes where g's would have (the tree's `current`);
- the `yield from` is a statement of its own: its value (the child's
  `co_return` value) is not used;
- g's parameters are scalars and pointers: nothing passed to it owns a
  coroutine that g would have had to destroy.

What differs is only what no program can read: no frame is made (the
live-frame count, `pycoro explain`), and a panic's backtrace shows the
delegating generator where g's frame would have been.

When g is the delegating generator itself and the rest of its body is
simple enough (a tree walk's `yield from walk(left); yield values[i]; yield
from walk(right);`, Heap's algorithm's `for` loop of swaps and `yield
from`s), the statement goes one step further: where no base case holds, it
runs those statements itself, for g's arguments, instead of making g and
delegating to it (one level: within them, `yield from` makes its generator,
after its own base cases). Simple enough: `yield E;`, `yield from h(…);`,
`let`/`var` of scalars and pointers, assignments, `if`, `while`, a `for`
over a range, `break` and `continue`, at most 12 statements of which at
most two `yield from`s (each `yield from` of g gets a copy), whose
expressions read locals, parameters, globals and literals (no calls, which
could make something to destroy; no `co_return` or `return`, which would
leave g, not the delegating generator; no `defer`). g's locals get slots of
their own in the delegating generator's frame. Each statement runs when g's
would have, in the same order, so this is exact by the same reasoning; the
recursion then makes a frame for every other level (tree_walk 14.6 -> 9.3
ns/node, permutations 13.0 -> 10.3 ns).

Every other level leaves the recursion's cost to the parity of its depth:
where the frames fall on the level just above the base cases (Heap's
algorithm of 10 elements: k = 2, a frame for every two permutations; a tree
of 2^21 nodes: a frame for every leaf), most of the work is making them. So
in g's body run in place, a `yield from g(args)` whose instance would only
delegate to base cases runs that instance's body in place as well: the
recursion's last level (`_last_level`). That is known before the instance
runs where every `yield from` in g's body is of g itself, with arguments,
and every base case with a condition, that compute from g's parameters
alone (which nothing assigns) through operators that cannot panic: the
statement tests the base cases on the arguments each of those `yield from`s
would pass, and, where they all hold, runs g's body with each of its
`yield from`s taking a base case (the last untested: one must hold).
Computing those values early can change nothing a program sees. Heap's
algorithm of 10 elements: 10.4 -> 5.1 ns/perm; of 9 or 11 (frames already
two levels above the base cases): unchanged; a tree of 2^21 nodes: 12.6 ->
7.4 ns/node. The cost is the code: each `yield from` of a body run in place
gets a third copy of it (the lowering of tree_walk 13 -> 17 ms).

At -O0 (a debug build) only the base cases that end at once are taken:
every generator that yields keeps its frame, which `pycoro chain` in gdb
shows.

LLVM's PartialInliner does the same for ordinary functions with an early
return; a coroutine's frame allocation keeps LLVM from doing it here.
"""
from __future__ import annotations

from ..common.record import record
from ..frontend import ast
from ..frontend.program import DirectCall, FnInstance, GlobalVar, LocalVar
from ..frontend.types import VOID, PtrT, Type, is_prelude_promise, is_scalar


@record(frozen=True)
class BaseCase:
    cond: ast.Expr                  # g's COND
    yields: tuple[ast.Yield, ...]   # the `yield E;`s before its `co_return;`


def is_prelude_generator(t: Type) -> bool:
    return is_prelude_promise(t, "Generator")


def base_cases(g: FnInstance) -> tuple[BaseCase, ...]:
    """The leading base cases of g (a generator `generator_call` accepts) that
    can be taken at a `yield from g(…);` (none: none can)."""
    cases = []
    for stmt in g.decl.body.stmts:
        case = _base_case(stmt, g)
        if case is None:
            break
        cases.append(case)
    return tuple(cases)


def _base_case(stmt: ast.Stmt, f: FnInstance) -> BaseCase | None:
    if not isinstance(stmt, ast.If) or stmt.else_ is not None or not _pure(stmt.cond, f):
        return None
    *yields, last = stmt.then.stmts or [None]
    if not isinstance(last, ast.CoReturn) or last.value is not None:
        return None
    values = []
    for s in yields:
        if not (isinstance(s, ast.ExprStmt) and isinstance(s.expr, ast.Yield) and _yieldable(s.expr, f, _pure)):
            return None
        values.append(s.expr)
    return BaseCase(stmt.cond, tuple(values))


def _yieldable(y: ast.Yield, f: FnInstance, readable) -> bool:
    """A `yield E;` whose hook returns nothing, of a scalar or pointer E that
    `readable` (`_pure`, `_plain`) accepts."""
    hook = f.hooks.get(y)
    t = f.types.get(y.value)
    return (hook is not None and hook.ret == VOID and t is not None and (is_scalar(t) or isinstance(t, PtrT))
            and readable(y.value, f))


def _pure(e: ast.Expr, f: FnInstance) -> bool:
    """Whether `e` only reads parameters, globals and literals (so it may be
    evaluated where g is delegated to, for g's arguments)."""
    return _reads_only(e, f, lambda ref: (isinstance(ref, LocalVar) and ref.is_param) or isinstance(ref, GlobalVar))


def _plain(e: ast.Expr, f: FnInstance) -> bool:
    """Whether `e` only reads f's variables, globals and literals: in g's body
    run in place, it is evaluated where g would have evaluated it."""
    return _reads_only(e, f, lambda ref: isinstance(ref, (LocalVar, GlobalVar)))


def _reads_only(e: ast.Expr, f: FnInstance, readable) -> bool:
    """Whether `e` is literals and the names `readable` accepts (by what they
    refer to), through operators, casts, indexing and fields: no calls, no
    suspension, no effects but a panic."""
    match e:
        case ast.IntLit() | ast.BoolLit() | ast.FloatLit() | ast.NullLit():
            return True
        case ast.Name():
            return readable(f.refs.get(e))
        case ast.Unary(operand=operand):   # - ! ~: no effects
            return _reads_only(operand, f, readable)
        case ast.Binary(left=left, right=right):
            return _reads_only(left, f, readable) and _reads_only(right, f, readable)
        case ast.Cast(expr=inner):
            return _reads_only(inner, f, readable)
        case ast.Index(base=base, index=index):
            return _reads_only(base, f, readable) and _reads_only(index, f, readable)
        case ast.Field(base=base):
            return _reads_only(base, f, readable)
    return False


@record(frozen=True)
class Delegation:
    """What a `yield from g(…);` statement may do instead of making g."""
    callee: FnInstance
    cases: tuple[BaseCase, ...]        # g's base cases, taken first
    body: tuple[ast.Stmt, ...] | None  # the rest of g's body, emitted in place of making g
    # the calls of the body's `yield from g(…)`s, where whether each takes a
    # base case is a function of g's parameters alone (`_last_level`)
    leaves: tuple[ast.Call, ...] | None = None


# At most this many statements of g's body are emitted at each `yield from g(…);`,
# with at most this many `yield from`s among them: each of g's `yield from g(…)`s
# gets a copy of the body and its delegations, so the delegations in g's resume
# function grow as their square (a 4-ary tree walk's build: 112 ms with none
# run in place, 180 with 4 × 4).
_INLINED_STATEMENTS = 12
_INLINED_DELEGATIONS = 2


def delegation(caller: FnInstance, stmt: ast.Stmt, optimising: bool) -> Delegation | None:
    """What `stmt`, a `yield from g(…);`, may do instead of making g (None: make
    it). Not `optimising` (-O0, a debug build), only the base cases that end at
    once: every generator that yields has its frame, as the debugger shows it."""
    if not (isinstance(stmt, ast.ExprStmt) and isinstance(stmt.expr, ast.YieldFrom)):
        return None
    if caller.coro is None or not is_prelude_generator(caller.ret):
        return None
    target = generator_call(stmt.expr.value, caller)
    if target is None:
        return None
    cases = base_cases(target)
    # g's body is run in place where g is the delegating generator itself: a
    # recursion then makes a frame for every other level; a chain of other
    # generators keeps its frames (what a debugger's chain shows, -O2 too)
    body = _inlinable_body(target, cases) if optimising and target is caller else None
    if not optimising or target.ret != caller.ret:
        yielding = next((i for i, case in enumerate(cases) if case.yields), len(cases))
        cases = cases[:yielding]   # in order: those before the first that yields
    if not cases and body is None:
        return None
    return Delegation(target, cases, body, _last_level(target, cases, body))


def generator_call(call: ast.Expr, f: FnInstance) -> FnInstance | None:
    """The prelude generator g that `call` (of `yield from g(…)`, `for v in
    g(…)`) calls directly, with arguments that own nothing."""
    target = f.calls.get(call) if isinstance(call, ast.Call) else None
    if not isinstance(target, DirectCall) or target.receiver is not None:
        return None
    g = target.fn
    if g.coro is None or not is_prelude_generator(g.ret) or g.decl.body is None:
        return None
    if not all(is_scalar(t) or isinstance(t, PtrT) for _, t in g.params):
        return None   # an argument that owns a coroutine would be left undestroyed
    return g


def _inlinable_body(g: FnInstance, cases: tuple[BaseCase, ...]) -> tuple[ast.Stmt, ...] | None:
    """g's statements after its base cases, where they hold nothing that owns
    a coroutine and nothing that leaves g early: `yield E;`, `yield from
    h(…);`, scalar and pointer `let`/`var`s, assignments, `if`, `while`, a
    `for` over a range, `break` and `continue`, of expressions without calls.
    Emitted in the delegating generator for g's arguments, they do at each
    step what g would have (one level: within them, a `yield from` makes its
    generator)."""
    rest = g.decl.body.stmts[len(cases):]
    if _statements(rest) > _INLINED_STATEMENTS or _delegations(rest) > _INLINED_DELEGATIONS \
            or not all(simple_statement(s, g, pushed=False) for s in rest):
        return None
    return tuple(rest)


def _last_level(g: FnInstance, cases: tuple[BaseCase, ...],
                body: tuple[ast.Stmt, ...] | None) -> tuple[ast.Call, ...] | None:
    """The calls of the `yield from g(…)`s in g's body run in place, where an
    instance of g whose delegations all take a base case can be told from its
    arguments: every delegation is to g itself, with arguments, and every base
    case with a condition, that compute from g's parameters alone and cannot
    panic (`_fixed`). Such an instance (Heap's algorithm at k = 2, a tree's
    leaf) is run in place too, where a body run in place delegates to it, so
    that the recursion's last frames are not made one or two values each."""
    if body is None or not cases or not all(_fixed(case.cond, g) for case in cases):
        return None
    delegations = list(ast.nodes_of(body, ast.YieldFrom))   # each a statement (`simple_statement`)
    if not delegations or not all(generator_call(y.value, g) is g and all(_fixed(a, g) for a in y.value.args)
                                  for y in delegations):
        return None
    return tuple(y.value for y in delegations)


def _fixed(e: ast.Expr, f: FnInstance) -> bool:
    """Whether `e` computes from f's parameters and literals alone, through
    operators that cannot panic (not `/` or `%`; integers wrap, shift amounts
    are taken modulo the width): its value is the same wherever in f it is
    computed, and computing it early changes nothing a program can see.
    That rests on nothing changing a parameter: the checker refuses an
    assignment to one (LANGUAGE.md), and a body run in place takes no
    address (`_reads_only` refuses `&`), which a write could go through."""
    match e:
        case ast.IntLit() | ast.BoolLit() | ast.FloatLit() | ast.NullLit():
            return True
        case ast.Name():
            ref = f.refs.get(e)
            return isinstance(ref, LocalVar) and ref.is_param
        case ast.Unary(operand=operand):
            return _fixed(operand, f)
        case ast.Binary(op=op, left=left, right=right):
            return op not in ("/", "%") and _fixed(left, f) and _fixed(right, f)
    return False


def _statements(stmts) -> int:
    """How many statements `stmts` hold, nested ones included."""
    return sum(1 + _statements(_nested(s)) for s in stmts)


def _delegations(stmts) -> int:
    """How many `yield from` statements `stmts` hold, nested ones included."""
    return sum(1 for _ in ast.nodes_of(stmts, ast.YieldFrom))


def _nested(s: ast.Stmt) -> tuple[ast.Stmt, ...]:
    """The statements directly inside `s` (an `else if` as one statement)."""
    match s:
        case ast.If(then=then, else_=None):
            return then.stmts
        case ast.If(then=then, else_=ast.Block() as else_):
            return then.stmts + else_.stmts
        case ast.If(then=then, else_=else_):
            return then.stmts + (else_,)
        case ast.While(body=body) | ast.For(body=body):
            return body.stmts
    return ()


def simple_statement(s: ast.Stmt, g: FnInstance, pushed: bool) -> bool:
    """Whether g's statement `s` can be emitted outside g's own coroutine: in
    a body run in place (`_inlinable_body`), or (`pushed`) in a function that
    runs a loop's body at each `yield` (middle/internal_iteration.py), where
    a `co_return;` returns and every `yield from` must be of g itself."""
    match s:
        case ast.ExprStmt(expr=ast.Yield() as y):
            return _yieldable(y, g, _plain)
        case ast.ExprStmt(expr=ast.YieldFrom() as y):
            target = generator_call(y.value, g)
            return target is not None and (target is g or not pushed) and all(_plain(a, g) for a in y.value.args)
        case ast.CoReturn(value=None) if pushed:
            return True
        case ast.Let(init=init):
            t = g.locals[s].type
            return (is_scalar(t) or isinstance(t, PtrT)) and (init is None or _plain(init, g))
        case ast.Assign(target=target, value=value):
            return _plain(target, g) and _plain(value, g)
        case ast.If(cond=cond) | ast.While(cond=cond):
            return _plain(cond, g) and all(simple_statement(n, g, pushed) for n in _nested(s))
        case ast.For(iter=start, end=end) if end is not None:
            return _plain(start, g) and _plain(end, g) and all(simple_statement(n, g, pushed) for n in _nested(s))
        case ast.Break() | ast.Continue():
            return True
    return False
