"""Source positions, diagnostics and their rendering.

Every user-facing error is a Diagnostic with a Span; the CLI renders them as
`file:line:col: error: message`, the source line, and a caret under the
offending text.
"""
from __future__ import annotations

import sys
import unicodedata

from .record import field, record


@record(frozen=True)
class Span:
    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def to(self, other: "Span") -> "Span":
        """The span from the start of self to the end of other."""
        return Span(self.file, self.line, self.col, other.end_line, other.end_col)


@record
class Diagnostic:
    message: str
    span: Span | None
    severity: str = "error"
    notes: list[tuple[str, Span | None]] = field(default_factory=list)
    hint: str | None = None


class Sources:
    """The text of every file one compilation read, for caret rendering. Each
    compilation has its own (driver.Compilation.sources): nothing of one
    program stays in the process after it, and two compilations in two
    threads each render their own lines."""

    def __init__(self, texts: dict[str, str] | None = None) -> None:
        self.texts: dict[str, str] = dict(texts or {})

    def add(self, name: str, text: str) -> None:
        self.texts[name] = text

    def merge(self, other: "Sources | None") -> None:
        if other is not None:
            self.texts.update(other.texts)

    def line(self, name: str, line: int) -> str | None:
        text = self.texts.get(name)
        if text is None:
            return None
        # lines as the lexer counts them: ended by "\n" alone (str.splitlines
        # also ends one at "\r", "\x0c", "\u2028", …, and showed another line)
        lines = text.split("\n")
        if not 0 < line <= len(lines):
            return None
        return lines[line - 1].removesuffix("\r").replace("\r", " ")   # (a lone "\r" would move the cursor)


def decode_source(data: bytes, file: str) -> str:
    """A source file's text (LANGUAGE.md §1: UTF-8); a CompileError at the
    first byte that is not, with the line shown as well as it decodes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + 1
        col = len(data[line_start:err.start].decode("utf-8", "replace")) + 1
        bad = data[err.start]
        raise CompileError([Diagnostic(f"source is not valid UTF-8 (byte 0x{bad:02x})",
                                       Span(file, line, col, line, col + 1))],
                           Sources({file: data.decode("utf-8", "replace")})) from None


def in_source_order(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Sorted by position within each file; files in the order they first appear."""
    files: dict[str, int] = {}
    for d in diagnostics:
        if d.span:
            files.setdefault(d.span.file, len(files))

    def key(d: Diagnostic):
        return (files[d.span.file], d.span.line, d.span.col) if d.span else (-1, 0, 0)
    return sorted(diagnostics, key=key)


class CompileWarning(UserWarning):
    """A warning about a program that compiles (pycoro.compile issues it with
    Python's `warnings`; the command line prints it on stderr)."""
    # Users meet these two as pycoro.X (tracebacks, repr, pickling), not by where they live.
    __module__ = "pycoro"


class CompileError(Exception):
    """Raised with every diagnostic of a failed compilation, and the sources
    they point into (the compilation attaches them: `with_sources`)."""
    __module__ = "pycoro"

    def __init__(self, diagnostics: list[Diagnostic], sources: Sources | None = None):
        self.diagnostics = in_source_order(diagnostics)
        self.sources = sources
        super().__init__(diagnostics)

    def with_sources(self, sources: Sources) -> "CompileError":
        """Render against `sources` too (an error raised below the driver has none)."""
        if self.sources is None:
            self.sources = sources
        elif self.sources is not sources:
            merged = Sources(sources.texts)
            merged.merge(self.sources)
            self.sources = merged
        return self

    def __str__(self) -> str:
        return render_all(self.diagnostics, color=False, sources=self.sources)


def _caret_line(src: str, span: Span) -> str:
    # Keep tabs from the source so the caret lines up in any terminal; a wide
    # character (`日`: East Asian Wide or Fullwidth) takes two columns there.
    prefix = "".join(c if c == "\t" else " " * _columns(c) for c in src[: span.col - 1])
    width = 1
    if span.end_line == span.line and span.end_col > span.col:
        width = sum(map(_columns, src[span.col - 1: span.end_col - 1])) or 1
    return prefix + "^" + "~" * (width - 1)


def _columns(c: str) -> int:
    """How many terminal columns a character takes (as wcwidth says, without it)."""
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


# A rendered diagnostic: lines of (text, style) segments; a style is rich's
# (docs: https://rich.readthedocs.io/en/stable/style.html), None for plain.
Segments = list[list[tuple[str, str | None]]]
_SEVERITY_STYLES = {"error": "bold red", "warning": "bold yellow"}


def segments(d: Diagnostic, sources: Sources | None = None) -> Segments:
    where = f"{d.span}: " if d.span else ""
    lines: Segments = [[(where, "bold"), (f"{d.severity}:", _SEVERITY_STYLES.get(d.severity, "bold cyan")),
                        (" ", None), (d.message, "bold")]]
    lines += _source_excerpt(d.span, sources)
    for text, span in d.notes:
        lines.append([(f"{span}: note: {text}" if span else f"note: {text}", None)])
        lines += _source_excerpt(span, sources)
    if d.hint:
        lines.append([("hint:", "bold green"), (f" {d.hint}", None)])
    return lines


def render(d: Diagnostic, color: bool = False, sources: Sources | None = None) -> str:
    """The diagnostic as text (`color`: with ANSI colours, as on a terminal)."""
    if color:
        return _painted([segments(d, sources)], _console(force=True))
    return "\n".join("".join(text for text, _ in line) for line in segments(d, sources))


def _source_excerpt(span: Span | None, sources: Sources | None) -> Segments:
    if span is None or sources is None:
        return []
    src = sources.line(span.file, span.line)
    if src is None:
        return []
    return [[(src, None)], [(_caret_line(src, span), "bold green")]]


def render_all(diagnostics: list[Diagnostic], color: bool = False, sources: Sources | None = None) -> str:
    return "\n".join(render(d, color, sources) for d in diagnostics)


def _console(force: bool = False):
    """rich's console on stderr: it decides whether to colour as users expect
    of a compiler (a terminal, not a pipe or a file; `NO_COLOR` turns colour
    off and `FORCE_COLOR` on, https://no-color.org; `TERM=dumb` off).
    Imported only to print diagnostics (rich takes ~15 ms to import)."""
    from rich.console import Console
    if force:
        return Console(file=sys.stderr, force_terminal=True, color_system="standard", highlight=False,
                       soft_wrap=True, emoji=False, markup=False)
    return Console(file=sys.stderr, highlight=False, soft_wrap=True, emoji=False, markup=False)


def _colours(console) -> bool:
    return console.is_terminal and not console.no_color and console.color_system is not None


def _painted(rendered: list[Segments], console) -> str:
    from rich.text import Text
    text = Text("\n".join("\n".join("".join(t for t, _ in line) for line in segs) for segs in rendered))
    at = 0
    for segs in rendered:
        for line in segs:
            for part, style in line:
                if style and part:
                    text.stylize(style, at, at + len(part))
                at += len(part)
            at += 1   # the newline
    with console.capture() as captured:
        console.print(text, end="")
    return captured.get()


def _print(diagnostics: list[Diagnostic], sources: Sources | None) -> None:
    console = _console()
    if _colours(console):
        print(_painted([segments(d, sources) for d in diagnostics], console), file=sys.stderr)
    else:
        print(render_all(diagnostics, False, sources), file=sys.stderr)


def print_diagnostics(diagnostics: list[Diagnostic], sources: Sources | None = None) -> None:
    _print(diagnostics, sources)
    errors = sum(d.severity == "error" for d in diagnostics)
    if errors > 1:
        print(f"{errors} errors", file=sys.stderr)


def print_warnings(warnings: list[Diagnostic] | str, sources: Sources | None = None) -> None:
    """Warnings on stderr (a compilation's, or their text kept in the cache);
    they do not change the exit status."""
    if isinstance(warnings, str):
        print(warnings, file=sys.stderr)
    else:
        _print(warnings, sources)


class Reporter:
    """Collects diagnostics of one stage; `check()` raises if any were errors."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def error(self, message: str, span: Span | None, hint: str | None = None,
              notes: list[tuple[str, Span | None]] | None = None) -> None:
        key = (message, span)
        if any((d.message, d.span) == key for d in self.diagnostics):
            return  # the same mistake seen twice (e.g. a generic instantiated twice)
        self.diagnostics.append(Diagnostic(message, span, "error", notes or [], hint))

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)

    def check(self) -> None:
        if self.failed:
            raise CompileError(self.diagnostics)


class LeakError(Exception):
    """`--check-leaks` found coroutine frames still allocated when `main` returned."""

    def __init__(self, live: int):
        super().__init__(f"{live} coroutine frame{'s' * (live != 1)} leaked: allocated and never freed")
        self.live = live
