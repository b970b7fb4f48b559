"""The guides users read (docs/language.md, docs/tutorial.md) run as they
say: every ```pycoro block checks (a kernel's for nvptx), and a block
followed by an ```output block, run, prints exactly that; a ```python block
followed by one does too."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pycoro.pipeline.driver import Compilation
from pycoro.pipeline.options import Options

ROOT = Path(__file__).parent.parent
GUIDES = [ROOT / "docs" / "language.md", ROOT / "docs" / "tutorial.md"]
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```\n(?:\n```output\n(.*?)^```\n)?", re.M | re.S)


def _snippets():
    for guide in GUIDES:
        for number, m in enumerate(_BLOCK.finditer(guide.read_text())):
            language, code, output = m.group(1), m.group(2), m.group(3)
            if language in ("pycoro", "python"):
                line = guide.read_text()[:m.start()].count("\n") + 1
                yield pytest.param(language, code, output, id=f"{guide.name}:{line}")


@pytest.mark.parametrize("language,code,output", list(_snippets()))
def test_snippet(language, code, output, tmp_path):
    if language == "python":
        assert output is not None, "a Python snippet shows what it prints"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                              timeout=300)
        assert (proc.returncode, proc.stdout) == (0, output), proc.stderr
        return
    (tmp_path / "snippet.pc").write_text(code)
    if output is None:
        gpu = "kernel fn" in code
        c = Compilation.from_file(str(tmp_path / "snippet.pc"),
                                  Options(target="nvptx", need_main=False) if gpu else Options(need_main=False))
        c.check()
        assert c.warnings == []
        return
    proc = subprocess.run([sys.executable, "-m", "pycoro", "run", "snippet.pc"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, output, "")


def test_every_guide_exists_and_has_snippets():
    for guide in GUIDES:
        assert len([m for m in _BLOCK.finditer(guide.read_text()) if m.group(3)]) >= 5, guide
