"""`%%pycoro` through IPython's own API (issue 21 item 4)."""
from __future__ import annotations

import pytest

IPython = pytest.importorskip("IPython")


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "pycoro")
    return shell


def test_a_cells_exports_appear_in_the_namespace(shell):
    shell.run_cell_magic("pycoro", "", "fn add(a: i64, b: i64) -> i64 { return a + b; }\n"
                                       "fn evens(n: i64) -> Generator<i64> { for i in 0..n { if i % 2 == 0 { yield i; } } }\n")
    assert shell.user_ns["add"](2, 3) == 5
    result = shell.run_cell("list(evens(5))")
    assert result.result == [0, 2, 4]


def test_an_error_renders_as_the_cli_does(shell, capsys):
    shell.run_cell_magic("pycoro", "", "fn f() -> i64 { return true; }\n")
    err = capsys.readouterr().err
    assert err == ("<cell>:1:24: error: expected `i64`, found `bool`\n"
                   "fn f() -> i64 { return true; }\n"
                   "                       ^~~~\n")
    assert "f" not in shell.user_ns
