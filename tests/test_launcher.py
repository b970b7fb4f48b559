"""The `pycoro` command's launcher (bin/pycoro, pycoro/launcher/,
pycoro/pipeline/launch.py): `pycoro run FILE` of a cached program starts
without Python, with the same output and exit status as the Python command,
and goes to Python whenever anything its cache entry was made from changed.

Each test installs the command as pip does: bin/pycoro beside a
`pycoro-python` console script of this Python."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pycoro.backend.c_compiler import c_compiler
from pycoro.common import cache
from pycoro.pipeline import launch

ROOT = Path(__file__).parent.parent
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or c_compiler() is None
                                or shutil.which("ld") is None or launch.launcher_name() is None,
                                reason="the launcher loads a shared library linked by ld, cc builds it, and it is "
                                       "named for the machine (/etc/machine-id)")

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
        env = {**(env or {})}
        proc = subprocess.run([str(bin_dir / "pycoro"), *map(str, args)], capture_output=True, text=True,
                              cwd=cwd, env={**base, **env}, timeout=120)
        lines = proc.stderr.splitlines(keepends=True)
        trace = [line.rstrip("\n") for line in lines if line.startswith("pycoro launcher: ")]
        stderr = "".join(line for line in lines if not line.startswith("pycoro launcher: "))
        return proc.returncode, proc.stdout, stderr, trace
    run.cache = tmp_path / "cache"
    run.base = base
    return run


def _trace(result) -> list[str]:
    return [re.sub(r"run\.so-\w+", "run.so-KEY", line) for line in result[3]]


def test_a_cached_run_starts_without_python(command, tmp_path):
    (tmp_path / "hello.pc").write_text('fn main() { print("hello, world"); }\n')
    first = command("run", "hello.pc")   # compiles; the launcher is built and the index written
    assert first == (0, "hello, world\n", "", [])
    assert (command.cache / launch.launcher_name()).exists()
    second = command("run", "hello.pc")
    assert second[:3] == first[:3]
    assert _trace(second) == [HIT + str(command.cache / "run.so-KEY")]
    # a launcher deleted is built again by the next run in Python
    (command.cache / launch.launcher_name()).unlink()
    assert command("run", "hello.pc") == first
    assert _trace(command("run", "hello.pc")) == [HIT + str(command.cache / "run.so-KEY")]


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
    assert changed[3] == [TO_PYTHON + f"a source changed: {(tmp_path / 'lib.pc').resolve()}"]
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
    assert {path for path, _ in folders} <= {line.split(" ", 2)[2] for line in lines if line.startswith("dir ")}
    init = os.path.join(os.path.dirname(launch.LAUNCHER_FOLDER), "__init__.py")
    index.write_text("\n".join(re.sub(r"^stamp (\d+) (\d+) " + re.escape(init) + "$",
                                      lambda m: f"stamp {m[1]} {int(m[2]) + 1} {init}", line)
                               for line in lines) + "\n")
    stale = command("run", "hello.pc")
    assert stale[:2] == (0, "hi\n")
    assert stale[3] == [TO_PYTHON + f"the compiler changed: {init}"]


def test_a_folder_reached_another_way_goes_to_python(command, tmp_path):
    """The cache's key covers where FILE really is (its imports are looked up
    there): a link retargeted, or `..` after a link, is another program."""
    for version in ("r1", "r2"):
        (tmp_path / version).mkdir()
        (tmp_path / version / "main.pc").write_text('import "lib.pc";\nfn main() { print(answer()); }\n')
        (tmp_path / version / "lib.pc").write_text(f"fn answer() -> i64 {{ return {version[1]}; }}\n")
    (tmp_path / "current").symlink_to("r1")
    assert command("run", "current/main.pc")[:2] == (0, "1\n")
    assert command("run", "current/main.pc")[3][0].startswith(HIT)
    (tmp_path / "current").unlink()
    (tmp_path / "current").symlink_to("r2")
    moved = command("run", "current/main.pc")
    assert moved[:2] == (0, "2\n")
    assert moved[3] == [TO_PYTHON + f"the program's folder is elsewhere now: {(tmp_path / 'r1').resolve()}"]
    # link/../main.pc is r2/../main.pc to the system, not ./main.pc
    (tmp_path / "r2" / "inner").mkdir()
    (tmp_path / "link").symlink_to("r2/inner")
    (tmp_path / "main.pc").write_text('fn main() { print("top"); }\n')
    assert command("run", "link/../main.pc")[:2] == (0, "2\n")
    (tmp_path / "r2" / "main.pc").write_text('fn main() { print("edited"); }\n')
    assert command("run", "link/../main.pc")[:2] == (0, "edited\n")


def test_an_import_through_a_link_pointed_elsewhere_goes_to_python(command, tmp_path, import_through_a_link):
    assert command("run", "main.pc")[:2] == (0, "1\n")
    assert command("run", "main.pc")[3][0].startswith(HIT)
    import_through_a_link()
    moved = command("run", "main.pc")
    assert moved == (0, "2\n", "", [TO_PYTHON + f"an import is elsewhere now: {tmp_path.resolve() / 'lib.pc'}"])


def test_the_process_is_set_up_as_pythons(command, tmp_path):
    """PYTHONUNBUFFERED makes CPython's C stdio unbuffered, and so the
    launcher's: output and a panic's message interleave as the program wrote
    them."""
    (tmp_path / "io.pc").write_text('fn main() { print("one"); panic("two"); }\n')
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYCORO_LAUNCH_TRACE": "", "PYCORO_CACHE_DIR": str(command.cache)}
    merged = [subprocess.run(f"{tmp_path / 'bin' / 'pycoro'} run io.pc 2>&1", shell=True, capture_output=True,
                             text=True, cwd=tmp_path, env=env).stdout for _ in range(3)]
    assert all(out.startswith("one\npanic: two at io.pc:1:") for out in merged), merged
    assert command("run", "io.pc", env={"PYTHONUNBUFFERED": "1"})[3][0].startswith(HIT)


@pytest.mark.parametrize("locale", [{"LANG": "xx_YY.UTF-8"}, {"LC_CTYPE": "UTF-8"}, {"LC_ALL": "C"}, {}])
def test_the_locale_is_pythons(command, tmp_path, locale):
    """CPython coerces a C locale to UTF-8 (PEP 538) before a cached run calls
    `main`; so does the launcher (the C library's multibyte limit shows it)."""
    (tmp_path / "loc.pc").write_text("extern fn __ctype_get_mb_cur_max() -> i64;\n"
                                     "fn main() { print(1.5); print(__ctype_get_mb_cur_max()); }\n")
    env = {name: value for name, value in os.environ.items() if name not in ("LANG", "LC_ALL", "LC_CTYPE")}
    python = subprocess.run([sys.executable, "-m", "pycoro", "run", "loc.pc"], capture_output=True, text=True,
                            cwd=tmp_path, env={**env, **locale, "PYCORO_CACHE_DIR": str(tmp_path / "elsewhere")})
    for name in ("LANG", "LC_ALL", "LC_CTYPE"):
        command.base.pop(name, None)
    runs = [command("run", "loc.pc", env=locale) for _ in range(3)]
    assert runs[-1][3][0].startswith(HIT)
    assert [run[:2] for run in runs] == [(0, python.stdout)] * 3


def test_floats_print_with_a_point_whatever_the_locale(command, tmp_path):
    """CPython's PEP 538 coercion sets LC_NUMERIC from the environment too,
    and the runtime's float printing goes through snprintf: a comma locale
    gave `1.,5` (it now keeps only the digits of what snprintf wrote)."""
    if shutil.which("localedef") is None or not Path("/usr/share/i18n/locales/de_DE").exists():
        pytest.skip("building a de_DE locale needs localedef and the locale sources")
    (tmp_path / "locales").mkdir()
    built = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(tmp_path / "locales" / "de_DE.UTF-8")],
                           capture_output=True)
    if not (tmp_path / "locales" / "de_DE.UTF-8").exists():
        pytest.skip(f"localedef failed: {built.stderr!r}")
    (tmp_path / "fl.pc").write_text("fn main() { print(1.5); print(0.25e-7); let f: f32 = 2.25; print(f); }\n")
    for name in ("LANG", "LC_ALL", "LC_CTYPE"):
        command.base.pop(name, None)
    env = {"LOCPATH": str(tmp_path / "locales"), "LC_NUMERIC": "de_DE.UTF-8"}
    runs = [command("run", "fl.pc", env=env) for _ in range(3)]
    assert runs[-1][3][0].startswith(HIT)
    assert [run[:2] for run in runs] == [(0, "1.5\n2.5e-08\n2.25\n")] * 3


def test_a_launcher_that_cannot_run_here_is_not_used(command, tmp_path):
    """`$CC` may build for another machine: the launcher is run once before it
    is used, and a build that failed is not tried at every run."""
    fake = tmp_path / "cross-cc"
    fake.write_text('#!/bin/sh\nwhile [ "$1" != -o ]; do shift; done\nprintf "not this machine\'s" > "$2"\n'
                    'chmod +x "$2"\necho built >> "$0.log"\n')
    fake.chmod(0o755)
    (tmp_path / "hello.pc").write_text('fn main() { print("hi"); }\n')
    runs = [command("run", "hello.pc", env={"CC": str(fake)}) for _ in range(3)]
    assert [run[:3] for run in runs] == [(0, "hi\n", "")] * 3
    assert not (command.cache / launch.launcher_name()).exists()
    assert (tmp_path / "cross-cc.log").read_text() == "built\n"


def test_an_index_for_another_launcher_goes_to_python(command, tmp_path):
    (tmp_path / "hello.pc").write_text('fn main() { print("hi"); }\n')
    command("run", "hello.pc")
    index = next(command.cache.glob("launch-*"))
    lines = index.read_text().splitlines()
    assert lines[-1].startswith("launcher ")
    index.write_text("\n".join(lines[:-1]) + "\n")   # as another pycoro's launcher would have written it
    assert command("run", "hello.pc") == (0, "hi\n", "", [TO_PYTHON + f"an index for another launcher: {index}"])
    assert command("run", "hello.pc")[3][0].startswith(HIT)   # written again


@pytest.mark.parametrize("redirect", ["< /", "<&-"])
def test_a_folder_or_nothing_as_stdin_is_as_pythons(command, tmp_path, redirect):
    """CPython does not start with a folder as stdin, and runs with stdin
    closed: the launcher leaves both to it."""
    (tmp_path / "hello.pc").write_text('fn main() { print("hi"); }\n')
    command("run", "hello.pc")
    assert command("run", "hello.pc")[3][0].startswith(HIT)
    env = {**command.base, "PYCORO_LAUNCH_TRACE": ""}
    launched, python = (subprocess.run(f"{program} run hello.pc {redirect}", shell=True, capture_output=True,
                                       text=True, cwd=tmp_path, env=env, timeout=120)
                        for program in (tmp_path / "bin" / "pycoro", shlex.quote(sys.executable) + " -m pycoro"))
    assert (launched.returncode, launched.stdout) == (python.returncode, python.stdout)


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


@pytest.fixture
def server(command, tmp_path):
    """A compile server for the command's cache (its socket in a short
    private folder: sockaddr_un holds 108 bytes); the environment that
    reaches it. Stopped after."""
    folder = tempfile.mkdtemp(prefix="pycoro-launch-", dir="/tmp")
    env = {"PYCORO_SERVER_DIR": os.path.join(folder, "s"), "PYCORO_SERVER": "1"}
    python = [sys.executable, "-m", "pycoro", "server"]
    started = subprocess.run([*python, "start", "--idle", "300"], env={**command.base, **env}, capture_output=True,
                             text=True)
    assert started.returncode == 0, started.stderr
    yield env
    subprocess.run([*python, "stop"], env={**command.base, **env}, capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


SERVED = "pycoro launcher: to the compile server: "


def test_the_launcher_hands_commands_to_the_compile_server(command, server, tmp_path):
    (tmp_path / "p.pc").write_text('fn main() -> i32 { print("hi"); return 3; }\n')
    (tmp_path / "bad.pc").write_text('fn main() { let x: i64 = "no"; }\n')
    # the first is the Python command's (the launcher is built, the server recorded)
    first = command("build", "p.pc", "-o", "p1", env=server)
    assert first[:3] == (0, "", "")
    build = command("build", "p.pc", "-o", "p2", env=server)
    assert build[:3] == (0, "", "") and build[3] == [SERVED + _socket(server)]
    assert subprocess.run([str(tmp_path / "p2")], capture_output=True, text=True).stdout == "hi\n"
    alone = command("check", "bad.pc", env={**server, "PYCORO_SERVER": "0"})
    checked = command("check", "bad.pc", env=server)
    assert checked[:3] == alone[:3] and checked[0] == 1 and "expected `i64`, found `str`" in checked[2]
    assert checked[3] == [SERVED + _socket(server)] and alone[3] == []
    # a program the cache does not have: to Python, which has the server compile it
    # (a hit it would run itself), then from the cache
    compiled = command("run", "p.pc", env=server)
    assert compiled == (3, "hi\n", "", [TO_PYTHON + "no index for this command line"])
    assert command("run", "p.pc", env=server)[3][0].startswith(HIT)
    # a closed standard stream: Python says so, as without the launcher
    closed = subprocess.run(f"{tmp_path / 'bin' / 'pycoro'} check bad.pc >&-", shell=True, capture_output=True,
                            text=True, cwd=tmp_path, env={**command.base, **server}, timeout=60)
    alone_closed = subprocess.run(f"{tmp_path / 'bin' / 'pycoro'} check bad.pc >&-", shell=True,
                                  capture_output=True, text=True, cwd=tmp_path,
                                  env={**command.base, **server, "PYCORO_SERVER": "0"}, timeout=60)
    assert closed.returncode == alone_closed.returncode == 1


def test_without_its_server_the_launcher_goes_to_python(command, server, tmp_path):
    (tmp_path / "p.pc").write_text('fn main() { print("hi"); }\n')
    command("build", "p.pc", "-o", "p1", env=server)
    subprocess.run([sys.executable, "-m", "pycoro", "server", "stop"], env={**command.base, **server},
                   capture_output=True)
    gone = command("build", "p.pc", "-o", "p2", env=server)
    assert gone == (0, "", "", [TO_PYTHON + "no compile server for this command"])
    assert (tmp_path / "p2").exists()


def _socket(server: dict) -> str:
    return next(str(p) for p in Path(server["PYCORO_SERVER_DIR"]).iterdir() if p.suffix == ".sock")


def test_the_names_the_launcher_and_the_script_share():
    folder = Path(launch.LAUNCHER_FOLDER)
    source = "".join((folder / name).read_text() for name in (*launch.LAUNCHER_SOURCES, "launcher.h"))
    script = (ROOT / "bin" / "pycoro").read_text()
    assert f'#define INDEX_FORMAT "{launch.INDEX_FORMAT}"' in source
    assert f'#define SERVE_FORMAT "{launch.SERVE_FORMAT}"' in source
    assert f'#define COMMAND_VARIABLE "{launch.COMMAND_VARIABLE}"' in source
    assert f'os.environ.pop("{launch.COMMAND_VARIABLE}", None)' in (ROOT / "pycoro" / "cli" / "main.py").read_text()
    assert f"export {launch.COMMAND_VARIABLE}=" in script and "/pycoro}/launcher-$machine ;;\n" in script
    assert sorted(p.name for p in folder.glob("*.c")) == sorted(launch.LAUNCHER_SOURCES)
