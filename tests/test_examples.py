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
