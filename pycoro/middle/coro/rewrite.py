"""Edits of a lowered module's text, after the pipeline.

What LLVM's coroutine passes leave must sometimes change in ways llvmlite
has no call for (setting a calling convention, copying a function), so the
module is printed, edited as text and parsed again, once for all the edits
(the round trip is 2–5 ms of a build). Each edit takes the text and returns
it changed, or as it was where what it finds is not what it expects; LLVM
parses and verifies the result. If it refuses the edits together, each is
tried alone and those it accepts are kept: an edit can only ever leave the
module as the pipeline made it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.binding as llvm

Edit = Callable[[str], str]

# a local value's name in LLVM's text (`%hdl`, `%.7.i`, `%index.addr19.i`)
VALUE = r'%[-\w$.]+'


def rewrite(module: llvm.ModuleRef, edits: Sequence[Edit]) -> llvm.ModuleRef:
    """`module` with `edits` applied (the same module where none changes it)."""
    text = str(module)
    changed = text
    for edit in edits:
        changed = edit(changed)
    if changed == text:
        return module
    result = _parsed(changed)
    if result is not None or len(edits) == 1:
        return result or module
    for edit in edits:   # refused together: keep each edit LLVM accepts alone
        candidate = edit(text)
        if candidate != text and _parsed(candidate) is not None:
            text = candidate
    return _parsed(text) or module


def function_spans(text: str):
    """(start, end) of each function definition in a module's text, from its
    `define` to the end of its closing brace's line. (Cut by `str.find`: a
    lazy regex over the module, `^define …{ .*? ^}`, took 2.5 ms of every build.)"""
    at = 0
    while (start := text.find("\ndefine ", at)) >= 0:
        end = text.find("\n}\n", start) + 3
        if end < 3:
            return
        yield start + 1, end
        at = end


def _parsed(text: str) -> llvm.ModuleRef | None:
    try:
        module = llvm.parse_assembly(text)
        module.verify()
    except RuntimeError:
        return None
    return module
