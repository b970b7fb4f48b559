"""The model nodes of layer `streams` (streams.py): the oracle's stream and
Once wrappers (PY_HELPERS), Python-only lines and declarations, handle
bindings and calls, reassignments, `for` over a stream, `with`, and
coroutine function declarations."""
from __future__ import annotations

from dataclasses import dataclass

from .. import model as m
from ..types import zero_py

IND = m.IND

PY_HELPERS = '''
class _St:
    """A Stream<T> handle: a Python generator with PyCoro's next/value/done/resume."""
    __slots__ = ("g", "v", "d")

    def __init__(self, g):
        self.g, self.v, self.d = g, None, False

    def next(self):
        if self.d:
            return False
        try:
            self.v = next(self.g)
            return True
        except StopIteration:
            self.d = True
            return False

    def resume(self):
        if self.d:
            _panic("resumed a finished coroutine")
        self.next()

    def done(self):
        return self.d

    def value(self):
        return _cp(self.v)

    def close(self):
        self.g.close()


class _On:
    """A Once<T> handle: called, it runs to its yield at once."""
    __slots__ = ("g", "v", "d")

    def __init__(self, g):
        self.g, self.d = g, False
        self.v = next(g)

    def resume(self):
        if self.d:
            _panic("resumed a finished coroutine")
        self.finish()

    def finish(self):
        if not self.d:
            self.d = True
            for _ in self.g:
                raise AssertionError("a Once yielded twice")

    def done(self):
        return self.d

    def close(self):
        if not self.d:
            self.d = True
            self.g.close()
'''


# ---------------------------------------------------------------- nodes

@dataclass
class PyOnly(m.Decl):
    """Python lines of the oracle's own (helpers, imports): nothing in PyCoro."""
    lines: list

    def pc(self) -> list[str]:
        return []

    def py(self) -> list[str]:
        return list(self.lines)


@dataclass
class PyLine(m.Stmt):
    """A Python statement with no PyCoro text (a destruction PyCoro makes implicitly)."""
    line: str

    def pc(self, ind: str) -> list[str]:
        return []

    def py(self, ind: str) -> list[str]:
        return [ind + self.line]


@dataclass
class HandleLet(m.Defer):
    """`var NAME = CALL;` of a coroutine handle, destroyed at the end of its
    block: in Python, the binding and then a try/finally around the rest of
    the block, whose finally closes it (so it interleaves with `defer`s).
    With `init` None it only closes NAME at the end (a parameter's scope)."""
    name: str = ""
    init: m.Expr | None = None
    wrapper: str = "_St"
    mutable: bool = True

    def pc(self, ind: str) -> list[str]:
        if self.init is None:
            return []
        return [f"{ind}{'var' if self.mutable else 'let'} {self.name} = {self.init.pc()};"]

    def py_head(self, ind: str) -> list[str]:
        return [f"{ind}{self.name} = {self.wrapper}({self.init.py()})"] if self.init is not None else []


@dataclass
class HCall(m.Expr):
    """A built-in method of a handle variable: next, value, done, resume."""
    ty: object
    recv: m.Expr
    method: str

    def pc(self) -> str:
        return f"{self.recv.pc()}.{self.method}()"

    def py(self) -> str:
        return f"{self.recv.py()}.{self.method}()"

    def pure(self) -> bool:
        return False


@dataclass
class Reassign(m.Stmt):
    """`NAME = CALL;` of a handle: the new one is made, then the old destroyed."""
    name: str
    init: m.Expr
    tmp: str
    wrapper: str = "_St"

    def pc(self, ind: str) -> list[str]:
        return [f"{ind}{self.name} = {self.init.pc()};"]

    def py(self, ind: str) -> list[str]:
        return [f"{ind}{self.tmp} = {self.wrapper}({self.init.py()})", f"{ind}{self.name}.close()",
                f"{ind}{self.name} = {self.tmp}"]


def _headed(ind: str, head: str, body: m.Block) -> list[str]:
    """`HEAD { body }` in PyCoro (a `for` or a `with`)."""
    return [f"{ind}{head} {{"] + m.pc_stmts(body.body, ind + IND) + [ind + "}"]


@dataclass
class ForStream(m.Stmt):
    """`for v in SRC { body }`: SRC a call (a temporary, destroyed after the
    loop) or a variable (advanced in place)."""
    var: str
    src: m.Expr
    body: m.Block
    tmp: str

    def pc(self, ind: str) -> list[str]:
        return _headed(ind, f"for {self.var} in {self.src.pc()}", self.body)

    def py(self, ind: str) -> list[str]:
        if isinstance(self.src, m.Var):
            h = self.src.py()
            return ([f"{ind}while {h}.next():", f"{ind}{IND}{self.var} = {h}.value()"]
                    + m.py_stmts(self.body.body, ind + IND))
        i2 = ind + IND
        return ([f"{ind}{self.tmp} = _St({self.src.py()})", f"{ind}try:", f"{i2}while {self.tmp}.next():",
                 f"{i2}{IND}{self.var} = {self.tmp}.value()"] + m.py_stmts(self.body.body, i2 + IND)
                + [f"{ind}finally:", f"{i2}{self.tmp}.close()"])


@dataclass
class With(m.Stmt):
    """`with v in ONCE(…) { body }`."""
    var: str
    src: m.Expr
    body: m.Block
    tmp: str

    def pc(self, ind: str) -> list[str]:
        return _headed(ind, f"with {self.var} in {self.src.pc()}", self.body)

    def py(self, ind: str) -> list[str]:
        i2 = ind + IND
        return ([f"{ind}{self.tmp} = _On({self.src.py()})", f"{ind}{self.var} = {self.tmp}.v", f"{ind}try:"]
                + m.py_stmts(self.body.body, i2)
                + [f"{ind}except GeneratorExit:", f"{i2}{self.tmp}.close()", f"{i2}raise",
                   f"{ind}finally:", f"{i2}{self.tmp}.finish()"])


@dataclass
class CoFnDecl(m.FnDecl):
    """A coroutine: `kind` stream/once (a Python generator), task (`@taskfn
    async def`), async (`async fn` / `async def`)."""
    kind: str = "stream"

    def pc(self) -> list[str]:
        lines = super().pc()
        if self.kind == "async":
            lines[0] = "async " + lines[0]
        return lines

    def py_lines(self, globals_: list[str]) -> list[str]:
        out = super().py_lines(globals_)
        head = 2 if globals_ else 1
        if self.kind in ("stream", "once"):
            out[head:head] = [f"{IND}if False:", f"{IND}{IND}yield"]   # a generator even without a yield
        elif self.kind == "task":
            out[0:1] = ["@taskfn", "async " + out[0]]
            if self.value_ty not in (None, "void"):   # falling off the end: the promise keeps T's zero value
                out.append(f"{IND}return {zero_py(self.value_ty)}")
        elif self.kind == "async":
            out[0] = "async " + out[0]
        return out
