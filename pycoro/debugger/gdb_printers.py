"""gdb's view of PyCoro programs built with `-g` (docs/debugging.md).

Executables built with `-g` carry this file in a `.debug_gdb_scripts`
section, which gdb runs when its `auto-load safe-path` allows; `pycoro gdb
PROGRAM` loads it too (or `source` it). It runs inside gdb's own Python, so
it imports nothing of pycoro, and loading it twice replaces what it added.

A coroutine handle (`Generator<i64>`, `Task<i64>`, `Handle`: typedefs of a
pointer to the frame in the DWARF pycoro writes) prints as the coroutine it
refers to, the line it is suspended at, and its promise:

    g = Generator<i64> suspended in squares at h.pc:2 (frame 0x55555556ab10) = {current = 0, ...}
    done = Generator<i64> finished (frame 0x55555556ab80) = {current = 0, ...}

`pycoro chain EXPR` shows the coroutines that go on when the one EXPR refers
to ends: through `yield from` (the promise's `parent`), `await` of a lazy
task (`continuation`), `await` of a std/async task's Join (the task waiting
for it), innermost first.

What the frame holds follows LLVM's switched-resume ABI: the resume and
destroy functions, then the promise; LLVM sets the resume function to null
when the coroutine reaches its final suspend point. Where a coroutine is
suspended is the number LLVM stores in its frame at each suspend point: this
file reads it through the program's backtrace table, as a panic does
(backend/backtrace.py), or else finds where in the frame it is from the
resume function's code, and says nothing where that code does not have the
shape it knows (optimised code).
"""
import re
import struct

import gdb
import gdb.printing

# A handle type of the switched-resume ABI: its frame starts with the resume function.
_SWITCHED = re.compile(r"^(Generator|Task|Coro|Lazy)<|^Handle$")
_HANDLE = re.compile(r"^([A-Z]\w*<.*>|Handle)$")
_JOIN = re.compile(r"^Join<.*>$")
_NOOP = "__NoopCoro_ResumeDestroy"   # LLVM's noop coroutine (noop_handle())
_MAX_CHAIN = 10000                    # a chain longer than this is taken for a cycle


# ---- memory and symbols

def _word() -> gdb.Type:
    return gdb.lookup_type("unsigned long")


def _read_word(address: int) -> int:
    return int(gdb.Value(address).cast(_word().pointer()).dereference())


def _address(value: gdb.Value) -> int:
    return int(value.cast(_word()))


def _function_block(address: int):
    """The block of the whole function whose code is at `address`, or None."""
    try:
        block = gdb.block_for_pc(address)
    except RuntimeError:
        return None
    while block is not None and block.function is None:
        block = block.superblock
    return block


def _symbol_at(address: int) -> str | None:
    block = _function_block(address)
    if block is not None:
        return block.function.name
    found = gdb.execute(f"info symbol {address:#x}", to_string=True)   # a function without debug information
    return found.split()[0] if not found.startswith("No symbol") else None


def _source_name(symbol: str) -> str:
    """`pc.squares.resume` → `squares`: the name the program gave the coroutine."""
    return re.sub(r"\.(resume|destroy|cleanup)(\.\d+)?$", "", re.sub(r"^pc\.", "", symbol))


def _function_at(address: int) -> str:
    symbol = _symbol_at(address)
    return _source_name(symbol) if symbol is not None else f"{address:#x}"


def _ramp_of(resume: int) -> int | None:
    """The address of the function the program calls to make the coroutine
    whose resume function is at `resume` (`pc.squares` for `pc.squares.resume`)."""
    symbol = _symbol_at(resume)
    if symbol is None or not symbol.endswith(".resume"):
        return None
    found = gdb.lookup_global_symbol(symbol[: -len(".resume")])
    return int(found.value().address) if found is not None else None


# ---- what the code of a coroutine says

_SUSPENSIONS: dict[int, dict[int, str] | None] = {}
_PROMISE_TYPES: dict[int, str | None] = {}

# x86-64, as gdb prints it (AT&T): the load of the suspend index the resume
# function switches on, through its frame argument; a store of an index.
_INDEX_LOAD = re.compile(r"^mov(?:zbl|b)?\s+(0x[0-9a-f]+)\(%rdi\),%(?:al|eax|cl|ecx|dl|edx)$")
_INDEX_STORE = re.compile(r"^movb\s+\$(0x[0-9a-f]+),(0x[0-9a-f]+)\(%\w+\)$")
_CALL_TARGET = re.compile(r"<(pc\.[^>+]*(?:>[^>+]*)*)>$")
_HOOK = re.compile(r"^pc\.(\w+\.promise(?:<.*>)?)\.\w+(?:\.wrapper)?$")


def _disassemble(address: int) -> list[dict]:
    block = _function_block(address)
    if block is None:
        return []
    return gdb.selected_inferior().architecture().disassemble(block.start, block.end - 1)


def _index_offset(code: list[dict]) -> int | None:
    """Where the frame holds the suspend index: what the resume function's
    first block loads through its argument before it branches (unoptimised
    code; optimised code keeps the frame elsewhere, and gets None)."""
    for instruction in code:
        text = instruction["asm"].strip()
        if text.startswith(("j", "call", "ret")):
            return None
        load = _INDEX_LOAD.match(text)
        if load:
            return int(load.group(1), 16)
    return None


def _suspensions(resume: int) -> dict[int, str] | None:
    """For the coroutine whose resume function is at `resume`: the source
    position (`file:line`) of each suspend point, by index, from the line of
    the store of that index (in its resume function, and in its ramp for the
    points before its first suspension); None where the code does not say."""
    if resume not in _SUSPENSIONS:
        _SUSPENSIONS[resume] = _find_suspensions(resume)
    return _SUSPENSIONS[resume]


def _find_suspensions(resume: int) -> dict[int, str] | None:
    code = _disassemble(resume)
    offset = _index_offset(code)
    if offset is None:
        return None
    ramp = _ramp_of(resume)
    positions: dict[int, set[str]] = {}
    for instruction in code + (_disassemble(ramp) if ramp is not None else []):
        store = _INDEX_STORE.match(instruction["asm"].strip())
        if store and int(store.group(2), 16) == offset:
            positions.setdefault(int(store.group(1), 16), set()).add(_position(instruction["addr"]))
    # An index stored at two different lines is not one suspend point's: say nothing of it.
    return {index: where.pop() for index, where in positions.items() if len(where) == 1 and None not in where}


def _position(pc: int) -> str | None:
    line = gdb.find_pc_line(pc)
    if line.symtab is None or line.line == 0:
        return None
    return f"{line.symtab.filename}:{line.line}"


# ---- the program's backtrace table (backend/backtrace.py; every -g build has
# one): for each coroutine where its frame keeps the number of its suspend
# point, and the position of each, as the compiler read them at any -O level.
# The layouts are stdlib/rt_backtrace.pc's BacktraceTable and BacktraceRange.

_TABLE = struct.Struct("<QQqQqqQQQ")   # report, name_fault, rows, row_count, anchor, …
_RANGE = struct.Struct("<13i")
_TABLES: dict[int, tuple] = {}


def _symbol_address(name: str) -> int | None:
    try:
        return int(gdb.parse_and_eval(f"(unsigned long)&'{name}'"))
    except gdb.error:
        return None


def _table() -> tuple | None:
    """(where the code the table describes begins, its ranges, its strings'
    and sites' addresses), or None where the program has no table."""
    at = _symbol_address("__pc_backtrace_table")
    anchor_code = _symbol_address("pc.__pc_backtrace_name_fault")
    if at is None or anchor_code is None:
        return None
    if at not in _TABLES:
        memory = gdb.selected_inferior().read_memory
        _, _, row_count, _, anchor, range_count, ranges, strings, sites = _TABLE.unpack(bytes(memory(at, _TABLE.size)))
        if row_count == 0 or range_count <= 0:
            return None
        data = bytes(memory(ranges, range_count * _RANGE.size))
        _TABLES[at] = (anchor_code - anchor, [_RANGE.unpack_from(data, i * _RANGE.size) for i in range(range_count)],
                       strings, sites)
    return _TABLES[at]


def _table_suspended_at(frame: int, resume: int) -> str | None:
    """"file:line:col" of the suspend point the coroutine at `frame` waits at,
    from the table (as a panic's backtrace reads it), or None."""
    table = _table()
    if table is None:
        return None
    base, ranges, strings, sites = table
    offset = resume - base
    for low, high, *_, depth, _flags, _link, index_at, bits, first, count in ranges:
        if depth == 0 and low <= offset < high and index_at >= 0 and 0 < bits <= 8:
            number = int(gdb.Value(frame + index_at).cast(gdb.lookup_type("unsigned char").pointer()).dereference())
            number &= (1 << bits) - 1
            if number >= count:
                return None
            site = int(gdb.Value(sites + 4 * (first + number)).cast(gdb.lookup_type("int").pointer()).dereference())
            where = gdb.Value(strings + site).cast(gdb.lookup_type("char").pointer()).string()
            return where or None
    return None


def _suspended_at(frame: int, resume: int) -> str | None:
    """Where the coroutine at `frame` waits: from the program's backtrace
    table, or else (`file:line`) from the code of its resume function (-O0)."""
    found = _table_suspended_at(frame, resume)
    if found is not None:
        return found
    points = _suspensions(resume)
    offset = _index_offset(_disassemble(resume)) if points else None
    if offset is None:
        return None
    index = int(gdb.Value(frame + offset).cast(gdb.lookup_type("unsigned char").pointer()).dereference())
    return points.get(index)


def _promise_type_of(resume: int) -> gdb.Type | None:
    """The promise struct of the coroutine whose resume function is at
    `resume`, from the promise hooks its code calls (`pc.Generator.promise<i64>.yield_value`):
    what a `Handle` does not say. None where they were inlined (optimised code)."""
    if resume not in _PROMISE_TYPES:
        names = set()
        for instruction in _disassemble(resume):
            target = _CALL_TARGET.search(instruction["asm"].strip())
            hook = _HOOK.match(target.group(1)) if target and instruction["asm"].lstrip().startswith("call") else None
            if hook:
                names.add(hook.group(1))
        _PROMISE_TYPES[resume] = names.pop() if len(names) == 1 else None
    name = _PROMISE_TYPES[resume]
    return _lookup_struct(name) if name is not None else None


def _lookup_struct(name: str) -> gdb.Type | None:
    try:
        return gdb.lookup_type(f"struct {name}")
    except gdb.error:
        return None


# ---- coroutines

class Coroutine:
    """A switched-resume coroutine, by the address of its frame."""

    def __init__(self, frame: int, promise_type: gdb.Type | None = None):
        self.frame = frame
        self.resume = _read_word(frame) if frame else 0
        self.destroy = _read_word(frame + 8) if frame else 0
        known = promise_type is not None or not self.resume
        self.promise_type = promise_type if known else _promise_type_of(self.resume)

    @classmethod
    def of_handle(cls, value: gdb.Value) -> "Coroutine":
        """The coroutine a handle refers to; its promise's type from the handle's
        type (`Generator<i64>`: a pointer to the frame's start) where it says."""
        target = value.type.strip_typedefs().target()
        promise = None
        if target.code == gdb.TYPE_CODE_STRUCT and any(f.name == "promise" for f in target.fields()):
            promise = target["promise"].type
        return cls(_address(value), promise)

    @property
    def finished(self) -> bool:
        return self.resume == 0

    @property
    def noop(self) -> bool:
        return not self.finished and _symbol_at(self.resume) == _NOOP

    @property
    def name(self) -> str:
        return _function_at(self.destroy or self.resume)

    @property
    def suspended_at(self) -> str | None:
        return None if self.finished else _suspended_at(self.frame, self.resume)

    def promise(self) -> gdb.Value | None:
        if self.promise_type is None:
            return None
        return gdb.Value(self.frame + 16).cast(self.promise_type.pointer()).dereference()

    def describe(self) -> str:
        """`suspended in squares at h.pc:2`, `finished`."""
        if self.finished:
            return "finished"
        if self.noop:
            return "noop_handle()"
        where = self.suspended_at
        return f"suspended in {self.name}" + (f" at {where}" if where else "")

    def next_in_chain(self) -> "Coroutine | None":
        """The coroutine that goes on when this one ends: a nested generator's
        `parent`, a lazy task's `continuation`; None at the end of the chain."""
        promise = self.promise()
        if promise is None or self.finished:
            return None
        for field, same_promise in (("parent", True), ("continuation", False)):
            if any(f.name == field for f in promise.type.fields()):
                frame = _address(promise[field])
                if frame == 0:
                    return None
                # A generator delegates to generators of its own promise type.
                return Coroutine(frame, self.promise_type if same_promise else None)
        return None

    def innermost(self) -> "Coroutine":
        """The generator that runs when this one is resumed: the innermost of
        its `yield from` tree (the root's `active`, which every generator of
        the tree reaches through `active_slot`), if it leads back to this one."""
        promise = self.promise()
        if promise is None or not any(f.name == "active_slot" for f in promise.type.fields()):
            return self
        slot = _address(promise["active_slot"])
        active = _read_word(slot) if slot else _address(promise["active"])
        if active in (0, self.frame):
            return self
        inner = Coroutine(active, self.promise_type)
        link = inner
        for _ in range(_MAX_CHAIN):
            if link is None or link.frame == self.frame:
                return inner if link is not None else self
            link = link.next_in_chain()
        return self


class HandlePrinter:
    def __init__(self, value: gdb.Value):
        self.value = value
        self.kind = str(value.type)

    def to_string(self) -> str:
        frame = _address(self.value)
        if frame == 0:
            return f"{self.kind} (none)"
        if _JOIN.match(self.kind):
            return f"{self.kind} {AsyncTask(frame).describe()} (task {frame:#x})"
        if not _SWITCHED.match(self.kind):
            return f"{self.kind} (at {frame:#x})"
        return f"{self.kind} {Coroutine.of_handle(self.value).describe()} (frame {frame:#x})"

    def children(self):
        """The promise's fields; handles among them as addresses, so that a
        tree of generators (whose `active` and `parent` refer to each other)
        prints as one level."""
        if _address(self.value) == 0 or not _SWITCHED.match(self.kind):
            return
        coroutine = Coroutine.of_handle(self.value)
        promise = coroutine.promise() if not coroutine.noop else None
        if promise is None:
            return
        for field in promise.type.fields():
            value = promise[field.name]
            if _is_handle(value.type):
                value = value.cast(value.type.strip_typedefs())
            yield field.name, value


def _is_handle(t: gdb.Type) -> bool:
    return t.name is not None and bool(_HANDLE.match(t.name)) and t.strip_typedefs().code == gdb.TYPE_CODE_PTR


# ---- std/async tasks (stdlib/async.pc's __Task)

_TASK_RESUME, _TASK_DONE, _TASK_SITE, _TASK_BYTES = 0, 28, 30, 32


class AsyncTask:
    """A std/async task, by the address of its block: 32 bytes of `__Task`,
    then the context of the async fn it was spawned with, whose first word
    holds the task waiting for its Join (`__joiner`)."""

    def __init__(self, address: int):
        self.address = address

    def _read(self, offset: int, type_name: str) -> int:
        pointer = gdb.Value(self.address + offset).cast(gdb.lookup_type(type_name).pointer())
        return int(pointer.dereference())

    @property
    def done(self) -> bool:
        return self._read(_TASK_DONE, "unsigned char") != 0

    @property
    def waits_at(self) -> str | None:
        """`file:line:col` of the `await` of the program it is parked in
        (std/async's table of await sites, `pc.async.await_sites`)."""
        site = self._read(_TASK_SITE, "unsigned short")
        table = gdb.lookup_global_symbol("pc.async.await_sites") or gdb.lookup_static_symbol("pc.async.await_sites")
        address = int(table.value().address) if table is not None else _minimal_symbol("pc.async.await_sites")
        if site == 0 or address is None:
            return None
        text = _read_word(address + 8 * site)
        return gdb.Value(text).cast(gdb.lookup_type("char").pointer()).string() if text else None

    def joiner(self) -> "AsyncTask | None":
        waiting = _read_word(self.address + _TASK_BYTES)
        return AsyncTask(waiting) if waiting and not self.done else None

    @property
    def function(self) -> str | None:
        """The async fn of the program it is suspended in: its continuation's,
        unless that is std/async's own (which has no debug information)."""
        resume = _read_word(self.address + _TASK_RESUME)
        return _function_at(resume) if resume and _function_block(resume) is not None else None

    def describe(self) -> str:
        if self.done:
            return "finished"
        where, function = self.waits_at, self.function
        return (f"in {function} " if function else "") + "waiting" + (f" at {where}" if where else "")


def _minimal_symbol(name: str) -> int | None:
    try:
        return int(gdb.parse_and_eval(f"(unsigned long)&'{name}'"))
    except gdb.error:
        return None


# ---- `pycoro chain EXPR`

class PycoroPrefix(gdb.Command):
    """pycoro's commands for PyCoro programs (docs/debugging.md)."""

    def __init__(self):
        super().__init__("pycoro", gdb.COMMAND_DATA, prefix=True)


class ChainCommand(gdb.Command):
    """Show the logical chain of a suspended coroutine, innermost first.

Usage: pycoro chain EXPR

EXPR is a coroutine handle (Generator<T>, Task<T>, Handle, Join<T>). Each
line is a coroutine and where it is suspended; the next one is the coroutine
that goes on when it ends: the generator that delegated to it with `yield
from`, the task that awaits it, or, for a std/async task, the task waiting
in `await` for its Join."""

    def __init__(self):
        super().__init__("pycoro chain", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, argument: str, from_tty: bool) -> None:
        if not argument.strip():
            raise gdb.GdbError("usage: pycoro chain EXPR (a coroutine handle)")
        value = gdb.parse_and_eval(argument)
        if value.is_optimized_out:
            raise gdb.GdbError(f"`{argument}` is optimized out")
        if not _is_handle(value.type):
            raise gdb.GdbError(f"`{argument}` is a {value.type}, not a coroutine handle")
        links, note = _task_chain(value) if _JOIN.match(value.type.name) else _coroutine_chain(value)
        gdb.write("".join(f"#{n:<2} {link}\n" for n, link in enumerate(links)) + (f"{note}\n" if note else ""))


def _coroutine_chain(handle: gdb.Value) -> tuple[list[str], str | None]:
    """Each coroutine of the chain (`middle at gen.pc:8`), and a note where it
    cannot be followed to its end."""
    if _address(handle) == 0:
        return [], f"{handle.type} (none)"
    link, links = Coroutine.of_handle(handle).innermost(), []
    while link is not None and not link.noop and len(links) < _MAX_CHAIN:
        where = link.suspended_at
        links.append(link.name + (f" at {where}" if where else "") + (" (finished)" if link.finished else ""))
        if link.promise_type is None and not link.finished:
            return links, f"(the promise of {link.name} is unknown, optimised code: the chain may go on)"
        link = link.next_in_chain()
    return links, None


def _task_chain(join: gdb.Value) -> tuple[list[str], str | None]:
    task, links = AsyncTask(_address(join)), []
    while task is not None and len(links) < _MAX_CHAIN:
        links.append(f"task {task.address:#x} {task.describe()}")
        task = task.joiner()
    return links, None


# ---- registration

class PycoroPrinters(gdb.printing.PrettyPrinter):
    def __init__(self):
        super().__init__("pycoro")

    def __call__(self, value: gdb.Value):
        return HandlePrinter(value) if self.enabled and _is_handle(value.type) else None


gdb.printing.register_pretty_printer(None, PycoroPrinters(), replace=True)
PycoroPrefix()
ChainCommand()
