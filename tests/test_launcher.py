"""The `pycoro` command's launcher (bin/pycoro, pycoro/launcher.c,
pycoro/pipeline/launch.py): `pycoro run FILE` of a cached program starts
without Python, with the same output and exit status as the Python command,
and goes to Python whenever anything its cache entry was made from changed.

Each test installs the command as pip does: bin/pycoro beside a
`pycoro-python` console script of this Python."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pycoro.backend.c_compiler import c_compiler
from pycoro.common import cache
from pycoro.pipeline import launch

ROOT = Path(__file__).parent.parent
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or c_compiler() is None
                                or shutil.which("ld") is None,
                                reason="the launcher loads a shared library linked by ld, and cc builds it")

HIT = "pycoro launcher: from the cache: "
TO_PYTHON = "pycoro launcher: to Python: "


@pytest.fixture
def command(tmp_path):
    """`command(*args, cwd=, env=)`: the installed `pycoro` command's result,
    with the launcher's trace lines apart: (status, stdout, stderr, trace)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(ROOT / "bin" / "pycoro", bin_dir / "pycoro")
    python_command = bin_dir / "pycoro-python"
    python_command.write_text(f"#!{sys.executable}\nimport sys\nfrom pycoro.cli.main import main\nsys.exit(main())\n")
    python_command.chmod(0o755)
    base = {**os.environ, "PYCORO_CACHE_DIR": str(tmp_path / "cache"), "PYCORO_SERVER": "0",
            "PYCORO_LAUNCH_TRACE": "1"}
    for name in launch.KEY_ENVIRONMENT[:2]:
        base.pop(name, None)

    def run(*args, cwd=tmp_path, env=None):
        proc = subprocess.run([str(bin_dir / "pycoro"), *map(str, args)], capture_output=True, text=True,
                              cwd=cwd, env={**base, **(env or {})}, timeout=120)
        lines = proc.stderr.splitlines(keepends=True)
        trace = [line.rstrip("\n") for line in lines if line.startswith("pycoro launcher: ")]
        stderr = "".join(line for line in lines if not line.startswith("pycoro launcher: "))
        return proc.returncode, proc.stdout, stderr, trace
    run.cache = tmp_path / "cache"
    return run


def _trace(result) -> list[str]:
    return [re.sub(r"run\.so-\w+", "run.so-KEY", line) for line in result[3]]


def test_a_cached_run_starts_without_python(command, tmp_path):
    (tmp_path / "hello.pc").write_text('fn main() { print("hello, world"); }\n')
    first = command("run", "hello.pc")   # compiles; the launcher is built and the index written
    assert first == (0, "hello, world\n", "", [])
    assert (command.cache / launch.LAUNCHER).exists()
    second = command("run", "hello.pc")
    assert second[:3] == first[:3]
    assert _trace(second) == [HIT + str(command.cache / "run.so-KEY")]


PROGRAMS = {
    # an exit status is main's low byte, as a process's is
    "status": ('fn main() -> i32 { print("three"); return 259; }\n', 3),
    # a panic: its message, and status 101
    "panic": ("fn main() {\n    let xs = [1, 2, 3];\n    var i = 5;\n    print(xs[i]);\n}\n", 101),
    # a 512 MiB stack, as the Python command gives, and libm's functions
    "deep": ("extern fn sqrt(x: f64) -> f64;\n"
             "fn depth(n: i64) -> i64 { if n == 0 { return 0; } return 1 + depth(n - 1); }\n"
             "fn main() { print(depth(1000000)); print(sqrt(2.0)); }\n", 0),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_launcher_runs_a_program_as_the_python_command_does(command, tmp_path, name):
    source, status = PROGRAMS[name]
    (tmp_path / f"{name}.pc").write_text(source)
    python = subprocess.run([sys.executable, "-m", "pycoro", "run", f"{name}.pc"], capture_output=True, text=True,
                            cwd=tmp_path, env={**os.environ, "PYCORO_CACHE_DIR": str(tmp_path / "elsewhere")})
    # a program that panics ends inside the run that compiled it: the next
    # run (from the cache, in Python) writes the index
    results = [command("run", f"{name}.pc") for _ in range(3)]
    assert _trace(results[-1]) == [HIT + str(command.cache / "run.so-KEY")]
    for result in results:
        assert result[:3] == (status, python.stdout, python.stderr)


def test_a_changed_import_or_environment_goes_to_python(command, tmp_path):
    (tmp_path / "lib.pc").write_text("fn answer() -> i64 { return 41; }\n")
    (tmp_path / "main.pc").write_text('import "lib.pc";\nfn main() { print(answer()); }\n')
    assert command("run", "main.pc")[:2] == (0, "41\n")
    assert command("run", "main.pc")[3][0].startswith(HIT)
    (tmp_path / "lib.pc").write_text("fn answer() -> i64 { return 42; }\n")
    changed = command("run", "main.pc")
    assert changed[:2] == (0, "42\n")
    assert changed[3] == [TO_PYTHON + f"a source changed: {tmp_path / 'lib.pc'}"]
    assert command("run", "main.pc")[3][0].startswith(HIT)   # indexed again by the run that compiled
    other = command("run", "main.pc", env={"PYCORO_TARGET_CPU": "x86-64-v2"})
    assert other[:2] == (0, "42\n") and other[3][0].startswith(TO_PYTHON + "another ")
    # another directory: another command line, with its own index
    assert command("run", "../main.pc", cwd=tmp_path / "bin")[3] == [TO_PYTHON + "no index for this command line"]


def test_a_changed_compiler_goes_to_python(command, tmp_path):
    """The index stamps every source of the compiler (as cache.py's key does),
    and each of its folders (a source added); here one stamp is made stale
    rather than the checkout edited."""
    (tmp_path / "hello.pc").write_text('fn main() { print("hi"); }\n')
    command("run", "hello.pc")
    index = next(command.cache.glob("launch-*"))
    lines = index.read_text().splitlines()
    files, folders = cache.compiler_files()
    stamped = {line.split(" ", 3)[3] for line in lines if line.startswith("stamp ")}
    assert {path for path, _ in files} <= stamped
    assert {line.split(" ", 2)[2] for line in lines if line.startswith("dir ")} == {path for path, _ in folders}
    init = os.path.join(os.path.dirname(launch.LAUNCHER_SOURCE), "__init__.py")
    index.write_text("\n".join(re.sub(r"^stamp (\d+) (\d+) " + re.escape(init) + "$",
                                      lambda m: f"stamp {m[1]} {int(m[2]) + 1} {init}", line)
                               for line in lines) + "\n")
    stale = command("run", "hello.pc")
    assert stale[:2] == (0, "hi\n")
    assert stale[3] == [TO_PYTHON + f"the compiler or the cache entry changed: {init}"]


def test_only_the_plain_command_line_is_launched(command, tmp_path):
    (tmp_path / "hello.pc").write_text('fn main() { print("hi"); }\n')
    command("run", "hello.pc")
    assert command("run", "-O2", "hello.pc") == (0, "hi\n", "", [])   # options: the Python command, no launcher
    assert command("run", "hello.pc")[3][0].startswith(HIT)


def test_a_program_with_warnings_is_left_to_python(command, tmp_path):
    """The launcher prints nothing but the program's output; a cached run
    shows the compile-time warnings again, so such a program gets no index."""
    (tmp_path / "r.pc").write_text("fn f(n: i64) -> i64 { return f(n + 1) + 1; }\nfn main() { print(1); }\n")
    runs = [command("run", "r.pc") for _ in range(3)]
    assert all("warning: function `f` cannot return without recursing" in run[2] for run in runs)
    assert not [line for run in runs for line in run[3] if line.startswith(HIT)]


def test_fnv_is_the_launchers():
    """64-bit FNV-1a's published test vectors (launcher.c computes the same)."""
    assert launch.fnv(b"") == 0xCBF29CE484222325
    assert launch.fnv(b"a") == 0xAF63DC4C8601EC8C
    assert launch.fnv(b"foobar") == 0x85944171F73967E8


def test_the_names_the_launcher_and_the_script_share():
    source = Path(launch.LAUNCHER_SOURCE).read_text()
    script = (ROOT / "bin" / "pycoro").read_text()
    assert f'#define INDEX_FORMAT "{launch.INDEX_FORMAT}"' in source
    assert f'#define COMMAND_VARIABLE "{launch.COMMAND_VARIABLE}"' in source
    assert f"export {launch.COMMAND_VARIABLE}=" in script and f"/pycoro}}/{launch.LAUNCHER}\n" in script
