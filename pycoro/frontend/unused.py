"""Warnings for what a program makes and never uses: a lazy coroutine made
by a statement and dropped unrun (`count(3);`, as rustc warns of a future
never awaited), and the `unused variable` warning (rustc's
`unused_variables` lint): a `let` or `var`, a loop's or a `with`'s
variable, or a parameter that nothing in the body reads.

    fn area(w: i64, h: i64) -> i64 { let unit = 1; return w * w; }
                    ^ unused      ^ unused

Only what is certainly so is reported: a variable that is assigned but
never read counts as used (rustc says "assigned to, but never used"; not
yet), and so does one read only in a `defer` or code that never runs.
A name starting with `_` says the variable is meant to go unused, as in
Rust and Python (`for _ in 0..n`, `fn handler(_event: i64)`); `self` is
never reported. The standard library's code is not looked at, and a
generic function is reported once, whatever its instances (what a body
reads does not depend on the types it is checked with)."""
from __future__ import annotations

from ..common.diagnostics import Diagnostic
from ..common.paths import in_stdlib
from . import ast
from .program import CheckedProgram, DirectCall, LocalVar


def warnings(program: CheckedProgram) -> list[Diagnostic]:
    found: list[Diagnostic] = _variables(program) + _coroutines(program)
    return sorted(found, key=lambda d: (d.span.file, d.span.line, d.span.col))


def _coroutines(program: CheckedProgram) -> list[Diagnostic]:
    """A lazy coroutine made by a call whose value nothing takes (`count(3);`):
    it is destroyed at the end of the statement, its body never run, as
    rustc warns of a future that is never awaited."""
    found: list[Diagnostic] = []
    seen: set[int] = set()
    for inst in program.functions:
        if inst.decl.body is None or in_stdlib(inst.decl.span.file):
            continue
        for statement in ast.nodes_of(inst.decl.body, ast.ExprStmt):
            call = statement.expr
            target = inst.calls.get(call) if isinstance(call, ast.Call) else None
            if id(call) in seen or not isinstance(target, DirectCall) or target.fn.coro is None \
                    or not target.fn.coro.initial_suspend:
                continue
            seen.add(id(call))
            found.append(Diagnostic(f"unused coroutine: `{target.fn.decl.name}(…)` is made and destroyed "
                                    "without running", call.span, severity="warning",
                                    hint="its body runs only when it is resumed: iterate it, await it, "
                                    "or keep it in a variable"))
    return found


def _variables(program: CheckedProgram) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    seen: set[int] = set()   # declarations reported (of any instance)
    for inst in program.functions:
        if inst.decl.body is None or in_stdlib(inst.decl.span.file):
            continue
        read = {id(target) for target in inst.refs.values() if isinstance(target, LocalVar)}
        for node, var in inst.locals.items():
            if id(var) in read or var.name.startswith("_") or id(node) in seen:
                continue
            if isinstance(node, ast.Param) and node.is_self:
                continue
            seen.add(id(node))
            found.append(_warning(node, var.name))
    return found


def _warning(node: ast.Node, name: str) -> Diagnostic:
    return Diagnostic(f"unused variable: `{name}`", ast.declared_at(node, name), severity="warning",
                      hint=f"if this is intentional, prefix it with an underscore: `_{name}`")

