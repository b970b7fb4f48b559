"""DWARF for `-g` (issue 22): LLVM debug metadata, as clang emits it for C.

A compile unit per program, a subprogram per function of the program's own
code (the stdlib's have none: a debugger steps over them, as over libc), a
location on every instruction (the statement it belongs to; code of an
awaited async fn emitted in place of the `await` is in that fn's own scope,
inlined at the `await`, as LLVM's inliner leaves code; the stdlib's keeps the
`await`'s), and `llvm.dbg.declare` for
each local and parameter with its type. LLVM's CoroSplit clones the
subprogram into a coroutine's resume, destroy and cleanup functions and
rewrites the declares of what moved into the frame, so a debugger finds a
generator's locals in its frame (clang's C++20 coroutines rely on the same).

A coroutine handle is a typedef named for its type (`Generator<i64>`) of a
pointer to the frame's fixed start: resume and destroy functions, then the
promise (its `var`s), as LLVM lays out every switched-resume frame. The
executable carries pycoro's gdb extension in a `.debug_gdb_scripts` section
(`gdb_scripts`), so gdb loads it by itself (docs/debugging.md).
"""
from __future__ import annotations

from pathlib import Path

from llvmlite import ir

from ...debugger import GDB_SCRIPT
from ...frontend.types import (BOOL, HANDLE, I64 as I64_TYPE, STR, ArrayT, FloatT, IntT, PromiseT, PtrT, SliceT,
                               StructT, Type, abi_of)
from .. import intrinsics
from ..coro.switch import promise_offset
from ..llvmcompat import I32, PTR, global_string

_DWARF_VERSION = 5
_DEBUG_INFO_VERSION = 3   # LLVM's metadata format (llvm::DEBUG_METADATA_VERSION)

# gdb's `.debug_gdb_scripts` entries: a byte of kind, then (kind 4, an
# inlined Python script) the script's name on the first line and its text,
# ending with a NUL (gdb's manual, "The .debug_gdb_scripts section").
_INLINED_PYTHON_SCRIPT = b"\x04"
_SCRIPT_NAME = b"pycoro/debugger/gdb_printers.py"


class DebugInfo:
    def __init__(self, module: ir.Module, layouts, main_file: str, producer: str):
        self.module, self.layouts = module, layouts
        self._files: dict[str, ir.DIValue] = {}
        self._types: dict[Type, ir.DIValue | None] = {}
        self._locations: dict[tuple, ir.DIValue] = {}
        self.unit = module.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_C"),   # gdb's C evaluator reads PyCoro's scalars and structs
            "file": self.file(main_file),
            "producer": producer,
            "isOptimized": False,
            "runtimeVersion": 0,
            "emissionKind": ir.DIToken("FullDebug"),
        }, is_distinct=True)
        module.add_named_metadata("llvm.dbg.cu", self.unit)
        for behaviour, name, value in ((7, "Dwarf Version", _DWARF_VERSION),
                                       (2, "Debug Info Version", _DEBUG_INFO_VERSION)):
            module.add_named_metadata("llvm.module.flags", [I32(behaviour), name, I32(value)])
        gdb_scripts(module)

    def file(self, path: str) -> ir.DIValue:
        if path not in self._files:
            directory, name = dwarf_path(path)
            self._files[path] = self.module.add_debug_info("DIFile", {"filename": name, "directory": directory})
        return self._files[path]

    def subprogram(self, fn: ir.Function, name: str, span, artificial: bool = False) -> ir.DIValue:
        """`fn`'s subprogram (attached to it), at `span` (its declaration);
        `artificial`: the compiler wrote it (a backtrace leaves it out)."""
        file = self.file(span.file)
        kind = self.module.add_debug_info("DISubroutineType", {"types": self.module.add_metadata([])})
        fields = {"name": name, "linkageName": fn.name, "scope": file, "file": file, "line": span.line,
                  "type": kind, "scopeLine": span.line, "spFlags": ir.DIToken("DISPFlagDefinition"),
                  "unit": self.unit}
        if artificial:
            fields["flags"] = ir.DIToken("DIFlagArtificial")
        sp = self.module.add_debug_info("DISubprogram", fields, is_distinct=True)
        fn.set_metadata("dbg", sp)
        return sp

    def artificial(self, fn: ir.Function, span) -> None:
        """A subprogram for a function the compiler wrote (C's `main`), every
        instruction of it at `span`."""
        scope = self.subprogram(fn, fn.name, span, artificial=True)
        where = self.location(span, scope)
        for block in fn.blocks:
            for instruction in block.instructions:
                instruction.set_metadata("dbg", where)

    def inlined_subprogram(self, name: str, span) -> ir.DIValue:
        """The subprogram of a function whose body the compiler emits in place
        of its call (an awaited async fn, FnGen.emit_inlined): attached to no
        function, the scope of locations `inlinedAt` the call, as LLVM's
        inliner makes them."""
        key = ("inlined", name, span.file, span.line, span.col)
        if key not in self._locations:
            file = self.file(span.file)
            kind = self.module.add_debug_info("DISubroutineType", {"types": self.module.add_metadata([])})
            self._locations[key] = self.module.add_debug_info("DISubprogram", {
                "name": name, "scope": file, "file": file, "line": span.line, "type": kind,
                "scopeLine": span.line, "spFlags": ir.DIToken("DISPFlagDefinition"), "unit": self.unit,
            }, is_distinct=True)
        return self._locations[key]

    def location(self, span, scope: ir.DIValue, inlined_at: ir.DIValue | None = None) -> ir.DIValue:
        """`span` in `scope`, which is inlined at `inlined_at` (a call's location) where given."""
        key = (span.line, span.col, id(scope), id(inlined_at))
        if key not in self._locations:
            fields = {"line": span.line, "column": span.col, "scope": scope}
            if inlined_at is not None:
                fields["inlinedAt"] = inlined_at
            self._locations[key] = self.module.add_debug_info("DILocation", fields)
        return self._locations[key]

    def declare(self, builder: ir.IRBuilder, slot: ir.Value, name: str, t: Type, span, scope: ir.DIValue,
                arg: int | None = None) -> None:
        """`llvm.dbg.declare` of the variable `name` of type `t` living at `slot`
        (declared at `span`; `arg`: a parameter's 1-based position)."""
        di_type = self.type(t)
        if di_type is None:
            return
        fields = {"name": name, "scope": scope, "file": self.file(span.file), "line": span.line, "type": di_type}
        if arg is not None:
            fields["arg"] = arg
        variable = self.module.add_debug_info("DILocalVariable", fields)
        call = builder.call(intrinsics.declare(self.module, "llvm.dbg.declare"), [slot, variable, self.module.add_debug_info("DIExpression", {})])
        call.set_metadata("dbg", self.location(span, scope))

    # ---- types
    def type(self, t: Type) -> ir.DIValue | None:
        """`t` as DWARF sees it; None where it has no useful form."""
        if t not in self._types:
            self._types[t] = None   # a struct that refers to itself (through a pointer) stops here
            self._types[t] = self._type(t)
        return self._types[t]

    def _basic(self, name: str, bits: int, encoding: str) -> ir.DIValue:
        return self.module.add_debug_info("DIBasicType", {"name": name, "size": bits,
                                                          "encoding": ir.DIToken(encoding)})

    def _pointer(self, base: ir.DIValue | None, name: str | None = None) -> ir.DIValue:
        fields = {"tag": ir.DIToken("DW_TAG_pointer_type"), "baseType": base, "size": 64}
        if name is not None:
            fields["name"] = name
        return self.module.add_debug_info("DIDerivedType", fields)

    def _type(self, t: Type) -> ir.DIValue | None:
        if t == BOOL:
            return self._basic("bool", 8, "DW_ATE_boolean")
        if isinstance(t, FloatT):
            return self._basic(str(t), t.bits, "DW_ATE_float")
        if isinstance(t, IntT):
            if t.bits == 8:   # as C's char types: gdb shows a u8 buffer as text
                return self._basic(str(t), 8, "DW_ATE_signed_char" if t.signed else "DW_ATE_unsigned_char")
            return self._basic(str(t), t.bits, "DW_ATE_signed" if t.signed else "DW_ATE_unsigned")
        if t == STR:
            return self._pointer(self._basic("char", 8, "DW_ATE_signed_char"), "str")
        if isinstance(t, PtrT):   # to a struct only ever behind pointers, which may hold itself: opaque
            return self._pointer(self.type(t.elem) if self._has_size(t.elem) else None)
        if isinstance(t, PromiseT):   # an owning handle, the frame's address, named for gdb's printers
            return self.module.add_debug_info("DIDerivedType", {
                "tag": ir.DIToken("DW_TAG_typedef"), "name": str(t), "baseType": self._pointer(self._frame(t)),
                "file": self.file(t.decl.span.file), "line": t.decl.span.line})
        if t == HANDLE:   # any switched-resume coroutine's frame: its promise is not known here
            return self.module.add_debug_info("DIDerivedType", {
                "tag": ir.DIToken("DW_TAG_typedef"), "name": "Handle", "baseType": self._pointer(None)})
        if isinstance(t, SliceT):
            return self._struct(str(t), [("ptr", PtrT(t.elem)), ("len", I64_TYPE)], 16)
        if isinstance(t, StructT):
            return self._struct(str(t), list(self.layouts.fields(t)), self.layouts.size_align(t)[0])
        if isinstance(t, ArrayT):
            elem = self.type(t.elem)
            if elem is None:
                return None
            size = self.layouts.size_align(t)[0] * 8
            count = self.module.add_debug_info("DISubrange", {"count": t.size})
            return self.module.add_debug_info("DICompositeType", {
                "tag": ir.DIToken("DW_TAG_array_type"), "baseType": elem, "size": size,
                "elements": self.module.add_metadata([count])})
        return None

    def _frame(self, t: PromiseT) -> ir.DIValue | None:
        """The start of a switched-resume frame of handle type `t`, which a
        debugger can read whatever else LLVM put in the frame; None for the
        other ABIs (a Stream's buffer, an async task) or a promise never laid out."""
        state = self._promise_state(t) if abi_of(t) == "switch" else None
        promise = self.type(state) if state is not None else None
        if promise is None:
            return None
        no_signature = self.module.add_debug_info("DISubroutineType", {"types": self.module.add_metadata([])})
        function = self._pointer(no_signature)
        size, align = self.layouts.size_align(state)
        at = promise_offset(align)   # the switched-resume ABI's (coro/switch.py)
        members = [("resume", function, 0), ("destroy", function, 8), ("promise", promise, at)]
        size += at
        return self.module.add_debug_info("DICompositeType", {
            "tag": ir.DIToken("DW_TAG_structure_type"), "name": f"{t}.frame", "size": size * 8,
            "elements": self.module.add_metadata([self._member(name, di, None, at) for name, di, at in members])})

    def _promise_state(self, t: PromiseT) -> StructT | None:
        """The struct of `t`'s promise `var`s (`Generator.promise<i64>`), as the
        checker laid it out. The layouts are the only way from a handle type to
        it in the middle: the checker names it after the promise, declared at
        the promise's position, with the handle's type arguments."""
        for struct in self.layouts.laid_out():
            named = struct.decl.name == f"{t.decl.name}.promise"
            if named and struct.decl.span is t.decl.span and struct.args == t.args:
                return struct
        return None

    def _member(self, name: str, di: ir.DIValue, size: int | None, offset: int) -> ir.DIValue:
        fields = {"tag": ir.DIToken("DW_TAG_member"), "name": name, "baseType": di, "offset": offset * 8}
        if size is not None:
            fields["size"] = size * 8
        return self.module.add_debug_info("DIDerivedType", fields)

    def _has_size(self, t: Type, within: tuple = ()) -> bool:
        """Whether `t` has a size: no struct holds itself by value, all are laid out."""
        if isinstance(t, ArrayT):
            return self._has_size(t.elem, within)
        if not isinstance(t, StructT):
            return True
        if t in within:
            return False
        try:
            fields = self.layouts.fields(t)
        except KeyError:   # never laid out: only used behind pointers
            return False
        return all(self._has_size(ft, (*within, t)) for _, ft in fields)

    def _struct(self, name: str, fields: list[tuple[str, Type]], size: int) -> ir.DIValue:
        """A struct laid out as C lays it out (as PyCoro does: frontend/layout.py)."""
        members = []
        for (field, ft), offset in zip(fields, self.layouts.offsets(fields)):
            di = self.type(ft)
            if di is not None:
                members.append(self._member(field, di, self.layouts.size_align(ft)[0], offset))
        return self.module.add_debug_info("DICompositeType", {
            "tag": ir.DIToken("DW_TAG_structure_type"), "name": name, "size": size * 8,
            "elements": self.module.add_metadata(members)})


def dwarf_path(path: str) -> tuple[str, str]:
    """The directory (resolved) and name the DWARF gives a source file that
    diagnostics call `path` (backend/backtrace.py maps them back)."""
    p = Path(path)
    return (str(p.parent.resolve()) if str(p.parent) else "."), p.name


def gdb_scripts(module: ir.Module) -> None:
    """pycoro's gdb extension, inlined into a `.debug_gdb_scripts` section, which
    gdb runs when it loads the executable (where its `auto-load safe-path`
    allows: docs/debugging.md). As clang's and rustc's: a constant that only
    the debugger reads (`.debug_*` sections are not loaded into memory, so the
    program is the same), kept by `llvm.used` through the optimiser and linked
    once however many objects carry it."""
    text = _INLINED_PYTHON_SCRIPT + _SCRIPT_NAME + b"\n" + GDB_SCRIPT.read_bytes()
    script = global_string(module, text, "__pycoro_debug_gdb_scripts_section__")
    script.linkage = "linkonce_odr"
    script.section = ".debug_gdb_scripts"
    script.align = 1
    _keep(module, script)


def _keep(module: ir.Module, value: ir.GlobalVariable) -> None:
    """Adds `value` to the module's `llvm.used` (LLVM's list of what no pass
    may remove), made here if it is not there yet."""
    used = module.globals.get("llvm.used")
    if used is None:
        used = ir.GlobalVariable(module, ir.ArrayType(PTR, 0), "llvm.used")
        used.linkage = "appending"
        used.section = "llvm.metadata"
        used.initializer = ir.Constant(used.value_type, [])
    kept = [*used.initializer.constant, value]
    used.value_type = ir.ArrayType(PTR, len(kept))
    used.initializer = ir.Constant(used.value_type, kept)
