"""Switched-resume coroutines: properties of the IR pycoro emits and LLVM lowers."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from emitted import emit as _emit
from pycoro.middle import intrinsics
from pycoro.pipeline.driver import Compilation

SUM = """
import "std/iter";
var limit: i64 = 10;
fn total(n: i64) -> i64 { var s: i64 = 0; for v in range(0, n) { s += v; } return s; }
fn main() { print(total(limit)); }
"""

ESCAPES = """
import "std/iter";
extern fn keep(g: ptr<Generator<i64>>);   // opaque: the generator outlives this function
fn main() { var g = range(0, 5); keep(&g); print(g.next()); }
"""



EVERY_AWAIT = """
struct Never {}
impl Never {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) {}
    fn await_resume(mut self) {}
}
struct Maybe2 {}
impl Maybe2 {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) -> bool { return false; }
    fn await_resume(mut self) {}
}
fn inner() -> Task<i64> { co_return 1; }
fn outer() -> Task<i64> { await Never {}; await Maybe2 {}; co_return await inner(); }
fn peek(g: Generator<i64>) -> Handle { let p = g.promise(); return g.handle(); }
"""


def test_every_switch_intrinsic_is_emitted_and_lowered(pycoro, tmp_path):
    program = SUM + EVERY_AWAIT
    emitted = _emit(pycoro, tmp_path, program, "llvm")
    used = set(re.findall(r"@\"?(llvm\.coro\.[\w.]+)", emitted))
    expected = {n for n in intrinsics.SIGNATURES if n.startswith("llvm.coro.")
                and "retcon" not in n and "async" not in n} - {
        "llvm.coro.align.i64"}   # declared for custom allocators, not emitted yet
    assert expected <= used
    assert "presplitcoroutine" in emitted
    lowered = _emit(pycoro, tmp_path, program, "lowered")
    assert "llvm.coro." not in lowered


@pytest.mark.parametrize("level", ["-O1", "-O2", "-O3"])
def test_for_over_a_temporary_generator_allocates_nothing(pycoro, tmp_path, level):
    lowered = _emit(pycoro, tmp_path, SUM, "lowered", level)
    assert "__pc_coro_alloc" not in lowered and "malloc" not in lowered


PIPELINE = """
import "std/iter";
var limit: i64 = 1000;
fn triple(x: i64) -> i64 { return x * 3; }
fn even(x: i64) -> bool { return x % 2 == 0; }
fn main() { print(sum(take(filter(map(range(0, limit), triple), even), limit / 4))); }
"""


def test_a_pipeline_of_temporary_generators_is_one_loop(pycoro, tmp_path):
    # Each combinator owns its source, so every inner frame is reached only
    # through the next frame; all four are placed in main's stack frame once
    # the outer ones are, and their resume functions fuse into one loop.
    lowered = _emit(pycoro, tmp_path, PIPELINE, "lowered", "-O2")
    assert "__pc_coro_alloc" not in lowered and "malloc" not in lowered
    assert ".resume(" not in lowered


def test_a_generator_given_a_named_function_calls_it_directly(pycoro, tmp_path, tmp_path_factory):
    """map(…, triple) is a copy of map that calls triple, before the pipeline:
    the module has no call through a function value left, so LICM may promote
    (middle/passes.licm_promotion_safe) and the pipeline's loops fuse into
    one, as clang++'s do (gen_pipeline: 1.08 -> 0.81 ns)."""
    emitted = _emit(pycoro, tmp_path, PIPELINE, "llvm", "-O2")
    copies = set(re.findall(r'^define [^\n]*@"(pc\.\w+<[^"]*>\[[^"]*\])"', emitted, re.M))
    assert copies == {"pc.map<i64,i64>[1=pc.triple]", "pc.filter<i64>[1=pc.even]"}
    assert 'call i64 @"pc.triple"' in emitted and 'call i1 @"pc.even"' in emitted
    assert not re.search(r'= call \S+ %', emitted), "a call through a function value is left"
    c = Compilation(PIPELINE, "p.pc", tmp_path)
    c.lower()
    assert c.function_value_calls == {False: 0}
    # a function chosen at run time is called through its pointer, and promotion is off
    chosen = PIPELINE.replace("fn main() {", "fn main() { var f: fn(i64) -> i64 = triple;").replace(
        "map(range(0, limit), triple)", "map(range(0, limit), f)")
    c = Compilation(chosen, "p.pc", tmp_path_factory.mktemp("chosen"))
    c.lower()
    assert c.function_value_calls == {False: 1}


def test_an_escaping_generator_is_heap_allocated(pycoro, tmp_path):
    lowered = _emit(pycoro, tmp_path, ESCAPES, "lowered")
    main = lowered[lowered.index("@main("):]
    assert "call" in main and ("__pc_coro_alloc" in main or "@malloc" in main)


def test_check_leaks_passes_when_every_frame_is_destroyed(pycoro, tmp_path):
    src = tmp_path / "ok.pc"
    src.write_text('import "std/iter";\nfn main() { var g = range(0, 3); g.next(); for v in range(0, 2) {} }\n')
    proc = pycoro("run", "--check-leaks", "-O0", src)
    assert proc.returncode == 0, proc.stderr


TASKS = """
fn add(a: i64, b: i64) -> Task<i64> { co_return a + b; }
fn chain(n: i64) -> Task<i64> { if n == 0 { co_return 0; } let r = await chain(n - 1); co_return r + 1; }
fn sum(n: i64) -> Task<i64> { var s: i64 = 0; for i in 0..n { s += await add(s, i); } co_return s; }
fn evens(n: i64) -> Generator<i64> { for i in 0..n { if i % 2 == 0 { yield i; } } }
fn main() { print(block_on(sum(10)), block_on(chain(10))); for v in evens(4) { print(v); } }
"""


def test_calls_the_language_guarantees_to_finish_are_coro_elide_safe(pycoro, tmp_path):
    emitted = _emit(pycoro, tmp_path, TASKS, "llvm", "-O0")   # (above it, `await add(…)` runs in place)
    marked = [line for line in emitted.splitlines() if "coro_elide_safe" in line]
    # `await add(…)`, `await chain(…)`, `for v in evens(…)`, and block_on's arguments
    # `sum(10)` and `chain(10)`: block_on moves its task into a local (`var task = t;`),
    # which dies before it returns, so the frame dies before main does
    assert len(marked) == 5
    assert all(any(f'@"pc.{name}"' in line for name in ("add", "chain", "evens", "sum")) for line in marked)


def test_an_awaited_task_that_never_suspends_runs_in_place(pycoro, tmp_path):
    """Above -O0, `await add(s, i)` is add's body in sum's resume code: add is
    never called, so it makes no frame and no transfer (middle/awaited_in_place.py);
    `await chain(n - 1)` stays a call (recursion), as at -O0."""
    emitted = _emit(pycoro, tmp_path, TASKS, "llvm")
    assert not re.search(r'call ptr @"pc\.add"', emitted)
    assert re.search(r'call ptr @"pc\.chain"\(i64 %"?[\w.]+"?\) coro_elide_safe', emitted)
    assert "add.end" in emitted   # where add's `co_return` leaves its body


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_symmetric_transfer_is_a_tail_call(pycoro, tmp_path, level):
    lowered = _emit(pycoro, tmp_path, TASKS, "lowered", level)
    assert "musttail call" in lowered


OWN_ALLOCATOR = """
extern fn malloc(n: u64) -> ptr<u8>;
extern fn free(p: ptr<u8>);
promise Detached {
    abi switch; initial run; final run;
    fn return_void(mut self) {}
    fn allocate(size: u64) -> ptr<u8> { return malloc(size); }
    fn deallocate(p: ptr<u8>) { free(p); }
}
"""


@pytest.mark.parametrize("allocator", ["runtime", "promise"])
def test_check_leaks_fails_naming_the_count(pycoro, tmp_path, allocator):
    # `final run` coroutines free themselves when they end; these never end.
    src = tmp_path / "leak.pc"
    promise = (OWN_ALLOCATOR if allocator == "promise" else
               "promise Detached { abi switch; initial run; final run; fn return_void(mut self) {} }")
    src.write_text(promise + """
struct Forever {}
impl Forever {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) {}
    fn await_resume(mut self) {}
}
fn stuck() -> Detached { await Forever {}; }
fn main() { stuck(); stuck(); print("done"); }
""")
    proc = pycoro("run", "-O0", "--check-leaks", src)
    assert proc.stdout == "done\n"
    assert proc.returncode == 1
    assert "error: 2 coroutine frames leaked: allocated and never freed" in proc.stderr
    assert pycoro("run", "-O0", src).returncode == 0   # without the flag, not an error


GUARDED = """
fn walk(n: i64, i: i64) -> Generator<i64> {
    if i >= n { co_return; }
    yield from walk(n, 2 * i + 1);
    yield i;
    yield from walk(n, 2 * i + 2);
}
fn kept(k: i64) -> Generator<i64> {
    if k > 2 { co_return; }
    yield k;
    let r = yield from kept(k + 1);   // the value is used: no guard
}
fn main() { for v in walk(7, 0) { print(v); } for v in kept(0) { print(v); } }
"""


def test_a_base_case_is_tested_before_the_generator_is_made(pycoro, tmp_path):
    """middle/guards.py: `yield from walk(…);` first evaluates walk's leading
    `if i >= n { co_return; }` for the arguments, and makes no frame for it."""
    emitted = _emit(pycoro, tmp_path, GUARDED, "llvm")
    assert re.search(r'define internal i1 @"pc\.walk\.guard"\(i64 %"?n"?, i64 %"?i"?\) alwaysinline', emitted)
    assert "pc.kept.guard" not in emitted
    body = emitted[emitted.index('@"pc.walk"('):]
    body = body[:body.index("\n}\n")]
    calls = re.findall(r'call [^\n]*@"pc\.walk(?:\.guard)?"\(', body)
    # each `yield from walk(…)`: its guard, then walk's own body run in place
    # (middle/guards.py), whose `yield from`s test their guards, then whether
    # both children of the instance they would make take the base case (its
    # body then runs in place too, with nothing to test: guards._last_level),
    # and otherwise make it
    one = [True] + [True, True, True, False] * 2
    assert [("guard" in c) for c in calls] == one + one
    lowered = _emit(pycoro, tmp_path, GUARDED, "lowered", "-O2")
    assert not re.search(r'(?:call|define)[^\n]*@"?pc\.walk\.guard', lowered)   # inlined


LEAVES = """
var a: [i64; 4] = [5, 6, 7, 8];
fn perms(k: i64) -> Generator<i64> {
    if k == 1 { yield a[0] * 10 + a[k]; co_return; }
    yield from perms(k - 1);
    yield k;
    yield from perms(k - 1);
}
fn main() { for v in perms(3) { print(v); } }
"""


def test_a_base_case_that_yields_is_taken_in_the_delegating_generator(pycoro, tmp_path):
    """middle/guards.py: `yield from perms(…);` tests perms' leading
    `if k == 1 { yield E; co_return; }` for the arguments and, when it holds,
    yields E itself: a leaf makes no frame (permutations: 21.5 -> 14.9 ns)."""
    emitted = _emit(pycoro, tmp_path, LEAVES, "llvm")
    assert re.search(r'define internal i1 @"pc\.perms\.guard"\(i64 %"?k"?\) alwaysinline', emitted)
    assert re.search(r'define internal i64 @"pc\.perms\.base\.0\.0"\(i64 %"?k"?\) alwaysinline', emitted)
    body = emitted[emitted.index('@"pc.perms"('):]
    body = body[:body.index("\n}\n")]
    calls = re.findall(r'call [^\n]*@"pc\.perms(?:\.guard|\.base\.0\.0)?"\(', body)
    # in perms' body run in place, each `yield from`: its base case tested;
    # whether both of the next instance's delegations take theirs (then its
    # body runs in place too, yielding both untested: guards._last_level);
    # otherwise the generator made (between them in the text)
    made = [".guard", ".base.0.0", ".guard", ".guard", ".base.0.0", "", ".base.0.0"]
    one = [".guard", ".base.0.0"] + made + made   # the outer base case, then perms' body in place
    assert [c.split('@"pc.perms')[1].split('"')[0] for c in calls] == one + one
    lowered = _emit(pycoro, tmp_path, LEAVES, "lowered", "-O2")
    assert not re.search(r'(?:call|define)[^\n]*@"?pc\.perms\.(?:guard|base)', lowered)   # inlined
    (tmp_path / "leaves.pc").write_text(LEAVES)
    proc = pycoro("run", "--check-leaks", tmp_path / "leaves.pc")
    assert proc.stdout.split() == ["56", "2", "56", "3", "56", "2", "56"], proc.stderr


LOOPED = """
var a: [i64; 4] = [1, 2, 3, 4];
fn heap(k: i64) -> Generator<i64> {
    if k == 1 { yield a[0]; co_return; }
    yield from heap(k - 1);
    for i in 0..k - 1 {
        let t = a[i];
        a[i] = a[k - 1];
        a[k - 1] = t;
        yield from heap(k - 1);
    }
}
fn noisy(k: i64) -> Generator<i64> {
    if k == 0 { co_return; }
    yield from noisy(k - 1);
    print(k);   // a call: not run in place
}
fn main() { for v in heap(3) { print(v); } for _v in noisy(2) {} }
"""


def test_a_recursive_body_with_locals_and_loops_runs_in_place(pycoro, tmp_path):
    """middle/guards.py: the rest of heap's body (a `for` over a range, a `let`,
    assignments, `yield from`) is emitted at each `yield from heap(…);` of heap
    for its arguments (permutations: 13.0 -> 10.3 ns); noisy's, which calls
    a function, is not."""
    emitted = _emit(pycoro, tmp_path, LOOPED, "llvm")
    heap = _function(emitted, "pc.heap")
    # heap's own loop, a copy of it at each of its two `yield from`s, and in
    # each copy, a copy at each `yield from` for an instance whose own
    # delegations all take the base case (guards._last_level)
    assert len(re.findall(r"^for\.cond(?:\.\d+)?:", heap, re.M)) == 1 + 2 + 4
    assert len(re.findall(r'call ptr @"pc\.heap"\(', heap)) == 4
    noisy = _function(emitted, "pc.noisy")
    assert len(re.findall(r'call ptr @"pc\.noisy"\(', noisy)) == 1
    (tmp_path / "looped.pc").write_text(LOOPED)
    proc = pycoro("run", "--check-leaks", tmp_path / "looped.pc")
    assert proc.stdout.split() == ["1", "2", "3", "1", "1", "2", "1", "2"], proc.stderr   # as without it


LAST_LEVEL = """
var a: [i64; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
var limit: i64 = 1;
fn heap(k: i64) -> Generator<i64> {
    if k == 1 { yield a[0] * 10 + a[1]; co_return; }
    for i in 0..k {
        yield from heap(k - 1);
        a[k - 1] = a[i];
    }
}
fn shifted(k: i64) -> Generator<i64> {   // an argument computed from a local
    if k == 1 { yield a[0]; co_return; }
    for i in 0..k { yield from shifted(k - 1 + i * 0); }
}
fn halved(k: i64) -> Generator<i64> {   // an argument that could panic
    if k <= 1 { yield a[0]; co_return; }
    for _i in 0..2 { yield from halved(k / 2); }
}
fn global(k: i64) -> Generator<i64> {   // a base case that reads a global
    if k == limit { yield a[0]; co_return; }
    for _i in 0..2 { yield from global(k - 1); }
}
fn main() {
    var s = 0;
    for v in heap(4) { s += v; }
    for v in shifted(4) { s += v; }
    for v in halved(8) { s += v; }
    for v in global(4) { s += v; }
    print(s);
}
"""


def test_the_last_level_of_a_recursion_runs_in_place(pycoro, tmp_path):
    """middle/guards.py's `_last_level`: where g's body runs in place and
    delegates to an instance whose own delegations would all take a base
    case (told from g's parameters alone: arguments and conditions that
    read only parameters and cannot panic), that instance's body runs in
    place too, rather than a frame for its last one or two values (Heap's
    algorithm of 10 elements: 10.4 -> 5.1 ns/perm)."""
    emitted = _emit(pycoro, tmp_path, LAST_LEVEL, "llvm")

    def loops(name):
        return len(re.findall(r"^for\.cond(?:\.\d+)?:", _function(emitted, f"pc.{name}"), re.M))
    assert loops("heap") == 1 + 1 + 1   # its own, its body in place, and the last level's
    assert loops("shifted") == loops("halved") == loops("global") == 1 + 1
    # the prelude's awaiters are always inlined: with as many suspend points
    # as heap's (LOOPED's) LLVM's inliner calls their sites cold (module.py's
    # _LIBRARY_ALWAYS_INLINED), and a call per delegation made Heap's
    # algorithm of 9 elements 20% slower
    lowered = _emit(pycoro, tmp_path, LOOPED, "lowered", "-O2")
    assert not re.search(r'(?:call|define)[^\n]*@"pc\.Delegation<i64>\.await_', lowered)
    (tmp_path / "last.pc").write_text(LAST_LEVEL)
    expected = pycoro("run", "-O0", "--check-leaks", tmp_path / "last.pc")
    proc = pycoro("run", "--check-leaks", tmp_path / "last.pc")
    assert (proc.returncode, proc.stdout, proc.stderr) == (expected.returncode, expected.stdout, expected.stderr)


PUSHED = """
fn walk(n: i64, i: i64) -> Generator<i64> {
    if i >= n { co_return; }
    yield from walk(n, 2 * i + 1);
    yield i;
    yield from walk(n, 2 * i + 2);
}
fn first(n: i64) -> i64 { for v in walk(n, 0) { if v > 5 { return v; } } return -1; }
fn doubled(n: i64) -> Generator<i64> { for v in walk(n, 0) { yield 2 * v; } }
fn main() {
    var s = 0;
    for v in walk(1000, 0) { s += v; }
    var d = 0;
    for v in doubled(10) { d += v; }
    print(s, first(20), d);
}
"""


def _defined(ir_text: str, pattern: str) -> list[str]:
    """The definitions (define line and body) of the functions whose names match `pattern`."""
    return re.findall(rf'^define [^\n]*@"?{pattern}"?\(.*?^}}', ir_text, re.M | re.S)


def test_a_loop_over_a_recursive_generator_runs_as_a_recursive_function(pycoro, tmp_path):
    """middle/internal_iteration.py: `for v in walk(…) { s += v; }` calls
    `walk.pushed`, walk's body as an ordinary function that runs the loop's
    body at each `yield` (inlined: no call, no indirect call) and calls
    itself at each `yield from`, whose base cases it tests first; a `return`
    in the loop's body ends it with RETURNED; frames are made only past PUSHED_DEPTH
    levels (of all such loops, the runtime's `__pycoro.pushed_levels`), in the cold `.made`
    function (tree_walk 8.3 -> 2.6 ns/node). A loop whose body yields keeps
    its generator."""
    emitted = _emit(pycoro, tmp_path, PUSHED, "llvm")
    bodies = _defined(emitted, r"pc\.walk\.pushed\.\d+")   # main's loop's and first's
    # walk's base case is tested before each of its calls (middle/guards.py):
    # a leaf's children are no calls (tree_walk 3.9 -> 1.9 ns/node)
    assert len(bodies) == 2 and all(len(re.findall(r'call i1 @"pc\.walk\.guard"', b)) == 2 for b in bodies)
    # `first`'s loop returns from first: the call says so (RETURNED)
    (first,) = _defined(emitted, r"pc\.first")
    assert re.search(r'call i8 @"pc\.walk\.pushed\.\d+"', first) and "for.return" in first
    lowered = _emit(pycoro, tmp_path, PUSHED, "lowered", "-O2")
    alloc = "@malloc("   # the frame allocator's, inlined
    for pushed in _defined(lowered, r"pc\.walk\.pushed\.\d+"):
        assert re.search(r"call [^\n]*@pc\.walk\.pushed\.\d+\(", pushed)
        assert not re.search(r"^\s*(?:%[\w.]+ = )?(?:tail )?call [^(\n]*%", pushed, re.M), "an indirect call"
        assert not re.search(r"call [^\n]*\.for\.\d+\(", pushed) and alloc not in pushed   # the body inlined; no frame
    # each `yield` tells a loop in the body how many native levels are in
    # use: the program's count bounds them all (pushed_loops_recursing.pc)
    assert re.search(r'store i64 %[\w.]+, ptr @"?__pycoro\.pushed_levels"?', pushed)
    made = _defined(lowered, r"pc\.walk\.pushed\.\d+\.made")   # one for both `yield from`s
    assert made and all(alloc in m for m in made)
    # `doubled`'s loop yields: it makes walk
    (doubled,) = _defined(emitted, r"pc\.doubled")
    assert re.search(r'call ptr @"pc\.walk"\(', doubled) and ".pushed" not in doubled
    assert ".pushed" not in _emit(pycoro, tmp_path, PUSHED, "lowered", "-O0")
    (tmp_path / "pushed.pc").write_text(PUSHED)
    expected = pycoro("run", "-O0", "--check-leaks", tmp_path / "pushed.pc")
    proc = pycoro("run", "--check-leaks", tmp_path / "pushed.pc")
    assert (proc.returncode, proc.stdout) == (0, "499500 15 90\n") and proc.stdout == expected.stdout


NAMED = """
var __pc_pushed_levels: i64 = 5;
extern fn __pycoro_pushed_levels() -> i64;   // declared, never called
fn down(n: i64) -> Generator<i64> {
    if n == 0 { co_return; }
    yield n;
    yield from down(n - 1);
}
fn main() {
    var s = 0;
    for v in down(3000) { s += v; }   // 3000 levels: past PUSHED_DEPTH
    print(s, __pc_pushed_levels);
}
"""


def test_nothing_a_program_declares_takes_the_runtimes_count_of_native_levels(pycoro, tmp_path):
    """The count of native levels of loops run as recursive functions is the
    runtime's variable (`__pc_try` restores it), named outside a program's
    symbols and C's identifiers: a program's own `__pc_pushed_levels` is its
    own, and an `extern` cannot name it (each was an internal compiler
    error: "symbol multiply defined", "cannot store i64 to i64 ()*")."""
    src = tmp_path / "named.pc"
    src.write_text(NAMED)
    proc = pycoro("run", "--check-leaks", src)
    assert (proc.returncode, proc.stdout) == (0, "4501500 5\n"), proc.stderr


def test_a_body_with_three_delegations_is_not_run_in_place(pycoro, tmp_path):
    """middle/guards.py: each `yield from` of g would get a copy of g's body
    and its delegations (9 for 3): a ternary tree walk makes its generators."""
    source = """
fn walk(n: i64, i: i64) -> Generator<i64> {
    if i >= n { co_return; }
    yield from walk(n, 3 * i + 1);
    yield i;
    yield from walk(n, 3 * i + 2);
    yield from walk(n, 3 * i + 3);
}
fn main() { var s: i64 = 0; for v in walk(40, 0) { s += v; } print(s); }
"""
    emitted = _emit(pycoro, tmp_path, source, "llvm")
    walk = _function(emitted, "pc.walk")
    assert len(re.findall(r'call ptr @"pc\.walk"\(', walk)) == 3


OPAQUE = """
fn up(n: i64) -> Generator<i64> { var i = 0; while i < n { yield i; i += 1; } }
fn down(n: i64) -> Generator<i64> { var i = n; while i > 0 { i -= 1; yield i; } }
fn make_up(n: i64) -> Generator<i64> { return up(n); }   // a coroutine is not a fn value
fn make_down(n: i64) -> Generator<i64> { return down(n); }
var count: i64 = 5;
fn main() {
    var make: fn(i64) -> Generator<i64> = make_up;
    if count < 0 { make = make_down; }   // never, but the compiler cannot know
    var s = 0;
    for v in make(count) { s += v; }
    print(s);
}
"""


@pytest.mark.parametrize("delegating", [False, True])
def test_a_program_without_yield_from_never_resumes_a_delegate(pycoro, tmp_path, delegating):
    """`Generator.next` resumes the innermost generator of a `yield from` tree
    (`active`) only in programs that have a `yield from`: elsewhere a step of
    a generator the compiler cannot see is its own resume and nothing else."""
    source = OPAQUE + ("fn twice(n: i64) -> Generator<i64> { yield from up(n); yield from up(n); }\n"
                       if delegating else "")
    path = tmp_path / "opaque.pc"
    path.write_text(source)
    assert pycoro("run", path).stdout == "10\n"
    main = _emit(pycoro, tmp_path, source, "lowered", "-O2")
    main = main[main.index("@main("):]
    main = main[:main.index("\n}\n")]
    assert ("@pc.resume.handle" in main) == delegating


def test_resume_functions_save_no_registers_and_ramps_are_inlined(pycoro, tmp_path):
    """x86-64 at -O1 and up (middle/coro/resume_cc.py, passes.inline_ramps):
    resume functions and the calls that resume are `preserve_none`, destroy
    functions and their calls stay `fastcc`, and a recursive generator's
    resume function makes its children's frames itself."""
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("preserve_none is used on x86-64 only")
    lowered = _emit(pycoro, tmp_path, GUARDED, "lowered", "-O2")
    assert re.search(r'^define internal preserve_nonecc void @pc\.walk\.resume\(', lowered, re.M)
    assert re.search(r'^define internal fastcc void @pc\.walk\.destroy\(', lowered, re.M)
    assert "call preserve_nonecc void %" in lowered
    assert not re.search(r'call fastcc void @pc\.walk\.resume\(', lowered)
    resume = lowered[lowered.index("define internal preserve_nonecc void @pc.walk.resume("):]
    resume = resume[:resume.index("\n}\n")]
    assert "@pc.walk(" not in resume   # the ramp is inlined
    unoptimised = _emit(pycoro, tmp_path, GUARDED, "lowered", "-O0")
    assert "preserve_nonecc" not in unoptimised


def test_later_resumptions_of_a_one_yield_generator_skip_the_suspend_points_number(pycoro, tmp_path):
    """Issue 23, gen_noinline (middle/coro/first_resume.py): a lazy generator
    with one `yield` has two suspend points; its first resumption, the
    resume function CoroSplit made, stores a copy of it for the later ones,
    which does not load the number of the point it left (the initial one is
    left once)."""
    lowered = _emit(pycoro, tmp_path, OPAQUE, "lowered", "-O2")
    first = _function(lowered, "pc.up.resume")
    steady = _function(lowered, "pc.up.resume.steady")
    assert first.split("\n")[2].startswith("  store ptr @pc.up.resume.steady, ptr %"), first
    assert "%index = load" in first and "icmp eq i2 %index, 0" in first
    assert "icmp" not in steady.split("%index = load", 1)[1].split("\n", 2)[1], steady
    assert not re.search(r"%index\b(?!\.)", steady.split("%index = load", 1)[1]), steady
    assert lowered.count("@pc.up.resume.steady") == 2   # the copy and the one store of it
    unoptimised = _emit(pycoro, tmp_path, OPAQUE, "lowered", "-O0")
    assert ".steady" not in unoptimised
    debug = _emit(pycoro, tmp_path, OPAQUE, "lowered", "-O2", "-g")
    assert ".steady" not in debug   # a copy cannot share the function's debug information


ONE_YIELD = """
fn up(n: i64) -> Generator<i64> { var i = 0; while i < n { yield i; i += 1; } }
fn maybe(n: i64) -> Generator<i64> { if n > 0 { yield n * 10; } }
fn make_up(n: i64) -> Generator<i64> { return up(n); }   // through a fn value: frames the caller cannot see
fn make_maybe(n: i64) -> Generator<i64> { return maybe(n); }
fn twice(make: fn(i64) -> Generator<i64>, n: i64) -> Generator<i64> { yield from make(n); yield from make(n + 1); }
fn one(x: i64) -> Task<i64> { co_return x + 1; }
fn two(x: i64) -> Task<i64> { let a = await one(x); co_return a * 2; }
fn make_two(x: i64) -> Task<i64> { return two(x); }
var count: i64 = 3;
fn main() {
    var make: fn(i64) -> Generator<i64> = make_up;
    var other: fn(i64) -> Generator<i64> = make_maybe;
    var task: fn(i64) -> Task<i64> = make_two;
    if count < 0 { make = make_maybe; other = make_up; }   // never, but the compiler cannot know
    var s = 0;
    for v in make(count) { s += v; }
    print(s);
    var g = make(count);
    while g.next() { print(g.value()); }
    print(g.next());
    var h = make(count);
    print(h.next(), h.value());   // left after one step: destroyed at the end of main
    let _never = make(count);     // never stepped
    for v in twice(make, 2) { print(v); }
    for v in twice(other, 0) { print(v); }
    for v in other(0) { print(v); }
    print(block_on(task(count)));
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_a_coroutine_with_one_suspend_point_after_its_first_step_behaves_as_before(pycoro, tmp_path, level):
    """Each way of driving a generator with one `yield` whose frame its caller
    cannot see (a `for`, `next()` by hand to the end, one step then dropped,
    never stepped, a `yield from` of it), with its later resumptions in a
    function of their own (-O2) or not."""
    (tmp_path / "one.pc").write_text(ONE_YIELD)
    if level == "-O2":
        lowered = _emit(pycoro, tmp_path, ONE_YIELD, "lowered", level)
        assert "void @pc.up.resume.steady(" in lowered
        # resumed at most once after its start (its `yield` is in no loop): no copy
        assert "@pc.maybe.resume(" in lowered and "@pc.maybe.resume.steady(" not in lowered
    proc = pycoro("run", level, "--check-leaks", tmp_path / "one.pc")
    assert (proc.returncode, proc.stdout.split()) == (
        0, "3 0 1 2 false true 0 0 1 0 1 2 10 8".split()), proc.stderr


# `initial run` (LANGUAGE.md §5.1): point 0 is the first `yield` or `await`,
# which the loop comes back to (found by a review: these printed `1 2 1 1`
# and `pair 1 3`, then faulted, when such coroutines got a steady copy)
EAGER = """
promise Eager<T> { abi switch; initial run; final suspend; var current: T;
    fn yield_value(mut self, v: T) { self.current = v; } fn return_void(mut self) {} }
impl<T> Eager<T> { fn value(self) -> T { return self.promise().current; } }
fn ab(n: i64) -> Eager<i64> { var i = 0; while i < n { yield 1; yield 2; i += 1; } }
fn make_ab(n: i64) -> Eager<i64> { return ab(n); }
fn make_ab2(n: i64) -> Eager<i64> { return ab(n + 1); }

promise Detached { abi switch; initial run; final suspend; fn return_void(mut self) {} }
var waiting: Handle = null;
var mailbox: i64 = 0;
struct Recv {}
impl Recv {
    fn await_ready(mut self) -> bool { return false; }
    fn await_suspend(mut self, h: Handle) { waiting = h; }
    fn await_resume(mut self) -> i64 { return mailbox; }
}
fn pairs(n: i64) -> Detached {
    var i = 0;
    while i < n { let a = await Recv {}; let b = await Recv {}; print("pair", a, b); i += 1; }
}
fn send(v: i64) { mailbox = v; let h = waiting; h.resume(); }

var count: i64 = 3;
fn main() {
    var make: fn(i64) -> Eager<i64> = make_ab;
    if count < 0 { make = make_ab2; }
    var g = make(count);
    while !g.done() { print(g.value()); g.resume(); }
    var p = pairs(3);
    var v = 1;
    while v <= 6 { send(v); v += 1; }
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_a_coroutine_that_runs_at_once_keeps_its_resume_function(pycoro, tmp_path, level):
    (tmp_path / "eager.pc").write_text(EAGER)
    assert ".steady" not in _emit(pycoro, tmp_path, EAGER, "lowered", level)
    proc = pycoro("run", level, tmp_path / "eager.pc")
    assert (proc.returncode, proc.stdout) == (0, "1\n2\n1\n2\n1\n2\npair 1 2\npair 3 4\npair 5 6\n"), proc.stderr


# docs/decisions.md: a promise's `var`s start at their zero value (a frame
# from the heap, from a free list that held another frame, or in the caller's
# stack frame alike)
ZEROED_PROMISE = """
promise Counted<T> { abi switch; initial suspend; final suspend; var out: T; var count: i64; var seen: bool;
    fn yield_value(mut self, v: T) { self.out = v; self.count += 1; self.seen = true; }
    fn return_void(mut self) {} }
impl<T> Counted<T> {
    fn next(mut self) -> bool { if !self.done() { self.resume(); } return !self.done(); }
    fn show(self) { print(self.promise().out, self.promise().count, self.promise().seen); }
}
fn numbers(n: i64) -> Counted<i64> { var i: i64 = 0; while i < n { yield i + 7; i += 1; } }
fn make(n: i64) -> Counted<i64> { return numbers(n); }
fn main() {
    for round in 0..3 {
        var h = make(round + 2);   // (a frame reused from the free list after the first round)
        h.show();
        while h.next() { h.show(); }
    }
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_a_promise_starts_at_its_zero_value(pycoro, tmp_path, level):
    (tmp_path / "z.pc").write_text(ZEROED_PROMISE)
    proc = pycoro("run", level, "--check-leaks", tmp_path / "z.pc")
    expected = "".join("0 0 false\n" + "".join(f"{7 + i} {i + 1} true\n" for i in range(n)) for n in (2, 3, 4))
    assert (proc.returncode, proc.stdout) == (0, expected), proc.stderr


def test_the_steady_copy_is_made_only_where_the_initial_point_is_number_0():
    """first_resume refuses what it does not recognise: a ramp that leaves its
    frame at another number, any use of the resume function but a call or a
    store into a frame, a resume function with debug information."""
    from pycoro.middle.coro.first_resume import split_first_resumes
    module = """
define internal void @"g.resume"(ptr %hdl) {
resume.entry:
  %index.addr = getelementptr inbounds nuw i8, ptr %hdl, i64 24
  %index = load i1, ptr %index.addr, align 8
  %0 = icmp eq i1 %index, 0
  br i1 %0, label %start, label %later

start:
  store i1 true, ptr %index.addr, align 8
  ret void

later:
  store ptr null, ptr %hdl, align 8
  ret void
}

define ptr @ramp(ptr %f) {
entry:
  store ptr @"g.resume", ptr %f, align 8
  %index.addr.i = getelementptr inbounds nuw i8, ptr %f, i64 24
  store i1 0, ptr %index.addr.i, align 8
  ret ptr %f
}
"""
    split = split_first_resumes(module, {"g"})
    assert 'resume.entry:\n  store ptr @"g.resume.steady", ptr %hdl, align 8\n' in split
    assert 'define internal void @"g.resume.steady"(ptr %hdl) {' in split
    steady = split[split.index('@"g.resume.steady"(ptr %hdl) {'):]
    assert "  br i1 false, label %start, label %later\n" in steady and "icmp" not in steady
    import llvmlite.binding as llvm
    llvm.parse_assembly(split).verify()
    elsewhere = module.replace("store i1 0, ptr %index.addr.i", "store i1 1, ptr %index.addr.i")
    assert split_first_resumes(elsewhere, {"g"}) == elsewhere
    assert split_first_resumes(module, set()) == module   # not known to begin with an initial suspend
    again = module.replace("start:\n  store i1 true,", "start:\n  store i1 0,")
    assert split_first_resumes(again, {"g"}) == again   # it can suspend at point 0 itself
    other_use = module.replace("  ret ptr %f\n}", "  %same = icmp eq ptr %f, @\"g.resume\"\n  ret ptr %f\n}")
    assert split_first_resumes(other_use, {"g"}) == other_use
    debug = module.replace("  ret void\n}", "  ret void, !dbg !1\n}")
    assert split_first_resumes(debug, {"g"}) == debug


def test_text_edits_llvm_refuses_leave_the_module_as_the_pipeline_made_it():
    import llvmlite.binding as llvm

    from pycoro.middle.coro.rewrite import rewrite
    module = llvm.parse_assembly("define i32 @f() {\n  ret i32 1\n}\n")
    broken, fine = (lambda text: text.replace("ret i32 1", "ret i64 1")), (lambda text: text.replace("ret i32 1", "ret i32 2"))
    assert rewrite(module, [broken]) is module
    assert rewrite(module, []) is module
    assert "ret i32 2" in str(rewrite(module, [broken, fine]))


RECURSIVE_TASK = """
var depth: i64 = 1000;
fn chain(n: i64) -> Task<i64> {
    if n == 0 { co_return 0; }
    let rest = await chain(n - 1);
    co_return rest + 1;
}
fn main() { print(block_on(chain(depth))); }
"""


def test_a_recursive_coroutine_is_not_unrolled_into_its_caller(pycoro, tmp_path):
    """A coroutine's call of itself gives a handle LLVM cannot see into
    (SwitchABI.call): `main` makes the first frame, and every deeper one is
    made by the resume function. (Before, each of the pipeline's
    devirtualisation rounds inlined one more level into `main`: seven frame
    allocations there, and half of the pipeline's time.)"""
    lowered = _emit(pycoro, tmp_path, RECURSIVE_TASK, "lowered", "-O2")
    main = lowered[lowered.index("@main("):]
    main = main[:main.index("\n}\n")]
    assert main.count("@malloc(") == 1
    assert pycoro("run", tmp_path / "prog.pc").stdout == "1000\n"


def test_an_unexpected_indirect_call_keeps_the_module_as_it_was():
    import llvmlite.binding as llvm

    from pycoro.middle.coro import resume_cc
    text = """
define internal fastcc void @"f.resume"(ptr %h) {
  ret void
}
define void @caller(ptr %h, ptr %fn) {
  call fastcc void %fn(ptr %h)
  call fastcc void @"f.resume"(ptr %h)
  ret void
}
"""
    module = llvm.parse_assembly(text)
    assert resume_cc.preserve_none(module) is module   # %fn was not loaded from the frame
    fine = llvm.parse_assembly(text.replace("call fastcc void %fn(ptr %h)",
                                            "%r = load ptr, ptr %h\n  call fastcc void %r(ptr %h)"))
    converted = str(resume_cc.preserve_none(fine))
    assert 'define internal preserve_nonecc void @f.resume(' in converted
    assert converted.count("call preserve_nonecc void") == 2



def test_a_destroy_stays_fastcc_and_names_are_matched_whole():
    """A call through the frame's second word (`coro.destroy`) keeps `fastcc`;
    `%d.1`'s definition is not `%d.11`'s (resume_cc finds definitions by text)."""
    import llvmlite.binding as llvm

    from pycoro.middle.coro import resume_cc
    text = """
define internal fastcc void @"f.resume"(ptr %h) {
  ret void
}
define void @caller(ptr %h, ptr %g) {
  %d.11 = load ptr, ptr %h
  %slot = getelementptr inbounds i8, ptr %g, i64 8
  %d.1 = load ptr, ptr %slot
  call fastcc void %d.11(ptr %h)
  call fastcc void %d.1(ptr %g)
  ret void
}
"""
    converted = str(resume_cc.preserve_none(llvm.parse_assembly(text)))
    assert "call preserve_nonecc void %d.11(ptr %h)" in converted
    assert "call fastcc void %d.1(ptr %g)" in converted
    # the same destroy through the wrong frame is not a shape it knows
    wrong = llvm.parse_assembly(text.replace("call fastcc void %d.1(ptr %g)", "call fastcc void %d.1(ptr %h)"))
    assert resume_cc.preserve_none(wrong) is wrong

STREAM = """
fn evens(n: i64) -> Stream<i64> { var i: i64 = 0; while i < n { yield i; i += 2; } }
fn locked(p: ptr<i64>) -> Once<ptr<i64>> { defer p[0] += 1; yield p; }
var limit: i64 = 1000;
fn main() {
    var s: i64 = 0;
    for v in evens(limit) { s += v; }
    with p in locked(&s) { p[0] *= 2; }
    print(s);
}
"""


def test_retcon_coroutines_use_the_retcon_intrinsics(pycoro, tmp_path):
    emitted = _emit(pycoro, tmp_path, STREAM, "llvm")
    assert re.search(r"@\"?llvm\.coro\.id\.retcon\"?\(i32 64, i32 8, ptr %\"?buffer", emitted)
    assert re.search(r"@\"?llvm\.coro\.id\.retcon\.once\"?\(i32 64, i32 8,", emitted)
    # every ramp is called through llvm.coro.prepare.retcon
    assert len(re.findall(r'call ptr @"llvm\.coro\.prepare\.retcon"\([^\n]*@"pc\.(evens|locked)"', emitted)) == 2
    lowered = _emit(pycoro, tmp_path, STREAM, "lowered", "-O0")
    assert "llvm.coro." not in lowered
    assert re.search(r"define internal \{ ptr, i64 \} @pc\.evens\.resume\.0\(ptr", lowered)


@pytest.mark.parametrize("level", ["-O1", "-O2", "-O3"])
def test_a_temporary_stream_lives_in_its_callers_stack_frame(pycoro, tmp_path, level):
    """Frame and control block in main's stack frame: no allocation, and each
    step is one call of a continuation (the first one direct)."""
    lowered = _emit(pycoro, tmp_path, STREAM, "lowered", level)
    main = lowered[lowered.index("define noundef i32 @main"):]
    main = main[:main.index("\n}\n")]
    assert not re.search(r"call[^\n]*@(pc\.__pc_coro_alloc|pc\.__pc_retcon_alloc|malloc)\(", lowered)
    if level != "-O1":   # the control block's fields are known: no path frees it
        assert "@free" not in main


def test_a_stream_too_big_for_its_buffer_allocates_its_frame(pycoro, tmp_path):
    source = STREAM.replace("var i: i64 = 0; while i < n { yield i;",
                            "var a: [i64; 16]; var i: i64 = 0; while i < n { a[i % 16] = i; yield a[(i + 1) % 16];")
    lowered = _emit(pycoro, tmp_path, source, "lowered", "-O2")
    # the frame (the array and the loop's state) does not fit Stream's 64 bytes
    assert re.search(r"call[^\n]*@(pc\.__pc_coro_alloc|malloc)\(i64 1[0-9]{2}\)", lowered)


RECURSIVE_STREAM = """
fn r(d: i64) -> Stream<i64> {
    if d > 0 { for v in r(d - 1) { yield v + 1; } }
    yield 0;
}
fn main() { for v in r(1) { print(v); } }
"""


def _function(ir_text: str, name: str) -> str:
    """A function's definition in `--emit llvm` or `lowered` (where LLVM
    prints a name unquoted if it can): its `define` line and body."""
    start = re.search(rf'^define [^\n]*@"?{re.escape(name)}"?\(', ir_text, re.M).start()
    return ir_text[start:ir_text.index("\n}\n", start)]


def test_a_retcon_coroutine_calls_itself_through_a_plain_function(pycoro, tmp_path):
    """Unsplit, a retcon coroutine has no `ret`: SCCP took a direct call of
    itself for `undef` (issue 19). The call goes through `.recursive`, which is
    not a coroutine, is never inlined, and calls the ramp through
    llvm.coro.prepare.retcon."""
    emitted = _emit(pycoro, tmp_path, RECURSIVE_STREAM, "llvm")
    body = _function(emitted, "pc.r")
    assert "llvm.coro.prepare.retcon" not in body
    assert re.search(r'call \{ptr, i64\} @"pc\.r\.recursive"\(ptr %"retcon\.buffer", i64 %[^)]*\)', body)
    helper = _function(emitted, "pc.r.recursive")
    assert "noinline" in helper.splitlines()[0] and "presplitcoroutine" not in helper
    assert re.search(r'call ptr @"llvm\.coro\.prepare\.retcon"\(\{ptr, i64\} \(ptr, i64\)\* @"pc\.r"\)', helper)


WITH_IN_HELPER = """
fn once(x: i64) -> Once<i64> { yield x; }
fn with_once(a: i64) -> i64 { with o in once(a) { print(o); } return a; }
fn via(a: i64) -> i64 { return with_once(a) + 1; }
fn plain(a: i64) -> i64 { return a * 2; }
fn g(p: i64) -> Generator<i64> { yield plain(p); yield with_once(p); yield via(p); }
fn main() { for v in g(3) { print(v); } }
"""


def test_calls_that_could_inline_a_retcon_ramp_into_a_coroutine_stay_calls(pycoro, tmp_path):
    """A split retcon ramp keeps its llvm.coro.begin until CoroCleanup: inlined
    into a coroutine not yet split, LLVM aborted (issue 19). In a coroutine,
    calls of functions that reach a ramp, directly or not, are `noinline`;
    other calls are left to the inliner."""
    body = _function(_emit(pycoro, tmp_path, WITH_IN_HELPER, "llvm"), "pc.g")
    assert re.search(r'call i64 @"pc\.with_once"\(i64 %[^)]*\) noinline', body)
    assert re.search(r'call i64 @"pc\.via"\(i64 %[^)]*\) noinline', body)
    assert re.search(r'call i64 @"pc\.plain"\(i64 %[^)]*\)\n', body)


def test_a_cast_handle_is_owned_once(pycoro):
    """`count(2) as Generator<i64>` moves the temporary: it was destroyed at the
    end of its statement, and `k as …` left `k` owning the frame too."""
    program = Path(__file__).parent / "programs" / "cast_moves.pc"
    proc = pycoro("run", "-O0", "--check-leaks", program)
    assert (proc.returncode, proc.stdout) == (0, "true 0\ntrue 0 true 1\ntrue 0 false\n"), proc.stderr


STREAM_LOOP = """
extern fn atoi(s: ptr<u8>) -> i32;
fn numbers(n: i64) -> Stream<i64> {
    var i: i64 = 0;
    while i < n { yield i; i += 1; }
}
fn main() {
    let n = atoi("1000") as i64;
    var s: i64 = 0;
    for v in numbers(n) { s += v ^ (v >> 7); }
    print(s);
}
"""


def test_a_stream_loop_calls_no_continuation_indirectly(pycoro, tmp_path):
    """Issue 23: the step of a `for` over a stream calls its continuation
    directly where only one function can be it (middle/devirtualise.py), so
    it is inlined and the loop folds as a Generator's: no indirect call, no
    continuation function left in `main`."""
    lowered = _emit(pycoro, tmp_path, STREAM_LOOP, "lowered", "-O2")
    main = lowered[lowered.index("@main("):]
    main = main[:main.index("\n}\n")]
    assert not re.search(r"call [^\n]*\{ ptr, i64 \} %", main), main
    assert "resume." not in main, main
    proc = pycoro("run", tmp_path / "prog.pc")
    assert (proc.returncode, proc.stdout) == (0, f"{sum(v ^ (v >> 7) for v in range(1000))}\n"), proc.stderr


STREAM_YIELDS = """
extern fn atoi(s: ptr<u8>) -> i32;
fn mixed(n: i64) -> Stream<i64> {
    var i: i64 = 0;
    while i < n {
        yield i;
        if i % 3 == 0 { yield i * 5; }
        if i % 5 == 0 { yield -i; }
        i += 1;
    }
}
fn evens(n: i64) -> Stream<i64> {
    for i in 0..n { yield 2 * i; }
}
fn main() {
    let n = atoi("100") as i64;
    var s: i64 = 0;
    for v in mixed(n) { s += v; }
    for v in evens(n) { s += v; }
    print(s);
}
"""


def test_a_stream_with_several_continuations_is_stepped_without_indirect_calls(pycoro, tmp_path):
    """Several `yield`s (and two streams of one item type): the step tests its
    continuation against each candidate and calls it directly, the last one
    untested (the set is closed), so every call inlines."""
    lowered = _emit(pycoro, tmp_path, STREAM_YIELDS, "lowered", "-O2")
    main = lowered[lowered.index("@main("):]
    main = main[:main.index("\n}\n")]
    assert not re.search(r"call [^\n]*\{ ptr, i64 \} %", main), main
    want = sum(i + (5 * i if i % 3 == 0 else 0) - (i if i % 5 == 0 else 0) for i in range(100)) + sum(
        2 * i for i in range(100))
    proc = pycoro("run", tmp_path / "prog.pc")
    assert (proc.returncode, proc.stdout) == (0, f"{want}\n"), proc.stderr


# A `defer` whose statement never finishes ends the path it runs on: the
# coroutine's own ending (co_return, falling off, destruction), a `break`.
DEFERRED_PANICS = {
    "co_return": ("fn g() -> Generator<i64> { defer panic(\"late\"); co_return; }\n"
                  "fn main() { for v in g() { print(v); } }\n", "", "late at d.pc:1:34"),
    "after a yield": ("fn g() -> Generator<i64> { defer panic(\"late\"); yield 1; }\n"
                      "fn main() { for v in g() { print(v); } }\n", "1\n", "late at d.pc:1:34"),
    "destroyed": ("fn g() -> Generator<i64> { defer panic(\"dropped\"); yield 1; yield 2; }\n"
                  "fn main() { for v in g() { print(v); break; } print(0); }\n", "1\n", "dropped at d.pc:1:34"),
    "stream": ("fn s() -> Stream<i64> { defer panic(\"ended\"); yield 1; }\n"
               "fn main() { for v in s() { print(v); } }\n", "1\n", "ended at d.pc:1:31"),
    "once": ("fn o() -> Once<i64> { defer panic(\"released\"); yield 5; }\n"
             "fn main() { with v in o() { print(v); } }\n", "5\n", "released at d.pc:1:29"),
    "task": ("import \"std/async\";\n"
             "async fn t() -> i64 { defer panic(\"done\"); return 1; }\n"
             "async fn main() { print(await t()); }\n", "", "done at d.pc:2:29"),
    "break": ("fn main() { while true { defer panic(\"left\"); break; } print(0); }\n", "",
              "left at d.pc:1:32"),
}


@pytest.mark.parametrize("case", DEFERRED_PANICS)
def test_a_defer_that_panics_ends_its_path(pycoro, tmp_path, case):
    source, stdout, message = DEFERRED_PANICS[case]
    (tmp_path / "d.pc").write_text(source)
    proc = pycoro("run", "d.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (101, stdout), proc.stderr
    assert proc.stderr.splitlines()[0] == f"panic: {message}"
