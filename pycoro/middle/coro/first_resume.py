"""A two-state switched-resume coroutine's first resumption through a function
of its own, so that every later one runs without the suspend point's number.

A lazy coroutine with one `yield` (or one `await`) has two suspend points:
the initial one and that one. CoroSplit gives it one resume function that
loads the number of the point it is suspended at and branches on it at
every resumption (`cmpb $0, 80(%r12)` in gen_noinline's step), though the
initial point is left once, in the first resumption. C prototypes of
gen_noinline under clang-19 (bench/README.md), medians over eight
placements of the code: the protocol as CoroSplit leaves it 1.70–1.75
ns/step, the same with the first resumption in a function of its own that
stores the address of the one for all later resumptions, once, 1.41–1.42:
the C state machine's 1.38. (Storing that address again at every suspend
instead, 1.66, gains nothing: the call's target then comes through a store
and a load in every step.)

After the pipeline, for each resume function `R` of that shape (its number
loaded once and compared with 0 once, one branch on that, no debug
information) of a coroutine that begins with an initial suspend (the
lowering says which: an `initial run` coroutine's point 0 is a `yield` it
may come back to), `R.steady` is a copy of it whose branch is constant
(the number is not 0; code generation drops the other way), and `R` itself
stores `@R.steady` as the frame's resume function on entry. `R` stays right
for any state (the store is idempotent, and a final suspend still clears
the slot after it), so every call and store of `@R` that LLVM left stays
as it is; `R.steady` is reached only through the frame after `R` has run,
when the coroutine has left its initial point. That point must be number
0 and `R` must never suspend there: `R` stores no 0 as its number, and
every function that stores `@R` into a frame (the ramp, inlined or not)
stores 0 as that frame's number; any other use of `@R` leaves the
coroutine as it was.
"""
from __future__ import annotations

import re
from collections.abc import Collection

from .rewrite import VALUE, function_spans

_DEFINE = re.compile(r'^define [^@\n]*@(?P<name>"[^"\n]*\.resume"|[-\w$.]+\.resume)\(.*\{$', re.M)
_INDEX_ADDR = re.compile(r'^  %index\.addr = getelementptr inbounds (?:nuw )?i8, ptr (?P<frame>' + VALUE + r'), '
                         r'i64 (?P<offset>\d+)$', re.M)
_INDEX_LOAD = re.compile(r'^  %index = load (?P<type>i\d+), ptr %index\.addr, align \d+$', re.M)
_REFERENCE = re.compile(r'@("[^"\n]*"|[-\w$.]+)')
_LABEL = re.compile(r'^(?:"[^"\n]*"|[-\w$.]+):')
_STEADY = ".steady"


def split_first_resumes(text: str, candidates: Collection[str]) -> str:
    """`text` (a lowered module) with the later resumptions of each two-state
    coroutine of `candidates` in a copy of its own. Those are the names of
    the functions of coroutines that begin with an initial suspend, which
    this relies on, and may suspend inside a loop, where the copy pays:
    ModuleGen.resumed_in_loops. (A task with one `await` outside a loop is
    resumed once after its start; a copy of its body there made task_chain
    slower: 60.7 against 54.6 ns/task, medians of 15 interleaved rounds.)"""
    resume_functions = {f"{name}.resume" for name in candidates}
    matches = [match for match in _DEFINE.finditer(text) if match["name"].strip('"') in resume_functions]
    if not matches:
        return text
    uses = _uses(text)
    copies: list[str] = []
    out, at = [], 0
    for match in matches:
        start = match.start()
        end = text.find("\n}\n", start) + 3
        if end < 3:
            break
        function = text[start:end]
        steady = _steady_copy(uses.get(match["name"], []), function, match["name"], match[0])
        if steady is not None:
            out += [text[at:start], _store_steady_on_entry(function, match["name"], steady[1])]
            copies.append(steady[0])
            at = end
    if not copies:
        return text
    return "".join(out) + text[at:] + "\n" + "\n".join(copies)


def _steady_copy(uses: list[tuple[str, str]], function: str, name: str, header: str) -> tuple[str, str] | None:
    """(the copy's text, the frame parameter) of resume function `name`
    (`header`: its `define` line; `uses`: _uses' of it), or None where it is
    not of the shape this handles."""
    if "!dbg" in function:
        return None   # a copy would share the function's debug information, which LLVM refuses
    address, load = _INDEX_ADDR.search(function), _INDEX_LOAD.search(function)
    if address is None or load is None or f" {address['frame']})" not in header:
        return None   # the number is not read from the frame the function is given
    frame = address["frame"]
    if not _one_start(uses, name, address["offset"]):
        return None
    if len(re.findall(r"%index\b(?!\.)", function)) != 2:   # its load and one comparison
        return None
    if re.search(r"^  store i\d+ 0, ptr %index\.addr\b", function, re.M):
        return None   # it can suspend at point 0 itself: point 0 is not only the initial one
    compare = re.search(rf'^  ({VALUE}) = icmp (eq|ne) {load["type"]} %index, 0$', function, re.M)
    if compare is None or len(re.findall(re.escape(compare[1]) + r"\b(?![.\w])", function)) != 2:
        return None
    branch = re.search(rf'^  br i1 {re.escape(compare[1])}, label ({VALUE}|%"[^"]+"), label ({VALUE}|%"[^"]+")$',
                       function, re.M)
    if branch is None:
        return None
    # the number is never 0 there: the branch is constant (both edges stay,
    # so the phis of both targets stay as they are; code generation drops the dead one)
    never_zero = "false" if compare[2] == "eq" else "true"
    steady_name = _suffixed(name, _STEADY)
    copy = function.replace(compare[0] + "\n", "", 1).replace(
        branch[0], branch[0].replace(f"br i1 {compare[1]},", f"br i1 {never_zero},", 1), 1)
    copy = copy.replace(f"@{name}(", f"@{steady_name}(", 1)
    return copy, frame


def _one_start(uses: list[tuple[str, str]], name: str, offset: str) -> bool:
    """Whether every use of `@name` (its own body's included, where a
    recursive coroutine makes a child) is a direct call, or a store into a
    frame whose number the same function sets to 0 (at the index's
    `offset`), and there is at least one such store; none is a global's."""
    stores = 0
    for function, line in uses:
        store = re.fullmatch(rf"  store ptr @{re.escape(name)}, ptr ({VALUE})(?:, align \d+)?", line)
        if store is not None and function:
            if not _stores_number_zero(function, store[1], offset):
                return False
            stores += 1
        elif not function or not re.search(rf"\bcall [^@\n]*@{re.escape(name)}\(", line):
            return False   # a global's initialiser, an alias, a comparison, a value passed on
    return stores > 0


def _uses(module: str) -> dict[str, list[tuple[str, str]]]:
    """Each global name → (the text of the function, '' for a global's own
    line, and the line) of every line that refers to it but defines no function."""
    uses: dict[str, list[tuple[str, str]]] = {}
    for line in module.splitlines():
        if line.startswith("@"):
            for reference in _REFERENCE.finditer(line):
                uses.setdefault(reference[1], []).append(("", line))
    for start, end in function_spans(module):
        function = module[start:end]
        for line in function.splitlines()[1:]:
            if "@" in line:
                for reference in _REFERENCE.finditer(line):
                    uses.setdefault(reference[1], []).append((function, line))
    return uses


def _stores_number_zero(function: str, frame: str, offset: str) -> bool:
    """Whether `function` stores 0 at `offset` in `frame` (a ramp's number of its initial point)."""
    for address in re.finditer(rf"^  ({VALUE}) = getelementptr inbounds (?:nuw )?i8, ptr {re.escape(frame)}, "
                               rf"i64 {offset}$", function, re.M):
        if re.search(rf"^  store i\d+ 0, ptr {re.escape(address[1])}(?:, align \d+)?$", function, re.M):
            return True
    return False


def _store_steady_on_entry(function: str, name: str, frame: str) -> str:
    """`function` with a store of its steady copy's address into its frame's
    resume slot before anything else it does."""
    at = function.index("{\n") + 2
    first_line = function[at:function.index("\n", at) + 1]
    if _LABEL.match(first_line):
        at += len(first_line)   # the entry block's label
    store = f"  store ptr @{_suffixed(name, _STEADY)}, ptr {frame}, align 8\n"
    return function[:at] + store + function[at:]


def _suffixed(name: str, suffix: str) -> str:
    return f'"{name[1:-1]}{suffix}"' if name.startswith('"') else f'"{name}{suffix}"'
