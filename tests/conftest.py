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


_SHOWING_IMPORTS = """
import os, runpy, sys
before = set(sys.modules)
os._exit = sys.exit   # (a served command's client leaves by os._exit: main._leave)
sys.argv = ["pycoro", *sys.argv[1:]]
try:
    runpy.run_module("pycoro", run_name="__main__", alter_sys=True)
except SystemExit as done:
    status = done.code
sys.stderr.write("\\nIMPORTED " + " ".join(sorted(set(sys.modules) - before)) + "\\n")
sys.exit(status)
"""


def imports_of_pycoro(env: dict, *args, cwd=None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`pycoro ARGS` run as `python -m pycoro` runs it, and the modules it
    imported (beyond those Python's start-up had: what site and .pth files
    import is not pycoro's doing)."""
    proc = subprocess.run([sys.executable, "-c", _SHOWING_IMPORTS, *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=120, env={**os.environ, **env})
    stderr, _, imported = proc.stderr.rpartition("\nIMPORTED ")
    proc.stderr = stderr
    return proc, set(imported.split())


# What the two light paths (a cached `pycoro run`, a command handed to a
# compile server) must not import: the compiler, LLVM, typer, pathlib
# (fnmatch, urllib.parse, ipaddress: 3 ms of a 30 ms start), `signal`
# (`_signal` in enums, with `enum`: 1-2 ms), `threading` (1.2 ms), `array`
# (collections: 2.3 ms) and the diagnostics (1.7 ms: only to fail).
HEAVY = frozenset({"pycoro.pipeline.driver", "pycoro.frontend", "lark", "llvmlite.binding", "typer", "pathlib",
                   "signal", "threading", "array", "pycoro.common.diagnostics"})


@pytest.fixture
def import_through_a_link(tmp_path):
    """tmp_path/main.pc prints `answer()` of lib.pc, a link to v1/lib.pc, whose
    own `import "util.pc"` is v1's (1); v2 has the same lib.pc and a util.pc
    of 2. Returns what points the link at v2/lib.pc (the module cache, and
    the launcher, must see another program)."""
    for version in ("1", "2"):
        (tmp_path / f"v{version}").mkdir()
        (tmp_path / f"v{version}" / "lib.pc").write_text('import "util.pc";\nfn answer() -> i64 { return util(); }\n')
        (tmp_path / f"v{version}" / "util.pc").write_text(f"fn util() -> i64 {{ return {version}; }}\n")
    (tmp_path / "lib.pc").symlink_to("v1/lib.pc")
    (tmp_path / "main.pc").write_text('import "lib.pc";\nfn main() { print(answer()); }\n')

    def point_elsewhere() -> None:
        (tmp_path / "lib.pc").unlink()
        (tmp_path / "lib.pc").symlink_to("v2/lib.pc")
    return point_elsewhere


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
