"""The pycoro command as a user runs it: options, artefacts, exit statuses."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conftest import HEAVY, imports_of_pycoro

from pycoro.common import cache
from pycoro.cli.app import app
from pycoro.pipeline.driver import Compilation

HELLO = 'fn main() { print("hi", 1.5); }\n'


@pytest.fixture
def hello(tmp_path):
    path = tmp_path / "hello.pc"
    path.write_text(HELLO)
    return path


@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2", "-O3"])
def test_run_at_every_level(hello, pycoro, level):
    proc = pycoro("run", level, hello)
    assert (proc.returncode, proc.stdout) == (0, "hi 1.5\n"), proc.stderr


def test_check_only(hello, pycoro, tmp_path):
    assert pycoro("check", hello).returncode == 0
    bad = tmp_path / "bad.pc"
    bad.write_text("fn main() { let x: i32 = true; }\n")
    proc = pycoro("check", bad)
    assert proc.returncode == 1
    assert "bad.pc:1:26: error: expected `i32`, found `bool`" in proc.stderr


def test_build_executable(hello, pycoro, tmp_path):
    exe = tmp_path / "hello"
    assert pycoro("build", hello, "-o", exe).returncode == 0
    assert subprocess.run([exe], capture_output=True, text=True).stdout == "hi 1.5\n"


def test_build_default_output_name(hello, pycoro, tmp_path):
    assert pycoro("build", hello, cwd=tmp_path).returncode == 0
    assert (tmp_path / "hello").exists()


def test_emit_llvm_keeps_source_names(hello, pycoro, tmp_path):
    out = tmp_path / "hello.ll"
    assert pycoro("build", hello, "--emit", "llvm", "-o", out).returncode == 0
    text = out.read_text()
    assert 'define internal void @"pc.main"()' in text
    assert "define i32 @\"main\"" in text


def test_emit_lowered_is_optimised(pycoro, tmp_path):
    src = tmp_path / "sum.pc"
    src.write_text("fn main() { var s: i64 = 0; for i in 0..10 { s += i; } print(s); }\n")
    out = tmp_path / "sum.ll"
    assert pycoro("build", src, "--emit", "lowered", "-o", out).returncode == 0
    # -O2 folds the loop and inlines the runtime: main prints the constant 45, no
    # loop left (the runtime's start-up, inlined too, has branches of its own)
    text = out.read_text()
    main = text[text.index("@main("):]
    main = main[:main.index("\n}")]
    assert "i64 45)" in main and " phi " not in main


@pytest.mark.parametrize("emit,magic", [("obj", b"\x7fELF"), ("asm", b"\t.text")])
def test_emit_native_artefacts(hello, pycoro, tmp_path, emit, magic):
    out = tmp_path / f"hello.{emit}"
    assert pycoro("build", hello, "--emit", emit, "-o", out).returncode == 0
    assert magic in out.read_bytes()[:200]


def test_missing_file(pycoro, tmp_path):
    proc = pycoro("run", tmp_path / "nope.pc")
    assert proc.returncode == 1
    assert "no such file" in proc.stderr


def test_a_directory_is_not_a_program(pycoro, tmp_path):
    (tmp_path / "adir.pc").mkdir()
    proc = pycoro("check", "adir.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "error: cannot read adir.pc: is a directory\n")


def test_exit_status_is_mains_value(pycoro, tmp_path):
    path = tmp_path / "s.pc"
    path.write_text("fn main() -> i32 { return 42; }\n")
    assert pycoro("run", path).returncode == 42


def test_several_errors_reported_together(pycoro, tmp_path):
    path = tmp_path / "m.pc"
    path.write_text("fn main() {\n    let a: i32 = true;\n    print(nope);\n}\n")
    proc = pycoro("run", path)
    assert proc.returncode == 1
    assert "m.pc:2:18: error" in proc.stderr and "m.pc:3:11: error" in proc.stderr
    assert "2 errors" in proc.stderr
    assert "    let a: i32 = true;\n                 ^~~~" in proc.stderr


def test_internal_error_is_status_70(hello, monkeypatch):
    def broken(self, need_main=True):
        raise RuntimeError("simulated bug")
    monkeypatch.setattr(Compilation, "check", broken)
    result = CliRunner().invoke(app, ["check", str(hello)])
    assert result.exit_code == 70
    assert "internal compiler error" in result.output
    assert "Traceback" not in result.output




def test_one_process_compiles_the_same_program_twice(tmp_path):
    src = tmp_path / "twice.pc"
    src.write_text("struct P { x: i64 }\nfn g() -> Generator<P> { yield P { x: 1 }; }\n"
                   "fn main() { for p in g() { print(p.x); } }\n")
    for _ in range(2):
        Compilation.from_file(str(src)).lowered()


# ---- `pycoro run` of a program compiled before: object code from the cache

@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYCORO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_run_takes_a_program_compiled_before_from_the_cache(cache_dir, tmp_path, pycoro):
    from pycoro.pipeline import rerun
    from pycoro.pipeline.options import Options
    (tmp_path / "helper.pc").write_text("fn base() -> i64 { return 1; }\n")
    prog = tmp_path / "main.pc"
    prog.write_text('import "helper.pc";\nfn main() -> i32 { print(base() + 10); return 3; }\n')
    assert rerun.run_cached(str(prog), Options(), False) is None
    first = pycoro("run", prog)
    assert (first.returncode, first.stdout) == (3, "11\n"), first.stderr
    assert len(list(cache_dir.glob("run.o-*"))) == 1
    # the entry is what runs now: without the compiler, with the same result
    proc = subprocess.run([sys.executable, "-c", RUN_WITHOUT_COMPILER, str(prog)], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (3, "11\n"), proc.stderr
    # other options, or an imported file changed: compiled again
    assert (pycoro("run", "-O0", prog).stdout, len(list(cache_dir.glob("run.o-*")))) == ("11\n", 2)
    (tmp_path / "helper.pc").write_text("fn base() -> i64 { return 2; }\n")
    assert rerun.run_cached(str(prog), Options(), False) is None
    assert pycoro("run", prog).stdout == "12\n"


def test_an_import_through_a_link_pointed_elsewhere_is_compiled_again(cache_dir, tmp_path, pycoro,
                                                                      import_through_a_link):
    """The cache checks an import by the path it was looked up at: a link in
    it pointed at another file (with the same text, whose own imports are
    then looked up beside it) is another program."""
    assert pycoro("run", "main.pc", cwd=tmp_path).stdout == "1\n"
    import_through_a_link()
    assert pycoro("run", "main.pc", cwd=tmp_path).stdout == "2\n"
    # a second way to a file imported already: pointed elsewhere, it is another program
    (tmp_path / "a.pc").write_text("fn a() -> i64 { return 1; }\n")
    (tmp_path / "c.pc").write_text("fn a() -> i64 { return 2; }\n")
    (tmp_path / "b.pc").symlink_to("a.pc")
    (tmp_path / "two.pc").write_text('import "a.pc";\nimport "b.pc";\nfn main() { print(a()); }\n')
    assert pycoro("run", "two.pc", cwd=tmp_path).stdout == "1\n"
    (tmp_path / "b.pc").unlink()
    (tmp_path / "b.pc").symlink_to("c.pc")
    again = pycoro("run", "two.pc", cwd=tmp_path)
    assert again.returncode == 1 and "`a` is defined more than once" in again.stderr
    # an import is read as the system looks its path up
    (tmp_path / "odd.pc").write_text('import "nope/../a.pc";\nfn main() { print(a()); }\n')
    odd = pycoro("check", "odd.pc", cwd=tmp_path)
    assert odd.returncode == 1 and "nope/../a.pc" in odd.stderr


# Runs a program from the cache in a process where importing the compiler fails.
RUN_WITHOUT_COMPILER = """
import sys
for stage in ("pycoro.pipeline.driver", "pycoro.frontend", "pycoro.middle.irgen", "lark", "llvmlite.binding", "typer"):
    sys.modules[stage] = None
from pycoro.pipeline import rerun
from pycoro.pipeline.options import Options
status = rerun.run_cached(sys.argv[1], Options(), False)
sys.exit(200 if status is None else status)
"""


CACHED_RUNS = {
    "status": ([], 'fn main() -> i32 { print("x"); return 3; }\n', 3, "x\n", ""),
    # the key is of the bytes as the driver decodes them: a CRLF file is found too
    "crlf": ([], 'fn main() -> i32 {\r\n    print("x");\r\n    return 3;\r\n}\r\n', 3, "x\n", ""),
    "panic": ([], 'fn main() { print("before"); let a = [1, 2]; var i = 5; print(a[i]); }\n', 101, "before\n",
              "panic: index out of bounds: the length is 2 but the index is 5 at "),
    "leak": (["-O0", "--check-leaks"], """
promise Detached { abi switch; initial run; final run; fn return_void(mut self) {} }
fn stuck() -> Detached { await noop_awaiter(); }
struct Stuck {}
impl Stuck {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) {}
    fn await_resume(mut self) {}
}
fn noop_awaiter() -> Stuck { return Stuck {}; }
fn main() { stuck(); print("done"); }
""", 1, "done\n", "error: 1 coroutine frame leaked: allocated and never freed"),
    "async": (["--real-time"], """
async fn twice(x: i64) -> i64 { await sleep(1); return x * 2; }
async fn main() { let j = spawn twice(1); print(await j + await twice(2)); }
""", 0, "6\n", ""),
}


def _imported(stderr: str) -> set[str]:
    """The modules `python -X importtime` reported importing."""
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def _run_showing_imports(cache_dir, path, *args):
    """`pycoro run` as a user runs it, with Python reporting every module it imports."""
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "pycoro", "run", *args, str(path)],
                          capture_output=True, text=True, cwd=path.parent,
                          env={**os.environ, "PYCORO_CACHE_DIR": str(cache_dir), "PYTHONUNBUFFERED": "1"})


@pytest.mark.parametrize("name", CACHED_RUNS)
def test_a_plain_run_skips_the_option_parser_and_a_cached_one_llvm_and_the_compiler(cache_dir, tmp_path, name):
    args, source, status, stdout, message = CACHED_RUNS[name]
    prog = tmp_path / f"{name}.pc"
    prog.write_text(source)
    runs = [_run_showing_imports(cache_dir, prog, *args) for _ in range(2)]
    for proc in runs:
        assert (proc.returncode, proc.stdout) == (status, stdout), proc.stderr
        assert message in proc.stderr
    compiling, cached = (_imported(proc.stderr) for proc in runs)
    assert "pycoro.pipeline.driver" in compiling and "typer" not in compiling
    assert {"llvmlite.binding", "typer", "pycoro.pipeline.driver", "pycoro.frontend", "lark"}.isdisjoint(cached)


def test_a_cached_run_imports_nothing_heavy(cache_dir, hello):
    """Not the compiler, not LLVM, not typer, not pathlib (bench/README.md:
    start-up): a cached run is a Python start, a key, and a library loaded."""
    env = {"PYCORO_CACHE_DIR": str(cache_dir), "PYCORO_SERVER": "0"}
    compiling, _ = imports_of_pycoro(env, "run", hello)
    proc, imported = imports_of_pycoro(env, "run", hello)
    assert (proc.returncode, proc.stdout) == (0, "hi 1.5\n"), proc.stderr
    assert "pycoro.pipeline.rerun" in imported and not HEAVY & imported, sorted(HEAVY & imported)


def test_a_cached_run_names_the_file_as_this_command_does(cache_dir, tmp_path, pycoro):
    """The same program run by two paths: each panic names the file as its
    command gave it (the name is compiled into the program, so it is part of
    the cache's key: the second run printed the first one's path)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.pc").write_text("var a: [i64; 2];\nvar i: i64 = 2;\nfn main() { print(a[i]); }\n")
    for cwd, name in [(tmp_path, "sub/p.pc"), (tmp_path / "sub", "p.pc"), (tmp_path, "sub/p.pc")]:
        proc = pycoro("run", name, cwd=cwd)
        assert proc.returncode == 101
        assert f"the index is 2 at {name}:3:19" in proc.stderr, proc.stderr


def test_a_run_entry_whose_library_cannot_be_loaded_runs_its_object_code(cache_dir, hello, pycoro):
    import marshal
    assert pycoro("run", hello).returncode == 0
    (library,) = cache_dir.glob("run.so-*")
    library.write_bytes(b"not a shared library")   # damaged: its digest no longer matches
    proc = pycoro("run", hello)
    assert (proc.returncode, proc.stdout) == (0, "hi 1.5\n"), proc.stderr
    (record,) = cache_dir.glob("run.meta-*")   # intact, but this process cannot load it
    entry = marshal.loads(record.read_bytes())
    entry["shared"] = cache.digest(library.read_bytes())
    record.write_bytes(marshal.dumps(entry))
    proc = pycoro("run", hello)
    assert (proc.returncode, proc.stdout) == (0, "hi 1.5\n"), proc.stderr


@pytest.mark.parametrize("argv, plain", [
    (["run", "p.pc"], ("run", "p.pc", {})),
    (["run", "-O0", "--check-leaks", "p.pc", "--real-time"],
     ("run", "p.pc", {"opt": 0, "check_leaks": True, "real_time": True})),
    (["run", "-O", "3", "--trampoline", "p.pc", "-O1"], ("run", "p.pc", {"opt": 1, "trampoline": True})),
    (["build", "p.pc"], ("build", "p.pc", {})),
    (["build", "--target", "nvptx", "--arch", "sm_90", "p.pc", "-o", "k.ptx", "--allow-device-heap"],
     ("build", "p.pc", {"target": "nvptx", "arch": "sm_90", "output": "k.ptx", "allow_device_heap": True})),
    (["build", "--emit", "shared", "--output", "libx.so", "-O0", "x.pc"],
     ("build", "x.pc", {"emit": "shared", "output": "libx.so", "opt": 0})),
    (["run"], None), (["run", "-O"], None), (["run", "-O4", "p.pc"], None), (["run", "-O", "x", "p.pc"], None),
    (["run", "a.pc", "b.pc"], None), (["run", "--help"], None), (["run", "--", "p.pc"], None),
    (["run", "-o", "x", "p.pc"], None), (["build", "--emit", "wasm", "p.pc"], None),
    (["build", "--target", "arm", "p.pc"], None), (["build", "p.pc", "-o"], None), (["build", "-o", "--emit", "p.pc"], None),
    (["build", "--emit=obj", "p.pc"], None), (["build", "--check-leaks", "p.pc"], None),
    (["check", "p.pc"], ("check", "p.pc", {})),
    (["check", "--deny-warnings", "--target", "nvptx", "p.pc"],
     ("check", "p.pc", {"deny_warnings": True, "target": "nvptx"})),
    (["explain", "-O0", "p.pc"], ("explain", "p.pc", {"opt": 0})), (["check", "-O2", "p.pc"], None),
    (["gdb", "a.out"], None), ([], None),
])
def test_the_command_lines_taken_without_the_cli(argv, plain):
    from pycoro.cli.commands import plain_command
    assert plain_command(argv) == plain


@pytest.mark.parametrize("argv", [["--target", "native"], ["--target=native"]])
def test_a_build_gives_the_same_results_with_or_without_the_cli(hello, tmp_path, argv):
    """`--target=native` is left to typer; both write the same executable and
    refuse the same mistakes with the same message."""
    out = tmp_path / "hello"
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "pycoro", "build", *argv, str(hello),
                           "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert ("typer" in _imported(proc.stderr)) == ("=" in argv[0])
    assert subprocess.run([str(out)], capture_output=True, text=True).stdout == "hi 1.5\n"
    for bad in (["--emit", "ptx"], ["--emit=ptx"]):
        proc = subprocess.run([sys.executable, "-m", "pycoro", "build", *bad, str(hello)], capture_output=True,
                              text=True, cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (1, "error: --emit ptx without --target nvptx: PTX is for GPUs\n")


def test_a_damaged_run_entry_is_compiled_again(cache_dir, hello, pycoro):
    assert pycoro("run", hello).returncode == 0
    for entry in cache_dir.glob("run.o-*"):
        entry.write_bytes(b"not an object file")
    proc = pycoro("run", hello)
    assert (proc.returncode, proc.stdout) == (0, "hi 1.5\n"), proc.stderr


def test_the_cache_keeps_the_most_recently_used_programs(cache_dir, tmp_path, pycoro):
    for i in range(3):
        (tmp_path / f"p{i}.pc").write_text(f"fn main() {{ print({i}); }}\n")
        assert pycoro("run", tmp_path / f"p{i}.pc").stdout == f"{i}\n"
    cache.evict(keep=2)
    assert len(list(cache_dir.glob("run.meta-*"))) == len(list(cache_dir.glob("run.o-*"))) == 2


def test_the_stdlibs_syntax_trees_come_from_the_cache(cache_dir, monkeypatch):
    from pycoro.frontend import parser
    from pycoro.common.paths import stdlib_dir
    text = (stdlib_dir() / "async.pc").read_text()
    first = parser.parse_cached(text, "<stdlib>/async.pc")
    assert list(cache_dir.glob("ast-*"))

    def refuse(*_):
        raise AssertionError("parsed although the cache has it")
    monkeypatch.setattr(parser, "parse", refuse)
    again = parser.parse_cached(text, "<stdlib>/async.pc")
    assert [d.name for d in again.decls if hasattr(d, "name")] == [d.name for d in first.decls if hasattr(d, "name")]
    for entry in cache_dir.glob("ast-*"):
        entry.write_bytes(b"damaged")
    with pytest.raises(AssertionError, match="parsed although"):
        parser.parse_cached(text, "<stdlib>/async.pc")   # a damaged entry is parsed again


def test_the_parser_comes_from_the_cache_and_parses_as_a_built_one(cache_dir, monkeypatch):
    from pathlib import Path

    from pycoro.frontend import parser
    parser._parser.cache_clear()
    try:
        built = parser._parser()   # stored
        assert list(cache_dir.glob("parser-*"))
        parser._parser.cache_clear()

        def refuse():
            raise AssertionError("built although the cache has it")
        monkeypatch.setattr(parser, "_build_parser", refuse)
        loaded = parser._parser()
        assert loaded is not built
        root = Path(__file__).parent.parent
        for source in [*root.glob("tests/programs/*.pc"), *root.glob("examples/*.pc"), *root.glob("pycoro/stdlib/*.pc")]:
            text = source.read_text()
            outcomes = []
            for lark in (built, loaded):
                try:
                    outcomes.append(lark.parse(text))
                except Exception as err:  # noqa: BLE001 - the error programs: the same error
                    outcomes.append(repr(err))
            assert outcomes[0] == outcomes[1], source
        for entry in cache_dir.glob("parser-*"):
            entry.write_bytes(b"damaged")
        parser._parser.cache_clear()
        with pytest.raises(AssertionError, match="built although"):
            parser._parser()   # a damaged entry is built again
    finally:
        parser._parser.cache_clear()


def test_a_source_that_is_not_utf8_gets_a_positioned_error(tmp_path, pycoro):
    (tmp_path / "latin.pc").write_bytes(b'fn main() {\n    print("caf\xe9");\n}\n')
    (tmp_path / "main.pc").write_bytes(b'import "latin.pc";\nfn other() {}\n')
    for name in ("latin.pc", "main.pc"):
        proc = pycoro("run", name, cwd=tmp_path)
        assert proc.returncode == 1
        assert proc.stderr.splitlines() == [
            'latin.pc:2:15: error: source is not valid UTF-8 (byte 0xe9)',
            '    print("caf\ufffd");',
            '              ^',
        ], proc.stderr


# ---- `-o` somewhere that cannot be written: the user's error, for every artefact

EMITS = [("exe", []), ("obj", []), ("asm", []), ("llvm", []), ("lowered", []), ("shared", []),
         ("ptx", ["--target", "nvptx"])]


@pytest.mark.parametrize("emit, extra", EMITS, ids=[e for e, _ in EMITS])
def test_output_into_a_missing_directory_is_an_error(hello, pycoro, tmp_path, emit, extra):
    """As cc and rustc: status 1 and what is wrong; no directory is created."""
    out = tmp_path / "nodir" / "x"
    proc = pycoro("build", hello, "--emit", emit, *extra, "-o", out)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[0] == f"error: cannot write {out}: no such directory {out.parent}"
    assert "mkdir -p" in proc.stderr and "internal compiler error" not in proc.stderr
    assert not out.parent.exists()


@pytest.mark.parametrize("emit", ["exe", "llvm", "shared"])
def test_output_that_is_a_directory_or_under_a_file_is_an_error(hello, pycoro, tmp_path, emit):
    proc = pycoro("build", hello, "--emit", emit, "-o", tmp_path)
    assert (proc.returncode, proc.stderr) == (1, f"error: cannot write {tmp_path}: it is a directory\n")
    proc = pycoro("build", hello, "--emit", emit, "-o", hello / "x")
    assert (proc.returncode, proc.stderr) == (1, f"error: cannot write {hello / 'x'}: {hello} is not a directory\n")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_output_into_a_read_only_directory_is_an_error(hello, pycoro, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    proc = pycoro("build", hello, "-o", locked / "x")
    assert (proc.returncode, proc.stderr) == (1, f"error: cannot write {locked / 'x'}: permission denied\n")


@pytest.mark.parametrize("emit", ["obj", "exe"])
def test_a_failed_write_is_the_users_error(hello, tmp_path, monkeypatch, emit):
    """A write that fails after the checks (a full disk, a race) is worded the same way."""
    from pycoro.pipeline import driver
    from pycoro.backend import link
    from pycoro.common.diagnostics import CompileError

    def full(code, path):
        raise OSError(28, "No space left on device", path)
    monkeypatch.setitem(driver._WRITERS["native"], "obj", full)
    monkeypatch.setattr(link, "write_object", full)   # the executable's object, in a temporary folder
    out = str(tmp_path / "x")
    with pytest.raises((CompileError, OSError)) as err:
        Compilation.from_file(str(hello)).build(emit, out)
    if emit == "obj":
        assert err.type is CompileError and str(err.value) == f"error: cannot write {out}: no space left on device"
    else:   # not the artefact: not the user's (status 70)
        assert err.type is OSError


# ---- `extern fn`s that name no C function (issue 19: `pycoro run` died of SIGSEGV)

MISSING_C = "extern fn sqrtt(x: f64) -> f64;\nfn main() { print(sqrtt(2.0)); }\n"
MISSING_C_ERROR = [
    "x.pc:1:11: error: cannot find the C function `sqrtt` in the C library or the math library",
    "extern fn sqrtt(x: f64) -> f64;",
    "          ^~~~~",
    "x.pc:2:19: note: used here",
    "fn main() { print(sqrtt(2.0)); }",
    "                  ^~~~~",
    "hint: did you mean `sqrt`?",
]


@pytest.mark.parametrize("command", [["run"], ["run", "-O0"], ["run", "--trampoline"], ["build"]])
def test_a_missing_c_function_is_an_error_at_its_declaration(pycoro, tmp_path, command):
    """run and build agree: the C and math libraries, what `cc … -lm` links."""
    (tmp_path / "x.pc").write_text(MISSING_C)
    proc = pycoro(*command, "x.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stderr.splitlines()) == (1, MISSING_C_ERROR)
    assert not (tmp_path / "x").exists()


def test_a_missing_c_function_without_a_near_name(pycoro, tmp_path):
    (tmp_path / "y.pc").write_text("extern fn frobnicate(x: i32) -> i32;\nfn main() { print(frobnicate(1)); }\n")
    proc = pycoro("run", "y.pc", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "hint: `pycoro run` and `pycoro build` link the C and math libraries (libc, libm): give others with -l NAME")


@pytest.mark.parametrize("emit", ["obj", "asm", "llvm", "lowered", "shared"])
def test_artefacts_that_are_not_linked_may_leave_c_functions_undefined(pycoro, tmp_path, emit):
    """As `cc -c` and `cc -shared`: the linker, or whoever loads the library, resolves them."""
    (tmp_path / "x.pc").write_text(MISSING_C)
    proc = pycoro("build", "x.pc", "--emit", emit, "-o", "libx.so" if emit == "shared" else "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_a_cached_run_whose_c_function_is_gone_is_compiled_again(cache_dir, hello):
    """A cached entry that MCJIT would have to run with a missing C function is
    not run: the driver compiles the program again, and reports it."""
    from pycoro.pipeline import rerun
    from pycoro.pipeline.options import Options
    key = cache.object_key(rerun.KIND, hello.read_text(), hello.parent, Options(), str(hello))
    cache.store_object(rerun.KIND, key, b"object code", {"frame_counter": "x", "externs": ["no_such_c_fn"]}, [])
    assert cache.load_object(rerun.KIND, key) is not None
    assert rerun.run_cached(str(hello), Options(), False) is None
    assert Compilation.from_file(str(hello)).run() == 0   # compiled, not the entry's "object code"


@pytest.mark.parametrize("command", ["run", "build"])
def test_time_stages_prints_each_stage_on_stderr(hello, pycoro, tmp_path, command):
    args = [command, "--time-stages", "-O1", hello] + (["-o", tmp_path / "h"] if command == "build" else [])
    proc = pycoro(*args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ("hi 1.5\n" if command == "run" else "")
    stages = [line.split()[0] for line in proc.stderr.splitlines()]
    expected = ["parse", "check", "lower", "link", "optimise", "place", "cold", "emit", "total"]
    if command == "run" and proc.stderr.startswith("no compiler stage ran"):
        return   # run from the cache
    assert stages == expected, proc.stderr
    assert all(line.endswith(" ms") for line in proc.stderr.splitlines())


def test_time_stages_after_a_mistake_says_no_stage_ran(pycoro, tmp_path):
    proc = pycoro("run", "--time-stages", tmp_path / "missing.pc")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"error: no such file: {tmp_path / 'missing.pc'}", "no compiler stage ran"]


def test_version_names_pycoro_and_its_llvm(pycoro):
    from pycoro import __version__
    for flag in ("--version", "-V"):
        proc = pycoro(flag)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"pycoro {__version__} (LLVM 22."), proc.stdout
        assert "llvmlite 0.50" in proc.stdout


MISTAKE = "fn main() { let x: i64 = true; }\n"
PLAIN = ("m.pc:1:26: error: expected `i64`, found `bool`\n"
         "fn main() { let x: i64 = true; }\n"
         "                         ^~~~\n")


def _stderr(tmp_path, env: dict, terminal: bool) -> str:
    """pycoro's stderr for a program with an error, written to a terminal (a
    pseudo-terminal) or to a pipe, under `env` (colour variables cleared first)."""
    (tmp_path / "m.pc").write_text(MISTAKE)
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    command = [sys.executable, "-m", "pycoro", "run", "m.pc"]
    full_env = {**base, "TERM": "xterm-256color", **env}
    if not terminal:
        proc = subprocess.run(command, cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1
        return proc.stderr
    import pty
    leader, follower = pty.openpty()
    proc = subprocess.run(command, cwd=tmp_path, env=full_env, stdout=subprocess.DEVNULL, stderr=follower,
                          timeout=120)
    os.close(follower)
    data = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:   # EIO: the terminal's other end is closed and drained
            break
        if not chunk:
            break
        data += chunk
    os.close(leader)
    assert proc.returncode == 1
    return data.decode().replace("\r\n", "\n")


def test_diagnostics_are_coloured_on_a_terminal_only(tmp_path):
    coloured = _stderr(tmp_path, {}, terminal=True)
    assert "\x1b[" in coloured and "error:" in coloured
    assert _stderr(tmp_path, {}, terminal=False) == PLAIN                     # a pipe
    assert _stderr(tmp_path, {"NO_COLOR": "1"}, terminal=True) == PLAIN       # https://no-color.org
    assert _stderr(tmp_path, {"TERM": "dumb"}, terminal=True) == PLAIN
    forced = _stderr(tmp_path, {"FORCE_COLOR": "1"}, terminal=False)
    assert "\x1b[1;31merror:" in forced
    assert "\x1b" not in forced.replace("\x1b[1;31m", "").replace("\x1b[0m", "").replace("\x1b[1m", "").replace(
        "\x1b[1;32m", "")   # only bold and the severity's and the caret's colours


UNUSED = "fn main() {\n    let unit = 1;\n    print(2);\n}\n"


def test_a_warning_leaves_the_status_alone_and_deny_warnings_makes_it_an_error(pycoro, tmp_path, cache_dir):
    (tmp_path / "u.pc").write_text(UNUSED)
    warning = ("u.pc:2:9: warning: unused variable: `unit`\n    let unit = 1;\n        ^~~~\n"
               "hint: if this is intentional, prefix it with an underscore: `_unit`\n")
    for _ in range(2):   # compiled, then from the cache (which shows its warnings again, as cargo does)
        proc = pycoro("run", "u.pc", cwd=tmp_path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "2\n", warning)
    for command in (["run"], ["check"], ["build", "-o", "u"]):
        proc = pycoro(*command, "--deny-warnings", "u.pc", cwd=tmp_path)
        assert proc.returncode == 1, (command, proc.stderr)
        assert proc.stdout == ""
        assert proc.stderr.startswith("u.pc:2:9: error: unused variable: `unit`\n"), proc.stderr
        assert "note: `--deny-warnings` makes every warning an error" in proc.stderr
    assert not (tmp_path / "u").exists()
    (tmp_path / "u.pc").write_text(UNUSED.replace("unit", "_unit"))
    proc = pycoro("run", "--deny-warnings", "u.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "2\n", "")


@pytest.mark.parametrize("source,hint", [
    ("fn main() { for v in range(0, 3) { print(v); } }\n", 'hint: `range` is in `std/iter`: add `import "std/iter";`'),
    ("fn main() { print(now()); }\n", 'hint: `now` is in `std/async`: add `import "std/async";`'),
    ("fn main() { let n: i64 = 3; let z: f64 = n; print(z); }\n", "hint: convert it: `n as f64`"),
    ("fn main() { let n: i32 = 3; let z: i64 = n + 1i32; print(z); }\n", "hint: convert it: `(…) as i64`"),
    ("struct P { x: f64, y: f64 }\nfn main() { let p = P { x: 1.0, y: 2.0 }; print(p.z); }\n",
     "hint: `P` has fields `x`, `y`"),
    ("struct P { x: f64, y: f64 }\nfn main() { let p = P { x: 1.0, y: 2.0 }; print(p.xx); }\n",
     "hint: did you mean `x`?"),
    ("fn main() {\n    var i = 0;\n    i++;\n    print(i);\n}\n", "hint: PyCoro has no `++`: write `i += 1`"),
    ("fn main() {\n    var count = 0;\n    count--;\n    print(count);\n}\n", "hint: PyCoro has no `--`: write `count -= 1`"),
])
def test_hints_for_common_mistakes(pycoro, tmp_path, source, hint):
    (tmp_path / "m.pc").write_text(source)
    proc = pycoro("check", "m.pc", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[3] == hint, proc.stderr


def test_run_reads_the_program_from_stdin(tmp_path):
    (tmp_path / "lib.pc").write_text("fn twice(x: i64) -> i64 { return 2 * x; }\n")
    proc = subprocess.run([sys.executable, "-m", "pycoro", "run", "-"], cwd=tmp_path, capture_output=True, text=True,
                          input='import "lib.pc";\nfn main() { print(twice(21)); }\n', timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "42\n", "")
    proc = subprocess.run([sys.executable, "-m", "pycoro", "check", "-"], cwd=tmp_path, capture_output=True,
                          text=True, input="fn main() { let x: i64 = true; print(x); }\n", timeout=120)
    assert proc.returncode == 1 and proc.stderr.startswith("<stdin>:1:26: error: expected `i64`, found `bool`")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_closed_stdin_is_a_diagnostic(tmp_path, command):
    proc = subprocess.run(f"{shlex.quote(sys.executable)} -m pycoro {command} - <&-", shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYCORO_SERVER": "0"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "error: cannot read the program from stdin: "
                                                                  "it is closed\n")


@pytest.mark.parametrize("emit,start", [("llvm", "; ModuleID"), ("lowered", "; ModuleID"), ("asm", "\t.")])
def test_text_artefacts_go_to_stdout_with_o_dash(hello, pycoro, tmp_path, emit, start):
    proc = pycoro("build", "--emit", emit, "-o", "-", hello, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(start) and not (tmp_path / "-").exists()


def test_o_dash_refuses_binary_artefacts(hello, pycoro, tmp_path):
    proc = pycoro("build", "-o", "-", hello, cwd=tmp_path)
    assert proc.returncode == 1 and not (tmp_path / "-").exists()
    assert proc.stderr.startswith("error: -o - writes text to stdout: --emit exe is not text")


def test_cc_with_flags_links(hello, pycoro, tmp_path):
    proc = pycoro("build", hello, "-o", tmp_path / "h", env={"CC": "cc -Wl,--no-such-linker-flag"})
    assert proc.returncode == 1 and "linking failed (cc -Wl,--no-such-linker-flag)" in proc.stderr
    proc = pycoro("build", hello, "-o", tmp_path / "h", env={"CC": "cc -Wl,--as-needed"})
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([tmp_path / "h"], capture_output=True, text=True).stdout == "hi 1.5\n"


def test_shell_completion_is_offered(pycoro):
    proc = pycoro("--help")
    assert "--install-completion" in proc.stdout and "--show-completion" in proc.stdout


def test_target_cpu_generic_builds_for_any_x86_64(pycoro, tmp_path):
    import platform
    if platform.machine() != "x86_64":
        pytest.skip("the generic CPU tested is x86-64's")
    (tmp_path / "v.pc").write_text("var xs: [f64; 1024];\nfn main() {\n    var s = 0.0;\n"
                                   "    for i in 0..1024 { xs[i] = i as f64; }\n"
                                   "    for i in 0..1024 { s += xs[i] * 2.0; }\n    print(s);\n}\n")
    proc = pycoro("build", "--target-cpu", "generic", "--emit", "asm", "-o", "-", "v.pc", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "%ymm" not in proc.stdout and "%zmm" not in proc.stdout   # SSE2 at most: every x86-64 has it
    proc = pycoro("run", "--target-cpu", "generic", "v.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "1047552.0\n")


def test_c_libraries_with_l_and_L(pycoro, tmp_path, cache_dir):
    subprocess.run(["cc", "-shared", "-fPIC", "-x", "c", "-", "-o", str(tmp_path / "libtwice.so")], check=True,
                   input="int twice(int x) { return 2 * x; }\n", text=True)
    (tmp_path / "prog.pc").write_text("extern fn twice(x: i32) -> i32;\nfn main() { print(twice(21)); }\n")
    for flags in (["-L", ".", "-l", "twice"], ["-L.", "-ltwice"], ["-L", ".", "-l", "twice", "--check-leaks"]):
        for _ in range(2):   # compiled, then from the cache
            proc = pycoro("run", *flags, "prog.pc", cwd=tmp_path)
            assert (proc.returncode, proc.stdout) == (0, "42\n"), proc.stderr
    proc = pycoro("build", "-L", ".", "-l", "twice", "prog.pc", "-o", "prog", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, cwd="/")   # -L's folder: its rpath
    assert run.stdout == "42\n"
    proc = pycoro("run", "prog.pc", cwd=tmp_path)
    assert proc.returncode == 1 and "cannot find the C function `twice`" in proc.stderr
    proc = pycoro("run", "-l", "nosuchlib", "prog.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "error: cannot find the C library `nosuchlib` (-l nosuchlib)\n"
                                              "hint: give the folder that holds libnosuchlib.so with -L DIR\n")


def test_several_syntax_errors_are_reported_without_cascades(pycoro, tmp_path):
    (tmp_path / "se.pc").write_text("fn a() -> i64 {\n    let x = ;\n    return 1;\n}\n\nfn b() {\n    print(1)\n}\n\n"
                                    "struct S { x: i64 y: i64 }\n\nfn c() {\n    if true {\n}\n\nfn main() {\n"
                                    "    var i = 0;\n    i++;\n}\n")
    proc = pycoro("check", "se.pc", cwd=tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert errors == ["se.pc:2:13: error: expected an expression, found ';'",
                      "se.pc:7:13: error: expected ';', found '}'",
                      "se.pc:10:19: error: expected ',' or '}', found 'y'",
                      "se.pc:16:1: error: expected an expression or '}', found 'fn'",
                      "se.pc:18:8: error: expected an expression, found ';'"], proc.stderr


def test_long_types_are_shortened_in_diagnostics(pycoro, tmp_path):
    (tmp_path / "lt.pc").write_text("struct Box<T> { v: T }\nfn main() {\n"
                                    "    let inner = Box { v: Box { v: Box { v: Pair { first: 1, second: 2.5 } } } };\n"
                                    "    let b = Pair { first: inner, second: inner };\n    let x: i64 = b;\n}\n")
    proc = pycoro("check", "lt.pc", cwd=tmp_path)
    assert proc.stderr.splitlines()[0] == "lt.pc:5:18: error: expected `i64`, found `Pair<Box<Box<…>>, Box<Box<…>>>`"


def test_usage_lines_name_the_file_argument(pycoro):
    proc = pycoro("run", "--help")
    assert "pycoro run [OPTIONS] FILE" in proc.stdout
    assert "{FILE}" not in proc.stdout and "<str>" not in proc.stdout   # typer's, for a required text argument
    assert "-l      NAME" in proc.stdout and "--target-cpu             CPU" in proc.stdout


def test_ctrl_c_ends_a_build_at_once(tmp_path):
    """Ctrl-C during a compilation ends `pycoro build` then, writing nothing.
    (When `threading` was first imported on the compiling thread, Python's
    exit waited for that thread: KeyboardInterrupt was printed, and the
    build went on to the end and wrote its executable.)"""
    import signal
    import time
    source = "".join(f"fn f{k}(n: i64) -> i64 {{\n    var s: i64 = {k};\n    var i: i64 = 0;\n"
                     f"    while i < n {{ s += (i * {k % 9 + 2}) ^ (s >> 3); if s % 7 == 3 {{ s -= i; }} i += 1; }}\n"
                     f"    return s;\n}}\n" for k in range(2000))
    calls = " + ".join(f"f{k}(3)" for k in range(2000))
    (tmp_path / "huge.pc").write_text(source + f"fn main() {{ print({calls}); }}\n")
    env = {**os.environ, "PYCORO_SERVER": "0", "PYCORO_CACHE_DIR": str(tmp_path / "c")}
    build = subprocess.Popen([sys.executable, "-m", "pycoro", "build", "-O3", "huge.pc", "-o", "huge"], cwd=tmp_path,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(1.5)
    build.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = build.communicate(timeout=120)
    assert time.monotonic() - sent < 5, err
    assert build.returncode in (-signal.SIGINT, 130, 1), err
    assert not (tmp_path / "huge").exists()


def test_a_compiling_command_runs_without_the_cycle_collector_and_a_host_keeps_its_own(hello, tmp_path):
    """A command that compiles turns Python's cycle collector off for its one
    compilation (cli/main.run_here: 4-11% of a build); `import pycoro` in a
    host process leaves the host's collector as it found it."""
    script = ("import gc, sys\n"
              "from pycoro.cli.main import run_here\n"
              "import pycoro\n"
              "pycoro.compile('fn one() -> i64 { return 1; }', cache=False).one()\n"
              "before = gc.isenabled()\n"
              "status = run_here(['build', '--emit', 'obj', sys.argv[1], '-o', sys.argv[2]])\n"
              "print(before, gc.isenabled(), status)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(hello), str(tmp_path / "hello.o")],
                          capture_output=True, text=True)
    assert proc.stdout.split() == ["True", "False", "0"], proc.stderr


def test_the_caret_counts_wide_characters_as_two_columns():
    from pycoro.common.diagnostics import Diagnostic, Sources, Span, render
    line = 'fn main() { let s = "日本語"; let x: i32 = 1.5; }'
    col = line.index("1.5") + 1
    sources = Sources()
    sources.add("w.pc", line + "\n")
    text = render(Diagnostic("expected `i32`, found `f64`", Span("w.pc", 1, col, 1, col + 3)), sources=sources)
    caret = text.splitlines()[2]
    assert caret == " " * (col - 1 + 3) + "^~~"   # three characters, six columns


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """`pycoro explain f.pc | head -1`: a closed pipe is not a compiler bug."""
    gens = "".join(f"fn g{i}(n: i64) -> Generator<i64> {{ var i = 0; while i < n {{ yield i; i += 1; }} }}\n"
                   for i in range(300))
    loops = "".join(f"    for v in g{i}(2) {{ print(v); }}\n" for i in range(300))
    src = tmp_path / "big.pc"
    src.write_text(f"{gens}fn main() {{\n{loops}}}\n")
    proc = subprocess.Popen([sys.executable, "-m", "pycoro", "explain", str(src)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == f"coroutines in {src} (-O2)\n".encode()
    proc.stdout.close()   # explain's table is far larger than a pipe holds
    assert proc.wait(timeout=120) == 0
    assert proc.stderr.read() == b""


def test_an_executable_recurses_as_deep_as_pycoro_run(pycoro, tmp_path):
    """`run` runs a program on a thread of 512 MiB of stack; an executable
    raises its main thread's limit to match (8 MiB overflowed here)."""
    src = tmp_path / "deep.pc"
    src.write_text("fn depth(n: i64) -> i64 { if n == 0 { return 0; } return 1 + depth(n - 1) * 1; }\n"
                   "fn main() { print(depth(1000000)); }\n")
    exe = tmp_path / "deep"
    assert pycoro("build", "-O0", src, "-o", exe).returncode == 0
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "1000000\n", "")
    assert pycoro("run", "-O0", src).stdout == "1000000\n"


def test_a_diagnostic_shows_the_line_the_lexer_counted(pycoro, tmp_path):
    """Lines end at "\\n" alone, for the lexer and for the excerpt: a U+2028, a
    form feed or a lone "\\r" inside a line cut the excerpt short, or showed
    the next line, and the message printed the character as it is."""
    src = tmp_path / "odd.pc"
    src.write_bytes("fn main() {\n    let a = 1;\x0c let b = 2;\r let c = 3;\n    prin\u2028t(a);\n}\n".encode())
    proc = pycoro("check", src.name, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.split("\n")[:3] == [
        "odd.pc:3:9: error: unexpected character U+2028",
        "    prin\u2028t(a);",
        "        ^"]
