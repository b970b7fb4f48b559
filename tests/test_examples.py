"""Every examples/NAME.pc prints exactly examples/NAME.out (examples are run documentation)."""
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.pc"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example(path, pycoro):
    proc = pycoro("run", path.name, cwd=path.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == path.with_suffix(".out").read_text()
    assert "warning:" not in proc.stderr, proc.stderr   # examples show code as it should be written


ROOT = Path(__file__).parent.parent
CHECKED = sorted([*(ROOT / "examples").rglob("*.pc"), *(ROOT / "bench" / "workloads").glob("*.pc"),
                  *(ROOT / "bench" / "anchors").glob("*.pc")])


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_warnings_in_examples_and_benchmarks(path):
    """Nor in the standard library they import (it is compiled with them)."""
    from pycoro.pipeline.driver import Compilation
    from pycoro.pipeline.options import Options
    options = Options(target="nvptx", need_main=False) if "gpu" in path.parts else Options(need_main=False)
    c = Compilation.from_file(str(path), options)
    c.check()
    assert c.warnings == []
