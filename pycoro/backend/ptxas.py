"""NVIDIA's PTX assembler, `ptxas`: from the `nvidia-cuda-nvcc` wheel (the test
extra installs it) or a CUDA toolkit on PATH. pycoro itself never needs it;
tests and `pycoro.gpu` use it to check and load what `--target nvptx` emits."""
from __future__ import annotations

import shutil
from pathlib import Path


def find() -> Path | None:
    try:
        import nvidia   # the namespace package of NVIDIA's wheels
        roots = [Path(p) for p in nvidia.__path__]
    except ImportError:
        roots = []
    for root in roots:
        for candidate in sorted(root.glob("*/bin/ptxas"), reverse=True):   # cu13 before cu12
            return candidate
    on_path = shutil.which("ptxas")
    return Path(on_path) if on_path else None
