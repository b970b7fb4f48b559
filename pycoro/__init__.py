"""pycoro: a compiler for PyCoro, a small statically typed language built around coroutines.

    import pycoro
    mod = pycoro.compile("fn add(a: i64, b: i64) -> i64 { return a + b; }")
    mod.add(2, 3)    # 5

`pycoro.compile` / `pycoro.compile_file` are pycoro.embed's (LANGUAGE.md §9);
`pycoro.gpu` launches kernels. Both load LLVM, so they are imported on first use.
In IPython or Jupyter, `%load_ext pycoro` adds the `%%pycoro` cell magic
(pycoro/ipython.py).
"""
from .common.diagnostics import CompileError, CompileWarning

# Users meet them as pycoro.CompileError (tracebacks, repr, pickling), not by where they live.
CompileError.__module__ = CompileWarning.__module__ = "pycoro"

__version__ = "0.1.0"
__all__ = ["CompileError", "CompileWarning", "PanicError", "__version__", "compile", "compile_file"]


def load_ipython_extension(shell) -> None:
    """`%load_ext pycoro`: the `%%pycoro` cell magic."""
    from .ipython import load_ipython_extension as load
    load(shell)


def __getattr__(name: str):
    if name in ("compile", "compile_file", "PanicError"):
        from . import embed
        return getattr(embed, name)
    raise AttributeError(f"module 'pycoro' has no attribute {name!r}")
