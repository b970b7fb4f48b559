import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_pycoro(*args, cwd=None, timeout=120, env=None):
    """Run the CLI as a user does (`env`: variables to add); returns the CompletedProcess.
    Alone, never through a compile server the machine may run (test_server.py tests that)."""
    return subprocess.run([sys.executable, "-m", "pycoro", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=timeout,
                          env={**os.environ, "PYTHONUNBUFFERED": "1", "PYCORO_SERVER": "0", **(env or {})})


@pytest.fixture
def pycoro():
    return run_pycoro


@pytest.fixture(scope="module", params=["native", "python"], autouse=False)
def embedding(request):
    """Each test of a module that uses it runs twice: with the native entry
    points CPython calls (frontend/python_entries.py), and with pycoro.embed's
    Python wrappers alone (what a generator of structs, a struct or slice
    argument, or a Python without them gets)."""
    import pycoro.embed
    saved = pycoro.embed.NATIVE
    pycoro.embed.NATIVE = request.param == "native"
    yield request.param
    pycoro.embed.NATIVE = saved
