"""`pycoro lsp`: a language server on stdin/stdout (the Language Server
Protocol, through pygls) for editors: the compiler's diagnostics and
warnings as you type, an expression's type on hover (a coroutine's ABI
too), go to definition, and the symbols of a document.

Each open document is checked in this process when it is opened or changed
(`Compilation.check`: parsing and type checking, no LLVM), as the CLI
checks it; what the check knows (each expression's type, what each name
refers to) answers the requests, also where it found type errors (the
checker goes on past each); a document with a syntax error keeps what its
last version that parsed answered.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from . import __version__
from .common.diagnostics import CompileError, Diagnostic, Span
from .frontend import ast
from .frontend.resolve import span_of, takes_caller
from .frontend.program import CheckedProgram, DirectCall, FnInstance, GlobalVar, LocalVar
from .pipeline.driver import Compilation
from .pipeline.options import Options

server = LanguageServer("pycoro", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full)
_checked: dict[str, "Checked"] = {}   # per document URI: its last program that checked


class Checked:
    """A document's checked program, and what it answers from it."""

    def __init__(self, path: str, program: CheckedProgram, compilation: Compilation):
        self.path = path
        self.insts = [f for f in program.functions if f.decl.span.file == path]
        self.program = program
        self.compilation = compilation
        self._frames: dict[str, object] | None = None

    def frames(self) -> dict[str, object]:
        """`pycoro explain`'s report of each coroutine's frame, by name: computed
        on the first hover that needs it (it runs LLVM's pipeline)."""
        if self._frames is None:
            try:
                frames, _ = self.compilation.explain()
            except Exception:   # noqa: BLE001 - a hover must not fail for it
                frames = []
            self._frames = {f.coroutine: f for f in frames}
        return self._frames

    def hover(self, line: int, col: int) -> str | None:
        found = self._at(line, col)
        if found is None:
            return None
        what, inst, node = found
        if isinstance(what, LocalVar):
            return _code(f"{'var' if what.mutable else 'let'} {what.name}: {what.type}")
        if isinstance(what, FnInstance):
            return _signature(what, self.frames() if what.is_coroutine else {})
        if isinstance(what, GlobalVar):
            return _code(f"{what.decl.name}: {what.type}")
        return _code(str(what))   # an expression's type

    def definition(self, line: int, col: int) -> Span | None:
        found = self._at(line, col)
        if found is None:
            return None
        what, inst, node = found
        if isinstance(what, LocalVar):
            return next(ast.declared_at(node, var.name) for node, var in inst.locals.items() if var is what)
        if isinstance(what, (FnInstance, GlobalVar)):
            return span_of(what.decl)
        return None

    def _at(self, line: int, col: int):
        """What is at a position: (a variable, function or global, or a type;
        the function it is in; its node), the innermost there."""
        best = None
        for inst in self.insts:
            if inst.decl.name_span is not None and _inside(inst.decl.name_span, line, col):
                return inst, inst, inst.decl
            for node, var in inst.locals.items():
                if _inside(ast.declared_at(node, var.name), line, col):
                    return var, inst, node
            for node, target in inst.refs.items():
                if isinstance(target, (LocalVar, FnInstance, GlobalVar)) and _inside(node.span, line, col):
                    best = _smaller(best, (target, inst, node))
            for call, target in inst.calls.items():   # a called function's name
                if isinstance(target, DirectCall) and _inside(call.callee.span, line, col):
                    best = _smaller(best, (target.fn, inst, call.callee))
            for node, t in inst.types.items():
                if _inside(node.span, line, col):
                    best = _smaller(best, (t, inst, node))
        return best


def _signature(f: FnInstance, frames: dict) -> str:
    shown = f.params[:-1] if takes_caller([t for _, t in f.params]) else f.params   # (no call writes it)
    params = ", ".join(f"{name}: {t}" for name, t in shown)
    ret = "" if str(f.ret) == "void" else f" -> {f.ret}"
    head = {"async": "async fn", "kernel": "kernel fn", "extern": "extern fn"}.get(f.decl.kind, "fn")
    text = _code(f"{head} {f.display}({params}){ret}")
    if not f.is_coroutine:
        return text
    report = frames.get(f.display)
    abi = report.abi if report is not None else (f.coro.abi if f.coro is not None else "async")
    text += f"\n\ncoroutine: {abi} ABI"
    if report is not None and report.size is not None:
        text += f", frame {report.size} bytes" + (f" (align {report.align})" if report.align else "") + \
            " at -O2 (`pycoro explain` lists what it holds)"
    return text


def _code(text: str) -> str:
    """A hover's PyCoro, as Markdown (editors highlight it)."""
    return f"```pycoro\n{text}\n```"


def _inside(span: Span, line: int, col: int) -> bool:
    end_line, end_col = (span.end_line, span.end_col) if span.end_line else (span.line, span.col + 1)
    return (span.line, span.col) <= (line, col) < (end_line, end_col)


def _extent(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_col - span.col) if span.end_line else (0, 1)


def _smaller(best, candidate):
    if best is None or _extent(candidate[2].span) < _extent(best[2].span):
        return candidate
    return best


def _path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _range(span: Span | None) -> lsp.Range:
    if span is None:
        return lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=1))
    start = lsp.Position(line=span.line - 1, character=span.col - 1)
    if span.end_line:
        end = lsp.Position(line=span.end_line - 1, character=span.end_col - 1)
    else:
        end = lsp.Position(line=span.line - 1, character=span.col)
    return lsp.Range(start=start, end=end)


_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}


def _diagnostic(d: Diagnostic) -> lsp.Diagnostic:
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return lsp.Diagnostic(range=_range(d.span), message=message, severity=_SEVERITY.get(
        d.severity, lsp.DiagnosticSeverity.Information), source="pycoro")


def check_document(uri: str, source: str) -> list[Diagnostic]:
    """Check a document's text; its diagnostics in it (an imported file's
    are shown at the top of the document)."""
    path = _path(uri)
    compilation = Compilation(source, path, Path(path).parent, Options(need_main=False))
    try:
        program = compilation.check()
    except CompileError as err:
        found = err.diagnostics
        partial = _checked_despite_errors(compilation, path)
        if partial is not None:
            _checked[uri] = Checked(path, partial, compilation)
    else:
        _checked[uri] = Checked(path, program, compilation)
        found = compilation.warnings
    return [d if d.span is None or d.span.file == path else
            Diagnostic(f"{d.span}: {d.message}", None, d.severity, d.notes, d.hint) for d in found]


def _checked_despite_errors(compilation: Compilation, path: str) -> CheckedProgram | None:
    """A program that parses but has type errors, checked as far as the
    checker goes (it goes on past each error): hover and definitions answer
    from it, as they do while one types."""
    from .common.diagnostics import Reporter
    from .frontend.check import ProgramChecker
    try:
        return ProgramChecker(compilation.parse(), Reporter(), "native").run(False, path)
    except Exception:   # noqa: BLE001 - a syntax error, or what a broken program trips: nothing to answer from
        return None


def _publish(ls: LanguageServer, uri: str) -> None:
    document = ls.workspace.get_text_document(uri)
    try:
        found = check_document(uri, document.source)
    except RecursionError:
        found = [Diagnostic("program is nested too deeply for pycoro", None)]
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
        uri=uri, version=document.version, diagnostics=[_diagnostic(d) for d in found]))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: LanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    _checked.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                      diagnostics=[]))


def _ask(params: lsp.TextDocumentPositionParams, question: str):
    """The document's checked program and its answer to `question` (a method
    of Checked) at the position (LSP's are 0-based, spans 1-based)."""
    checked = _checked.get(params.text_document.uri)
    if checked is None:
        return None, None
    return checked, getattr(checked, question)(params.position.line + 1, params.position.character + 1)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    _, text = _ask(params, "hover")
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    checked, span = _ask(params, "definition")
    if span is None:
        return None
    uri = params.text_document.uri if span.file == checked.path else Path(span.file).resolve().as_uri()
    return lsp.Location(uri=uri, range=_range(span))


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbols(ls: LanguageServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    """The document's top-level declarations, from its syntax (so they show
    while it has type errors too)."""
    from .frontend.parser import parse
    document = ls.workspace.get_text_document(params.text_document.uri)
    try:
        module = parse(document.source, _path(params.text_document.uri))
    except CompileError:
        return []
    symbols = []
    for decl in module.decls:
        if isinstance(decl, ast.ImplDecl):   # `impl T { … }`: its methods
            symbols += [_symbol(m, lsp.SymbolKind.Method) for m in decl.methods]
        elif type(decl) in _KINDS:
            symbols.append(_symbol(decl, _KINDS[type(decl)]))
    return symbols


_KINDS = {ast.FnDecl: lsp.SymbolKind.Function, ast.StructDecl: lsp.SymbolKind.Struct,
          ast.PromiseDecl: lsp.SymbolKind.Class, ast.GlobalDecl: lsp.SymbolKind.Variable}


def _symbol(decl, kind: lsp.SymbolKind) -> lsp.DocumentSymbol:
    children = [_symbol(m, lsp.SymbolKind.Method) for m in getattr(decl, "methods", ())]
    selection = getattr(decl, "name_span", None) or decl.span
    return lsp.DocumentSymbol(name=decl.name, kind=kind, range=_range(decl.span),
                              selection_range=_range(selection), children=children or None)


def serve() -> None:
    # The stdlib's trees stay in memory between checks (frozen records):
    # a check of a small file 2 -> 0.7 ms.
    from .frontend.parser import keep_parsed
    keep_parsed()
    server.start_io()
