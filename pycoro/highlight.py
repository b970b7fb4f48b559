"""A Pygments lexer for PyCoro, registered under the name `pycoro` (the
`pygments.lexers` entry point in pyproject.toml), so that Sphinx, MkDocs,
Jupyter and `pygmentize -l pycoro` highlight ```pycoro blocks.

Its words are the grammar's (frontend/grammar.lark; a test checks that every
keyword there is one here): this module imports only Pygments, never the
compiler.
"""
from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

KEYWORDS = ("abi", "as", "async", "await", "break", "co_return", "continue", "defer", "else", "extern",
            "final", "fn", "for", "from", "if", "impl", "import", "in", "initial", "intrinsic", "kernel",
            "let", "loop", "mut", "promise", "return", "run", "spawn", "struct", "suspend", "var", "while",
            "with", "yield")
CONSTANTS = ("true", "false", "null", "self")
TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "bool", "str", "void", "ptr",
         "Handle", "Generator", "Task", "Stream", "Once", "Channel", "Join", "Maybe", "Pair")
BUILTINS = ("print", "assert", "panic", "slice")
_SUFFIX = r"(?:i8|i16|i32|i64|u8|u16|u32|u64)?"


class PyCoroLexer(RegexLexer):
    name = "PyCoro"
    aliases = ["pycoro", "pc"]
    filenames = ["*.pc"]
    mimetypes = ["text/x-pycoro"]
    url = "https://github.com/pycoro/pycoro"

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"///[^\n]*", String.Doc),
            (r"//[^\n]*", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
            (r'"', String, "string"),
            (r"(fn)(\s+)([A-Za-z_]\w*)", bygroups(Keyword, Whitespace, Name.Function)),
            (r"(struct|promise)(\s+)([A-Za-z_]\w*)", bygroups(Keyword, Whitespace, Name.Class)),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (words(CONSTANTS, suffix=r"\b"), Keyword.Constant),
            (words(TYPES, suffix=r"\b"), Keyword.Type),
            (words(BUILTINS, suffix=r"\b"), Name.Builtin),
            (r"[0-9][0-9_]*(\.[0-9][0-9_]*([eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)(f32|f64)?|[0-9][0-9_]*(f32|f64)",
             Number.Float),
            (r"0x[0-9a-fA-F_]+" + _SUFFIX, Number.Hex),
            (r"0b[01_]+" + _SUFFIX, Number.Bin),
            (r"[0-9][0-9_]*" + _SUFFIX, Number.Integer),
            (r"[A-Za-z_]\w*", Name),
            (r"\.\.=|\.\.\.|\.\.|->|=>|[-+*/%&|^!~<>=]=?|&&|\|\||<<|>>", Operator),
            (r"[{}()\[\];,.:]", Punctuation),
            (r".", Text),
        ],
        "string": [
            (r'\\.', String.Escape),
            (r'[^"\\\n]+', String),
            (r'"', String, "#pop"),
            (r"\n", String, "#pop"),   # an unterminated string ends at its line, as the lexer's does
        ],
        "comment": [
            (r"[^*]+", Comment.Multiline),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"\*", Comment.Multiline),
        ],
    }
