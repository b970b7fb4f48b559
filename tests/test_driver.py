"""The driver as a pipeline of products: each stage runs once per
compilation, its time is kept, and nothing of one compilation is shared
with another (ISSUE 20: one product per stage, no global state)."""
from __future__ import annotations

import collections
import subprocess
import threading
from pathlib import Path

import pytest

from pycoro.common.diagnostics import CompileError
from pycoro.pipeline.driver import Compilation
from pycoro.frontend.check import ProgramChecker
from pycoro.frontend.layout import StructLayouts
from pycoro.pipeline.options import Options

GPU_SQUARES = Path(__file__).parent.parent / "examples" / "gpu" / "squares.pc"
EXPORTS = """\
struct P { x: i64, y: i64 }
fn norm1(x: i64, y: i64) -> i64 { let p = P { x: x, y: y }; return p.x + p.y; }
fn evens(n: i64) -> Generator<i64> { for i in 0..n { if i % 2 == 0 { yield i; } } }
"""


def stage_counts(c: Compilation) -> dict[str, int]:
    return dict(collections.Counter(name for name, _ in c.stage_times))


def test_a_native_build_runs_each_stage_once(tmp_path):
    c = Compilation("fn main() { print(1); }", "m.pc", tmp_path)
    c.build("obj", str(tmp_path / "m.o"))
    assert stage_counts(c) == {"parse": 1, "check": 1, "lower": 1, "link runtime": 1, "optimise": 1,
                               "place ramps": 1, "cold code": 1, "emit": 1}
    assert all(seconds >= 0 for _, seconds in c.stage_times)


def test_an_nvptx_build_without_transfers_runs_each_stage_once(tmp_path):
    """The pipeline's product that answers "is the trampoline needed?" is the
    build's when it is not (it used to be computed twice)."""
    c = Compilation.from_file(str(GPU_SQUARES), Options(target="nvptx"))
    c.build("ptx", str(tmp_path / "k.ptx"))
    assert stage_counts(c) == {"parse": 1, "check": 1, "lower": 1, "link runtime": 1, "optimise": 1, "emit": 1}
    assert ".entry" in (tmp_path / "k.ptx").read_text()


def test_a_shared_library_checks_the_program_once(tmp_path):
    """The exports' wrappers are checked as one more module of the program
    already checked, not by checking the program again with them appended."""
    c = Compilation(EXPORTS, "x.pc", tmp_path, Options(need_main=False))
    c.shared_library(str(tmp_path / "libx.so"))
    assert stage_counts(c) == {"parse": 1, "check": 1, "check wrappers": 1, "lower": 1, "link runtime": 1,
                               "optimise": 1, "place ramps": 1, "cold code": 1, "emit": 1}
    assert (tmp_path / "x.h").exists()


def test_pycoro_compile_checks_the_program_once():
    import pycoro
    mod = pycoro.compile(EXPORTS, cache=False)
    assert (mod.norm1(2, 3), list(mod.evens(7))) == (5, [0, 2, 4, 6])


def test_the_checked_program_holds_frozen_layouts_and_no_checker(tmp_path):
    c = Compilation(EXPORTS, "x.pc", tmp_path, Options(need_main=False))
    program = c.check()
    assert isinstance(program.layouts, StructLayouts)
    assert not any(isinstance(v, ProgramChecker) or getattr(v, "__self__", None) is not None
                   for v in vars(program).values())
    (point,) = {t for f in program.functions for t in f.types.values() if str(t) == "P"}
    assert [name for name, _ in program.layouts.fields(point)] == ["x", "y"]
    assert program.layouts.size_align(point) == (16, 8)


def test_two_compilations_in_two_threads_render_their_own_lines():
    """Each compilation keeps the sources it read (no process-wide cache), and
    the parser's recent tokens are its own thread's: two programs of the same
    file name, with different mistakes, compiled at once, each show theirs."""
    programs = {
        "type": ("fn main() {\n    let a: i32 = true;\n}\n",
                 "t.pc:2:18: error: expected `i32`, found `bool`\n    let a: i32 = true;\n                 ^~~~"),
        "syntax": ("fn main() {\n    let b = 1 < 2 < 3;\n}\n",
                   "t.pc:2:18: error: expected ';', found '<'\n    let b = 1 < 2 < 3;\n                 ^\n"
                   "hint: comparison operators cannot be chained: write `a < b && b < c`"),
    }
    found: dict[str, list[str]] = {kind: [] for kind in programs}
    start = threading.Barrier(len(programs))

    def compile_many(kind: str) -> None:
        start.wait()
        for _ in range(20):
            with pytest.raises(CompileError) as err:
                Compilation(programs[kind][0], "t.pc", Path(".")).check()
            found[kind].append(str(err.value))
    threads = [threading.Thread(target=compile_many, args=(kind,)) for kind in programs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for kind, (_, expected) in programs.items():
        assert found[kind] == [expected] * 20, kind


def test_the_exports_are_made_once_per_compilation(tmp_path):
    """A shared library and then the object for this process, from one
    compilation: the wrappers are checked once (a second extension of the
    same checker would define them twice)."""
    c = Compilation(EXPORTS, "x.pc", tmp_path, Options(need_main=False))
    c.shared_library(str(tmp_path / "libx.so"))
    found, code, _ = c.export_object(use_cache=False)
    assert [e.name for e in found] == ["norm1", "evens"] and code
    assert stage_counts(c)["check wrappers"] == 1


def test_nothing_of_a_compilation_survives_it():
    """The memos of pure functions of syntax and types are keyed weakly: once a
    compilation is gone, none of its nodes or types is kept (lru_caches kept
    up to 65,536 of them, and every syntax tree they held)."""
    import gc
    import weakref

    from pycoro.frontend.check.expressions import is_literalish
    from pycoro.frontend.check.suspension import is_coroutine
    from pycoro.frontend.types import PRIMITIVES, has_vars, size
    from pycoro.middle.inline_budget import syntax_size
    memos = (is_coroutine, is_literalish, size, has_vars, syntax_size)
    before = {id(key) for f in memos for key in f.memo.keys()}
    examples = Path(__file__).parent.parent / "examples"
    compilation = Compilation((examples / "async.pc").read_text(), "async.pc", examples)
    compilation.lower()
    added = [weakref.ref(key) for f in memos for key in f.memo.keys() if id(key) not in before]
    assert len(added) > 100
    del compilation
    gc.collect()
    alive = [str(ref()) for ref in added if ref() is not None and ref() not in PRIMITIVES.values()]
    assert not alive, alive


def test_the_runtimes_once_only_code_is_assembly_compiled_once(tmp_path):
    """What runs at most once (start-up, a fault, a panic's way out) or whose
    time is a C call's (printing a float) is neither optimised nor code-generated
    with each program: compiled once to assembly (backend/cold_runtime.py), it
    is module-level assembly in the lowered module, which only declares it; the
    program's own code is optimised as before (issue 23)."""
    import re
    source = "var xs: [i64; 4];\nfn main() {\n    print(1.5);\n    var i = 0;\n    while i < 9 { xs[i] = i; i += 1; }\n}\n"
    lowered = str(Compilation(source, "once.pc", tmp_path, Options(opt_level=2)).lowered()[0])
    for name in ("print_float", "find_stack", "load_unwinder", "on_fault", "fail", "__pc_panic_bounds"):
        assert re.search(rf"^declare [^\n]*@pc\.{name}\(", lowered, re.M), name
        assert f'module asm "pc.{name}:"' in lowered, name
        assert f'module asm "\t.globl\tpc.{name}"' not in lowered, name   # a local symbol: each object its own
    main = re.search(r"^define [^\n]*@main\([^\n]*$", lowered, re.M).group(0)
    assert "optnone" not in main


def test_a_program_may_name_what_the_runtimes_cold_code_uses(tmp_path):
    """The cold code's assembly names runtime symbols (`stack_low`, `fail`); a
    program's own of those names are its own, compiled or from an executable."""
    source = ("var stack_low: i64 = 5;\nfn fail(x: i64) -> i64 { return x + stack_low; }\n"
              "fn find_stack() -> i64 { return 7; }\nfn main() { print(fail(1), find_stack(), 1.5); }\n")
    (tmp_path / "clash.pc").write_text(source)
    compilation = Compilation(source, "clash.pc", tmp_path)
    compilation.build("exe", str(tmp_path / "clash"))
    proc = subprocess.run([str(tmp_path / "clash")], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, "6 7 1.5\n")


def test_the_cold_code_refuses_a_kind_of_global_it_does_not_split():
    """backend/cold_runtime.py copies the runtime's header into each cold
    function's unit, declaring its globals: a kind of definition it does not
    know would be copied whole, a second copy of its data in the object."""
    from pycoro.backend import cold_runtime
    runtime = '@"pc.table" = internal constant [2 x i64] [i64 1, i64 2]\ndefine void @"pc.f"() {\n  ret void\n}\n'
    with pytest.raises(ValueError, match="does not know"):
        cold_runtime.split(runtime, ("pc.f",))
