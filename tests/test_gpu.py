"""`--target nvptx` (LANGUAGE.md §8): PTX that NVIDIA's ptxas accepts, frames never
from the device heap, and a diagnostic for what cannot run on a GPU."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pycoro.backend import ptxas

GPU_EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "gpu").glob("*.pc"))
SQUARES = next(p for p in GPU_EXAMPLES if p.stem == "squares")
# awaits that transfer: tasks awaited through a variable keep their frames
# (an `await square(k)` of a task that never suspends runs in place instead,
# examples/gpu/awaits.pc: middle/awaited_in_place.py)
TRANSFERS = Path(__file__).parent.parent / "bench" / "gpu" / "transfers.pc"


@pytest.fixture(scope="module")
def assembler() -> Path:
    found = ptxas.find()
    assert found is not None, "ptxas not found: install the test extra (nvidia-cuda-nvcc)"
    return found


def _build(pycoro, src: Path, out: Path, *flags):
    return pycoro("build", "--target", "nvptx", src, "-o", out, *flags)


def _built_with_local_frames(pycoro, src: Path, out: Path, assembler: Path) -> str:
    """The PTX of `src`, which ptxas assembles and which allocates no frame
    (every one in the thread's local memory)."""
    proc = _build(pycoro, src, out)
    assert proc.returncode == 0, proc.stderr
    ptx = out.read_text()
    assert "malloc" not in ptx and "free" not in ptx
    assembled = subprocess.run([str(assembler), "-arch=sm_80", str(out), "-o", str(out.with_suffix(".cubin"))],
                               capture_output=True, text=True)
    assert assembled.returncode == 0, assembled.stderr
    return ptx


@pytest.mark.parametrize("path", GPU_EXAMPLES, ids=lambda p: p.stem)
def test_example_kernel_assembles_without_device_heap(pycoro, tmp_path, assembler, path):
    ptx = _built_with_local_frames(pycoro, path, tmp_path / f"{path.stem}.ptx", assembler)
    assert ".target sm_80" in ptx and ".visible .entry" in ptx


def test_kernel_entry_takes_global_pointers(pycoro, tmp_path):
    out = tmp_path / "k.ll"
    proc = _build(pycoro, SQUARES, out, "--emit", "lowered")
    assert proc.returncode == 0, proc.stderr
    assert "define ptx_kernel void @squares(ptr addrspace(1)" in out.read_text()


def test_arch_option(pycoro, tmp_path):
    out = tmp_path / "k.ptx"
    assert _build(pycoro, SQUARES, out, "--arch", "sm_90").returncode == 0
    assert ".target sm_90" in out.read_text()
    proc = _build(pycoro, SQUARES, out, "--arch", "sm_99")
    assert proc.returncode == 1
    assert "error: unknown GPU architecture `sm_99`" in proc.stderr


def test_a_chain_of_awaits_goes_through_the_resume_loop(pycoro, tmp_path, assembler):
    """NVPTX has no tail calls (LLVM prints `musttail` as call + ret, a stack frame
    per hop): each `await` hands the next coroutine to the resume loop instead of
    calling it, so the kernel's stack does not depend on the chain's length.
    (The loop's semantics are tested on the CPU: `run --trampoline`.)"""
    emitted = tmp_path / "k.ll"
    proc = _build(pycoro, TRANSFERS, emitted, "--emit", "llvm")
    assert proc.returncode == 0, proc.stderr
    ir = emitted.read_text()
    # the `await`'s transfer is handed to the loop, not tail-called
    assert ('call void @"llvm.coro.await.suspend.void"(ptr %"awaiter", ptr %"hdl", '
            'void (ptr, ptr)* @"pc.Task<i64>.await_suspend.wrapper.trampoline")') in ir
    assert 'define internal void @"pc.trampoline"' in ir
    ptx = tmp_path / "k.ptx"
    assert _build(pycoro, TRANSFERS, ptx).returncode == 0
    report = subprocess.run([str(assembler), "-v", "-arch=sm_80", str(ptx), "-o", str(tmp_path / "k.cubin")],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    # a fixed frame per function; ptxas 13.5 also warns that the kernel's total
    # cannot be determined, as it does for any kernel making indirect calls
    assert re.search(r"Function properties for sums_of_squares\n\s+\d+ bytes stack frame", report.stderr)
    lowered = tmp_path / "k.lowered.ll"
    assert _build(pycoro, TRANSFERS, lowered, "--emit", "lowered").returncode == 0
    assert not re.search(r"call fastcc void @pc\.\w+\.resume\(", lowered.read_text())   # no resume calls the next


def test_a_loop_over_a_stream_calls_no_continuation_through_a_pointer(pycoro, tmp_path):
    """GPU builds devirtualise a stream's step as CPU builds do
    (middle/devirtualise.py): the kernel's loop folds, with no PTX call through
    a prototype left (3.55x nvcc on an H200 with one per value; docs/gpu.md)."""
    out = tmp_path / "k.ptx"
    assert _build(pycoro, GPU_EXAMPLES[0].parent / "streams.pc", out).returncode == 0
    ptx = out.read_text()
    assert ".callprototype" not in ptx and "resume" not in ptx
    # the calls left: the panic's (a bounds or null check), and its vprintf
    assert re.findall(r"\bcall(?:\.uni)?\s+(?:\(\w+\),\s*)?([%\w$]+)", ptx) == ["pc_$___pc_panic", "vprintf"]


def test_awaits_of_tasks_that_never_suspend_need_no_resume_loop(pycoro, tmp_path):
    """examples/gpu/awaits.pc's `await square(k)` runs square's body in place:
    no frame, no transfer, so no resume loop and no indirect call is left."""
    out = tmp_path / "k.ll"
    assert _build(pycoro, GPU_EXAMPLES[0].parent / "awaits.pc", out, "--emit", "lowered").returncode == 0
    lowered = out.read_text()
    assert "pc.trampoline" not in lowered and "musttail" not in lowered and "coro" not in lowered


def test_a_generator_pipeline_needs_no_resume_loop(pycoro, tmp_path):
    """Generators never transfer once their frames are placed: no loop, no tail call."""
    out = tmp_path / "k.ll"
    assert _build(pycoro, GPU_EXAMPLES[0].parent / "pipeline.pc", out, "--emit", "llvm").returncode == 0
    assert "pc.trampoline" not in out.read_text()
    assert _build(pycoro, GPU_EXAMPLES[0].parent / "pipeline.pc", out, "--emit", "lowered").returncode == 0
    assert "musttail" not in out.read_text()


ESCAPING = """
fn count(n: i64) -> Generator<i64> { var i: i64 = 0; while i < n { yield i; i += 1; } }
kernel fn k(slots: ptr<Generator<i64>>) {
    slots[0] = count(3);   // the frame outlives the kernel's thread
}
"""


def test_a_frame_left_on_the_device_heap_is_an_error_naming_the_site(pycoro, tmp_path):
    src = tmp_path / "k.pc"
    src.write_text(ESCAPING)
    proc = _build(pycoro, src, tmp_path / "k.ptx")
    assert proc.returncode == 1
    assert (f"{src}:4:16: error: the frame of coroutine `count` (called in `k`) would come from the "
            "device heap: it could not be placed in the thread's local memory") in proc.stderr
    assert "hint:" in proc.stderr and "--allow-device-heap" in proc.stderr
    allowed = _build(pycoro, src, tmp_path / "k.ptx", "--allow-device-heap")
    assert allowed.returncode == 0, allowed.stderr
    assert "malloc" in (tmp_path / "k.ptx").read_text()


def test_a_stream_frame_bigger_than_its_buffer_is_an_error_naming_the_site(pycoro, tmp_path):
    """LLVM's retcon lowering allocates a frame its buffer cannot hold: the
    error says which, and why, where it had no position before."""
    src = tmp_path / "k.pc"
    src.write_text("fn big(n: i64) -> Stream<i64> {\n"
                   "    var a: [i64; 32]; var i = 0;\n"
                   "    while i < n { a[i % 32] = i; yield a[(i * 7) % 32]; i += 1; }\n}\n"
                   "kernel fn k(out: ptr<i64>) { var s = 0; for v in big(out[1]) { s += v; } out[0] = s; }\n")
    proc = _build(pycoro, src, tmp_path / "k.ptx")
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[0] == (f"{src}:5:50: error: the frame of coroutine `big` (called in `k`) would come from the "
                        "device heap: it takes 272 bytes, more than the 64-byte buffer of its promise")
    assert lines[-1] == ("hint: keep less alive across its `yield`s, or give it a promise of your own with a "
                         "bigger `abi retcon(N)`")


def test_at_O0_a_kernel_that_makes_a_coroutine_is_told_to_optimise(pycoro, tmp_path):
    """Placing frames in local memory is CoroElide's, which -O0 does not run."""
    squares = next(p for p in GPU_EXAMPLES if p.name == "squares.pc")
    proc = _build(pycoro, squares, tmp_path / "k.ptx", "-O0")
    assert proc.returncode == 1
    assert "hint: at -O0 no frame is placed in local memory: build with -O1 or more" in proc.stderr


def test_explain_for_nvptx_shows_the_device_heap(pycoro, tmp_path):
    src = tmp_path / "k.pc"
    src.write_text(ESCAPING)
    proc = pycoro("explain", "--target", "nvptx", src)
    assert proc.returncode == 0, proc.stderr
    assert "device heap: refused unless --allow-device-heap" in proc.stdout


@pytest.mark.parametrize("source, flags, message", [
    ("async fn f() -> i64 { return 1; }\nkernel fn k() {}", ["--target", "nvptx"],
     "1:10: error: an `async fn` cannot run on a GPU"),
    ("extern fn puts(s: ptr<u8>) -> i32;\nkernel fn k() {}", ["--target", "nvptx"],
     "1:11: error: an `extern fn` cannot run on a GPU"),
    ("kernel fn k() -> i64 { return 1; }", ["--target", "nvptx"],
     "1:18: error: a `kernel fn` returns nothing, not `i64`"),
    ("kernel fn k() { yield 1; }", ["--target", "nvptx"],
     "1:11: error: a `kernel fn` cannot be a coroutine"),
    ("kernel fn k() {}\nkernel fn j() { k(); }", ["--target", "nvptx"],
     "2:17: error: `kernel fn` `k` is launched from the host and cannot be called"),
    ("fn walk(i: i64) -> Generator<i64> {\n    if i > 0 { yield from walk(i - 1); }\n    yield i;\n}\n"
     "kernel fn k() { for v in walk(3) {} }", ["--target", "nvptx"],
     "2:27: error: coroutine `walk` calls itself: its frames cannot be bounded, "
     "and a GPU thread's local memory is fixed"),
    ("fn ping(n: i64) -> Generator<i64> { yield pong(n - 1); }\n"
     "fn pong(n: i64) -> i64 { var s: i64 = 0; if n > 0 { for v in ping(n) { s += v; } } return s; }\n"
     "kernel fn k(out: ptr<i64>) { out[0] = pong(3); }", ["--target", "nvptx"],
     "2:62: error: coroutine `ping` is called recursively (here from `pong`)"),
    ("kernel fn k() {}\nfn main() {}", [], "1:11: error: a `kernel fn` is GPU code"),
    ("fn main() { print(thread_id_x()); }", [], "1:19: error: `thread_id_x()` exists only in GPU code"),
])
def test_what_cannot_run_where_it_is_compiled(pycoro, tmp_path, source, flags, message):
    src = tmp_path / "bad.pc"
    src.write_text(source)
    proc = pycoro("check", src, *flags)
    assert proc.returncode == 1
    assert f"{src}:{message}" in proc.stderr


def test_std_math_is_ptx_instructions(pycoro, tmp_path):
    """std/math needs no libdevice: each function is one PTX instruction."""
    out = tmp_path / "norms.ptx"
    proc = _build(pycoro, GPU_EXAMPLES[0].parent / "norms.pc", out)
    assert proc.returncode == 0, proc.stderr
    ptx = out.read_text()
    for instruction in ("sqrt.rn.f64", "min.f64", "max.f64"):
        assert instruction in ptx, instruction
    assert not re.search(r"call[.\w]*\s+\w*(sqrt|fmin|fmax|fabs|__nv_)", ptx)


def test_plain_recursion_is_allowed_on_the_gpu(pycoro, tmp_path):
    """Only recursion that makes coroutine frames is refused; a recursive plain
    function uses the thread's stack, as in CUDA C."""
    src = tmp_path / "k.pc"
    src.write_text("fn fact(n: i64) -> i64 { if n <= 1 { return 1; } return n * fact(n - 1); }\n"
                   "fn walk(i: i64) -> Generator<i64> { yield fact(i); }\n"
                   "kernel fn k(out: ptr<i64>) { for v in walk(4) { out[0] = v; } }\n")
    proc = pycoro("check", "--target", "nvptx", src)
    assert proc.returncode == 0, proc.stderr


SLICE_KERNEL = """
fn total(xs: [f32]) -> f32 {
    var s: f32 = 0.0;
    for v in xs { s += v; }
    return s;
}
fn window(xs: [f32], k: i64) -> Generator<f32> {
    for i in 0..xs.len() - k + 1 { yield total(xs[i..i + k]); }
}
kernel fn sums(data: ptr<f32>, out: ptr<f32>, n: i64) {
    let i = (block_id_x() * block_dim_x() + thread_id_x()) as i64;
    if i >= n { return; }
    var acc: f32 = 0.0;
    for w in window(slice(data, n)[..i + 1], 1) { acc += w; }
    out[i] = acc;
}
"""


def test_slices_in_a_kernel_assemble_without_device_heap(pycoro, tmp_path, assembler):
    """LANGUAGE.md §2.1: slices in kernels, also held by a generator's frame."""
    src = tmp_path / "slices.pc"
    src.write_text(SLICE_KERNEL)
    _built_with_local_frames(pycoro, src, tmp_path / "slices.ptx", assembler)


def test_the_gpu_runtime_prints_a_u64_index_past_i64_unsigned():
    """As the native runtime: a bounds panic's numbers that were u64s print
    with %llu (one past i64's range printed negative)."""
    import llvmlite.binding as llvm

    from pycoro.middle import gpu
    text = str(gpu.runtime_module())
    for fmt in ("the index is %llu at", "the index is %lld at", "slice %llu..%lld out", "slice %lld..%llu out",
                "slice %llu..%llu out", "slice %lld..%lld out"):
        assert fmt in text, fmt
    llvm.parse_assembly(text).verify()


def test_explain_for_nvptx_reports_the_code_the_build_keeps(pycoro, tmp_path):
    """A function inlined into the kernel leaves no copy of its own in the
    build: explain reported that copy's frame as the device heap, which the
    build (rightly) did not refuse."""
    src = tmp_path / "k.pc"
    src.write_text("fn count(n: i64) -> Generator<i64> { var i = 0; while i < n { yield i; i += 1; } }\n"
                   "struct B { g: Generator<i64> }\n"
                   "fn mk(n: i64) -> B { return B { g: count(n) }; }\n"
                   "kernel fn k(out: ptr<i64>) { var arr = [mk(1), mk(2), mk(3)]; var s = 0; let j = out[1];\n"
                   "    while arr[j].g.next() { s += arr[j].g.value(); } out[0] = s; }\n")
    assert _build(pycoro, src, tmp_path / "k.ptx").returncode == 0
    proc = pycoro("explain", "--target", "nvptx", src)
    assert proc.returncode == 0, proc.stderr
    assert "device heap" not in proc.stdout


DELEGATING_KERNEL = """
import "std/iter";
fn both(a: Generator<i64>, b: Generator<i64>) -> Generator<i64> {
    yield from a;
    let last = yield from b;
    yield last;
}
fn evens(m: i64) -> Generator<i64> {
    var n = 0;
    for v in 0..m { if v % 2 == 0 { yield v; n += 1; } }
    co_return n;
}
kernel fn k(out: ptr<i64>, n: i64) {
    let i = (block_id_x() * block_dim_x() + thread_id_x()) as i64;
    if i >= n { return; }
    var s: i64 = 0;
    for v in both(range(0, i), evens(10)) { s += v; }
    out[i] = s + sum(take(range(0, i), 3));
}
"""


CONSUMING_KERNEL = """
import "std/iter";
fn evens(m: i64) -> Generator<i64> {
    for v in 0..m { if v % 2 == 0 { yield v; } }
}
fn two(a: Generator<i64>) -> Generator<i64> {
    for v in a { yield v; }
    for v in evens(4) { yield v; }
}
kernel fn k(out: ptr<i64>, n: i64) {
    let i = (block_id_x() * block_dim_x() + thread_id_x()) as i64;
    if i >= n { return; }
    var s: i64 = 0;
    for v in two(range(0, i)) { s += v; }
    out[i] = s;
}
"""


LOOPED_DELEGATION_KERNEL = """
fn squares(n: i64) -> Generator<i64> { for i in 0..n { yield i * i; } }
fn outer(n: i64) -> Generator<i64> { for k in 0..n { yield from squares(k); } }
kernel fn k(out: ptr<i64>, n: i64) {
    let i = (block_id_x() * block_dim_x() + thread_id_x()) as i64;
    if i >= n { return; }
    var s: i64 = 0;
    for p in outer(i) { s += p; }
    out[i] = s;
}
"""


# explain's copy, whose coroutines take call-site ids, kept `range` and `evens`
# on the heap where the build places them (Compilation.explain: `built`)
EXPLAINED_BY_THE_BUILD_KERNEL = DELEGATING_KERNEL.replace("    yield last;\n", "    yield from evens(last);\n")


@pytest.mark.parametrize("source, sites", [(DELEGATING_KERNEL, 5), (CONSUMING_KERNEL, 2),
                                           (LOOPED_DELEGATION_KERNEL, 1), (EXPLAINED_BY_THE_BUILD_KERNEL, 5)],
                         ids=["yield_from", "consuming", "yield_from_in_a_loop", "explained_by_the_build"])
def test_generators_of_generators_keep_a_kernel_s_frames_in_local_memory(pycoro, tmp_path, assembler, source,
                                                                          sites):
    """On a GPU `yield from` is a loop that yields again (FnInstance.generator_delegations):
    the delegating generators' frames, and a pipeline's of the same T, live in
    the thread's local memory (they came from the device heap: an error). A
    Generator's final transfer, to a `parent` no tree sets there, is a plain
    final suspend (ModuleGen.final_transfer): left, it made CONSUMING_KERNEL's
    build use the resume loop, and explain report `range`'s frame as the
    heap. A `yield from` in a loop stays a link (ModuleGen.reyields): as a
    loop, `squares` came from the heap."""
    src = tmp_path / "k.pc"
    src.write_text(source)
    _built_with_local_frames(pycoro, src, tmp_path / "k.ptx", assembler)
    explained = pycoro("explain", "--target", "nvptx", src)
    assert explained.returncode == 0, explained.stderr
    found = [line for line in explained.stdout.splitlines() if line.startswith(str(src)) and " k " in line]
    assert len(found) == sites and all("elided: lives in k's stack frame" in line for line in found), \
        explained.stdout


def test_yield_from_runs_the_same_on_a_cpu_as_the_gpu_lowers_it(pycoro, tmp_path):
    """The kernel's generators, in a CPU program, with the tree (as CPU builds
    delegate) and with the loops (`--reyield`, as GPU builds do)."""
    src = tmp_path / "p.pc"
    src.write_text(DELEGATING_KERNEL.split("kernel fn")[0] + "fn main() {\n"
                   "    for v in both(range(0, 4), evens(10)) { print(v); }\n}\n")
    want = "0\n1\n2\n3\n0\n2\n4\n6\n8\n5\n"
    for flags in ((), ("--reyield",), ("-O0", "--check-leaks", "--reyield")):
        proc = pycoro("run", *flags, src)
        assert (proc.stdout, proc.returncode) == (want, 0), (flags, proc.stderr)
