"""The warning for a string literal with a `\\0` inside: a `str` is a C
string (its bytes and a NUL after them, given to C as they are), so what
follows the `\\0` is never printed nor seen by C, as in C. The standard
library's code is not looked at."""
from __future__ import annotations

from ..common.diagnostics import Diagnostic
from . import ast
from .program import CheckedProgram


def warnings(program: CheckedProgram) -> list[Diagnostic]:
    return [Diagnostic("this string ends at its `\\0`: a `str` is a C string", lit.span, severity="warning",
                       hint="what follows `\\0` is never printed, nor seen by C")
            for code in program.own_code() for lit in ast.nodes_of(code, ast.StrLit) if b"\0" in lit.value]
