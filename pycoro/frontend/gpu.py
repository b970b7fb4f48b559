"""GPU builtins (LANGUAGE.md §8) as the checker sees them: name → result type.

The index builtins are `u32`, as CUDA's `threadIdx.x` and friends are
unsigned; `sync_threads()` is a barrier for the threads of a block. What each
one lowers to is the middle's business (middle/gpu.py).
"""
from __future__ import annotations

from .types import U32, VOID, Type

INDEX_BUILTINS: dict[str, Type] = {
    f"{what}_{axis}": U32
    for what in ("thread_id", "block_id", "block_dim", "grid_dim") for axis in "xyz"}

GPU_BUILTINS: dict[str, Type] = {**INDEX_BUILTINS, "sync_threads": VOID}

# Targets whose code runs on a GPU (`pycoro build --target …`).
GPU_TARGETS = frozenset({"nvptx"})
