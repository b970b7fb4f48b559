"""Module loading and the program's one namespace.

`load` parses a file and, transitively, what it imports (plus the prelude);
`Namespace` holds every top-level name of the program and reports
duplicates, including clashes with names the stdlib defines.
"""
from __future__ import annotations

import difflib
import functools
import re
from pathlib import Path

from . import ast
from .gpu import GPU_BUILTINS
from .types import PtrT, StructT
from . import messages as M
from .parser import parse, parse_cached
from ..common.diagnostics import CompileError, Diagnostic, Reporter, Sources, Span, decode_source
from ..common.paths import compilers_own, in_stdlib, stdlib_dir, stdlib_display
from ..common.record import field, record

BUILTIN_FUNCTIONS = ("print", "assert", "panic", "noop_handle", "slice", *GPU_BUILTINS)


def load(display: str, text: str, base_dir: Path, prelude: bool = True,
         read: list[Path] | None = None, async_prelude: bool = True,
         sources: Sources | None = None) -> list[ast.Module]:
    """Parse `text` and everything it imports; the prelude comes first, then
    (`async_prelude`, for a program that declares an `async fn`) std/async.
    The program's own files that it imports are appended to `read`, each by
    the path it was looked up at (a link in it may be pointed elsewhere
    later: the module cache checks where it leads), the text of every file
    read is added to `sources` (for diagnostics)."""
    sources = Sources() if sources is None else sources
    modules: list[ast.Module] = []
    seen: set[str] = set()
    errors: list[Diagnostic] = []

    def visit(display: str, text: str, here: Path) -> None:
        sources.add(display, text)
        try:
            module = (parse_cached if in_stdlib(display) else parse)(text, display)
        except CompileError as err:
            errors.extend(err.diagnostics)
            return
        # Imports first: a name the importer defines again is the duplicate.
        for decl in module.decls:
            if isinstance(decl, ast.Import):
                visit_import(decl, here)
        modules.append(module)

    def visit_import(decl: ast.Import, here: Path) -> None:
        try:
            follow_import(decl, here)
        except OSError as err:   # a name the system refuses (too long): as a file it cannot read
            errors.append(Diagnostic(M.cannot_read(decl.path, (err.strerror or str(err)).lower()), decl.span))

    def follow_import(decl: ast.Import, here: Path) -> None:
        if decl.path.startswith("std/"):
            path = stdlib_dir() / f"{decl.path[4:]}.pc"
            shown = stdlib_display(decl.path[4:])
        else:
            path = (here / decl.path).resolve()
            shown = str(here / decl.path) if not Path(decl.path).is_absolute() else decl.path
        # read (and recorded) by the path as written, as the system looks it up
        # (`nope/../lib.pc` is not found); known by where it leads
        looked_up = path if decl.path.startswith("std/") else here / decl.path
        key = str(path.resolve()) if path.exists() else str(path)
        if key in seen:
            if read is not None and not decl.path.startswith("std/") and looked_up.is_file():
                read.append(looked_up)   # another way to it: where it leads is the module cache's to check
            return
        seen.add(key)
        if path.exists() and not path.is_file() and not path.is_dir():   # (`/dev/zero` read without end)
            errors.append(Diagnostic(M.cannot_read(decl.path, "not a regular file"), decl.span))
            return
        try:
            text = decode_source(looked_up.read_bytes(), _relative(shown))
            if read is not None and not decl.path.startswith("std/"):
                read.append(looked_up)
        except FileNotFoundError:
            errors.append(Diagnostic(M.import_not_found(decl.path), decl.span))
            return
        except OSError as err:
            errors.append(Diagnostic(M.cannot_read(decl.path, (err.strerror or str(err)).lower()), decl.span))
            return
        except CompileError as err:   # not UTF-8
            sources.merge(err.sources)
            errors.extend(err.diagnostics)
            return
        visit(_relative(shown), text, path.parent)

    if prelude:
        prelude_path = stdlib_dir() / "prelude.pc"
        seen.add(str(prelude_path.resolve()))
        visit(stdlib_display("prelude"), prelude_path.read_text(encoding="utf-8"), prelude_path.parent)
    seen.add(str((base_dir / Path(display).name).resolve()))  # an import of the main file is a no-op
    visit(display, text, base_dir)
    async_path = stdlib_dir() / "async.pc"
    if async_prelude and str(async_path.resolve()) not in seen and _declares_async(modules):
        seen.add(str(async_path.resolve()))
        own = len(modules)
        visit(stdlib_display("async"), async_path.read_text(encoding="utf-8"), async_path.parent)
        # before the program's files: a name they define again is the duplicate
        added = modules[own:]
        del modules[own:]
        modules[int(prelude):int(prelude)] = added
    if errors:
        raise CompileError(errors, sources)
    return modules


def _declares_async(modules: list[ast.Module]) -> bool:
    def fns(module: ast.Module):
        for decl in module.decls:
            if isinstance(decl, ast.FnDecl):
                yield decl
            elif isinstance(decl, ast.ImplDecl):
                yield from decl.methods
    return any(fn.kind == "async" for module in modules for fn in fns(module))


def _relative(shown: str) -> str:
    try:
        return str(Path(shown).relative_to(Path.cwd()))
    except ValueError:
        return shown


@record
class Namespace:
    """All top-level names of one program (its files and the stdlib it imports)."""
    decls: dict[str, ast.Decl] = field(default_factory=dict)
    impls: list[ast.ImplDecl] = field(default_factory=list)

    @classmethod
    def build(cls, modules: list[ast.Module], reporter: Reporter) -> "Namespace":
        ns = cls()
        for module in modules:
            ns.add_module(module, reporter)
        return ns

    def add_module(self, module: ast.Module, reporter: Reporter) -> None:
        for decl in module.decls:
            if isinstance(decl, ast.ImplDecl):
                self.impls.append(decl)
            elif not isinstance(decl, ast.Import):
                self._add(decl, reporter)

    def _add(self, decl: ast.Decl, reporter: Reporter) -> None:
        name = decl.name
        span = getattr(decl, "name_span", None) or decl.span
        if name in BUILTIN_FUNCTIONS:
            reporter.error(M.builtin_redefined(name), span)
        elif name in self.decls:
            first = self.decls[name]
            first_span = getattr(first, "name_span", None) or first.span
            stdlib = first_span is not None and in_stdlib(first_span.file) and not in_stdlib(span.file)
            reporter.error(M.duplicate(name), span, notes=[(M.first_defined_here(), first_span)],
                           hint=M.stdlib_name_hint(name, first_span.file) if stdlib else None)
        else:
            self.decls[name] = decl

    def suggest(self, name: str, extra: list[str]) -> str | None:
        candidates = list(self.decls) + list(extra) + list(BUILTIN_FUNCTIONS)
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
        if close:
            return M.did_you_mean(close[0])
        module = library_names().get(name)
        return M.import_hint(name, module) if module is not None else None


@functools.cache
def library_names() -> dict[str, str]:
    """The top-level names of the library modules a program imports itself
    (`range` → `std/iter`), for the hint of a name used without its import;
    read from their text only when such a name is missing."""
    names: dict[str, str] = {}
    for path in sorted(stdlib_dir().glob("*.pc")):
        if path.stem in ("prelude", "rt", "rt_backtrace"):   # always there, or the compiler's own
            continue
        for m in re.finditer(r"^(?:async |kernel )?(?:fn|struct|promise) ([A-Za-z]\w*)", path.read_text(), re.M):
            names.setdefault(m.group(1), f"std/{path.stem}")
    return names


def stdlib_internal(name: str, declared_in: str, used_in: str) -> bool:
    """Whether naming `name`, declared in file `declared_in`, from file `used_in`
    reaches into the stdlib's internals: its `__` names, as Rust's private
    items, are the stdlib's and the compiler's own code's (the export wrappers)."""
    return name.startswith("__") and in_stdlib(declared_in) and not compilers_own(used_in)


CALLER = "__Caller"   # the prelude's struct a tracked call site is (takes_caller)


def takes_caller(params: list) -> bool:
    """Whether a function's last parameter (of types `params`) is a
    `ptr<__Caller>`: every call fills it with the call's position and does
    not write it, as Rust's #[track_caller], so the function's panics name
    the line that called it, not the stdlib's own (stdlib/prelude.pc).
    Plain functions, methods and async fns only: the calls of generators
    that middle/irgen/statements.py emits itself do not pass one."""
    last = params[-1] if params else None
    return isinstance(last, PtrT) and isinstance(last.elem, StructT) and last.elem.decl.name == CALLER \
        and in_stdlib(span_of(last.elem.decl).file)


def span_of(decl: ast.Decl) -> Span:
    return getattr(decl, "name_span", None) or decl.span
