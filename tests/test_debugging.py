"""Debugging (issue 22, docs/debugging.md): `-g` builds that gdb reads.

gdb runs in batch mode on executables built with `pycoro build -g`; these
tests skip where gdb is missing (`.ci/run` installs it)."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed (apt install gdb)")

GENERATOR = """\
struct Point { x: i64, y: f64 }
fn squares(n: i64) -> Generator<i64> {
    var total: i64 = 0;
    for i in 0..n {
        let sq = i * i;
        total += sq;
        yield total;
    }
}
fn walk(points: [Point]) -> Generator<f64> {
    let label = "walking";
    for p in points {
        let inside = p.y > 1.0;
        yield p.y * (p.x as f64);
    }
}
fn consume(n: i64) -> i64 {
    var sum: i64 = 0;
    for v in squares(n) {
        sum += v;
    }
    return sum;
}
fn main() {
    var pts: [Point; 2] = [Point { x: 1, y: 0.5 }, Point { x: 2, y: 1.5 }];
    var total = 0.0;
    for v in walk(pts[..]) { total += v; }
    print(consume(4), total);
}
"""


# At -O2 a constant argument would fold the loop away: the input comes from C.
OPTIMISED = """\
extern fn atoi(s: ptr<u8>) -> i32;
fn squares(n: i64) -> Generator<i64> {
    var total: i64 = 0;
    for i in 0..n {
        total += i * i;
        yield total;
    }
}
fn consume(n: i64) -> i64 {
    var sum: i64 = 0;
    for v in squares(n) {
        sum += v ^ (v >> 3);
    }
    return sum;
}
fn main() {
    print(consume(atoi("1000" as ptr<u8>) as i64));
}
"""


def gdb(exe, *commands: str, trust=None) -> str:
    """gdb's output (`trust`: a file whose auto-loaded scripts gdb may run)."""
    args = ["gdb", "-nx", "-batch"] + (["-iex", f"add-auto-load-safe-path {trust}"] if trust else [])
    for c in commands:
        args += ["-ex", c]
    proc = subprocess.run(args + [str(exe)], capture_output=True, text=True, timeout=120)
    return proc.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from conftest import run_pycoro
    where = tmp_path_factory.mktemp("g")
    (where / "gen.pc").write_text(GENERATOR)
    (where / "opt.pc").write_text(OPTIMISED)
    for source, exe in (("gen.pc", "gen-O0"), ("opt.pc", "opt-O2")):
        proc = run_pycoro("build", "-g", exe[-3:], source, "-o", exe, cwd=where)
        assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(where / "gen-O0")], capture_output=True, text=True).stdout == "20 3.5\n"
    return where


def test_a_breakpoint_inside_a_generator_shows_its_locals(built):
    out = gdb(built / "gen-O0", "break gen.pc:6", "run", "info locals", "continue", "info locals", "bt")
    stops = out.split("Breakpoint 1, ")[1:]
    assert len(stops) == 2
    assert "at gen.pc:6\n6\t        total += sq;" in stops[0]
    assert "total = 0\nsq = 0\ni = 0" in stops[0]
    assert "total = 0\nsq = 1\ni = 1" in stops[1]   # the frame's values, step after step
    assert "pc.consume (n=4) at gen.pc:19" in out   # the consumer, in the backtrace, at its `for`


def test_variables_of_structs_slices_strings_and_bools(built):
    out = gdb(built / "gen-O0", "break gen.pc:14", "run", "info locals", "info args")
    assert "inside = false" in out
    assert "p = {x = 1, y = 0.5}" in out
    assert 'label = 0x' in out and '"walking"' in out
    assert "points = {ptr = 0x" in out and "len = 2}" in out


def test_optimised_code_keeps_its_line_table(built):
    """At -O2 breakpoints by line work and the backtrace has the inlined
    functions at their lines; variables may be optimised out, as in clang."""
    out = gdb(built / "opt-O2", "break opt.pc:12", "run", "bt")
    assert "at opt.pc:12\n12\t        sum += v ^ (v >> 3);" in out
    assert "pc.consume (n=1000) at opt.pc:12" in out and "pc.main () at opt.pc:17" in out


def test_run_takes_g_too(pycoro, tmp_path):
    (tmp_path / "gen.pc").write_text(GENERATOR)
    proc = pycoro("run", "-g", "gen.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "20 3.5\n"), proc.stderr


HANDLE_IN_A_TASK = """\
fn cnt(n: i64) -> Generator<i64> { for i in 0..n { yield i; } }
async fn own(g: Generator<i64>) -> i64 {
    var h = g;
    var t = 0;
    while h.next() { await sleep(1); t += h.value(); }
    return t;
}
async fn main() { let j = spawn own(cnt(3)); print(await j); }
"""


@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_g_builds_an_async_fn_that_keeps_a_handle_across_an_await(pycoro, tmp_path, level):
    """LLVM asserted on the location CoroSplit gave `h` (the context
    register's entry value, made indirect): driver._without_entry_values."""
    (tmp_path / "t.pc").write_text(HANDLE_IN_A_TASK)
    proc = pycoro("run", "-g", level, "t.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "3\n"), proc.stderr


HANDLES = """\
fn squares(n: i64) -> Generator<i64> {
    for i in 0..n {
        yield i * i;
    }
}
fn main() {
    var g = squares(4);
    var fresh = squares(2);
    var done = squares(0);
    for _ in 0..4 { g.next(); }
    done.next();
    var h = g.handle();
    print(g.value());
}
"""

# Where each coroutine is suspended, through `yield from` and `await`.
CHAINS = """\
fn inner(n: i64) -> Generator<i64> {
    for i in 0..n {
        yield i;
    }
}
fn middle(n: i64) -> Generator<i64> {
    yield 100;
    yield from inner(n);
    yield 200;
}
fn outer(n: i64) -> Generator<i64> {
    yield from middle(n);
}
var parked: Handle = null;
struct Pause {}
impl Pause {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) { parked = h; }
    fn await_resume(mut self) {}
}
fn leaf(x: i64) -> Task<i64> {
    await Pause {};
    co_return x + 1;
}
fn mid(x: i64) -> Task<i64> {
    let r = await leaf(x);
    co_return r * 2;
}
fn top(x: i64) -> Task<i64> {
    co_return await mid(x);
}
fn main() {
    var g = outer(3);
    for _ in 0..3 { g.next(); }
    var t = top(4);
    t.promise().continuation = noop_handle();
    t.resume();
    var p = parked;
    print(g.value(), t.done());
    p.resume();
    print(t.promise().value);
}
"""

FRAME = r"\(frame 0x[0-9a-f]+\)"
NO_TREE = "out = 0x0, active = 0x0, active_slot = 0x0, parent = 0x0, child = 0x0"   # then any fields added later


def build(tmp_path, name: str, source: str, *flags: str):
    from conftest import run_pycoro
    (tmp_path / f"{name}.pc").write_text(source)
    proc = run_pycoro("build", "-g", *flags, f"{name}.pc", "-o", name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / name


def with_printers(exe, *commands: str) -> str:
    """gdb on `exe`, trusting the printers it carries (.debug_gdb_scripts)."""
    return gdb(exe, *commands, trust=exe)


def test_gdb_prints_a_handle_as_the_coroutine_its_line_and_its_promise(tmp_path):
    """pycoro's gdb printers (pycoro/debugger/gdb_printers.py): which
    coroutine a handle refers to, the line it is suspended at (a fresh one
    at its first line), its promise, and whether it is finished."""
    exe = build(tmp_path, "h", HANDLES, "-O0")
    out = with_printers(exe, "break h.pc:13", "run", "info locals", "whatis g")
    assert re.search(rf"^g = Generator<i64> suspended in squares at h.pc:3 {FRAME} = "
                     rf"\{{current = 9, {NO_TREE}[,}}]", out, re.M), out
    assert re.search(rf"^fresh = Generator<i64> suspended in squares at h.pc:1:1 {FRAME} = "
                     rf"\{{current = 0, {NO_TREE}[,}}]", out, re.M), out
    assert re.search(rf"^done = Generator<i64> finished {FRAME} = \{{current = 0, {NO_TREE}[,}}]", out, re.M), out
    # An untyped Handle: the promise's type comes from the coroutine's code.
    assert re.search(rf"^h = Handle suspended in squares at h.pc:3 {FRAME} = \{{current = 9, ", out, re.M), out
    assert "type = Generator<i64>" in out


def test_the_chain_of_generators_through_yield_from_and_of_tasks_through_await(tmp_path):
    exe = build(tmp_path, "c", CHAINS, "-O0")
    out = with_printers(exe, "break c.pc:39", "run", "pycoro chain g", "pycoro chain p", "pycoro chain t", "print p")
    chains = out.split("#0  ")[1:]
    # (positions from the program's backtrace table: a suspend point's
    # statement, with its column where LLVM's label has one)
    assert chains[0] == "inner at c.pc:3\n#1  middle at c.pc:8:5\n#2  outer at c.pc:12:5\n"
    assert chains[1] == "leaf at c.pc:22\n#1  mid at c.pc:26:5\n#2  top at c.pc:30:5\n"
    assert chains[2].startswith("top at c.pc:30:5\n$1 = ")   # a task knows who awaits it, not what it awaits
    assert re.search(rf"^\$1 = Handle suspended in leaf at c.pc:22 {FRAME} = \{{value = 0, continuation = 0x",
                     out, re.M), out


def test_optimised_code_shows_the_lines_the_backtrace_table_knows(tmp_path):
    """At -O2 the lines come from the program's backtrace table (where LLVM
    kept a suspend point's label: not for `inner`'s `yield` here, which then
    shows none rather than a wrong one); the chain still names every
    coroutine, and says where it cannot go on."""
    exe = build(tmp_path, "c", CHAINS, "-O2")
    parked = "*(Handle *)&'pc.parked'"   # `p` is optimised out; globals are not described
    out = with_printers(exe, "break c.pc:39", "run", "pycoro chain g", f"pycoro chain {parked}", "print g")
    assert "#0  inner\n#1  middle at c.pc:8:5\n#2  outer at c.pc:12:5\n" in out
    assert "#0  leaf\n(the promise of leaf is unknown, optimised code: the chain may go on)\n" in out
    assert re.search(rf"^\$1 = Generator<i64> suspended in outer at c.pc:12:5 {FRAME} = \{{current = 1, ",
                     out, re.M), out


ASYNC = """\
async fn leaf(x: i64) -> i64 {
    await sleep(10);
    return x * 2;
}
async fn waiter(j: Join<i64>) -> i64 {
    let v = await j;
    return v + 1;
}
fn stop() {}
async fn main() {
    let a = spawn leaf(1);
    let b = spawn waiter(a);
    await yield_now();
    stop();
    print(await b);
}
"""


def test_the_chain_of_an_async_task_names_the_tasks_waiting_for_it(tmp_path):
    exe = build(tmp_path, "a", ASYNC, "-O0")
    # std/async's locals are not described: the sleeping task, from its timer (pycoro/stdlib/async.pc's __Timer)
    sleeping = "(Join<i64>)(*(void ***)&'pc.__timers')[2]"
    out = with_printers(exe, "break a.pc:14", "run", f"print {sleeping}", f"pycoro chain {sleeping}")
    assert re.search(r"^\$1 = Join<i64> waiting at a.pc:2:5 \(task 0x[0-9a-f]+\)$", out, re.M), out
    task = "task 0x[0-9a-f]+"
    assert re.search(rf"^#0  {task} waiting at a.pc:2:5\n#1  {task} in waiter waiting at a.pc:6:13\n", out, re.M), out


def test_chain_says_what_it_needs(tmp_path):
    exe = build(tmp_path, "h", HANDLES, "-O0")
    err = subprocess.run(["gdb", "-nx", "-batch", "-iex", f"add-auto-load-safe-path {exe}", "-ex", "break h.pc:13",
                          "-ex", "run", "-ex", "pycoro chain", "-ex", "pycoro chain 1 + 2", str(exe)],
                         capture_output=True, text=True, timeout=120).stderr
    assert "usage: pycoro chain EXPR (a coroutine handle)\n" in err
    assert "`1 + 2` is a int, not a coroutine handle\n" in err


def test_executables_built_with_g_carry_the_printers(tmp_path):
    """gdb loads them from the `.debug_gdb_scripts` section, where its
    `auto-load safe-path` allows (docs/debugging.md), and declines otherwise."""
    exe = build(tmp_path, "h", HANDLES, "-O0")
    assert re.search(rf"^g = Generator<i64> suspended in squares at h.pc:3 {FRAME}",
                     with_printers(exe, "break h.pc:13", "run", "info locals"), re.M)
    untrusted = subprocess.run(["gdb", "-nx", "-batch", "-ex", "break h.pc:13", "-ex", "run", "-ex", "print g",
                                str(exe)], capture_output=True, text=True, timeout=120)
    assert f'File "{exe}" auto-loading has been declined' in untrusted.stderr
    assert re.search(r"^\$1 = \(Generator<i64>\) 0x", untrusted.stdout, re.M), untrusted.stdout


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf is not installed (binutils)")
@pytest.mark.parametrize("flags, carries", [(["-g"], True), ([], False), (["-g", "--emit", "shared"], True)],
                         ids=["g", "without-g", "shared"])
def test_the_section_is_only_in_g_builds(tmp_path, flags, carries):
    from conftest import run_pycoro
    (tmp_path / "h.pc").write_text(HANDLES)
    assert run_pycoro("build", *flags, "h.pc", "-o", "out", cwd=tmp_path).returncode == 0
    sections = subprocess.run(["readelf", "-SW", str(tmp_path / "out")], capture_output=True, text=True).stdout
    assert (" .debug_gdb_scripts " in sections) == carries
    if "shared" not in flags:   # the program is the same
        assert subprocess.run([str(tmp_path / "out")], capture_output=True, text=True).stdout == "9\n"


def test_pycoro_gdb_loads_the_printers(tmp_path):
    build(tmp_path, "h", HANDLES, "-O0")
    import os
    import sys
    proc = subprocess.run([sys.executable, "-m", "pycoro", "gdb", "h"],
                          input="break h.pc:13\nrun\nprint g\npycoro chain g\nkill\nquit\n",
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert "= Generator<i64> suspended in squares at h.pc:3 (frame 0x" in proc.stdout, proc.stdout + proc.stderr
    assert "#0  squares at h.pc:3\n" in proc.stdout
    assert "auto-loading has been declined" not in proc.stderr
