"""What every stage of the compiler shares: diagnostics and source spans
(diagnostics.py), the record classes of its data (record.py), where the
stdlib lives (paths.py) and the on-disk cache (cache.py). Nothing here
imports a stage, LLVM or lark: the CLI's fast path runs on it."""
