"""The IR tests' one helper: what `pycoro build --emit …` writes for a source text."""
from __future__ import annotations


def emit(pycoro, tmp_path, source: str, what: str, *flags) -> str:
    src = tmp_path / "prog.pc"
    src.write_text(source)
    out = tmp_path / "prog.ll"
    proc = pycoro("build", src, "--emit", what, "-o", out, *flags)
    assert proc.returncode == 0, proc.stderr
    return out.read_text()
