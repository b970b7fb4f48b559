"""Source text → ast.Module, with parse errors in words."""
from __future__ import annotations

import functools
import importlib
import io
import pickle
import re
import sys
import threading
import types
from pathlib import Path

from . import larkload  # noqa: F401 - first: lark without its `regex` probe
import lark as lark_package
from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.parsers import lalr_analysis

from . import ast
from .lexer import RootFirstLexer
from ..common import cache
from ..common.diagnostics import CompileError, Diagnostic, Span

KEYWORDS = frozenset(
    "fn async kernel extern struct promise impl let var if else while for in loop break "
    "continue return co_return yield from await spawn defer with as true false null import "
    "abi self".split())

# After these keywords, up to the `{` that opens the body, `Name {` is not a
# struct literal (as in Rust: `if x == S { … } {` must be parenthesised).
_NO_STRUCT_AFTER = frozenset({"if", "while", "in"})

# Terminals that look like names but are recognised by lookahead.
_NAME_LIKE = frozenset({"STRUCT_NAME", "STRUCT_GENERIC", "CALL_GENERIC", "TYPE_GENERIC"})
_GENERIC_HEADS = frozenset({"STRUCT_GENERIC", "CALL_GENERIC", "TYPE_GENERIC"})


class _StructLiteralGate:
    """Post-lexer: turns STRUCT_NAME back into NAME in condition heads, and
    keywords that a lookahead terminal swallowed back into keywords."""

    always_accept = ()

    def __init__(self) -> None:
        self.keyword_types: dict[str, str] = {}
        self.bracket_types: dict[str, str] = {}

    def process(self, stream):
        # The last tokens, for error messages. One parser serves every parse
        # of the process: they are the parsing thread's, and forgotten after.
        history = _RECENT.tokens = [None, None, None]
        for tok in self._angles(self._literals(stream)):
            history[:] = history[1:] + [tok]
            yield tok

    def _angles(self, stream):
        """Inside type arguments (`Duo<Duo<i64, i64>>`), `<` and `>` are brackets:
        `>>` closes two lists, and no `>` is a comparison."""
        depth = 0
        after_head = False
        for tok in stream:
            if after_head and tok.value == "<":
                depth += 1
                tok = Token.new_borrow_pos(self.bracket_types["<"], "<", tok)
            elif depth and tok.value in (">", ">>"):
                for _ in tok.value:
                    depth -= 1
                    yield Token.new_borrow_pos(self.bracket_types[">"], ">", tok)
                after_head = False
                continue
            after_head = tok.type in _GENERIC_HEADS
            yield tok

    def _literals(self, stream):
        # One entry per open bracket: True while `Name {` may not be a literal.
        modes = [False]
        after_dot = False
        for tok in stream:
            # After `.` a keyword is a field or method name (`h.promise()`, LANGUAGE.md §5.1).
            if after_dot and tok.type in _NAME_LIKE:
                tok = Token.new_borrow_pos("NAME", tok.value, tok)
            elif tok.type in _NAME_LIKE | {"NAME"} and tok.value in self.keyword_types and not after_dot:
                tok = Token.new_borrow_pos(self.keyword_types[tok.value], tok.value, tok)
            elif tok.type == "STRUCT_NAME" and modes[-1]:
                tok = Token.new_borrow_pos("NAME", tok.value, tok)
            if tok.value in _NO_STRUCT_AFTER and tok.type not in ("NAME", "STRING"):
                modes[-1] = True
            elif tok.value in ("(", "["):
                modes.append(False)
            elif tok.value in (")", "]") and len(modes) > 1:
                modes.pop()
            elif tok.value == "{" and tok.type != "STRING":
                if modes[-1]:
                    modes[-1] = False
                else:
                    modes.append(False)
            elif tok.value == "}" and tok.type != "STRING" and len(modes) > 1:
                modes.pop()
            after_dot = tok.value == "." and tok.type != "STRING"
            yield tok


_RECENT = threading.local()   # .tokens: the last three tokens the parsing thread saw


@functools.cache
def _parser() -> Lark:
    """The parser, from the on-disk cache where an earlier process stored it:
    unpickling it takes ~6 ms, where lark rebuilding it from its own cache
    took ~14 ms of every compilation."""
    key = cache.key("parser", lark_package.__version__, sys.version)
    data = cache.load_bytes("parser", key)
    if data is not None:
        try:
            parser = _ParserUnpickler(io.BytesIO(data)).load()
            if isinstance(parser, Lark):
                return parser
        except Exception:  # noqa: BLE001 - a damaged entry: build it again
            pass
    parser = _build_parser()
    buffer = io.BytesIO()
    try:
        _ParserPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(parser)
    except (pickle.PicklingError, TypeError, AttributeError):
        return parser   # another lark whose parser does not pickle: build it every time
    cache.store("parser", key, buffer.getvalue())
    return parser


def _build_parser() -> Lark:
    gate = _StructLiteralGate()
    grammar = (Path(__file__).parent / "grammar.lark").read_text()
    lark = Lark(grammar, parser="lalr", lexer="contextual", postlex=gate,
                propagate_positions=True, maybe_placeholders=True, cache=True,
                _plugins={"ContextualLexer": RootFirstLexer})
    for term in lark.terminals:
        if term.pattern.type == "str" and term.pattern.value in KEYWORDS:
            gate.keyword_types[term.pattern.value] = term.name
        if term.pattern.type == "str" and term.pattern.value in ("<", ">"):
            gate.bracket_types[term.pattern.value] = term.name
    return lark


# A built parser pickles whole but for two kinds of object, stored by name:
# the modules its lexer keeps (`re`), and the LALR table's actions, which
# lark compares by identity (`action is Shift`), so an unpickled table must
# hold the very same two objects.
_ACTIONS = {id(lalr_analysis.Shift): "Shift", id(lalr_analysis.Reduce): "Reduce"}


class _ParserPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, lalr_analysis.Action) and id(obj) in _ACTIONS:
            return ("action", _ACTIONS[id(obj)])
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__)
        return None


class _ParserUnpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        kind, name = pid
        return getattr(lalr_analysis, name) if kind == "action" else importlib.import_module(name)


# ---------------------------------------------------------------------------
# lark tree → AST

def _unescape(raw: str, span: Span) -> bytes:
    body = raw[1:-1]
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "\\": 92, '"': 34, "0": 0, "r": 13}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt == "x" and len(body) >= i + 4:
            try:
                out.append(int(body[i + 2:i + 4], 16))
            except ValueError:
                raise _syntax(f"invalid escape sequence '\\x{body[i + 2:i + 4]}'", span)
            i += 4
        else:
            raise _syntax(f"unknown escape sequence '\\{nxt}'", span)
    return bytes(out)


class _SyntaxError(Exception):
    def __init__(self, diag: Diagnostic):
        self.diag = diag


def _syntax(msg: str, span: Span, hint: str | None = None) -> _SyntaxError:
    return _SyntaxError(Diagnostic(msg, span, hint=hint))


_INT_SUFFIXES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


class _ToAst(Transformer):
    def __init__(self, file: str):
        super().__init__()
        self.file = file

    def _span(self, meta) -> Span:
        if getattr(meta, "empty", False):
            return Span(self.file, 1, 1, 1, 1)
        return Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, tok: Token) -> Span:
        return Span(self.file, tok.line, tok.column, tok.end_line, tok.end_column)

    # -- items --
    @v_args(meta=True)
    def start(self, meta, items):
        return list(items)

    @v_args(meta=True, inline=True)
    def import_decl(self, meta, path):
        span = self._span(meta)
        raw = _unescape(path, span)
        try:
            name = raw.decode()
        except UnicodeDecodeError:
            raise _syntax("an import path must be UTF-8 text", span)
        if not name:
            raise _syntax("an import path cannot be empty", span)
        if "\0" in name:
            raise _syntax("an import path cannot contain `\\0`", span)
        return ast.Import(span, name)

    @v_args(meta=True)
    def fn_decl(self, meta, children):
        kind_tok, name, generics, params, ret, body = children
        kind = str(kind_tok) if kind_tok is not None else "fn"
        return ast.FnDecl(self._span(meta), str(name), kind, tuple(generics or ()),
                          tuple(params or ()), ret, body, name_span=self._tok_span(name))

    @v_args(meta=True)
    def extern_decl(self, meta, children):
        name, params, ret = children
        params, varargs = params or ((), False)
        return ast.FnDecl(self._span(meta), str(name), "extern", (), tuple(params), ret, None,
                          varargs, name_span=self._tok_span(name))

    @v_args(meta=True)
    def intrinsic_decl(self, meta, children):
        name, generics, params, ret = children
        return ast.FnDecl(self._span(meta), str(name), "intrinsic", tuple(generics or ()),
                          tuple(params or ()), ret, None, name_span=self._tok_span(name))

    def extern_params(self, children):
        varargs = any(isinstance(c, Token) and c.type == "ELLIPSIS" for c in children)
        return [c for c in children if isinstance(c, ast.Param)], varargs

    def params(self, children):
        return list(children)

    @v_args(meta=True, inline=True)
    def value_param(self, meta, name, type_):
        return ast.Param(self._span(meta), str(name), type_)

    @v_args(meta=True, inline=True)
    def self_param(self, meta, mut, _self):
        return ast.Param(self._span(meta), "self", None, True, mut is not None)

    @v_args(inline=True)
    def ret_type(self, t):
        return t

    def generic_params(self, names):
        return [str(n) for n in names]

    @v_args(meta=True)
    def struct_decl(self, meta, children):
        name, generics, *fields = children
        return ast.StructDecl(self._span(meta), str(name), tuple(generics or ()),
                              tuple(f for f in fields if f is not None), self._tok_span(name))

    @v_args(meta=True, inline=True)
    def field_decl(self, meta, name, type_):
        return ast.FieldDecl(self._span(meta), str(name), type_)

    @v_args(meta=True)
    def promise_decl(self, meta, children):
        name, generics, *members = children
        abis = [m for m in members if isinstance(m, ast.AbiDecl)]
        return ast.PromiseDecl(
            self._span(meta), str(name), tuple(generics or ()), abis[0] if abis else None,
            tuple(m for m in members if isinstance(m, ast.SuspendDecl)),
            tuple(m for m in members if isinstance(m, ast.PromiseVar)),
            tuple(m for m in members if isinstance(m, ast.FnDecl)), self._tok_span(name))

    @v_args(meta=True, inline=True)
    def abi_decl(self, meta, name, size):
        return ast.AbiDecl(self._span(meta), str(name), int(size) if size is not None else None)

    @v_args(meta=True, inline=True)
    def suspend_decl(self, meta, point, mode):
        return ast.SuspendDecl(self._span(meta), str(point), str(mode))

    @v_args(meta=True, inline=True)
    def promise_var(self, meta, _var, name, type_, op, init):
        return ast.PromiseVar(self._span(meta), str(name), type_, self._initializer(op, init))

    def _initializer(self, op, init):
        if op is not None and op != "=":
            raise _syntax(f"expected '=', found '{op}'", self._tok_span(op))
        return init

    @v_args(meta=True)
    def impl_decl(self, meta, children):
        generics, target, *methods = children
        return ast.ImplDecl(self._span(meta), tuple(generics or ()), target, tuple(methods))

    @v_args(meta=True, inline=True)
    def global_decl(self, meta, binding, name, type_, op, init):
        return ast.GlobalDecl(self._span(meta), str(name), binding == "var", type_,
                              self._initializer(op, init), self._tok_span(name))

    # -- types --
    @v_args(meta=True, inline=True)
    def named_type(self, meta, name):
        return ast.NamedType(self._span(meta), str(name))

    @v_args(meta=True)
    def generic_type(self, meta, children):
        name, *args = children
        return ast.NamedType(self._span(meta), str(name), tuple(args))

    @v_args(meta=True, inline=True)
    def array_type(self, meta, elem, size):
        return ast.ArrayType(self._span(meta), elem, _int_value(size, self._span(meta))[0])

    @v_args(meta=True, inline=True)
    def slice_type(self, meta, elem):
        return ast.SliceType(self._span(meta), elem)

    @v_args(meta=True)
    def fn_type(self, meta, children):
        *params, ret = children
        params = [p for p in params if p is not None]
        return ast.FnType(self._span(meta), tuple(params), ret)

    # -- statements --
    @v_args(meta=True)
    def block(self, meta, stmts):
        return ast.Block(self._span(meta), tuple(stmts))

    @v_args(meta=True, inline=True)
    def let_stmt(self, meta, binding, name, type_, op, init):
        return ast.Let(self._span(meta), str(name), binding == "var", type_,
                       self._initializer(op, init), name_span=self._tok_span(name))

    @v_args(meta=True, inline=True)
    def assign_stmt(self, meta, target, op, value):
        return ast.Assign(self._span(meta), target, str(op)[:-1] or "=", value)

    @v_args(meta=True, inline=True)
    def expr_stmt(self, meta, expr):
        return ast.ExprStmt(self._span(meta), expr)

    @v_args(meta=True, inline=True)
    def if_stmt(self, meta, cond, then, else_=None):
        return ast.If(self._span(meta), cond, then, else_)

    @v_args(meta=True, inline=True)
    def while_stmt(self, meta, cond, body):
        return ast.While(self._span(meta), cond, body)

    @v_args(meta=True, inline=True)
    def loop_stmt(self, meta, body):
        return ast.Loop(self._span(meta), body)

    @v_args(meta=True, inline=True)
    def for_stmt(self, meta, var, iter_, op, end, body):
        return ast.For(self._span(meta), str(var), iter_, end, op == "..=", body, name_span=self._tok_span(var))

    @v_args(meta=True, inline=True)
    def with_stmt(self, meta, var, expr, body):
        return ast.With(self._span(meta), str(var), expr, body, name_span=self._tok_span(var))

    @v_args(meta=True)
    def break_stmt(self, meta, _):
        return ast.Break(self._span(meta))

    @v_args(meta=True)
    def continue_stmt(self, meta, _):
        return ast.Continue(self._span(meta))

    @v_args(meta=True, inline=True)
    def return_stmt(self, meta, value):
        return ast.Return(self._span(meta), value)

    @v_args(meta=True, inline=True)
    def co_return_stmt(self, meta, value):
        return ast.CoReturn(self._span(meta), value)

    @v_args(meta=True, inline=True)
    def defer_stmt(self, meta, stmt):
        return ast.Defer(self._span(meta), stmt)

    # -- expressions --
    @v_args(meta=True, inline=True)
    def yield_expr(self, meta, value):
        return ast.Yield(self._span(meta), value)

    @v_args(meta=True, inline=True)
    def yield_from(self, meta, value):
        return ast.YieldFrom(self._span(meta), value)

    @v_args(meta=True, inline=True)
    def binary(self, meta, left, op, right):
        return ast.Binary(self._span(meta), str(op), left, right)

    @v_args(meta=True, inline=True)
    def cast(self, meta, expr, type_):
        return ast.Cast(self._span(meta), expr, type_)

    @v_args(meta=True, inline=True)
    def unary(self, meta, op, operand):
        if op == "+":
            raise _syntax("unary '+' is not supported", self._tok_span(op), "remove the '+'")
        return ast.Unary(self._span(meta), str(op), operand)

    @v_args(meta=True, inline=True)
    def addr_of(self, meta, _amp, operand):
        return ast.AddrOf(self._span(meta), operand)

    @v_args(meta=True, inline=True)
    def await_expr(self, meta, operand):
        return ast.Await(self._span(meta), operand)

    @v_args(meta=True, inline=True)
    def spawn_expr(self, meta, operand):
        return ast.Spawn(self._span(meta), operand)

    @v_args(meta=True, inline=True)
    def call(self, meta, callee, args):
        return ast.Call(self._span(meta), callee, tuple(args or ()))

    def args(self, children):
        return list(children)

    @v_args(meta=True, inline=True)
    def index(self, meta, base, idx):
        return ast.Index(self._span(meta), base, idx)

    @v_args(meta=True, inline=True)
    def slice(self, meta, base, lo, op, hi):
        return ast.Slice(self._span(meta), base, lo, hi, op == "..=")

    @v_args(meta=True, inline=True)
    def field(self, meta, base, name):
        return ast.Field(self._span(meta), base, str(name))

    @v_args(meta=True, inline=True)
    def int_lit(self, meta, tok):
        value, suffix = _int_value(tok, self._span(meta))
        return ast.IntLit(self._span(meta), value, suffix)

    @v_args(meta=True, inline=True)
    def float_lit(self, meta, tok):
        text = str(tok).replace("_", "")
        suffix = None
        if text.endswith(("f32", "f64")):
            text, suffix = text[:-3], text[-3:]
        return ast.FloatLit(self._span(meta), float(text), suffix)

    @v_args(meta=True, inline=True)
    def str_lit(self, meta, tok):
        return ast.StrLit(self._span(meta), _unescape(str(tok), self._span(meta)))

    @v_args(meta=True, inline=True)
    def bool_lit(self, meta, tok):
        return ast.BoolLit(self._span(meta), tok == "true")

    @v_args(meta=True)
    def null_lit(self, meta, _):
        return ast.NullLit(self._span(meta))

    @v_args(meta=True, inline=True)
    def name(self, meta, tok):
        return ast.Name(self._span(meta), str(tok))

    @v_args(meta=True)
    def array_lit(self, meta, elems):
        return ast.ArrayLit(self._span(meta), tuple(e for e in elems if e is not None))

    @v_args(meta=True, inline=True)
    def struct_lit(self, meta, name, inits):
        return ast.StructLit(self._span(meta), str(name), (), tuple(inits or ()))

    @v_args(meta=True)
    def generic_struct_lit(self, meta, children):
        name, *types, inits = children
        return ast.StructLit(self._span(meta), str(name), tuple(types), tuple(inits or ()))

    @v_args(meta=True)
    def generic_name(self, meta, children):
        name, *types = children
        return ast.GenericName(self._span(meta), str(name), tuple(types))

    def field_inits(self, children):
        return list(children)

    @v_args(meta=True, inline=True)
    def field_init(self, meta, name, value):
        return ast.FieldInit(self._span(meta), str(name), value)


def _int_value(tok, span: Span) -> tuple[int, str | None]:
    text = str(tok).replace("_", "")
    suffix = None
    for s in _INT_SUFFIXES:
        if text.endswith(s) and not (text.startswith("0x") and s[0] not in "iu"):
            text, suffix = text[: -len(s)], s
            break
    base = 16 if text.startswith("0x") else 2 if text.startswith("0b") else 10
    digits = text[2:] if base != 10 else text
    if not digits:
        raise _syntax("integer literal has no digits", span)
    return int(digits, base), suffix


# ---------------------------------------------------------------------------
# errors in words

_TERMINAL_WORDS = {
    "NAME": "a name", "STRUCT_NAME": "a name", "TYPE_GENERIC": "a type",
    "CALL_GENERIC": "a name", "STRUCT_GENERIC": "a name",
    "INT": "an integer", "FLOAT": "a number", "STRING": "a string",
    "ASYNC": "'fn'", "KERNEL": "'fn'", "ASSIGN_OP": "'='",
    "CMP_OP": "a comparison", "ADD_OP": "'+' or '-'", "MUL_OP": "'*', '/' or '%'",
    "SHIFT_OP": "'<<' or '>>'", "UNARY_OP": "'!' or '~'", "RANGE_OP": "'..'",
    "$END": "end of file",
}
_EXPR_START = {"NAME", "INT", "FLOAT", "STRING"}
# After a complete expression nearly every operator may follow; naming the
# punctuation that would end it says more than listing the operators.
_CLOSERS = {"RPAR", "COMMA", "SEMICOLON", "RBRACE", "RSQB", "LBRACE"}


def _describe_expected(lark: Lark, expected: set[str]) -> str:
    if len(expected) > 6 and expected & _CLOSERS and not _EXPR_START <= expected:
        expected = expected & _CLOSERS
    if _EXPR_START <= expected:
        words = {"an expression"}
        if "RBRACE" in expected:
            words.add("'}'")
        if "SEMICOLON" in expected:
            words.add("';'")
        if "RPAR" in expected:
            words.add("')'")
        return " or ".join(sorted(words, key=lambda w: (w != "an expression", w)))
    words = []
    for name in sorted(expected):
        if name in _TERMINAL_WORDS:
            word = _TERMINAL_WORDS[name]
        else:
            try:
                pattern = lark.get_terminal(name).pattern
                word = f"'{pattern.value}'" if pattern.type == "str" else name.lower()
            except KeyError:
                word = name.lower()
        if word not in words:
            words.append(word)
    if len(words) > 6:
        return "one of " + ", ".join(words[:6]) + ", …"
    return " or ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " or " + words[-1]


def _found(tok: Token) -> str:
    if tok.type == "$END":
        return "end of file"
    return f"'{tok.value}'"


def _shown(ch: str) -> str:
    """A character as a message names it: quoted, or by its code point where
    it would not show (a control character, U+2028, a no-break space)."""
    return f"'{ch}'" if ch.isprintable() and not ch.isspace() else f"U+{ord(ch):04X}"


def _diagnostic_for(lark: Lark, err: UnexpectedInput, file: str, text: str) -> Diagnostic:
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        span = Span(file, err.line, err.column, err.line, err.column + 1)
        if ch == '"':
            return Diagnostic("unterminated string literal", span)
        return Diagnostic(f"unexpected character {_shown(ch)}", span)
    if isinstance(err, UnexpectedEOF):
        lines = text.splitlines() or [""]
        span = Span(file, len(lines), len(lines[-1]) + 1)
        return Diagnostic(f"expected {_describe_expected(lark, set(err.expected))}, found end of file", span)
    assert isinstance(err, UnexpectedToken)
    tok = err.token
    if tok.type == "$END":
        lines = text.splitlines() or [""]
        span = Span(file, len(lines), len(lines[-1]) + 1)
    else:
        span = Span(file, tok.line, tok.column, tok.end_line, tok.end_column)
    expected = set(err.accepts or err.expected)
    # The contextual lexer raises before the post-lexer sees the bad token, the
    # parser after: the token before the error is whichever of the last two is not it.
    history = getattr(_RECENT, "tokens", None) or [None, None, None]
    if history[-1] is not None and history[-1].start_pos == tok.start_pos:
        history = [None] + history[:-1]
    brace, previous = history[-2], history[-1]
    if previous is not None and previous.type in ("INT", "FLOAT") and tok.type == "NAME" \
            and previous.end_pos == tok.start_pos:   # `1i33`: the lexer took `1`, then a name
        return Diagnostic(f"invalid suffix `{tok.value}` for a number literal", span,
                          hint="integers take `i8 i16 i32 i64 u8 u16 u32 u64`, floats `f32 f64`")
    hint = None
    if tok.value in ("<", ">", "<=", ">=", "==", "!=") and previous is not None:
        hint = "comparison operators cannot be chained: write `a < b && b < c`"
    if previous is not None and brace is not None and previous.value == brace.value in ("+", "-") \
            and brace.end_pos == previous.start_pos:   # `i++` / `i--`
        target = history[-3].value if history[-3] is not None and history[-3].type == "NAME" else "x"
        hint = f"PyCoro has no `{previous.value * 2}`: write `{target} {previous.value}= 1`"
    if tok.value == ":" and brace is not None and brace.value == "{":
        hint = ("a struct literal in the head of `if`, `while`, `for` or `with` "
                "must be parenthesised: `(Name { … })`")
    if "SEMICOLON" in expected and previous is not None and tok.type != "$END":
        # Like rustc: point just past the token that should have been followed by `;`.
        span = Span(file, previous.end_line, previous.end_column)
        return Diagnostic(f"expected ';', found {_found(tok)}", span, hint=hint)
    if tok.value in KEYWORDS and "NAME" in expected:
        hint = f"'{tok.value}' is a keyword and cannot be used as a name"
    return Diagnostic(f"expected {_describe_expected(lark, expected)}, found {_found(tok)}", span,
                      hint=hint)


# parse_cached's trees kept in memory, by key; None: not kept (keep_parsed)
_kept: dict[str, ast.Module] | None = None


def keep_parsed() -> None:
    """Keep parse_cached's trees in memory, for a process that forks
    compilations (driver.preload: each fork then finds them parsed) or makes
    many (the language server). Safe to share: they are frozen records, and
    what is memoised of a node is a pure function of it (common/memo.py)."""
    global _kept
    if _kept is None:
        _kept = {}


def parse_cached(text: str, file: str) -> ast.Module:
    """`parse`, through the on-disk cache: for the stdlib's files, which every
    compilation parses (unpickling std/async's tree takes a quarter of the
    time of parsing it)."""
    key = cache.key("ast", file, text)
    if _kept is not None:
        if key not in _kept:
            _kept[key] = _parse_through_disk(key, text, file)
        return _kept[key]
    return _parse_through_disk(key, text, file)


def _parse_through_disk(key: str, text: str, file: str) -> ast.Module:
    data = cache.load_bytes("ast", key)
    if data is not None:
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a damaged entry: parse again
            pass
    module = parse(text, file)
    cache.store("ast", key, pickle.dumps(module, protocol=pickle.HIGHEST_PROTOCOL))
    return module


def parse(text: str, file: str) -> ast.Module:
    """Parse one source file; raises CompileError with its syntax errors: the
    first, and the first of each later top-level item that has one (items
    are parsed alone then, so one mistake never causes others: rustc and
    clang recover at item boundaries too)."""
    try:
        return _parse_checked(text, file)   # once: a correct file is parsed a single time
    except CompileError as err:
        first = err.diagnostics[0]
    unclosed = _unclosed_comment(text, file)
    if unclosed is not None and (first.span is None or (first.span.line, first.span.col) >=
                                 (unclosed.span.line, unclosed.span.col)):
        raise CompileError([unclosed])   # the rest of the file is that comment: nothing after it to report
    found = [first]
    first_line = first.span.line if first.span else text.count("\n") + 1   # no position: nothing after it
    items = _items(text)
    for (line, item), after in zip(items, [*items[1:], None]):
        if line > first_line:   # (the item of the first error, or one before it, is that error's)
            error = _item_error(line, item, after, file)
            if error is not None:
                found.append(error)
    if unclosed is not None:   # (an item's own error then is that comment's)
        found = [d for d in found if d.span is None or d.span.line < unclosed.span.line] + [unclosed]
    raise CompileError(found)


_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|/\*', re.S)


def _unclosed_comment(text: str, file: str) -> Diagnostic | None:
    """A `/*` with no `*/` after it (outside strings and line comments): the
    grammar would see its `/` as a division, as clang's lexer does not."""
    for m in _COMMENT_OR_STRING.finditer(text):
        if m.group() == "/*":
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            return Diagnostic("unterminated block comment", Span(file, line, col, line, col + 2),
                              hint="a block comment ends with `*/`")
    return None


def _item_error(line: int, item: str, after: tuple[int, str] | None, file: str) -> Diagnostic | None:
    """The first syntax error of one top-level item parsed alone, at its own
    lines. Where the item ran out but the file did not, what it met is the
    next item's first word (`after`: that item's line and text)."""
    error = _syntax_error("\n" * (line - 1) + item, file)
    if error is None or after is None or not error.message.endswith(", found end of file"):
        return error
    word = after[1].split(None, 1)[0]
    return Diagnostic(error.message.removesuffix("end of file") + f"'{word}'",
                      Span(file, after[0], 1, after[0], 1 + len(word)), hint=error.hint)


def _syntax_error(text: str, file: str) -> Diagnostic | None:
    try:
        _parse_checked(text, file)
    except CompileError as err:
        return err.diagnostics[0]
    return None


def _parse_checked(text: str, file: str) -> ast.Module:
    lark = _parser()
    try:
        tree = lark.parse(text)
        decls = _ToAst(file).transform(tree)
    except UnexpectedInput as err:
        raise CompileError([_diagnostic_for(lark, err, file, text)]) from None
    except _SyntaxError as err:
        raise CompileError([err.diag]) from None
    except Exception as err:  # lark wraps transformer errors
        inner = getattr(err, "orig_exc", None)
        if isinstance(inner, _SyntaxError):
            raise CompileError([inner.diag]) from None
        raise
    finally:
        _RECENT.tokens = None
    return ast.Module(Span(file, 1, 1), file, tuple(decls))


_ITEM_START = re.compile(r"^(?:async\s+|kernel\s+)?(?:fn|struct|promise|impl|extern|intrinsic|import|var|let)\b", re.M)


def _items(text: str) -> list[tuple[int, str]]:
    """The top-level items of a source text, each from a line that starts one
    (`fn`, `struct`, … at the start of a line) to the next such line: (the
    line it starts on, its text). A rough cut, for recovery only."""
    starts = [m.start() for m in _ITEM_START.finditer(text)] + [len(text)]
    return [(text.count("\n", 0, at) + 1, text[at:end]) for at, end in zip(starts, starts[1:])]
