import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_pycoro(*args, cwd=None, timeout=120, env=None):
    """Run the CLI as a user does (`env`: variables to add); returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "pycoro", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=timeout,
                          env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})


@pytest.fixture
def pycoro():
    return run_pycoro
