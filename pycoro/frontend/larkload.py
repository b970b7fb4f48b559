"""Imports lark without its probe for the `regex` package.

When lark is imported, lark.utils tries `import regex`, for grammars that use
Unicode categories (ours does not). Where that package is installed (many
environments have it), the probe costs ~7 ms at every start of the compiler.
Marking `regex` absent while lark is imported skips it. The mark is removed
at once, so a program that imports `regex` itself is unaffected.
"""
from __future__ import annotations

import sys

if "lark" not in sys.modules and "regex" not in sys.modules:
    sys.modules["regex"] = None   # `import regex` raises ImportError, which lark expects
    try:
        import lark  # noqa: F401
    finally:
        del sys.modules["regex"]
