"""The warning for a string literal with a `\\0` inside: a `str` is a C
string (its bytes and a NUL after them, given to C as they are), so what
follows the `\\0` is never printed nor seen by C, as in C. The standard
library's code is not looked at."""
from __future__ import annotations

from ..common.diagnostics import Diagnostic
from ..common.paths import in_stdlib
from . import ast
from .program import CheckedProgram


def warnings(program: CheckedProgram) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    seen: set[int] = set()
    for inst in program.functions:
        body = inst.decl.body
        if body is None or in_stdlib(inst.decl.span.file) or id(body) in seen:
            continue
        seen.add(id(body))
        found += [Diagnostic("this string ends at its `\\0`: a `str` is a C string", lit.span, severity="warning",
                             hint="what follows `\\0` is never printed, nor seen by C")
                  for lit in ast.nodes_of(body, ast.StrLit) if b"\0" in lit.value]
    return found
