"""lark's contextual lexer, with one scanner tried first in every parser state.

lark's contextual lexer gives each set of terminals that some parser state
accepts its own scanner: a regular expression of all of them, compiled the
first time a program reaches such a state. Compiling those is most of the
time a small program's parse takes (a typical one reaches some thirty sets,
about 1 ms each with Python's `re`). The terminal that the scanner of all
terminals (the root lexer's, compiled once) matches first is almost always
acceptable where it is found, and then it is the very terminal the state's
own scanner would match: both scanners try terminals in the same order, and
the first acceptable terminal that matches is the first that matches at
all. So each state tries the root scanner first and builds and uses its own
only when the root's token is not acceptable there (a keyword that is a
field name after `.`, `Name {` where a struct literal cannot start).
"""
from __future__ import annotations

from lark import Token
from lark.lexer import BasicLexer, ContextualLexer


class _StateLexer(BasicLexer):
    """The lexer of one set of acceptable terminals, deferring to `root` where it agrees."""

    root: BasicLexer | None = None   # None: this is the root
    accepted: frozenset[str] = frozenset()   # the names of its terminals

    def next_token(self, lex_state, parser_state=None) -> Token:
        root, text, line_ctr = self.root, lex_state.text, lex_state.line_ctr
        if root is None:
            return super().next_token(lex_state, parser_state)
        while line_ctr.char_pos < text.end:
            found = root.match(text, line_ctr.char_pos)
            if found is None:
                break
            value, type_ = found
            if type_ in root.ignore_types and type_ not in root.callback:   # spaces, comments
                line_ctr.feed(value, type_ in root.newline_types)
                continue
            if self._final_type(value, type_, line_ctr) in self.accepted:
                return root.next_token(lex_state, parser_state)
            break
        return super().next_token(lex_state, parser_state)

    def _final_type(self, value: str, type_: str, line_ctr) -> str:
        """The token's type after the root's callbacks (a NAME that is a keyword)."""
        callback = self.root.callback.get(type_)
        if callback is None:
            return type_
        return callback(Token(type_, value, line_ctr.char_pos, line_ctr.line, line_ctr.column)).type


class RootFirstLexer(ContextualLexer):
    """Passed to lark as its `ContextualLexer` plugin."""

    BasicLexer = _StateLexer

    def __init__(self, conf, states, always_accept=()) -> None:
        super().__init__(conf, states, always_accept)
        for lexer in set(self.lexers.values()):   # shared by the states that accept the same terminals
            lexer.root = self.root_lexer
            lexer.accepted = frozenset(t.name for t in lexer.terminals)
