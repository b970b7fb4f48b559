"""Random ownership programs (ownership_programs.py) must run clean when the
checker accepts them. Slow (two runs per program), so only with
PYCORO_FUZZ=N: N programs of each shape, from seed 0."""
from __future__ import annotations

import os

import pytest

from ownership_programs import SHAPES, problem, program

COUNT = int(os.environ.get("PYCORO_FUZZ", "0"))


@pytest.mark.skipif(not COUNT, reason="set PYCORO_FUZZ=N to run N random programs of each shape")
@pytest.mark.parametrize("shape", SHAPES)
def test_accepted_ownership_programs_run_clean(shape, tmp_path):
    problems = {seed: found for seed in range(COUNT) if (found := problem(program(seed, shape), tmp_path))}
    assert not problems, problems
