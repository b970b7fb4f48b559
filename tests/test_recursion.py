"""The warning for a function that cannot return without recursing (rustc's
`unconditional_recursion`), and what such a function does at run time."""
from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import pytest

import pycoro
from pycoro.common.diagnostics import render_all
from pycoro.pipeline.driver import Compilation
from pycoro.pipeline.options import Options


def _warnings(source: str) -> list[str]:
    c = Compilation(source, "r.pc", Path.cwd(), Options(need_main=False))
    c.check()
    return [f"{d.span.line}:{d.span.col}: {d.message}" for d in c.warnings if "recursing" in d.message]


WARNED = {
    "plain": "fn f(n: i64) -> i64 { return f(n + 1) + 1; }",
    "statement": "fn f(n: i64) { print(n); f(n + 1); }",
    "both branches": "fn f(n: i64) -> i64 { if n > 0 { return f(n - 1); } else { return f(n + 1); } }",
    "in a condition": "fn f(n: i64) -> bool { if f(n) { return true; } return false; }",
    "before a loop": "fn f(n: i64) { f(n); while n > 0 {} }",
    "loop that breaks after": "fn f(n: i64) { loop { f(n - 1); break; } }",
    "argument": "fn f(n: i64) -> i64 { return g(f(n)); }\nfn g(x: i64) -> i64 { return x; }",
    "generic instance": "fn f<T>(x: T) -> T { return f(x); }\nfn use_it() -> i64 { return f(1) + f(2); }",
}
NOT_WARNED = {
    "base case": "fn f(n: i64) -> i64 { if n == 0 { return 0; } return f(n - 1) + 1; }",
    "guarded": "fn f(n: i64) { if n > 0 { f(n - 1); } }",
    "short-circuit": "fn f(n: i64) -> bool { return n == 0 || f(n - 1); }",
    "loop body": "fn f(n: i64) { for i in 0..n { f(i); } }",
    "while body": "fn f(n: i64) { var i = n; while i > 0 { f(i - 1); i -= 1; } }",
    "break first": "fn f(n: i64) { loop { if n > 3 { break; } f(n + 1); } }",
    "panics": "fn f(n: i64) -> i64 { panic(\"no\"); }",
    "never ends": "fn f(n: i64) -> i64 { loop {} }",
    "other function": "fn f(n: i64) -> i64 { return g(n); }\nfn g(n: i64) -> i64 { return f(n); }",
    "generator": "fn f(n: i64) -> Generator<i64> { yield from f(n + 1); }",
    "task": "fn f(n: i64) -> Task<i64> { co_return await f(n + 1); }",
    "another instance": "fn f<T>(x: T, n: i64) -> i64 { if n == 0 { return 0; } return f(1.5, n - 1); }\n"
                        "fn use_it() -> i64 { return f(1, 2); }",
}


@pytest.mark.parametrize("name", WARNED)
def test_functions_that_cannot_return_without_recursing_are_warned(name):
    assert _warnings(WARNED[name]) == ["1:1: function `f` cannot return without recursing"]


@pytest.mark.parametrize("name", NOT_WARNED)
def test_functions_that_can_return_are_not(name):
    assert _warnings(NOT_WARNED[name]) == []


def test_a_method_and_its_notes():
    source = "struct S { n: i64 }\nimpl S {\n    fn spin(self) -> i64 { return self.spin() + self.spin(); }\n}\n"
    c = Compilation(source, "m.pc", Path.cwd(), Options(need_main=False))
    c.check()
    assert render_all(c.warnings, sources=c.sources).splitlines() == [
        "m.pc:3:5: warning: method `spin` cannot return without recursing",
        "    fn spin(self) -> i64 { return self.spin() + self.spin(); }",
        "    ^~~~~~~",
        "m.pc:3:35: note: recursive call here",
        "    fn spin(self) -> i64 { return self.spin() + self.spin(); }",
        "                                  ^~~~~~~~~~~",
        "hint: every path calls it again: it overflows the stack (or, optimised, may run forever); "
        "give it a case that returns",
    ]


RECURSES = "fn f(n: i64) -> i64 { return f(n + 1) + 1; }\nfn main() { print(f(0)); }\n"
WARNING = "r.pc:1:1: warning: function `f` cannot return without recursing"
OVERFLOW = "panic: stack overflow (a recursion too deep, or without end)"


def test_the_warning_changes_no_exit_status(pycoro, tmp_path):
    (tmp_path / "r.pc").write_text(RECURSES)
    proc = pycoro("check", "r.pc", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr.splitlines()[0] == WARNING
    assert "r.pc:1:30: note: recursive call here" in proc.stderr


def test_run_and_build_agree_on_a_stack_overflow(pycoro, tmp_path, monkeypatch):
    """At -O0 the recursion overflows: the same panic, status 101, for `pycoro
    run` (compiled, then from the cache, which shows the warning again) and
    for an executable. (At -O2 LLVM makes this one a loop that never ends:
    docs/decisions.md.)"""
    monkeypatch.setenv("PYCORO_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "r.pc").write_text(RECURSES)
    for _ in range(2):
        proc = pycoro("run", "-O0", "r.pc", cwd=tmp_path)
        assert (proc.returncode, proc.stdout) == (101, ""), proc.stderr
        lines = proc.stderr.splitlines()
        assert lines[0] == WARNING and lines[-1] == OVERFLOW
    proc = pycoro("build", "-O0", "r.pc", "-o", "r", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr.splitlines()[0] == WARNING
    built = subprocess.run([tmp_path / "r"], capture_output=True, text=True, timeout=60)
    assert (built.returncode, built.stderr) == (101, OVERFLOW + "\n")


def test_pycoro_compile_issues_a_python_warning():
    with pytest.warns(pycoro.CompileWarning, match="function `f` cannot return without recursing") as caught:
        mod = pycoro.compile(RECURSES.replace("fn main", "fn other"), name="r.pc", cache=False)
    assert caught[0].filename == __file__   # the caller's line
    assert hasattr(mod, "f")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pycoro.compile("fn g(n: i64) -> i64 { return n; }", cache=False)   # nothing to say
