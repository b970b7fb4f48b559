"""Debugging (issue 22, docs/debugging.md): `-g` builds that gdb reads.

gdb runs in batch mode on executables built with `pycoro build -g`; these
tests skip where gdb is missing (`.ci/run` installs it)."""
from __future__ import annotations

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


def gdb(exe, *commands: str) -> str:
    args = ["gdb", "-nx", "-batch"]
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


HANDLES = """\
fn squares(n: i64) -> Generator<i64> {
    for i in 0..n { yield i * i; }
}
fn main() {
    var g = squares(3);
    var done = squares(0);
    g.next();
    done.next();
    print(g.value());
}
"""


def test_gdb_prints_a_handle_as_the_coroutine_it_refers_to(tmp_path):
    """pycoro's gdb printers (pycoro/debugger/gdb_printers.py): which
    coroutine a handle refers to, and whether it is finished."""
    from conftest import run_pycoro
    from pycoro.debugger import GDB_SCRIPT
    (tmp_path / "h.pc").write_text(HANDLES)
    assert run_pycoro("build", "-g", "-O0", "h.pc", "-o", "h", cwd=tmp_path).returncode == 0
    out = gdb(tmp_path / "h", f"source {GDB_SCRIPT}", "break h.pc:9", "run", "info locals", "whatis g")
    assert "g = Generator<i64> suspended in squares (frame 0x" in out
    assert "done = Generator<i64> finished (frame 0x" in out
    assert "type = Generator<i64>" in out


def test_pycoro_gdb_loads_the_printers(tmp_path):
    from conftest import run_pycoro
    (tmp_path / "h.pc").write_text(HANDLES)
    assert run_pycoro("build", "-g", "-O0", "h.pc", "-o", "h", cwd=tmp_path).returncode == 0
    import os
    import sys
    proc = subprocess.run([sys.executable, "-m", "pycoro", "gdb", "h"], input="break h.pc:9\nrun\nprint g\nkill\nquit\n",
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert "= Generator<i64> suspended in squares (frame 0x" in proc.stdout, proc.stdout + proc.stderr
