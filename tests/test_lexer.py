"""The parser's lexer (frontend/lexer.py) yields exactly the tokens of lark's
contextual lexer, on every program of the repository and on the places where
the two ambiguities of the grammar are settled."""
from __future__ import annotations

from pathlib import Path

import pytest
from lark import Lark

from pycoro.frontend import parser

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted(p for d in ("examples", "tests", "pycoro/stdlib", "bench") for p in (ROOT / d).rglob("*.pc"))

SNIPPETS = [
    # a keyword as a field or method name after `.`; `Name {` in a condition's head
    "fn main() { let h = g(); h.promise().yield_value(1); if x == S { a(1); } }",
    # type arguments closed by `>>`; generic calls and struct literals; a comparison
    "fn main() { let a: Duo<Duo<i64, i64>> = Duo<Duo<i64, i64>> { x: f<i64>(1) }; let b = 1 < 2; }",
    "struct Pair<A, B> { first: A, second: B } promise P<T> { abi switch; }",
    # names that start with a keyword; comments and strings that hold tokens
    "fn fnord() { let structure = format_in(\"fn { }\"); /* if { */ // while <\n }",
    # lexing errors: the same position and expectation either way
    "fn main() { let x = 1 @ 2; }",
    "fn main() { let s = \"open",
]


@pytest.fixture(scope="module")
def lexers() -> tuple[Lark, Lark]:
    ours = parser._parser()
    grammar = (ROOT / "pycoro" / "frontend" / "grammar.lark").read_text()
    plain = Lark(grammar, parser="lalr", lexer="contextual", postlex=ours.options.postlex,
                 propagate_positions=True, maybe_placeholders=True)
    return ours, plain


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_same_tokens_as_larks_contextual_lexer(lexers, path):
    ours, plain = lexers
    text = path.read_text()
    assert _parsed_tokens(ours, text) == _parsed_tokens(plain, text)


@pytest.mark.parametrize("text", SNIPPETS)
def test_the_same_tokens_where_the_grammar_is_ambiguous(lexers, text):
    ours, plain = lexers
    assert _parsed_tokens(ours, text) == _parsed_tokens(plain, text)


def _parsed_tokens(lark: Lark, text: str) -> list[tuple]:
    """The tokens the parser consumed (the contextual lexer needs the parser's
    states, so lexing is observed through a parse), or how the parse failed."""
    seen: list[tuple[str, str, int, int]] = []
    try:
        interactive = lark.parse_interactive(text)
        for token in interactive.iter_parse():
            seen.append((token.type, str(token), token.line, token.column))
        interactive.feed_eof()
    except Exception as err:   # noqa: BLE001 - the same failure is what is compared
        seen.append((type(err).__name__, str(getattr(err, "line", "")), getattr(err, "column", 0), 0))
    return seen
