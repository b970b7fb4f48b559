"""The calling convention of switched-resume coroutines' resume functions on
x86-64: `preserve_none` instead of the `fastcc` CoroSplit gives them.

A resume function is entered at every resumption and left at every suspend,
and coroutines pass control among themselves by tail calls (symmetric
transfer, a nested generator ending). Under `fastcc` each entry saves and
restores the callee-saved registers it uses for its caller, though the
caller is usually another coroutine's resume function, with nothing live in
them. `preserve_none` (LLVM 19+; the convention of CPython's tail-calling
interpreter) saves nothing; the few callers that have live values — a loop
consuming a generator — spill them around the call. Destroy functions keep
`fastcc`: they are called, not jumped to, by code that usually has values
live across the call (a task reading its child's result), which would then
spill them (task_chain of bench/ lost 6% that way).

Resumptions are indirect calls through a handle, and a call must use its
callee's convention, so the change is all or nothing. The functions that
change: every `F.resume` CoroSplit made, the runtime's `pc.resume.handle`,
and LLVM's no-op coroutine (whose one function, only a `ret`, also fills
the destroy slot of the no-op frame: a function that only returns behaves
the same under either convention). The calls that change: direct calls to
those, and each indirect `fastcc` call whose callee was loaded from offset 0
of the frame it is called with (CoroCleanup's lowering of `coro.resume` and
of a symmetric transfer), not from offset 8 (`coro.destroy`). llvmlite
cannot set a calling convention, so the lowered module is rewritten as text
and parsed again; an indirect `fastcc` call of any other shape, or any call
left inconsistent, leaves the module as it was.
"""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from .rewrite import VALUE as _VALUE
from .rewrite import function_spans, rewrite

# `@name` or `@"name"` (generic instances' names are quoted: `@"pc.zip<i64,i64>.resume"`)
_RESUMING = r'@(?:"[^"\n]*\.resume"|[-\w$.]+\.resume|__NoopCoro_ResumeDestroy|"?pc\.resume\.handle"?)'
_DEFINITION = re.compile(r'^(define internal )fastcc( [^@\n]*' + _RESUMING + r'\()', re.M)
_DIRECT_CALL = re.compile(r'(call )fastcc( void ' + _RESUMING + r'\()')
_INDIRECT_CALL = re.compile(r'(call )fastcc( void (' + _VALUE + r')\(ptr [^%)\n]*(' + _VALUE + r')\))')
_POINTER_LOAD = re.compile(r'load ptr, ptr (' + _VALUE + r')(?:, .*)?')
_DESTROY_SLOT = re.compile(r'getelementptr inbounds (?:nuw )?i8, ptr (' + _VALUE + r'), i64 8')


def applies(triple: str) -> bool:
    return triple.startswith("x86_64")


def preserve_none(module: llvm.ModuleRef) -> llvm.ModuleRef:
    """The module with its resume functions under `preserve_none` (or unchanged)."""
    return rewrite(module, [preserve_none_text])


def preserve_none_text(text: str) -> str:
    """A lowered module's text with its resume functions under `preserve_none`
    (or as it was: an indirect `fastcc` call of another shape, or a call left
    inconsistent)."""
    try:
        changed = _each_function(text, _resumptions)
    except _Unexpected:
        return text
    changed = _DEFINITION.sub(r"\1preserve_nonecc\2", changed)
    changed = _DIRECT_CALL.sub(r"\1preserve_nonecc\2", changed)
    return changed if _consistent(changed) else text


class _Unexpected(Exception):
    """An indirect fastcc call that is neither a resumption nor a destruction."""


def _each_function(text: str, change) -> str:
    """`text` with each function definition that makes a `fastcc` call
    replaced by `change(definition)`."""
    out, at = [], 0
    for start, end in function_spans(text):
        function = text[start:end]
        out += [text[at:start], change(function) if "call fastcc" in function else function]
        at = end
    return "".join(out) + text[at:]


def _resumptions(function: str) -> str:
    """One function's indirect resumptions under `preserve_none`."""
    def definition(name: str) -> str:
        """What follows `name = ` where the function defines it ('' if nowhere).
        (str.find, as SSA names are defined once: a regex search per call, each
        a new pattern, was 2 ms of tree_walk's build.)"""
        at = function.find(f" {name} = ")
        return "" if at < 0 else function[at + len(name) + 4:function.find("\n", at)]

    def convert(call: re.Match) -> str:
        callee, frame = call.group(3), call.group(4)
        loaded = _POINTER_LOAD.fullmatch(definition(callee))
        if loaded is None:
            raise _Unexpected(callee)
        if loaded.group(1) == frame:                     # resume: the frame's first word
            return f"{call.group(1)}preserve_nonecc{call.group(2)}"
        slot = _DESTROY_SLOT.fullmatch(definition(loaded.group(1)))
        if slot is not None and slot.group(1) == frame:
            return call.group(0)                         # destroy: stays fastcc
        raise _Unexpected(callee)
    converted = _INDIRECT_CALL.sub(convert, function)
    # every indirect fastcc call left must be a destruction this looked at
    left = re.findall(rf'call fastcc [^@\n]*?({_VALUE})\(', converted)
    destroys = [c.group(0) for c in _INDIRECT_CALL.finditer(converted)]
    if len(left) != len(destroys):
        raise _Unexpected(left)
    return converted


def _consistent(text: str) -> bool:
    """Every direct call to a converted function uses its new convention."""
    converted = set(re.findall(r'^define internal preserve_nonecc [^@\n]*(@(?:"[^"\n]*"|[-\w$.]+))\(', text, re.M))
    return all(call.group(2) not in converted or call.group(1) == "preserve_nonecc"
               for call in re.finditer(r'call (\w+) [^@\n]*(@(?:"[^"\n]*"|[-\w$.]+))\(', text))
