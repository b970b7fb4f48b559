"""Ownership (LANGUAGE.md §5.2), a pass of its own over one checked function
instance: moves and partial moves of owning coroutine handles, loop and
branch merging of what was moved, `defer` uses, coroutines that borrow a
`mut self` place, and the facts the code generator reads (`consumed`,
`moved_params`, `elide_safe`).

It runs after the body's type check (body.py) and reads only what that
wrote into the FnInstance: the types, what each name refers to, what each
call calls, the variables each declaration made, the hooks. An expression
the type check never reached (after a mistake) has no type: it is skipped.
Like rustc's borrow checker, it walks in evaluation order and keeps the set
of places moved out of on some path to the current point.
"""
from __future__ import annotations

from ...common.diagnostics import Reporter, Span
from .. import ast
from .. import messages as M
from ..layout import StructLayouts
from ..program import BuiltinCall, DirectCall, FnInstance, HandleCall, IndirectCall, LocalVar
from ..types import ERROR, VOID, FnT, PromiseT, StructT, Type, abi_of
from .borrows import Borrow, Lent, Passed, place_root
from .flow import never_falls_through
from .suspension import is_coroutine
from .views import ViewRules


def path_text(var: LocalVar, path: tuple[str, ...]) -> str:
    return ".".join((var.name, *path))


def receiver_root(base: ast.Expr, types: dict) -> ast.Expr | None:
    """The variable or temporary whose value a `mut self` method on `base`
    changes; None when `base` is reached through a pointer."""
    root, through_pointer = place_root(base, types)
    return None if through_pointer else root


# Expressions with nothing inside to walk.
_LEAVES = (ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.NullLit, ast.GenericName)

# (id(var), the fields moved out of it; () for the whole) → (var, where)
Moves = dict[tuple[int, tuple[str, ...]], tuple[LocalVar, Span]]


class OwnershipPass(ViewRules):
    """Checks the moves (and what slices view: views.py) of one function
    instance and records what moved."""

    def __init__(self, inst: FnInstance, layouts: StructLayouts, reporter: Reporter):
        self.inst = inst
        self.types = inst.types
        self.layouts = layouts
        self.owns = layouts.owns
        self.r = reporter
        self.moved: Moves = {}   # moved out on some path to here
        # Per enclosing loop: `moved` when it was entered, and at each of its
        # `break`s (a move followed by `break` or `return` is fine, as in Rust;
        # one that reaches the next iteration is not). A `defer`'s statement
        # starts a new stack: it cannot leave the loops around it.
        self.loop_entries: list[Moves] = []
        self.loop_breaks: list[list[Moves]] = []
        self.loop_scopes: list[int] = []   # the index in `scopes` of each loop body's scope
        self.loop_nesting = 0
        self.loop_depth: dict[int, int] = {}   # id(var) → loops around its declaration
        # Each local's scope depth and declaration order: which of two dies first.
        self.declared_at: dict[int, tuple[int, int]] = {}
        self.scopes: list[object] = [object()]
        # The pending `defer`s that use owning variables: (the scope whose end
        # runs it, the ids of those variables, where it is). Moving one of
        # them before the `defer` runs is an error.
        self.defer_uses: list[tuple[object, set[int], Span]] = []
        self.defer_collect: set[int] | None = None   # inside a `defer`: the owning variables it uses
        # The moves each pending `defer` makes when it runs (at its scope's
        # end, a `break` or `continue` out of it): (that scope, the moves).
        # Until then the variables are still there: `defer take(g); g.next();`.
        self.defer_moves: list[tuple[object, Moves]] = []
        # Calls of `mut self` coroutine methods whose coroutine refers to a place
        # that may die first, and the variables holding one: id(call or var) →
        # its Borrow. Such a coroutine is consumed where it is made (for, with,
        # await, yield from) or kept in a variable that dies before the place
        # does; never moved.
        self.borrowing: dict[int, Borrow] = {}
        self.lent: list[Lent] = []
        self.views: dict[int, frozenset] = {}   # id(var) → the Origins of the slices it holds
        self.param_holders: dict[int, int] = {}   # id(local) → the parameter whose handle it took
        self.passed: list[Passed] = []

    def run(self) -> "OwnershipPass":
        for param in self.inst.decl.params:
            self._declare_views(self._declare(param), None)
        self.block(self.inst.decl.body, new_scope=False)
        return self

    # ---- scopes and declarations
    def _declare(self, node: ast.Node) -> LocalVar | None:
        var = self.inst.locals.get(node)
        if var is not None:
            self.declared_at[id(var)] = (len(self.scopes), len(self.declared_at))
            self.loop_depth[id(var)] = self.loop_nesting
        return var

    def _local(self, e: ast.Expr) -> LocalVar | None:
        ref = self.inst.refs.get(e)
        return ref if isinstance(ref, LocalVar) else None

    def block(self, block: ast.Block, new_scope: bool = True) -> None:
        if new_scope:
            self.scopes.append(object())
        for stmt in block.stmts:
            self.stmt(stmt)
        if new_scope:
            self._pop_scope()

    def _pop_scope(self) -> None:
        """Leave the innermost scope; its `defer`s have run."""
        self.moved.update(self._deferred_from(len(self.scopes) - 1))
        scope = self.scopes.pop()
        self.defer_uses = [entry for entry in self.defer_uses if entry[0] is not scope]
        self.defer_moves = [entry for entry in self.defer_moves if entry[0] is not scope]

    def _deferred_from(self, depth: int) -> Moves:
        """The moves the pending `defer`s of the scopes from `depth` inward make
        when they run (leaving those scopes)."""
        leaving = self.scopes[depth:]
        found: Moves = {}
        for scope, moves in self.defer_moves:
            if any(scope is s for s in leaving):
                found.update(moves)
        return found

    def _moved_leaving_loop_body(self) -> Moves:
        """What is moved once a `continue`, `break` or the body's end has run
        the `defer`s of the loop's body."""
        return {**self.moved, **self._deferred_from(self.loop_scopes[-1])}

    # ---- statements
    def stmt(self, s: ast.Stmt) -> None:
        getattr(self, f"stmt_{type(s).__name__}")(s)

    def stmt_Block(self, s: ast.Block) -> None:
        self.block(s)

    def stmt_Let(self, s: ast.Let) -> None:
        if s.init is not None:
            self.value(s.init, kept=True, into=self.inst.locals.get(s))
        var = self._declare(s)
        self._declare_views(var, s.init)
        if var is not None and s.init is not None and (borrow := self._borrow_of(s.init)) is not None:
            self.borrowing[id(var)] = borrow   # it may stay there, not move on

    def stmt_Assign(self, s: ast.Assign) -> None:
        self._check_write_through(s.target)
        if s.op != "=":   # `place op= value` reads the place first (decisions.md)
            self.expr(s.target)
            self.expr(s.value)
            return
        # `place = value` evaluates the value first, then the place's indices
        # (decisions.md): `g = keep(g)` moves g, then gives it a value again;
        # `xs[g.value()] = sink(g)` uses g after it moved.
        # `g = c.ticks()`: a variable may hold a coroutine that refers to a
        # `mut self` place, as `var g = c.ticks();` does, if it dies first.
        holder = self._local(s.target) if isinstance(s.target, ast.Name) else None
        self.value(s.value, kept=holder is not None, into=holder)
        self._refill(self._local_path(s.target))   # a moved-out variable (or field) may be written
        self.expr(s.target)
        self._check_stored(s.target, s.value)
        borrow = self._borrow_of(s.value)
        if holder is not None and borrow is not None:
            if self._dies_first(holder, borrow.var):
                self.borrowing[id(holder)] = borrow
            else:
                self.r.error(M.borrowing_coroutine_outlives(borrow.via, borrow.place, holder.name),
                             s.value.span, hint=M.borrowing_coroutine_holder_hint(borrow.place))

    def stmt_ExprStmt(self, s: ast.ExprStmt) -> None:
        self.expr(s.expr)

    def stmt_If(self, s: ast.If) -> None:
        self.expr(s.cond)
        before = dict(self.moved)
        self.block(s.then)
        after_then, self.moved = self.moved, before
        if isinstance(s.else_, ast.If):
            self.stmt_If(s.else_)
        elif s.else_ is not None:
            self.block(s.else_)
        # Moved on a path that reaches the next statement: maybe moved. A branch
        # that returns, panics, breaks or continues takes its moves elsewhere.
        reaching = [moved for moved, branch in ((after_then, s.then), (self.moved, s.else_))
                    if not never_falls_through(branch)]
        self.moved = {k: v for moved in reaching or (after_then, self.moved) for k, v in moved.items()}

    def stmt_While(self, s: ast.While) -> None:
        before = dict(self.moved)
        self.expr(s.cond)
        for var, path, span in self._moves_since(before, self.moved):   # the condition runs before every iteration
            self.r.error(M.move_in_loop(path_text(var, path)), span)
        self._loop_body(s.body)

    def stmt_Loop(self, s: ast.Loop) -> None:
        self._loop_body(s.body)

    def stmt_For(self, s: ast.For) -> None:
        self.expr(s.iter)
        if s.end is not None:
            self.expr(s.end)
        elif isinstance(s.iter, ast.Call) and isinstance(self.types.get(s.iter), PromiseT):
            self.inst.elide_safe.add(id(s.iter))   # the for statement owns and destroys it
        protocol = self.inst.iters.get(s)
        if protocol is not None and isinstance(protocol.next, FnInstance) and not protocol.next.is_extern:
            # a struct's own `next` runs on the iterable as a method on its receiver
            self._pass_views(s.iter, s.iter, protocol.next, 0)
        # `for v in xs` views what xs does; `for part in halves(d[..])`, what the
        # generator's arguments do (its values may be slices of them)
        self._loop_body(s.body, s, s.iter if s.end is None else None)

    def _loop_body(self, body: ast.Block, declares: ast.Node | None = None, elements: ast.Expr | None = None) -> None:
        self.loop_nesting += 1
        self.loop_entries.append(dict(self.moved))
        self.loop_breaks.append([])
        self.loop_scopes.append(len(self.scopes))
        self.scopes.append(object())
        if declares is not None:
            self._declare_views(self._declare(declares), elements)   # `for v in xs`: v views what xs does
        self.block(body, new_scope=False)
        if not never_falls_through(body):
            self._check_next_iteration()
        self._pop_scope()
        self.loop_entries.pop()
        self.loop_scopes.pop()
        for at_break in self.loop_breaks.pop():   # after the loop: moved on any way out
            self.moved.update(at_break)
        self.loop_nesting -= 1

    def stmt_With(self, s: ast.With) -> None:
        self.expr(s.expr)
        t = self.types.get(s.expr)
        if isinstance(s.expr, ast.Call) and isinstance(t, PromiseT) and abi_of(t) == "retcon_once":
            self.inst.elide_safe.add(id(s.expr))   # run to its end by the statement
        self.scopes.append(object())
        self._declare_views(self._declare(s), s.expr)   # what it yields views what its call's arguments do
        self.block(s.body, new_scope=False)
        self._pop_scope()

    def stmt_Break(self, s: ast.Break) -> None:
        if self.loop_breaks:
            self.loop_breaks[-1].append(self._moved_leaving_loop_body())

    def stmt_Continue(self, s: ast.Continue) -> None:
        if self.loop_entries:
            self._check_next_iteration()

    def stmt_Return(self, s: ast.Return) -> None:
        if s.value is not None:
            # a coroutine's `return` and a value returned from a void function are refused
            if not is_coroutine(self.inst.decl) and self.inst.ret != VOID:
                self.value(s.value)
                self._check_escape(s.value, M.slice_returned())
            else:
                self.expr(s.value)

    def stmt_CoReturn(self, s: ast.CoReturn) -> None:
        if s.value is not None:
            self._hook_argument(s, s.value)
            self._check_escape(s.value, M.slice_returned())

    def stmt_Defer(self, s: ast.Defer) -> None:
        if isinstance(s.stmt, (ast.Let, ast.Defer)):   # refused by the type check
            return
        loops = self.loop_entries, self.loop_breaks, self.loop_scopes
        self.loop_entries, self.loop_breaks, self.loop_scopes = [], [], []
        self.defer_collect = set()
        before = dict(self.moved)
        self.stmt(s.stmt)
        made = {key: move for key, move in self.moved.items() if before.get(key) != move}
        self.moved = before   # it runs later: what it moves is moved when it does
        if made:
            self.defer_moves.append((self.scopes[-1], made))
        if self.defer_collect:
            self.defer_uses.append((self.scopes[-1], self.defer_collect, s.span))
        self.defer_collect = None
        self.loop_entries, self.loop_breaks, self.loop_scopes = loops

    # ---- loops
    def _check_next_iteration(self) -> None:
        """At the end of a loop's body or a `continue`: what was moved in this
        iteration out of a variable declared outside the loop (and not given
        a value again) would be moved again in the next; the body's `defer`s
        have run by then."""
        for var, path, span in self._moves_since(self.loop_entries[-1], self._moved_leaving_loop_body()):
            if self.loop_depth.get(id(var), 0) < self.loop_nesting:
                self.r.error(M.move_in_loop(path_text(var, path)), span)

    def _moves_since(self, before: Moves, now: Moves) -> list[tuple[LocalVar, tuple[str, ...], Span]]:
        """The moves made between `before` and `now`: (variable, fields, where)."""
        return [(var, key[1], span) for key, (var, span) in now.items() if before.get(key) != (var, span)]

    def _refill(self, place: tuple[LocalVar, tuple[str, ...]] | None) -> None:
        """Assigning to a local (or a field of one) gives it its handles again."""
        if place is not None:
            var, path = place
            self.moved = {key: m for key, m in self.moved.items()
                          if key[0] != id(var) or key[1][:len(path)] != path}

    # ---- expressions
    def value(self, e: ast.Expr, kept: bool = False, lent: bool = False, into: LocalVar | None = None) -> None:
        """`e` moves into its context (a variable, an argument, a field, a return,
        a yield). `kept`: into the variable a `let` or an assignment names
        (`into`), which may hold a borrowing coroutine; `lent`: into a parameter
        of a function with a body, checked when every body is."""
        if self.expr(e):
            self._consume(e, kept or lent, into)

    def expr(self, e: ast.Expr, field_base: bool = False) -> bool:
        """Walk `e` in evaluation order; False when it used a moved value."""
        if e not in self.types:   # never reached by the type check
            return False
        if isinstance(e, _LEAVES):
            return True
        return getattr(self, f"expr_{type(e).__name__}")(e, field_base)

    def expr_Name(self, e: ast.Name, field_base: bool) -> bool:
        var = self._local(e)
        if var is not None and var.owned and self.defer_collect is not None:
            self.defer_collect.add(id(var))
        # `x` of `x.a` is not used as a whole: the field access is checked
        return field_base or self._check_not_moved(e)

    def expr_Field(self, e: ast.Field, field_base: bool) -> bool:
        if not self.expr(e.base, field_base=True):
            return False
        return field_base or not self._is_field(e) or self._check_not_moved(e)

    def _is_field(self, e: ast.Field) -> bool:
        """Whether `e` names a field of a struct (else the type check refused it)."""
        base = self.types.get(e.base)
        return isinstance(base, StructT) and any(name == e.name for name, _ in self.layouts.fields(base))

    def expr_Index(self, e: ast.Index, field_base: bool) -> bool:
        ok = self.expr(e.base)
        self.expr(e.index)
        return ok

    def expr_Slice(self, e: ast.Slice, field_base: bool) -> bool:
        ok = self.expr(e.base)
        for bound in (e.lo, e.hi):
            if bound is not None:
                self.expr(bound)
        return ok

    def expr_Unary(self, e: ast.Unary, field_base: bool) -> bool:
        return self.expr(e.operand)

    def expr_AddrOf(self, e: ast.AddrOf, field_base: bool) -> bool:
        self._check_pointer_into(e.operand)
        return self.expr(e.operand)

    def expr_Cast(self, e: ast.Cast, field_base: bool) -> bool:
        return self.expr(e.expr)

    def expr_Binary(self, e: ast.Binary, field_base: bool) -> bool:
        left = self.expr(e.left)
        return self.expr(e.right) and left

    def expr_StructLit(self, e: ast.StructLit, field_base: bool) -> bool:
        for f in e.fields:
            self.value(f.value)
        return True

    def expr_ArrayLit(self, e: ast.ArrayLit, field_base: bool) -> bool:
        for x in e.elems:
            self.value(x)
        return True

    def expr_Yield(self, e: ast.Yield, field_base: bool) -> bool:
        if e.value is not None:
            self._hook_argument(e, e.value)
            self._check_escape(e.value, M.slice_yielded())
        return True

    def expr_YieldFrom(self, e: ast.YieldFrom, field_base: bool) -> bool:
        self.expr(e.value)   # linked into the generator tree by pointer, not moved
        return True

    def expr_Await(self, e: ast.Await, field_base: bool) -> bool:
        if self.inst.async_awaits.get(e) == "join":
            self.value(e.operand)   # a Join is consumed by its await
            return True
        awaits = self.inst.awaits.get(e)
        if awaits is not None and awaits.transform is not None:
            # `await_transform(mut self, x: T)` takes the operand by value: it moves
            self._argument(e.operand, awaits.transform, 1, e)
            self._pass_views(e, e.operand, awaits.transform, 1)
        else:
            self.expr(e.operand)
        if awaits is not None and isinstance(e.operand, ast.Call) \
                and isinstance(self.types.get(e.operand), PromiseT):
            self.inst.elide_safe.add(id(e.operand))   # awaited to completion, then destroyed
        return True

    def expr_Spawn(self, e: ast.Spawn, field_base: bool) -> bool:
        self.expr(e.operand)
        if isinstance(self.types[e], PromiseT) and (borrow := self._borrow_of(e.operand)) is not None:
            self.r.error(M.borrowing_task(borrow.via, borrow.place), e.operand.span,
                         hint=M.borrowing_task_hint(borrow.method))
        if isinstance(e.operand, ast.Call):   # the task outlives this call: what it is given is kept
            for arg in e.operand.args:
                if self.layouts.views(self.types.get(arg)):
                    self._escapes(arg, self.origins(arg), M.slice_spawned(), kept=True)
        return True

    def _hook_argument(self, node: ast.Node, value: ast.Expr) -> None:
        """The value of `yield` / `co_return`: moved into the promise's hook, or
        with the continuation of a returned-continuation coroutine."""
        coro, hook = self.inst.coro, self.inst.hooks.get(node)
        if self.inst.is_async:
            self.expr(value)
        elif coro is not None and coro.returns_continuations and isinstance(node, ast.Yield):
            self.value(value)   # with the continuation
        elif coro is not None and coro.returns_continuations:
            self.expr(value)    # `co_return v;` is refused there
        elif hook is not None and len(hook.params) == 2:
            self.value(value)
        else:
            self.expr(value)

    # ---- calls
    def expr_Call(self, e: ast.Call, field_base: bool) -> bool:
        target = self.inst.calls.get(e)
        callee = e.callee
        if isinstance(callee, ast.Field):   # a method's receiver, or a struct's fn field
            self.expr(callee.base)
        elif not isinstance(target, (DirectCall, BuiltinCall, HandleCall)):
            self.expr(callee)   # a function value
        params: list[Type] = []
        fn = target.fn if isinstance(target, DirectCall) else None
        receiver = target.receiver if fn is not None else None
        offset = 1 if receiver is not None else 0
        if fn is not None:
            params = [t for _, t in fn.params[offset:]]
            if receiver is not None and fn.self_mode == "ref" and fn.is_coroutine:
                self._borrowing_call(e, callee.base, callee.name)
        elif isinstance(target, IndirectCall):
            fn_type = self.types.get(callee)
            params = list(fn_type.params) if isinstance(fn_type, FnT) else []
        for i, a in enumerate(e.args):
            if i >= len(params) or params[i] is ERROR:
                self.expr(a)   # a builtin's argument or a C vararg: read, not moved
                continue
            if fn is None or fn.is_extern:
                self.value(a)
            else:
                self._argument(a, fn, i + offset, e)
            if fn is None or not fn.is_extern:
                self._pass_views(e, a, fn, i + offset)
            else:   # C gets a pointer and a length: its business, as a `ptr`'s (`&xs[i]`)
                self._pass_to_c(a)
        if receiver is not None:
            # the method reads its receiver after the arguments ran (by address, or
            # a copy taken before them): none of them may have moved part of it
            self._check_not_moved(receiver)
            if not fn.is_extern:   # a method writes through its receiver's slices as through an argument's
                self._pass_views(e, receiver, fn, 0)
        return True

    def _argument(self, a: ast.Expr, fn: FnInstance, index: int, call: ast.Expr) -> None:
        """`a` moves into parameter `index` of `fn`, which has a body: a borrowing
        coroutine may go there while `fn` does not move it on (checked when
        every body is), and the coroutine `call` makes may hold it."""
        self.value(a, lent=True)
        if (borrow := self._borrow_of(a)) is not None:
            self.lent.append(Lent(a, fn, index, borrow))
            if fn.is_coroutine:
                self.borrowing[id(call)] = borrow

    def _borrowing_call(self, call: ast.Call, base: ast.Expr, method: str) -> None:
        """A `mut self` coroutine method called on `base`: its coroutine refers to
        the place, which may die first: a local variable (or the caller's
        place, for `self`) or a temporary. Not a global, nor a place reached
        through a pointer (raw pointers are the program's own business)."""
        root = receiver_root(base, self.types)
        if root is None:
            return
        var = self._local(root) if isinstance(root, ast.Name) else None
        if not isinstance(root, ast.Name):
            self.borrowing[id(call)] = Borrow("a temporary", method=method)
        elif var is not None:
            self.borrowing[id(call)] = Borrow(M.q(root.name), var, method)

    def _borrow_of(self, e: ast.Expr) -> Borrow | None:
        """The borrow of a coroutine that refers to a `mut self` place: made by the
        call `e`, or held by the variable `e` (a cast of either is the same value)."""
        while isinstance(e, ast.Cast):
            e = e.expr
        if isinstance(e, ast.Name):
            var = self._local(e)
            return None if var is None else self.borrowing.get(id(var))
        return self.borrowing.get(id(e))

    def _dies_first(self, holder: LocalVar, place: LocalVar | None) -> bool:
        """Whether `holder` goes out of scope before `place` (what a borrowing
        coroutine or a slice refers to; None: a temporary): that place is a
        local declared earlier in the same scope, or in an enclosing one (a
        parameter, `self`)."""
        if place is None:
            return False
        (place_depth, place_order), (depth, order) = self.declared_at[id(place)], self.declared_at[id(holder)]
        return place_depth < depth or (place_depth == depth and place_order < order)

    # ---- moves
    def _consume(self, e: ast.Expr, kept: bool, into: LocalVar | None = None) -> None:
        """`e` moves into its context: an owning handle leaves the variable that held it."""
        t = self.types.get(e)
        if t is None or t is ERROR or not self.owns(t):
            return
        self.inst.consumed.add(id(e))
        borrow = self._borrow_of(e)
        if borrow is not None and not kept:
            self.r.error(M.borrowing_coroutine_moved(borrow.via, borrow.place), e.span,
                         hint=M.borrowing_coroutine_hint(borrow.method))
        if isinstance(e, ast.Cast):
            # `g as Generator<i64>` (a handle casts only to its own type) is g
            # itself: the operand moves, else two would own one frame
            self._consume(e.expr, kept, into)
        elif isinstance(e, (ast.Name, ast.Field)):
            place = self._local_path(e)
            if place is None:
                # a field through a pointer, or anything of `self` (the caller's):
                # a copy would be a second owner
                if isinstance(e, ast.Field) or self._local(e) is not None:
                    self.r.error(M.move_out_of_place(), e.span)
                return
            var, path = place
            for _, used, where in self.defer_uses:
                if id(var) in used:   # it runs when its scope ends: after this move
                    self.r.error(M.move_used_by_defer(path_text(var, path)), e.span,
                                 notes=[(M.deferred_here(), where)])
                    break
            self.moved[id(var), path] = (var, e.span)   # in a loop: see _check_next_iteration
            param = var.param_index if var.is_param else self.param_holders.get(id(var), -1)
            if param >= 0 and into is not None and not path:
                # into a local, which dies with this call as the parameter would
                # (`var task = t;` in block_on): moved on only if that local is
                self.param_holders[id(into)] = param
            elif param >= 0:
                self.inst.moved_params.add(param)
        elif isinstance(e, ast.Index):
            self.r.error(M.move_out_of_place(), e.span)

    def _local_path(self, e: ast.Expr) -> tuple[LocalVar, tuple[str, ...]] | None:
        """`x` or `x.a.b` of a local variable that owns what it holds: x, and
        the fields (`("a", "b")`). A field can be moved out of such a
        variable alone (as in Rust); nothing can be moved out through a
        pointer or an index, out of `self`, or out of a temporary."""
        path = []
        while isinstance(e, ast.Field):
            path.append(e.name)
            e = e.base
        var = self._local(e) if isinstance(e, ast.Name) else None
        if var is None or not var.owned:
            return None
        return var, tuple(reversed(path))

    def _check_not_moved(self, e: ast.Expr) -> bool:
        """A use of `x` or `x.a.b` as a whole: nothing of it may have been moved."""
        place = self._local_path(e)
        if place is None:
            return True
        var, path = place
        for (key, moved_path), (_, where) in self.moved.items():
            if key == id(var) and path[:len(moved_path)] == moved_path[:len(path)]:
                whole = len(moved_path) <= len(path)
                message = (M.use_after_move(path_text(var, path)) if whole
                           else M.use_after_partial_move(path_text(var, path), path_text(var, moved_path)))
                self.r.error(message, e.span, notes=[(M.moved_here(), where)])
                return False
        return True


def mark_elide_safe(inst: FnInstance) -> None:
    """Coroutine calls whose frame certainly dies before the caller returns, so
    LLVM may place it in the caller's frame (`coro_elide_safe`):
    - a temporary: destroyed at the end of its statement (`for v in g(…)`,
      `await f(…)`, `g(…).next()`);
    - an argument of a call that is itself safe, or of an ordinary function,
      when the callee never moves that parameter: it dies with the callee
      (`sum(take(map(range(0, n), f), k))`);
    - the initial value of a `let`/`var` that is never moved: the variable's
      scope destroys it (`let s = g(…); while s.next() { … }`)."""
    visited: set[tuple[int, bool]] = set()   # each call at most twice (not safe, safe): nested calls stay linear

    def visit(call: ast.Call, safe: bool) -> None:
        if (id(call), safe) in visited:
            return
        visited.add((id(call), safe))
        if safe and isinstance(inst.types.get(call), PromiseT):
            inst.elide_safe.add(id(call))
        target = inst.calls.get(call)
        if not isinstance(target, DirectCall) or target.fn.is_extern:
            return
        callee_safe = target.fn.coro is None or id(call) in inst.elide_safe
        offset = 1 if target.receiver is not None else 0
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Call):
                visit(arg, callee_safe and (i + offset) not in target.fn.moved_params)

    for call in inst.calls:
        if isinstance(inst.types.get(call), PromiseT) and id(call) not in inst.consumed:
            inst.elide_safe.add(id(call))
    moved = {id(ref) for name, ref in inst.refs.items() if id(name) in inst.consumed}
    for node, var in inst.locals.items():
        if isinstance(node, ast.Let) and isinstance(node.init, ast.Call) and var.owned \
                and not var.is_param and id(var) not in moved and isinstance(var.type, PromiseT):
            inst.elide_safe.add(id(node.init))
    for call in inst.calls:
        if isinstance(call, ast.Call):
            visit(call, id(call) in inst.elide_safe)
