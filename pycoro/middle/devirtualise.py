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
CoroSplit made). Where there is exactly one such function, the step calls it
directly; where there are a few (a stream with several `yield`s), the step
tests the continuation against each and calls it directly, the last one
untested (no other function can be it: a fallback indirect call would keep
the loop generic). Only among one coroutine's continuations: those whose
constants reach the step through phis, selects and earlier steps'
results (`_origins`), or, where that is not known, the only coroutine of
the signature; a step that could be of several coroutines stays indirect
(`_of_one_coroutine` says why). The pipeline then runs
again and inlines them: the continuation the loop carries is a constant or
null on every path, and the loop folds as a Generator's does. (The first
continuation of each stream is called directly by its ramp already, and is
not a candidate.)
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
    # call's callee. The whole name only: a function that is only called is
    # no candidate even where its name starts another's (a ramp `@pc.f`,
    # `{ ptr, T } (ptr, i1)` where f takes one bool, and its continuation
    # `@pc.f.resume.0`). A spurious candidate is not harmless: the pipeline
    # optimises the call to it that the dispatch adds, and LICM's promotion
    # may speculate that call's stores into the step's buffer on every path
    # (an `i1` written back over the frame pointer's low byte:
    # tests/programs/stream_step_ramp_not_a_candidate.pc).
    # A declared one (not ours to know) is None: no candidate then.
    candidates: dict[str, list[tuple[str, str] | None]] = {}
    for found in _CANDIDATE.finditer(text):
        name = found.group("name")
        if re.search(rf"@{re.escape(name)}(?![-\w.$(])", text):
            known = (name, (found.group("cc") or "").strip()) if found.group("kind") == "define" else None
            candidates.setdefault(found.group("ret"), []).append(known)

    def direct(step: re.Match) -> str:
        known = candidates.get(step.group("ret"), [])
        if len(known) != 1 or known[0] is None:
            return step.group(0)
        return _direct_call(step, *known[0])

    changed = _dispatch_steps(_STEP.sub(direct, text), candidates)
    if changed == text:
        return module
    result = llvm.parse_assembly(changed)
    result.verify()
    rerun(result)
    return result


_MOST_CANDIDATES = 8   # a longer chain of tests would cost more than the indirect call
_LABEL = re.compile(r'^("[^"]+"|[-\w.$]+):')
_TERMINATOR = re.compile(r"^\s+(br|switch|ret|unreachable|indirectbr|invoke|callbr|resume)\b")


def _dispatch_steps(text: str, candidates: dict[str, list[tuple[str, str] | None]]) -> str:
    """Each step with several candidates (a stream with several `yield`s:
    one coroutine's, _of_one_coroutine) tests its continuation against each
    and calls it directly; the last needs no test, as no other function can
    be it. The step's block is split there: the block that ends in the
    step's old terminator is the `join` block now, which its successors'
    phis must name."""
    lines = text.split("\n")
    number, i = 0, 0
    definitions: dict[int, dict[str, str]] = {}   # per function (its `define` line): value → definition
    while i < len(lines):
        step = _STEP.match(lines[i])
        known = candidates.get(step.group("ret"), []) if step else []
        if len(known) >= 2 and None not in known:
            start = _function_start(lines, i)
            if start not in definitions:
                definitions[start] = _definitions(lines, start)
            known = _of_one_coroutine(known, _origins(definitions[start], step.group("callee"), set()))
            if len(known) == 1:   # the only continuation that can come here
                lines[i] = _direct_call(step, *known[0])
        block = _block_of(lines, i) if 2 <= len(known) <= _MOST_CANDIDATES and None not in known else None
        successors = _successors(lines, i) if block is not None else None
        if successors is None:
            i += 1
            continue
        _rename_predecessor(lines, i, successors, block, f"%pc.dv{number}.join")
        chain = _chain(step, known, f"pc.dv{number}")
        lines[i:i + 1] = chain   # its own lines: a later step of this block is in the join block now
        i += len(chain)
        number += 1
    return "\n".join(lines)


def _direct_call(step: re.Match, name: str, cc: str) -> str:
    """The step's line calling `name` (under convention `cc`) directly."""
    return f"{step.group('head')}{cc + ' ' if cc else ''}{step.group('ret')} @{name}{step.group('rest')}"


def _function_start(lines: list[str], at: int) -> int:
    """The `define` line of the function line `at` is in."""
    return max(j for j in range(at + 1) if lines[j].startswith("define "))


def _coroutine_of(continuation: str) -> str:
    """The coroutine a continuation CoroSplit made belongs to (`pc.f.resume.2`,
    `"pc.g<i64>.resume.0"`: `pc.f`, `pc.g<i64>`); another name is its own."""
    name = continuation.strip('"')
    return name.rsplit(".resume.", 1)[0] if ".resume." in name else name


def _of_one_coroutine(known: list[tuple[str, str]], origins: set[str] | None) -> list[tuple[str, str]]:
    """The candidates a step may dispatch among: the continuations of one
    coroutine, never of several. Each coroutine lays out its frame in the
    step's buffer its own way; with another coroutine's continuation inlined
    in a branch the loop never takes, LICM promoted that coroutine's fields
    (an `i1` at offset 1) across the loop and wrote them back at its exits,
    over the live frame's bytes (a stream's `i64` parameter, read by its
    `defer`: tests/programs/stream_dispatch_one_coroutine.pc). `origins`:
    the coroutines whose continuations can reach the step (None: not known
    here); the step of one of them dispatches among its continuations only."""
    if origins is not None and len(origins) == 1:
        return [k for k in known if _coroutine_of(k[0]) in origins]
    return known if len({_coroutine_of(name) for name, _ in known}) == 1 else []


# `%v = definition` in a function's text
_DEFINITION = re.compile(r'^\s*(%[-\w.$]+|%"[^"]+") = (.*)$')
# one `[ value, %label ]` of a phi's incoming list, and the comma after it;
# a quoted name may hold commas (`@"pc.g<i64,bool>.resume.0"`)
_INCOMING = re.compile(r'\s*\[\s*([@%]"[^"]*"|[^\s,\[\]"]+)\s*,\s*%(?:"[^"]*"|[-\w.$]+)\s*\]\s*(?:,|$)')
_FIRST_OF = re.compile(r'^extractvalue \{[^}]*\} (\S+), 0$')
_CALLEE = re.compile(r'^(?:tail |musttail |notail )?call (?:\w+ )*\{ ptr, [^}]*\} (@"[^"]+"|@[-\w.$]+|%[-\w.$]+|%"[^"]+")\(')
_SELECT = re.compile(r'^select i1 [^,]+, ptr ([^,]+), ptr (\S+)$')


def _definitions(lines: list[str], start: int) -> dict[str, str]:
    found = {}
    for line in lines[start + 1:]:
        if line == "}":
            break
        definition = _DEFINITION.match(line)
        if definition:
            found[definition.group(1)] = definition.group(2).split(", !")[0].strip()
    return found


def _phi_values(incoming: str) -> list[str] | None:
    """The values of `[ v, %label ], [ …, … ]`; None where the text has
    another shape (a constant expression): every value must be seen, or a
    coroutine left out would be left out of the dispatch."""
    values, at = [], 0
    while at < len(incoming):
        entry = _INCOMING.match(incoming, at)
        if entry is None:
            return None
        values.append(entry.group(1))
        at = entry.end()
    return values


def _origins(definitions: dict[str, str], value: str, seen: set[str]) -> set[str] | None:
    """The coroutines whose continuations `value` can be: it is one (a
    constant), the first field of a step's or a continuation's result (the
    continuation that goes on: the same coroutine's), or a phi or select of
    such; None where it comes from anything else (a load, an argument)."""
    if value == "null" or value in seen:
        return set()
    if value.startswith("@"):
        name = value[1:]
        return {_coroutine_of(name)} if ".resume." in name else None
    seen.add(value)
    definition = definitions.get(value)
    if definition is None:
        return None
    if definition.startswith("phi ptr "):
        values = _phi_values(definition[len("phi ptr "):])
        if values is None:
            return None
        parts = [_origins(definitions, v, seen) for v in values]
    elif (select := _SELECT.match(definition)):
        parts = [_origins(definitions, v, seen) for v in select.groups()]
    elif (first := _FIRST_OF.match(definition)) and (call := _CALLEE.match(definitions.get(first.group(1), ""))):
        parts = [_origins(definitions, call.group(1), seen)]
    else:
        return None
    if any(part is None for part in parts):
        return None
    return set().union(*parts)


def _chain(step: re.Match, known: list[tuple[str, str]], prefix: str) -> list[str]:
    result = step.group("head").split("=")[0].strip()
    ret, callee, rest = step.group("ret"), step.group("callee"), step.group("rest")
    out, incoming = [], []
    for k, (name, cc) in enumerate(known):
        last = k == len(known) - 1
        here = f"{prefix}.n{k - 1}" if last else f"{prefix}.c{k}"
        if not last:
            out += [f"  %{prefix}.t{k} = icmp eq ptr {callee}, @{name}",
                    f"  br i1 %{prefix}.t{k}, label %{prefix}.c{k}, label %{prefix}.n{k}",
                    f"{prefix}.c{k}:"]
        out += [f"  %{prefix}.r{k} = call {cc + ' ' if cc else ''}{ret} @{name}{rest}",
                f"  br label %{prefix}.join"]
        if not last:
            out.append(f"{prefix}.n{k}:")
        incoming.append(f"[ %{prefix}.r{k}, %{here} ]")
    out += [f"{prefix}.join:", f"  {result} = phi {ret} {', '.join(incoming)}"]
    return out


def _block_of(lines: list[str], i: int) -> str | None:
    """The label of the block line `i` is in (None: an unnamed entry block)."""
    for j in range(i - 1, -1, -1):
        if lines[j].startswith("define "):
            return None
        label = _LABEL.match(lines[j])
        if label:
            return "%" + label.group(1)
    return None


def _successors(lines: list[str], i: int) -> list[str] | None:
    """The labels the terminator of line `i`'s block branches to."""
    for j in range(i + 1, len(lines)):
        found = _TERMINATOR.match(lines[j])
        if found:
            text = lines[j]
            k = j
            while found.group(1) == "switch" and "]" not in lines[k]:
                k += 1
                text += lines[k]
            return re.findall(r'label (%"[^"]+"|%[-\w.$]+)', text)
        if _LABEL.match(lines[j]) or lines[j].startswith("}"):
            return None
    return None


def _rename_predecessor(lines: list[str], at: int, successors: list[str], old: str, new: str) -> None:
    """In the phis of each successor block (in the function of line `at`:
    other functions have blocks of the same names), `old` as a predecessor
    becomes `new`."""
    start = _function_start(lines, at)
    end = next(j for j in range(at, len(lines)) if lines[j] == "}")
    for label in set(successors):
        name = label[1:]
        for j in range(start, end):
            line = lines[j]
            if line.startswith(f"{name}:"):
                k = j + 1
                while k < len(lines) and " = phi " in lines[k]:
                    lines[k] = re.sub(rf", {re.escape(old)} \]", f", {new} ]", lines[k])
                    k += 1
                break
