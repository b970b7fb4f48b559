"""The Pygments lexer (pycoro/highlight.py): registered as `pycoro`, in step
with the grammar's keywords, and without error tokens on real programs."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Keyword, Name, String

from pycoro.highlight import CONSTANTS, KEYWORDS, PyCoroLexer

ROOT = Path(__file__).parent.parent
PROGRAMS = sorted([*(ROOT / "examples").rglob("*.pc"), *(ROOT / "pycoro" / "stdlib").glob("*.pc")])


def test_registered_as_pycoro_and_for_pc_files():
    assert isinstance(get_lexer_by_name("pycoro"), PyCoroLexer)
    assert isinstance(get_lexer_for_filename("gen.pc"), PyCoroLexer)


def test_every_keyword_of_the_grammar_is_highlighted():
    grammar = (ROOT / "pycoro" / "frontend" / "grammar.lark").read_text()
    words = set(re.findall(r'"([a-z_]+)"', grammar))
    assert words <= set(KEYWORDS) | set(CONSTANTS), sorted(words - set(KEYWORDS) - set(CONSTANTS))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_programs_lex_without_errors(path):
    tokens = list(PyCoroLexer().get_tokens(path.read_text()))
    assert not [value for kind, value in tokens if kind in Error]


def test_what_each_word_is():
    tokens = [(kind, value) for kind, value in PyCoroLexer().get_tokens(
        'fn gen(n: i64) -> Generator<i64> { for i in 0..n { yield i; } print("x"); }') if value.strip()]
    assert (Keyword, "fn") in tokens and (Name.Function, "gen") in tokens and (Keyword, "yield") in tokens
    assert (Keyword.Type, "Generator") in tokens and (Name.Builtin, "print") in tokens
    assert any(kind in String for kind, _ in tokens)


def test_the_textmate_grammar_for_editors_is_in_step():
    """editors/vscode (VS Code and any TextMate-grammar editor): valid JSON,
    expressions that compile, every keyword of the lexer's."""
    import json
    folder = ROOT / "editors" / "vscode"
    package = json.loads((folder / "package.json").read_text())
    grammar = json.loads((folder / package["contributes"]["grammars"][0]["path"]).read_text())
    assert package["contributes"]["languages"][0]["extensions"] == [".pc"]
    json.loads((folder / "language-configuration.json").read_text())
    matched = " ".join(p.get("match", "") + p.get("begin", "") for p in grammar["patterns"])
    for pattern in grammar["patterns"]:
        for key in ("match", "begin", "end"):
            if key in pattern:
                re.compile(pattern[key])
    assert all(re.search(rf"\b{word}\b", matched) for word in KEYWORDS + CONSTANTS)
