"""Checked program → LLVM IR (llvmlite.ir).

Every local lives in an entry-block alloca (mem2reg cleans up at -O1 and
up). Values of struct and array type live in memory, as clang keeps them:
such an expression evaluates to a pointer to a fresh copy, stores are
`memcpy`, arguments pass a pointer to the caller's copy, and results come
back through a hidden first (`sret`) parameter. (First-class aggregate
loads and stores of large arrays abort LLVM's instruction selector.) Runtime checks
(bounds, division by zero) branch to a cold block that calls the runtime's
panic with the source position. `defer` is emitted on every exit of its
scope (normal end, break, continue, return), innermost first, as Zig does.

module.py emits the module (ModuleGen); function.py one function's body
(FnGen), made of statements.py, expressions.py and calls.py. What depends on
a function's coroutine ABI is asked of its ABI (coro/abis.py), never
branched on here.
"""
from .function import FnGen
from .module import ModuleGen

__all__ = ["FnGen", "ModuleGen"]
