"""PYCORO_BACKTRACE (issue 22, docs/debugging.md): a panic's backtrace names
every function and coroutine that led to it, innermost first, each at its
position, including the coroutines suspended waiting for the one that
panicked, at every -O level, from `pycoro run` and from executables alike;
and a fault names the function it happened in."""
from __future__ import annotations

import re
import subprocess

import pytest

DELEGATED = """\
fn inner(n: i64) -> Generator<i64> {
    yield n;
    if n > 0 {
        panic("boom");
    }
    yield n + 1;
}

fn outer(n: i64) -> Generator<i64> {
    yield 0;
    yield from inner(n);
}

fn consume(n: i64) -> i64 {
    var s: i64 = 0;
    for v in outer(n) {
        s += v;
    }
    return s;
}

fn main() {
    print(consume(3));
}
"""

DELEGATED_TRACE = """\
panic: boom at bt.pc:4:9
backtrace, most recent call first:
   0: inner at bt.pc:4:9
   1: outer at bt.pc:11:5
   2: consume at bt.pc:16:5
   3: main at bt.pc:23:5
"""

ON = {"PYCORO_BACKTRACE": "1"}
OFF = {"PYCORO_BACKTRACE": ""}


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_a_panic_in_a_delegated_generator_names_every_function(pycoro, tmp_path, level):
    (tmp_path / "bt.pc").write_text(DELEGATED)
    for _ in range(2):   # compiled, then from the cache (the shared library)
        proc = pycoro("run", level, "bt.pc", cwd=tmp_path, env=ON)
        assert (proc.returncode, proc.stdout, proc.stderr) == (101, "", DELEGATED_TRACE)


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_an_executable_built_with_g_shows_the_same(pycoro, tmp_path, level):
    (tmp_path / "bt.pc").write_text(DELEGATED)
    build = pycoro("build", "-g", level, "bt.pc", "-o", "bt", cwd=tmp_path, env=OFF)
    assert build.returncode == 0, build.stderr
    proc = subprocess.run(["./bt"], cwd=tmp_path, capture_output=True, text=True, env=ON)
    assert (proc.returncode, proc.stderr) == (101, DELEGATED_TRACE)


def test_without_the_variable_the_panic_says_how_to_get_one(pycoro, tmp_path):
    (tmp_path / "bt.pc").write_text(DELEGATED)
    proc = pycoro("run", "bt.pc", cwd=tmp_path, env=OFF)
    assert (proc.returncode, proc.stderr) == (101, "panic: boom at bt.pc:4:9\n"
                                                   "note: run with `PYCORO_BACKTRACE=1` to see a backtrace\n")


def test_the_variable_set_while_building_gives_the_information(pycoro, tmp_path):
    (tmp_path / "bt.pc").write_text(DELEGATED)
    assert pycoro("build", "bt.pc", "-o", "bt", cwd=tmp_path, env=ON).returncode == 0
    proc = subprocess.run(["./bt"], cwd=tmp_path, capture_output=True, text=True, env=ON)
    assert (proc.returncode, proc.stderr) == (101, DELEGATED_TRACE)


def test_an_executable_without_debug_information_says_so(pycoro, tmp_path):
    (tmp_path / "bt.pc").write_text(DELEGATED)
    assert pycoro("build", "bt.pc", "-o", "bt", cwd=tmp_path, env=OFF).returncode == 0
    proc = subprocess.run(["./bt"], cwd=tmp_path, capture_output=True, text=True, env=ON)
    assert (proc.returncode, proc.stderr) == (
        101, "panic: boom at bt.pc:4:9\n"
             "note: no backtrace: the program was built without debug information (build it with -g)\n")


CASES = {
    # a recursive `yield from`: every generator of the chain, each at its `yield from`
    "recursive": ("""\
fn walk(depth: i64) -> Generator<i64> {
    if depth == 3 {
        let xs = [1, 2, 3];
        var i: i64 = depth + 2;
        yield xs[i];
    }
    yield depth;
    yield from walk(depth + 1);
}

fn main() {
    for v in walk(0) {
        print(v);
    }
}
""", """\
panic: index out of bounds: the length is 3 but the index is 5 at p.pc:5:15
backtrace, most recent call first:
   0: walk at p.pc:5:15
   1: walk at p.pc:8:5
   2: walk at p.pc:8:5
   3: walk at p.pc:8:5
   4: main at p.pc:12:5
"""),
    # lazy tasks: each one waits in its `await` (symmetric transfer: not on
    # the stack), at the statement of its `await`
    "tasks": ("""\
fn leaf(x: i64) -> Task<i64> {
    if x > 2 { panic("leaf failed"); }
    co_return x;
}

fn middle(x: i64) -> Task<i64> {
    let a = await leaf(1);
    let b = await leaf(x);
    co_return a + b;
}

fn top() -> Task<i64> {
    let v = await middle(5);
    co_return v;
}

fn main() {
    print(block_on(top()));
}
""", """\
panic: leaf failed at p.pc:2:16
backtrace, most recent call first:
   0: leaf at p.pc:2:16
   1: middle at p.pc:8:5
   2: top at p.pc:13:5
   3: main at p.pc:18:5
"""),
    # a function called by a generator: the native frames and the chain
    "called": ("""\
fn check(v: i64) -> i64 {
    return 10 / v;
}

fn gen() -> Generator<i64> {
    yield check(1);
    yield check(0);
}

fn outer() -> Generator<i64> {
    yield from gen();
}

fn main() {
    for v in outer() { print(v); }
}
""", """\
panic: division by zero at p.pc:2:12
backtrace, most recent call first:
   0: check at p.pc:2:12
   1: gen at p.pc:7:5
   2: main at p.pc:15:5
"""),
    # a stream (returned-continuation): its consumer calls it
    "stream": ("""\
fn nums(n: i64) -> Stream<i64> {
    for i in 0..n {
        if i == 3 { panic("stream failed"); }
        yield i;
    }
}

fn main() {
    var s: i64 = 0;
    for v in nums(10) { s += v; }
    print(s);
}
""", """\
panic: stream failed at p.pc:3:21
backtrace, most recent call first:
   0: nums at p.pc:3:21
   1: main at p.pc:10:5
"""),
    # async fns awaiting each other: -O0, each waits in its own context (the
    # position: where its code goes on after the `await`); -O2, their bodies
    # are emitted in place of the awaits
    "async": ("""\
async fn leaf(n: i64) -> i64 {
    await sleep(1);
    if n == 2 { panic("leaf failed"); }
    return n;
}

async fn mid(n: i64) -> i64 {
    let a = await leaf(1);
    let b = await leaf(n);
    return a + b;
}

async fn main() {
    print(await mid(2));
}
""", """\
panic: leaf failed at p.pc:3:17
backtrace, most recent call first:
   0: leaf at p.pc:3:17
   1: mid at p.pc:9:5
   2: main at p.pc:14:5
"""),
    # a bounds check's panic in code inlined into main, one of two: each
    # keeps its own call (`nomerge`: pipeline/driver.py); merged, the -O2
    # backtrace showed `main at p.pc:9` alone
    "bounds, inlined": ("""\
var g: [i64; 4];
var h: i64 = 9;
fn a3(i: i64) -> i64 { return g[i] + 1; }
fn a2(i: i64) -> i64 { return a3(i * 3) + 1; }
fn a(i: i64) -> i64 { return a2(i + 5) + 1; }
fn b(i: i64) -> i64 { return g[i + 1] + 2; }
fn main() {
    var k: i64 = h;
    if k > 2 { k += a(k); } else { k += b(k * 7); }
    print(k);
}
""", """\
panic: index out of bounds: the length is 4 but the index is 42 at p.pc:3:31
backtrace, most recent call first:
   0: a3 at p.pc:3:31
   1: a2 at p.pc:4:24
   2: a at p.pc:5:23
   3: main at p.pc:9:16
"""),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_backtraces_of_each_kind_of_coroutine(pycoro, tmp_path, case, level):
    source, trace = CASES[case]
    proc = run_with_backtrace(pycoro, tmp_path, source, level)
    assert (proc.returncode, proc.stderr) == (101, trace)


def run_with_backtrace(pycoro, tmp_path, source: str, level: str):
    """`PYCORO_BACKTRACE=1 pycoro run LEVEL p.pc` of `source`."""
    (tmp_path / "p.pc").write_text(source)
    return pycoro("run", level, "p.pc", cwd=tmp_path, env=ON)



# -O2: divide runs in place in outer (middle/awaited_in_place.py), whose frame
# top waits for: the coroutines waiting come after the one the code runs for,
# not after what is inlined into it (at -O2 a waiting task's position is not known)
IN_PLACE = """\
fn divide(a: i64, b: i64) -> Task<i64> { co_return a / b; }

fn outer(b: i64) -> Task<i64> {
    let x = await divide(1, b);
    co_return x;
}

fn top() -> Task<i64> {
    let t = outer(0);
    co_return 1 + await t;
}

fn main() {
    print(block_on(top()));
}
"""


@pytest.mark.parametrize("level, top", [("-O0", "top at p.pc:10:5"), ("-O2", "top")])
def test_the_tasks_waiting_follow_the_one_a_task_in_place_runs_for(pycoro, tmp_path, level, top):
    proc = run_with_backtrace(pycoro, tmp_path, IN_PLACE, level)
    assert (proc.returncode, proc.stderr) == (101, f"""\
panic: division by zero at p.pc:1:52
backtrace, most recent call first:
   0: divide at p.pc:1:52
   1: outer at p.pc:4:5
   2: {top}
   3: main at p.pc:14:5
""")


# -O2: the whole program is inlined into main, and the division by zero is
# known there; a panic's call kept apart from the others (`nomerge`: the
# runtime's panics, pipeline/driver.py) keeps its inlined-at chain. Merged
# with the frame allocator's own panic, the call had no position of its own
# and the backtrace showed `main` alone. (-O0 leaves out `outer`, which
# waits for `top` in `await t` and is not on the native stack, since only a
# coroutine that panics itself hands its continuation to the panic.)
AWAITED_VARIABLE = """\
fn divide(a: i64, b: i64) -> i64 { return a / b; }
fn top(n: i64) -> Task<i64> { co_return divide(n, n - 1); }
fn outer(t: Task<i64>) -> Task<i64> { let v = await t; co_return v; }
fn main() {
    let t = top(1);
    print(block_on(outer(t)));
}
"""


def test_a_panic_inlined_into_main_keeps_every_function_it_was_inlined_from(pycoro, tmp_path):
    proc = run_with_backtrace(pycoro, tmp_path, AWAITED_VARIABLE, "-O2")
    assert (proc.returncode, proc.stderr) == (101, """\
panic: division by zero at p.pc:1:43
backtrace, most recent call first:
   0: divide at p.pc:1:43
   1: top at p.pc:2:31
   2: outer at p.pc:3:39
   3: main at p.pc:6:5
""")


JOINED = """\
async fn work(n: i64) -> i64 {
    await sleep(1);
    if n == 2 { panic("work failed"); }
    return n;
}

async fn gather(n: i64) -> i64 {
    let t = spawn work(n);
    let v = await t;
    return v;
}

async fn main() {
    print(await gather(2));
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_a_spawned_task_shows_the_task_awaiting_its_join(pycoro, tmp_path, level):
    # (the continuation's first row at -O0 has the `await`'s line, not its column)
    proc = run_with_backtrace(pycoro, tmp_path, JOINED, level)
    assert proc.returncode == 101
    assert re.fullmatch(r"""panic: work failed at p\.pc:3:17
backtrace, most recent call first:
   0: work at p\.pc:3:17
   1: gather at p\.pc:9(:5)?
   2: main at p\.pc:14:5
""", proc.stderr), proc.stderr


OVERFLOW = """\
fn deep(n: i64) -> i64 {
    var pad: [i64; 64];
    pad[n % 64] = n;
    let below = deep(n + 1);
    return below + pad[(n + 1) % 64];
}
fn main() {
    print(deep(0));
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_a_stack_overflow_names_its_function_in_the_jit_and_executables(pycoro, tmp_path, level):
    # the position is that of the instruction that touched the guard page
    # (the prologue's, the array's, the call's), as the stack's end falls
    (tmp_path / "o.pc").write_text(OVERFLOW)
    want = re.compile(r"panic: stack overflow in `deep` at o\.pc:[1-5](:\d+)? "
                      r"\(a recursion too deep, or without end\)\n")
    run = pycoro("run", "-g", level, "o.pc", cwd=tmp_path, env=OFF)
    assert run.returncode == 101 and want.fullmatch(run.stderr.splitlines(keepends=True)[-1]), run.stderr
    assert pycoro("build", "-g", level, "o.pc", "-o", "o", cwd=tmp_path, env=OFF).returncode == 0
    built = subprocess.run(["./o"], cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 101 and want.fullmatch(built.stderr), built.stderr


def test_without_debug_information_an_overflow_is_named_as_before(pycoro, tmp_path):
    (tmp_path / "o.pc").write_text(OVERFLOW)
    run = pycoro("run", "o.pc", cwd=tmp_path, env=OFF)
    assert (run.returncode, run.stderr.splitlines()[-1]) == (
        101, "panic: stack overflow (a recursion too deep, or without end)")


def test_a_panic_in_code_called_from_python_raises_without_a_backtrace(tmp_path, monkeypatch):
    import pycoro
    monkeypatch.setenv("PYCORO_BACKTRACE", "1")
    lib = pycoro.compile(DELEGATED.replace("fn main() {\n    print(consume(3));\n}\n", ""))
    with pytest.raises(pycoro.PanicError, match=r"^boom at <string>:4:9$"):
        lib.consume(3)
