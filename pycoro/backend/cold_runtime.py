"""The runtime's never-optimised functions as assembly, compiled once per
target machine and carried into every program's object code.

The runtime (stdlib/rt.pc) has functions no pipeline optimises, which run at
most once in a program's life or whose time is a C library call's
(pipeline/driver.py's `_NEVER_OPTIMISED`: printing a float, the fault
handlers, a panic's report and backtrace). Compiled with every program, they
were about half of a small program's module: 3.5 of hello world's 6.6 ms of
code generation, and 8-10 ms of tree_walk's and gen_pipeline's builds, the
pipeline's verification and the `preserve_none` text round trip included
(issue 23). Their code does not depend on the program, so it is compiled
once, to assembly (kept in the on-disk cache), and each program's object
takes it as module-level assembly: the assembler reads it in a fraction of
what instruction selection and register allocation took.

- `split`: the runtime as programs link it, in which each of these functions
  is only declared (`dso_local`: called directly), and one unit of IR per
  function: that function alone (`internal`: a local symbol, so two pycoro
  objects linked together each keep their own), the rest of the runtime
  declared.
- What a unit refers to in the runtime (the panic's jmp_buf, the stack
  bounds, `__pc_panic`) is `pinned`: listed in `llvm.compiler.used`, so that LLVM
  neither removes it nor changes its calling convention, which the assembly
  was compiled against; it keeps its name (the driver renames a program's own
  definition of the same name before linking the runtime in).
- `assemble`: each unit's assembly, its labels and strings renamed apart
  (`.Lpc_cold_N_…`) so that they cannot meet the program's in one object.
- `attach`: after the pipeline, the assembly of the functions the module
  still declares (and of those they call), linked in as module asm.
"""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from ..common.record import record

_DEFINE = re.compile(r'^define (?:\w+ )?.*?@"(?P<name>[^"]+)"\(')
_GLOBAL = re.compile(r'^@"(?P<name>[^"]+)" = (?P<kind>global|private unnamed_addr constant) (?P<type>\[[^\]]*\]|\S+)')
_REFERENCE = re.compile(r'@"([^"]+)"')
_LABEL = re.compile(r'\.L(?=[\w.$])')
_DATA = ("\t.ascii", "\t.asciz", "\t.string")


@record(frozen=True)
class Split:
    program_runtime: str            # the runtime's IR as programs link it
    units: dict[str, str]           # cold function → IR of a module defining it alone
    calls: dict[str, tuple[str, ...]]   # cold function → the cold functions it refers to
    pinned: tuple[str, ...]         # the runtime's symbols the cold code refers to

    @property
    def shared(self) -> frozenset[str]:
        """The names the assembly and the program's IR share."""
        return frozenset(self.units) | frozenset(self.pinned)


@record(frozen=True)
class Assembly:
    code: dict[str, str]             # cold function → its unit's assembly
    calls: dict[str, tuple[str, ...]]


def split(runtime: str, cold: tuple[str, ...]) -> Split:
    header, functions = _functions(runtime)
    defined = set(functions) | {m["name"] for line in header if (m := _GLOBAL.match(line)) and m["kind"] == "global"}
    references = {name: set(_REFERENCE.findall("\n".join(body[1:]))) for name, body in functions.items()
                  if name in cold}
    missing = set(cold) - set(references)
    if missing:
        raise ValueError(f"the runtime defines no {sorted(missing)}")
    pinned = sorted(set().union(*references.values()) & defined - set(cold))
    program = list(header)
    for name, body in functions.items():
        program += [_declaration(body[0])] if name in cold else body
    program.append(f'@llvm.compiler.used = appending global [{len(pinned)} x ptr] '
                   f'[{", ".join(f"ptr @{_quote(p)}" for p in pinned)}], section "llvm.metadata"')
    units = {name: _unit(name, header, functions, references[name]) for name in cold}
    calls = {name: tuple(sorted(references[name] & set(cold) - {name})) for name in cold}
    return Split("\n".join(program) + "\n", units, calls, tuple(pinned))


def assemble(split: Split, machine: llvm.TargetMachine) -> Assembly:
    code = {}
    for number, (name, text) in enumerate(split.units.items()):
        module = llvm.parse_assembly(text)
        module.triple = machine.triple
        module.data_layout = str(machine.target_data)
        code[name] = _apart(machine.emit_assembly(module), number)
    return Assembly(code, split.calls)


def attach(module: llvm.ModuleRef, assembly: Assembly) -> None:
    """Link in the assembly of the cold functions `module` declares (the
    pipeline removes the declarations nothing uses) and of those they call."""
    wanted: list[str] = []
    pending = [name for name in assembly.code if _declares(module, name)]
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.append(name)
            pending += assembly.calls[name]
    if not wanted:
        return
    lines = [f'target triple = "{module.triple}"', f'target datalayout = "{module.data_layout}"']
    lines += [f'module asm "{_escape(line)}"' for name in sorted(wanted) for line in assembly.code[name].split("\n")]
    carrier = llvm.parse_assembly("\n".join(lines))
    module.link_in(carrier)


def _functions(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The lines outside function definitions, and each definition's lines."""
    header: list[str] = []
    functions: dict[str, list[str]] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        match = _DEFINE.match(line)
        if match is None:
            header.append(line)
            continue
        body = [line]
        while body[-1] != "}":
            body.append(next(lines))
        functions[match["name"]] = body
    return header, functions


def _declaration(define: str) -> str:
    """A function's `define … {` line as a direct-call declaration (no body:
    `optnone` and `noinline` apply to bodies only)."""
    head = define.rstrip().removesuffix("{").rstrip()
    head = re.sub(r"\b(optnone|noinline)\b ?", "", head).rstrip()
    return re.sub(r"^define (\w+ )?", "declare dso_local ", head)


def _unit(name: str, header: list[str], functions: dict[str, list[str]], references: set[str]) -> str:
    lines = []
    for line in header:
        match = _GLOBAL.match(line)
        if match is None and line.startswith("@") and " external " not in line:
            # a definition of a kind not split above would be copied into
            # every unit's assembly: a second copy of its data
            raise ValueError(f"the runtime defines a global cold_runtime.split does not know: {line[:80]}")
        if match is None:
            lines.append(line)
        elif match["kind"] == "global":
            lines.append(f'@{_quote(match["name"])} = external dso_local global {match["type"]}')
        elif match["name"] in references:   # a string it prints
            lines.append(line)
    for other, body in functions.items():
        if other == name:
            lines.append(re.sub(r"^define (\w+ )?", "define internal ", body[0]))
            lines += body[1:]
        else:
            lines.append(_declaration(body[0]))
    return "\n".join(lines) + "\n"


def _apart(assembly: str, number: int) -> str:
    """A unit's assembly, ready to share an object with a program's: its
    assembler-local labels renamed apart, no file name or stack note of its own."""
    kept = []
    for line in assembly.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(".file") or stripped.startswith('.section\t".note.GNU-stack"'):
            continue
        kept.append(line if line.startswith(_DATA) else _LABEL.sub(f".Lpc_cold_{number}_", line))
    return "\n".join(kept).rstrip() + "\n\t.text"


def _declares(module: llvm.ModuleRef, name: str) -> bool:
    try:
        return module.get_function(name).is_declaration
    except NameError:
        return False


def _quote(name: str) -> str:
    return f'"{name}"'


def _escape(line: str) -> str:
    return line.replace("\\", "\\5C").replace('"', "\\22")
