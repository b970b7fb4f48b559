"""pycoro: a compiler for PyCoro, a small statically typed language built around coroutines."""
from .diagnostics import CompileError

__version__ = "0.1.0"
__all__ = ["CompileError", "__version__"]
