"""`pycoro explain`: frames and elision read back from LLVM's output."""
from __future__ import annotations

PROGRAM = """
import "std/iter";
extern fn keep(g: ptr<Generator<i64>>);
fn total(n: i64) -> i64 { var s: i64 = 0; for v in range(0, n) { s += v; } return s; }
fn kept() { var g = range(0, 3); keep(&g); }
fn main() { print(total(10)); kept(); }
"""


def test_explain_reports_frames_and_elision(pycoro, tmp_path):
    src = tmp_path / "prog.pc"
    src.write_text(PROGRAM)
    proc = pycoro("explain", src)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # one row per coroutine: ABI, frame size, alignment
    row = next(line for line in out.splitlines() if line.startswith("range "))
    assert row.split()[:2] == ["range", "switch"] and row.split()[4] == "8"
    # what lives in the frame, named after the source
    assert "promise Generator<i64>" in out
    for name in ("lo", "hi", "i", "resume function", "suspend index"):
        assert f"\n  {name} " in out
    # per call site: the loop's temporary generator is elided, the escaping one is not
    assert "prog.pc:4:52  total   range      elided: lives in total's stack frame" in out
    assert "prog.pc:5:21  kept    range      heap-allocated" in out


def test_explain_without_coroutines(pycoro, tmp_path):
    src = tmp_path / "plain.pc"
    src.write_text("fn main() { print(1); }\n")
    proc = pycoro("explain", src)
    assert (proc.returncode, proc.stdout.strip()) == (0, f"{src}: no coroutines")


WALK = """
fn walk(n: i64, i: i64) -> Generator<i64> {
    if i >= n { co_return; }
    yield from walk(n, 2 * i + 1);
    yield i;
    yield from walk(n, 2 * i + 2);
}
fn main() { for v in walk(7, 0) { print(v); } }
"""


def test_a_call_emitted_in_several_copies_is_one_site(pycoro, tmp_path):
    """walk's `yield from`s run walk's body in place (middle/guards.py), so each
    of its calls is emitted once per copy: one row each, heap-allocated since
    some copy makes its frame on the heap. main's loop runs walk as a
    recursive function (middle/internal_iteration.py): no frame."""
    src = tmp_path / "walk.pc"
    src.write_text(WALK)
    proc = pycoro("explain", src)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if "walk.pc:" in line]
    assert [(r[0].rsplit("/", 1)[-1], " ".join(r[3:])) for r in rows] == [("walk.pc:4:16", "heap-allocated"),
                                                         ("walk.pc:6:16", "heap-allocated"),
                                                         ("walk.pc:8:22", "no frame: the loop runs walk as a "
                                                                          "recursive function")]


IN_PLACE = """
fn evens(n: i64) -> Generator<i64> { for i in 0..n { if i % 2 == 0 { yield i; } } }
fn sum_evens(n: i64) -> Task<i64> {
    var s: i64 = 0;
    for v in evens(n) { s += v; }
    co_return s;
}
fn main_task() -> Task<i64> { co_return await sum_evens(10); }
fn main() { print(block_on(main_task())); }
"""


def test_a_task_awaited_in_place_makes_no_frame_and_its_calls_live_where_it_runs(pycoro, tmp_path):
    src = tmp_path / "prog.pc"
    src.write_text(IN_PLACE)
    proc = pycoro("explain", src)
    assert proc.returncode == 0, proc.stderr
    assert ("prog.pc:8:47  main_task  sum_evens  no frame: awaited in place, sum_evens's body runs in main_task"
            in proc.stdout)
    # the loop's generator in the copy of sum_evens's body that main_task runs
    assert "prog.pc:5:14  main_task  evens      elided: lives in main_task's stack frame" in proc.stdout


def test_a_yield_from_of_another_type_leaves_a_pipeline_in_its_callers_frame(pycoro, tmp_path):
    """Only a `yield from` between Generator<T>s makes a Generator<T>'s next()
    look for the innermost generator of a tree: one over i32 elsewhere does
    not keep a pipeline of Generator<i64>s from folding (it did, program-wide)."""
    src = tmp_path / "prog.pc"
    src.write_text('import "std/iter";\n'
                   "fn sq(x: i64) -> i64 { return x * x; }\n"
                   "fn inner(n: i32) -> Generator<i32> { var i: i32 = 0; while i < n { yield i; i += 1; } }\n"
                   "fn outer(n: i32) -> Generator<i32> { yield from inner(n); }\n"
                   "fn main() { print(sum(take(map(range(0, 100), sq), 3))); for v in outer(2) { print(v); } }\n")
    proc = pycoro("explain", src)
    assert proc.returncode == 0, proc.stderr
    for callee, col in (("range", 32), ("map<i64, i64>", 28)):
        row = next(line for line in proc.stdout.splitlines() if f"prog.pc:5:{col} " in line)
        assert row.split()[2:] == [*callee.split(), "elided:", "lives", "in", "main's", "stack", "frame"], row
