"""pycoro: a compiler for PyCoro, a small statically typed language built around coroutines.

    import pycoro
    mod = pycoro.compile("fn add(a: i64, b: i64) -> i64 { return a + b; }")
    mod.add(2, 3)    # 5

`pycoro.compile` / `pycoro.compile_file` are pycoro.embed's (LANGUAGE.md §9);
`pycoro.gpu` launches kernels. Both load LLVM, so they are imported on first use.
In IPython or Jupyter, `%load_ext pycoro` adds the `%%pycoro` cell magic
(pycoro/ipython.py).
"""
__version__ = "0.1.0"
__all__ = ["CompileError", "CompileWarning", "InternalCompilerError", "PanicError", "__version__", "compile",
           "compile_file"]


def load_ipython_extension(shell) -> None:
    """`%load_ext pycoro`: the `%%pycoro` cell magic."""
    from .ipython import load_ipython_extension as load
    load(shell)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})   # (help() and completion list the lazy ones too)


def __getattr__(name: str):
    # Imported on first use, as `compile`: the client of a served command
    # and a cached `pycoro run` import this package (2 ms for diagnostics').
    if name in ("CompileError", "CompileWarning"):
        from .common import diagnostics
        return getattr(diagnostics, name)
    if name in ("compile", "compile_file", "PanicError", "InternalCompilerError"):
        from . import embed
        return getattr(embed, name)
    raise AttributeError(f"module 'pycoro' has no attribute {name!r}")
