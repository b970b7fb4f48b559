"""`%%pycoro` in IPython and Jupyter (issue 21): a cell of PyCoro, compiled as
`pycoro.compile` compiles, whose exported functions appear in the
notebook's namespace. A compile error prints as the CLI prints it (file,
line, caret), without a Python traceback.

    %load_ext pycoro
    %%pycoro
    fn add(a: i64, b: i64) -> i64 { return a + b; }
"""
from __future__ import annotations

import sys

from .common.diagnostics import CompileError


def pycoro_cell(line: str, cell: str, shell=None) -> None:
    """The cell magic: `%%pycoro [-O N]` then PyCoro source."""
    from .embed import compile
    words = line.split()
    opt_level = int(words[words.index("-O") + 1]) if "-O" in words[:-1] else 2
    try:
        module = compile(cell, name="<cell>", opt_level=opt_level)
    except CompileError as err:
        print(err, file=sys.stderr)
        return
    shell.push(module.functions)


def load_ipython_extension(shell) -> None:
    shell.register_magic_function(lambda line, cell: pycoro_cell(line, cell, shell), "cell", "pycoro")
