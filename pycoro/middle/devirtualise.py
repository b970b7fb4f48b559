"""A stream's step as a direct call (issue 23: a `for` over a Stream as cheap
as over a Generator).

A returned-continuation coroutine's step calls the continuation its last
step returned. LLVM never devirtualises that loop-carried value (its
`coro-retcon-value.ll` test says as much): the returned pointer comes from
an indirect call, and IPSCCP does not follow the return values of functions
whose address is taken. So the step is never inlined, and the consumer's
state goes through the frame in memory at every value.

pycoro compiles whole programs, so the set is closed: a step (the handle
operations in coro/retcon.py mark theirs `!pc.stream.step`) can only call a
function of its signature whose address the code takes (a continuation
CoroSplit made). Where there is exactly one such function, the step
calls it directly, and the pipeline runs again to inline it: the continuation
the loop carries is then that constant or null, and the loop folds as a
Generator's does. (The first continuation of each stream is called directly
by its ramp already, and is not a candidate.)
"""
from __future__ import annotations

import re

import llvmlite.binding as llvm

STEP = "pc.stream.step"   # the metadata kind coro/retcon.py puts on a step's call

# A function of a step's signature, `{ ptr, T } (ptr, i1)`, defined or declared
# (whatever its name: CoroSplit names continuations `pc.f.resume.N`, and
# LLVM may clone or rename one)
_CANDIDATE = re.compile(
    r'^(?P<kind>define|declare) [^@\n]*?(?P<cc>\b\w+cc\b )?(?P<ret>\{ ptr, [^}]*\}) @(?P<name>"[^"]+"|[-\w.$]+)'
    r'\(ptr [^,]*, i1 [^,)]*\)', re.M)
# an indirect step: `%r = [tail ]call { ptr, T } %cont(…), … !pc.stream.step !N`
_STEP = re.compile(r'^(?P<head>\s*%\S+ = (?:tail |musttail |notail )?call )(?P<ret>\{ ptr, [^}]*\}) (?P<callee>%[-\w.$"]+)'
                   r'(?P<rest>\(.*!' + re.escape(STEP) + r' !\d+.*)$', re.M)


def devirtualise_steps(module: llvm.ModuleRef, rerun) -> llvm.ModuleRef:
    """`module` with each stream step that can call only one function calling it
    directly, and `rerun(module)` (the pipeline) run again where one was
    changed; the same module where none was."""
    text = str(module)
    if f"!{STEP} " not in text:
        return module
    # the step's return type → (name, calling convention) of each function
    # of its signature whose address is taken: it appears other than as a
    # call's callee (a name it is the start of counts too, which only adds
    # candidates). A declared one (not ours to know) is None: no candidate then.
    candidates: dict[str, list[tuple[str, str] | None]] = {}
    for found in _CANDIDATE.finditer(text):
        name = found.group("name")
        if re.search(rf"@{re.escape(name)}(?!\()", text):
            known = (name, (found.group("cc") or "").strip()) if found.group("kind") == "define" else None
            candidates.setdefault(found.group("ret"), []).append(known)

    def direct(step: re.Match) -> str:
        known = candidates.get(step.group("ret"), [])
        if len(known) != 1 or known[0] is None:
            return step.group(0)
        name, cc = known[0]
        return f"{step.group('head')}{cc + ' ' if cc else ''}{step.group('ret')} @{name}{step.group('rest')}"

    changed = _STEP.sub(direct, text)
    if changed == text:
        return module
    result = llvm.parse_assembly(changed)
    result.verify()
    rerun(result)
    return result
