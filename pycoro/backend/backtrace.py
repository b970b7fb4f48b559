"""The table a panic's backtrace is read from (`PYCORO_BACKTRACE`, docs/debugging.md).

A program's panic walks the native stack (glibc's `backtrace`) and names
each return address from this table: the functions, the functions inlined
into them, and the source position of each, as addr2line would from the
DWARF. The runtime cannot parse DWARF itself, so the compiler does it here,
once, from the object code it has just emitted with `-g` (or with
`PYCORO_BACKTRACE` set while compiling), and puts what it found into that
object as plain data: it is emitted a second time with the table linked in.
The code that reads the table (stdlib/rt_backtrace.pc) is linked into
programs with debug information only, and left out of LLVM's pipeline: every
other program's runtime is what it was (optimising it in every build
doubled the time of compiling a small program).
The table is data only, and the code refers to it through a hidden symbol
in both emissions (and it is a variable: no load from it folds once it is
defined), so the code, and with it every address the table names, is the
same both times (checked: where it is not, the table is left empty).

Without debug information the table is empty; a panic's backtrace then
says how to get one. Nothing of this runs unless a program panics.

Addresses are offsets in the object's one section of code (`.text`;
targets.py keeps the cold functions out of `.text.unlikely.`): the runtime
finds where it lies from the address of one of its own functions, `ANCHOR`.
The table's first fields name rt_backtrace.pc's entry points, which
stdlib/rt.pc calls when they are there.
"""
from __future__ import annotations

import io
import os
import re

import llvmlite.binding as llvm

from ..common.record import record

TABLE = "__pc_backtrace_table"   # stdlib/rt.pc's `__backtrace_table()`
# stdlib/rt_backtrace.pc's, which the table names for rt.pc to call
REPORT, NAME_FAULT = "pc.__pc_backtrace_report", "pc.__pc_backtrace_name_fault"
ENTRY_POINTS = (REPORT, NAME_FAULT)
ANCHOR = NAME_FAULT              # rt_backtrace.pc's `code_address()` takes its address

# stdlib/rt_backtrace.pc's BacktraceTable (its start: rt.pc's), BacktraceRange and BacktraceRow
_HEADER = "{ ptr, ptr, i64, ptr, i64, i64, ptr, ptr, ptr }"
_ARTIFICIAL = 1   # a range's flag: code the compiler wrote (C's `main`), not shown


@record(frozen=True)
class Range:
    """A function's code, or code inlined into it, and where it was called from."""
    low: int
    high: int
    name: str
    depth: int            # 0: a function; n: inlined n calls deep
    call: tuple[str, int, int] | None   # an inlined call's file, line, column
    artificial: bool = False
    coroutine: str | None = None   # a switched-resume coroutine's (its resume, destroy or cleanup function's)


@record(frozen=True)
class Suspensions:
    """What a backtrace reads in a suspended coroutine's frame: where the
    coroutine that continues when it ends is (-1: not known), where LLVM keeps
    the number of the suspend point it is at (-1: not known) and in how many
    bits, and the position of each suspend point (CoroSplit's
    `__coro_resume_K` labels in the DWARF)."""
    link: int = -1
    index_at: int = -1
    index_bits: int = 0
    sites: tuple[str, ...] = ()


@record(frozen=True)
class Row:
    """The line table: from `address` on, code is at this position (None: no code)."""
    address: int
    position: tuple[str, int, int] | None


def emit_object(module: llvm.ModuleRef, machine: llvm.TargetMachine, debug: bool,
                files: dict[str, str] | None = None, links: dict[str, int] | None = None) -> bytes:
    """`module`'s object code, with the backtrace table built from its DWARF
    where it has some (`debug`: then the driver linked stdlib/rt_backtrace.pc,
    the code that reads the table, into it), else with an empty one. `files`
    maps the absolute paths in the DWARF to the names diagnostics use for
    them; `links`, a coroutine (by its function's name) to where its frame
    holds the coroutine that continues when it ends."""
    if not debug:
        link_empty(module, machine)
        return machine.emit_object(module)
    # code generation changes the module it is given (CodeGenPrepare runs on
    # it): each emission starts from a copy of the pipeline's output
    pristine = module.clone()
    links, indexes = links or {}, suspend_indexes(module, machine.target_data)
    first = machine.emit_object(module.clone())
    found = read_table(first, files or {}, {name: (links.get(name, -1), *indexes.get(name, (-1, 0)))
                                            for name in links.keys() | indexes.keys()})
    pristine.link_in(_table_module(machine, found))
    code = machine.emit_object(pristine)
    if found is not None and _text(code) != _text(first):   # not seen: the table would name the wrong code
        link_empty(module, machine)
        return machine.emit_object(module)
    return code


def link_empty(module: llvm.ModuleRef, machine: llvm.TargetMachine) -> None:
    """Give `module` an empty table: for artefacts that are not object code
    (assembly, IR after the pipeline) and for MCJIT."""
    module.link_in(_table_module(machine, None))


def _elf(code: bytes):
    from elftools.elf.elffile import ELFFile   # only for builds with debug information

    class WithoutCallFrames(ELFFile):
        """pyelftools relocates `.eh_frame` along with the DWARF, and knows
        none of its relocations in MCJIT's large code model (R_X86_64_PC64);
        the table needs none of it."""
        def get_section_by_name(self, name):
            return None if name == ".eh_frame" else super().get_section_by_name(name)

    return WithoutCallFrames(io.BytesIO(code))


def _text(code: bytes) -> bytes:
    elf = _elf(code)
    functions = _functions(elf)
    return b"" if not functions else elf.get_section(functions[0]["st_shndx"]).data()


def _functions(elf) -> list:
    """The object's functions (their symbols)."""
    symbols = elf.get_section_by_name(".symtab")
    return [] if symbols is None else [
        s for s in symbols.iter_symbols() if s["st_info"]["type"] == "STT_FUNC" and s["st_shndx"] != "SHN_UNDEF"]


def suspend_indexes(module: llvm.ModuleRef, data: llvm.TargetData) -> dict[str, tuple[int, int]]:
    """Where each switched-resume coroutine's frame keeps the number of its
    suspend point, and in how many bits: its resume function loads it first,
    from `%index.addr` (CoroSplit's name), an offset at -O2 or a field of the
    frame's type at -O0."""
    found = {}
    for function in module.functions:
        if function.is_declaration or not function.name.endswith(".resume"):
            continue
        text = str(function)
        load = _INDEX_LOAD.search(text)
        gep = _INDEX_OFFSET.search(text) or _INDEX_FIELD.search(text)
        if load is None or gep is None:
            continue
        if gep.re is _INDEX_OFFSET:
            offset = int(gep.group(1))
        else:
            offset = data.get_element_offset(module.get_struct_type(gep.group(1).strip('"')), int(gep.group(2)))
        found[function.name[:-len(".resume")]] = offset, int(load.group(1))
    return found


_INDEX_LOAD = re.compile(r"%index = load i(\d+), ptr %index\.addr")
_INDEX_OFFSET = re.compile(r"%index\.addr = getelementptr inbounds (?:nuw )?i8, ptr %\S+, i64 (\d+)")
_INDEX_FIELD = re.compile(r"%index\.addr = getelementptr inbounds (?:nuw )?%(\"[^\"]+\"|\S+), ptr %\S+, i32 0, i32 (\d+)")


Table = tuple[int, list[Range], list[Row], dict[str, Suspensions]]


def read_table(code: bytes, files: dict[str, str], coroutines: dict[str, tuple[int, int, int]]) -> Table | None:
    """The anchor's offset, the ranges and the line table of an ELF object's
    DWARF; None where it has none, or where the functions are not all in
    one section (`.text`; `.ltext` for MCJIT's code model)."""
    if not code.startswith(b"\x7fELF"):   # (Mach-O: no table; a panic says it has none)
        return None
    elf = _elf(code)
    functions = _functions(elf)
    anchor = [s for s in functions if s.name == ANCHOR]
    if not anchor or not elf.has_dwarf_info() or any(s["st_shndx"] != anchor[0]["st_shndx"] for s in functions):
        return None
    dwarf = elf.get_dwarf_info()
    ranges: list[Range] = []
    rows: list[Row] = []
    sites: dict[str, dict[int, str]] = {name: {} for name in coroutines}
    for unit in dwarf.iter_CUs():
        names = _file_names(dwarf, unit, files)
        rows += _rows(dwarf, unit, names)
        _collect_ranges(dwarf, unit, unit.get_top_DIE(), -1, names, coroutines, ranges, sites)
    rows.sort(key=lambda r: r.address)
    # CoroSplit puts a suspend point's label in whichever of the resume,
    # destroy and cleanup functions kept its code: one coroutine's, together
    suspensions = {name: Suspensions(*known, tuple(sites[name].get(k, "") for k in range(
                       max(sites[name], default=-1) + 1))) for name, known in coroutines.items()}
    return anchor[0]["st_value"], ranges, rows, suspensions


def _file_names(dwarf, unit, files: dict[str, str]) -> list[str]:
    """The line program's files, by index, as diagnostics name them."""
    program = dwarf.line_program_for_CU(unit)
    directories = [_text_of(d) for d in program["include_directory"]]
    names = []
    for entry in program["file_entry"]:
        name = _text_of(entry.name)
        if not os.path.isabs(name) and entry.dir_index < len(directories):
            name = os.path.join(directories[entry.dir_index], name)
        names.append(files.get(name, name))
    return names


def _text_of(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _rows(dwarf, unit, names: list[str]) -> list[Row]:
    rows = []
    for entry in dwarf.line_program_for_CU(unit).get_entries():
        state = entry.state
        if state is None:
            continue
        if state.end_sequence or state.line == 0 or state.file >= len(names):
            rows.append(Row(state.address, None))
        else:
            rows.append(Row(state.address, (names[state.file], state.line, state.column)))
    return rows


def _collect_ranges(dwarf, unit, die, depth: int, names: list[str], coroutines: dict[str, tuple[int, int, int]],
                    out: list[Range], sites: dict[str, dict[int, str]]) -> None:
    """The functions and inlined calls of `die` and below into `out` (with the
    coroutine a function is a part of), and the positions of each
    coroutine's suspend points into `sites`."""
    inlined = die.tag == "DW_TAG_inlined_subroutine"
    if die.tag == "DW_TAG_subprogram" or inlined:
        depth += 1
        origin = die
        while "DW_AT_abstract_origin" in origin.attributes or "DW_AT_specification" in origin.attributes:
            key = "DW_AT_abstract_origin" if "DW_AT_abstract_origin" in origin.attributes else "DW_AT_specification"
            origin = origin.get_DIE_from_attribute(key)
        name = origin.attributes.get("DW_AT_name")
        call = None
        if inlined and "DW_AT_call_line" in die.attributes:
            file = die.attributes["DW_AT_call_file"].value
            call = (names[file] if file < len(names) else "?", die.attributes["DW_AT_call_line"].value,
                    die.attributes.get("DW_AT_call_column").value if "DW_AT_call_column" in die.attributes else 0)
        artificial = "DW_AT_artificial" in origin.attributes or _is_noop(origin)
        coroutine = _coroutine_of(die) if not inlined else None
        if coroutine not in coroutines:
            coroutine = None
        else:
            sites[coroutine].update(_suspend_sites(die, names))
        for low, high in _pc_ranges(dwarf, unit, die):
            out.append(Range(low, high, _text_of(name.value) if name else "?", depth, call, artificial, coroutine))
    for child in die.iter_children():
        _collect_ranges(dwarf, unit, child, depth, names, coroutines, out, sites)


def _labels(die):
    """The labels of a function's own code (in its lexical blocks too, not in
    the functions inlined into it)."""
    for child in die.iter_children():
        if child.tag == "DW_TAG_label":
            yield child
        elif child.tag == "DW_TAG_lexical_block":
            yield from _labels(child)


# LLVM's attribute of a `__coro_resume_K` label: the suspend point's number
# (K in the name counts resume points, not always in that order)
_DW_AT_LLVM_CORO_SUSPEND_IDX = 0x3E0D


def _suspend_sites(die, names: list[str]) -> dict[int, str]:
    """"file:line:col" of suspend points of the coroutine `die` is a part of,
    by number, from the labels CoroSplit puts at the start of the code after
    each (`__coro_resume_K`)."""
    sites: dict[int, str] = {}
    for child in _labels(die):
        label = child.get_DIE_from_attribute("DW_AT_abstract_origin") \
            if "DW_AT_abstract_origin" in child.attributes else child
        number = label.attributes.get(_DW_AT_LLVM_CORO_SUSPEND_IDX)
        name = label.attributes.get("DW_AT_name")
        if number is None or name is None or not _text_of(name.value).startswith("__coro_resume_") \
                or "DW_AT_decl_line" not in label.attributes:
            continue
        file = label.attributes["DW_AT_decl_file"].value if "DW_AT_decl_file" in label.attributes else -1
        column = label.attributes.get("DW_AT_decl_column")
        where = f"{names[file] if 0 <= file < len(names) else '?'}:{label.attributes['DW_AT_decl_line'].value}"
        sites[int(number.value)] = where + (f":{column.value}" if column is not None and column.value else "")
    return sites


def _coroutine_of(die) -> str | None:
    """The function a resume, destroy or cleanup function was split from
    (`pc.squares.resume` → `pc.squares`)."""
    linkage = die.attributes.get("DW_AT_linkage_name")
    return None if linkage is None else re.sub(r"\.(resume|destroy|cleanup)$", "", _text_of(linkage.value))


def _is_noop(die) -> bool:
    """LLVM's no-op coroutine (`noop_handle()`), which nothing is suspended in."""
    name = die.attributes.get("DW_AT_name")
    return name is not None and _text_of(name.value).startswith("__NoopCoro")


def _pc_ranges(dwarf, unit, die) -> list[tuple[int, int]]:
    attributes = die.attributes
    if "DW_AT_low_pc" in attributes and "DW_AT_high_pc" in attributes:
        low, high = attributes["DW_AT_low_pc"].value, attributes["DW_AT_high_pc"]
        return [(low, high.value if high.form == "DW_FORM_addr" else low + high.value)]
    if "DW_AT_ranges" in attributes:
        base = unit.get_top_DIE().attributes.get("DW_AT_low_pc")
        base = base.value if base is not None else 0
        found = []
        for entry in dwarf.range_lists().get_range_list_at_offset(attributes["DW_AT_ranges"].value, cu=unit):
            if hasattr(entry, "begin_offset"):
                is_absolute = getattr(entry, "is_absolute", False)
                offset = 0 if is_absolute else base
                found.append((entry.begin_offset + offset, entry.end_offset + offset))
            else:   # a base address entry
                base = entry.base_address
        return found
    return []


# ---- the table as LLVM data

def _table_module(machine: llvm.TargetMachine, table: Table | None) -> llvm.ModuleRef:
    """A module that defines the table (empty for None)."""
    lines = [f'target triple = "{machine.triple}"', f'target datalayout = "{machine.target_data}"']
    if table is None:
        lines.append(f"@{TABLE} = hidden global {_HEADER} zeroinitializer")
        return llvm.parse_assembly("\n".join(lines))
    anchor, ranges, rows, coroutines = table
    strings = _Strings()
    sites: list[int] = []   # each coroutine's suspend points' positions, in a run of its own

    def suspensions(coroutine: str | None) -> tuple[int, ...]:
        if coroutine is None:
            return -1, -1, 0, 0, 0
        c = coroutines[coroutine]
        sites.extend(strings.offset(site) for site in c.sites)
        return c.link, c.index_at, c.index_bits, len(sites) - len(c.sites), len(c.sites)

    range_type, row_type = "{ " + ", ".join(["i32"] * 13) + " }", "{ i32, i32, i32, i32 }"
    range_items = [
        range_type + " { " + ", ".join(f"i32 {v}" for v in (
            r.low, r.high, strings.offset(r.name),
            strings.offset(r.call[0]) if r.call else 0, r.call[1] if r.call else 0, r.call[2] if r.call else 0,
            r.depth, _ARTIFICIAL if r.artificial else 0, *suspensions(r.coroutine))) + " }" for r in ranges]
    row_items = [
        row_type + " { " + ", ".join(f"i32 {v}" for v in (
            r.address, strings.offset(r.position[0]) if r.position else -1,
            r.position[1] if r.position else 0, r.position[2] if r.position else 0)) + " }" for r in rows]
    blob = strings.blob()
    lines += [
        f"@pc.backtrace.ranges = private constant [{len(range_items)} x {range_type}] [{', '.join(range_items)}]",
        f"@pc.backtrace.rows = private constant [{len(row_items)} x {row_type}] [{', '.join(row_items)}]",
        f"@pc.backtrace.sites = private constant [{len(sites)} x i32] [{', '.join(f'i32 {s}' for s in sites)}]",
        f"@pc.backtrace.strings = private constant [{len(blob)} x i8] c\"{_escape(blob)}\"",
        f'declare hidden void @"{REPORT}"()',
        f'declare hidden void @"{NAME_FAULT}"()',
        f'@{TABLE} = hidden global {_HEADER} {{ ptr @"{REPORT}", ptr @"{NAME_FAULT}", '
        f"i64 {len(rows)}, ptr @pc.backtrace.rows, i64 {anchor}, i64 {len(ranges)}, ptr @pc.backtrace.ranges, "
        f"ptr @pc.backtrace.strings, ptr @pc.backtrace.sites }}",
    ]
    return llvm.parse_assembly("\n".join(lines))


class _Strings:
    """Names and file names, each once, NUL-terminated, by offset."""

    def __init__(self):
        self.offsets: dict[str, int] = {}
        self.parts: list[bytes] = [b"\0"]   # offset 0: the empty string
        self.size = 1

    def offset(self, text: str) -> int:
        if text not in self.offsets:
            encoded = text.encode("utf-8", "replace").replace(b"\0", b"?") + b"\0"
            self.offsets[text] = self.size
            self.parts.append(encoded)
            self.size += len(encoded)
        return self.offsets[text]

    def blob(self) -> bytes:
        return b"".join(self.parts)


def _escape(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)
