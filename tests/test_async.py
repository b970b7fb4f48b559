"""Async functions (LANGUAGE.md §7): the IR pycoro emits, what LLVM makes of
it, and the executor's options. Programs and their output: tests/programs/async_*.pc."""
from __future__ import annotations

import re

import pytest

from emitted import emit as _emit
from pycoro.middle import intrinsics

CHAIN = """
async fn depth(n: i64) -> i64 {
    if n == 0 { return 0; }
    return await depth(n - 1) + 1;
}
async fn main() {
    let j = spawn depth(10);
    print(await depth(100000), await j);
}
"""


def _body(text: str, symbol: str) -> str:
    m = re.search(rf'^define [^\n]*@"?{re.escape(symbol)}"?\(.*?^}}', text, re.M | re.S)
    assert m, symbol
    return m.group(0)


def test_every_async_intrinsic_is_emitted(pycoro, tmp_path):
    emitted = _emit(pycoro, tmp_path, CHAIN, "llvm")
    used = set(re.findall(r"@\"?(llvm\.coro\.[\w.]+)", emitted))
    expected = {n for n in intrinsics.SIGNATURES if n.startswith("llvm.coro.") and "async" in n} - {
        "llvm.coro.prepare.async"}   # pycoro never calls an async function directly from other code
    assert expected <= used
    depth = _body(emitted, "pc.depth")
    assert "swifttailcc void @\"pc.depth\"(ptr swiftasync" in depth
    assert "presplitcoroutine" in emitted
    # the callee's context size is read at run time: CoroSplit writes it later
    assert 'load volatile i32, ptr' in depth


@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2", "-O3"])
def test_lowered_async_functions_return_and_suspend_by_tail_calls(pycoro, tmp_path, level):
    lowered = _emit(pycoro, tmp_path, CHAIN, "lowered", level)
    assert "llvm.coro." not in lowered
    resumes = re.findall(r'^define [^\n]*swifttailcc void @"?pc\.depth\.resume\.\d+', lowered, re.M)
    assert resumes
    assert "musttail call swifttailcc void" in lowered
    # CoroSplit wrote the context's full size (frame included) into the async
    # function pointer: more than the header, result and argument (32 bytes)
    size = int(re.search(r'^@"?pc\.depth\.fp"? = [^\n]*<\{ i32 0, i32 (\d+) \}>', lowered, re.M).group(1))
    assert size > 32


def test_a_deep_await_chain_runs_in_constant_native_stack(pycoro, tmp_path):
    src = tmp_path / "chain.pc"
    src.write_text(CHAIN.replace("100000", "3000000"))
    for level in ("-O0", "-O2"):
        proc = pycoro("run", "--check-leaks", level, src)
        assert (proc.returncode, proc.stdout) == (0, "3000000 10\n"), proc.stderr


CLOCK = """
async fn main() {
    let start = now();
    await sleep(150);
    let waited = now() - start;
    print(waited >= 150, waited < 5000);
}
"""


def test_virtual_time_and_real_time(pycoro, tmp_path):
    import time
    src = tmp_path / "clock.pc"
    src.write_text(CLOCK.replace("5000", "151"))   # virtual: exactly the time slept
    proc = pycoro("run", src)
    assert (proc.returncode, proc.stdout) == (0, "true true\n"), proc.stderr
    src.write_text(CLOCK)
    started = time.monotonic()
    proc = pycoro("run", "--real-time", src)
    assert (proc.returncode, proc.stdout) == (0, "true true\n"), proc.stderr
    assert time.monotonic() - started >= 0.15


def test_explain_reports_async_contexts(pycoro, tmp_path):
    src = tmp_path / "chain.pc"
    src.write_text(CHAIN)
    proc = pycoro("explain", src)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("depth "))
    assert re.match(r"depth\s+async\s+\d+ B context\s+8$", row), row
    assert "allocates on the task's stack" in proc.stdout


def test_std_async_names_clash_only_in_async_programs(pycoro, tmp_path):
    src = tmp_path / "clash.pc"
    src.write_text("fn sleep(ms: i64) {}\nfn main() { sleep(1); print(1); }\n")
    proc = pycoro("run", src)
    assert (proc.returncode, proc.stdout) == (0, "1\n"), proc.stderr
    src.write_text("fn sleep(ms: i64) {}\nasync fn main() { sleep(1); }\n")
    proc = pycoro("run", src)
    assert proc.returncode == 1
    assert "clash.pc:1:4: error: `sleep` is defined more than once" in proc.stderr


PINGPONG = """
var total: i64 = 0;
async fn pong(inbox: Channel<i64>, outbox: Channel<i64>) {
    let m = await inbox.recv();
    await outbox.send(m.value + 1);
}
async fn one(i: i64) { await yield_now(); total += i; }
async fn main() {
    let a = channel<i64>(1);
    let b = channel<i64>(1);
    let p = spawn pong(a, b);
    await a.send(41);
    print((await b.recv()).value);
    await p;
    spawn one(1);
}
"""


def _awaited_calls(body: str) -> set[str]:
    """The async fns a function's body awaits as calls (not inlined)."""
    return set(re.findall(r'@"?pc\.async\.tail"?, [^@,]*@"?pc\.([^"(]+)"?, ptr', body))


def test_small_awaited_async_fns_are_inlined_above_O0(pycoro, tmp_path):
    unoptimised = _body(_emit(pycoro, tmp_path, PINGPONG, "llvm", "-O0"), "pc.main")
    assert _awaited_calls(unoptimised) == {"Channel<i64>.send", "Channel<i64>.recv"}
    optimised = _body(_emit(pycoro, tmp_path, PINGPONG, "llvm", "-O2"), "pc.main")
    assert _awaited_calls(optimised) == set()
    # a channel operation that must wait parks the task from main's own code
    assert "@\"pc.async.park\"" in optimised
    assert "__task_alloc" not in optimised


def test_recursive_awaits_stay_calls(pycoro, tmp_path):
    depth = _body(_emit(pycoro, tmp_path, CHAIN, "llvm", "-O2"), "pc.depth")
    assert _awaited_calls(depth) == {"depth"}


def test_a_context_keeps_no_address_in_its_frame(pycoro, tmp_path):
    """After a suspension an async fn addresses its context from what its resume
    function is given: `one`'s context is its header and argument, no frame."""
    lowered = _emit(pycoro, tmp_path, PINGPONG, "lowered", "-O2")
    size = int(re.search(r'^@"?pc\.one\.fp"? = [^\n]*<\{ i32 0, i32 (\d+) \}>', lowered, re.M).group(1))
    assert size == 32   # parent, resume, task, i


def test_explain_reports_each_async_call_site(pycoro, tmp_path):
    src = tmp_path / "prog.pc"
    src.write_text(PINGPONG + CHAIN.replace("async fn main()", "async fn chain()"))

    def rows(*flags) -> tuple[set[tuple[str, ...]], str]:
        proc = pycoro("explain", *flags, src)
        assert proc.returncode == 0, proc.stderr
        return {tuple(re.split(r"\s{2,}", line[line.index("prog.pc:"):]))
                for line in proc.stdout.splitlines() if "prog.pc:" in line}, proc.stdout

    optimised, out = rows()
    assert ("prog.pc:4:19", "pong", "Channel<i64>.recv", "inlined: runs in the awaiting fn's context") in optimised
    assert ("prog.pc:15:11", "main", "one", "a new task: its 32 B context in the task's block") in optimised
    depth = re.search(r"^depth\s+async\s+(\d+) B context", out, re.M).group(1)
    assert ("prog.pc:20:18", "depth", "depth", f"its {depth} B context on the task's stack") in optimised
    unoptimised, _ = rows("-O0")
    assert not any(row[3].startswith("inlined") for row in unoptimised)


def test_only_the_library_functions_a_program_uses_are_emitted(pycoro, tmp_path):
    # CHAIN spawns and awaits but never sleeps nor yields: std/async's functions
    # for those are declared at most, never built (the program's own functions
    # always are, used or not).
    emitted = _emit(pycoro, tmp_path, CHAIN + "async fn unused() -> i64 { return 1; }\n", "llvm")
    defined = set(re.findall(r'^define [^\n]*?@"?([\w.<>, ]+?)"?\(', emitted, re.M))
    assert {"pc.depth", "pc.main", "pc.unused", "pc.__task_new"} <= defined
    assert {"pc.sleep", "pc.yield_now", "pc.__timer_push"}.isdisjoint(defined)
    proc = pycoro("run", tmp_path / "prog.pc")
    assert (proc.returncode, proc.stdout) == (0, "100000 10\n"), proc.stderr


def test_a_deadlock_report_with_a_very_long_path_stays_in_its_buffer(pycoro, tmp_path):
    """The report cuts a position that would not fit (it wrote past its
    4 KiB buffer, onto the runtime's panic handler)."""
    folder = tmp_path
    for _ in range(14):
        folder = folder / ("d" * 200)
    folder.mkdir(parents=True)
    (folder / "dead.pc").write_text(
        "async fn main() {\n    let ch = channel<i64>(1);\n    let m = await ch.recv();\n    print(m.value);\n}\n")
    proc = pycoro("run", str(folder / "dead.pc"), cwd=tmp_path)
    assert proc.returncode == 101, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "panic: deadlock: every task is waiting and no timer is pending"
    assert lines[1].startswith("  task 0 (main) at ") and len(proc.stderr) < 4200


def test_the_deadlock_report_is_left_out_of_the_pipeline(pycoro, tmp_path):
    """It runs at most once, before a panic: optimised, it took most of
    compiling an async program (async_pingpong's pipeline 374 -> 150 ms)."""
    optimised = _emit(pycoro, tmp_path, CHAIN, "lowered", "-O2")
    for writer in ("pc.__deadlock", "pc.__say", "pc.__describe"):
        header = _body(optimised, writer).splitlines()[0]
        attributes = re.search(r"#(\d+) \{$", header).group(1)
        listed = re.search(rf"^attributes #{attributes} = \{{([^}}]*)\}}", optimised, re.M).group(1)
        assert {"optnone", "noinline", "cold"} <= set(listed.split()), (writer, listed)


@pytest.mark.parametrize("operation, message, col", [
    ("await ch.send(1);", "send on a zero channel", 11),
    ("let m = await ch.recv(); print(m.ok);", "receive on a zero channel", 19),
    ("ch.close();", "close of a zero channel", 5),
])
def test_a_zero_channel_panics_naming_itself(pycoro, tmp_path, operation, message, col):
    """A `Channel` declared and never made by `channel<T>(capacity)` holds no
    channel: each operation on it panics saying so, not with a null pointer
    dereference inside std/async, and at the program's call, not the
    library's line (the operations take their caller)."""
    src = tmp_path / "zero.pc"
    src.write_text(f"async fn main() {{\n    var ch: Channel<i64>;\n    {operation}\n    print(\"after\");\n}}\n")
    proc = pycoro("run", src)
    assert proc.returncode == 101 and proc.stdout == ""
    first = proc.stderr.splitlines()[0]
    assert first == f"panic: {message}: make channels with channel<T>(capacity) at {src}:3:{col}"


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("program, message", [
    ("async fn main() {\n    let ch = channel<i64>(1);\n    ch.close();\n    await ch.send(2);\n}\n",
     "send on a closed channel at {src}:4:11"),
    ("async fn main() {\n    let _ch = channel<i64>(0);\n}\n",
     "a channel's capacity must be at least 1 at {src}:2:15"),
    ("async fn main() {\n    let ch = channel<i64>(2305843009213693952);\n    await ch.send(1);\n}\n",
     "a channel's capacity is too large at {src}:2:14"),   # (its size in bytes wrapped to 0)
    ("struct Never {}\nimpl Never {\n    fn await_ready(mut self) -> bool { return false; }\n"
     "    fn await_suspend(mut self, _h: Handle) {}\n    fn await_resume(mut self) {}\n}\n"
     "fn stuck() -> Task<i64> { await Never {}; co_return 1; }\n"
     "fn main() { print(block_on(stuck())); }\n",
     "block_on: the task suspended and nothing can resume it at {src}:8:19"),
])
def test_a_panic_in_the_stdlib_names_the_programs_call(pycoro, tmp_path, program, message, level):
    """As Rust's #[track_caller]: the library's own line says nothing about
    what went wrong; the program's call does."""
    src = tmp_path / "lib_panic.pc"
    src.write_text(program)
    proc = pycoro("run", level, src)
    assert proc.returncode == 101 and proc.stdout == ""
    assert proc.stderr.splitlines()[0] == "panic: " + message.format(src=src)


def test_no_call_writes_the_callers_position(pycoro, tmp_path):
    src = tmp_path / "written.pc"
    src.write_text("async fn main() {\n    let _ch = channel<i64>(1, null);\n}\n")
    proc = pycoro("check", src)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == f"{src}:2:15: error: `channel` takes 1 argument but 2 were given"
