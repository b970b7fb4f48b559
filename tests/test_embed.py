"""pycoro.compile / compile_file (LANGUAGE.md §9): exported functions called from
Python, generators as Python iterators."""
from __future__ import annotations

import ctypes
import gc

import pytest

import pycoro

SOURCE = """
import "std/iter";
struct P { x: i64 }
var calls: i64 = 0;
fn add(a: i64, b: i64) -> i64 { return a + b; }
fn half(x: f64) -> f64 { return x / 2.0; }
fn small(x: u8, y: i32, z: f32) -> f32 { return (x as f32) + (y as f32) + z; }
fn negate(b: bool) -> bool { return !b; }
fn bump() { calls += 1; }
fn calls_so_far() -> i64 { return calls; }
fn squares(n: i64) -> Generator<i64> { for v in range(0, n) { yield v * v; } }
fn parity(n: i64) -> Generator<bool> { for i in 0..n { yield i % 2 == 0; } }
fn noisy(n: i64) -> Generator<i64> {
    defer print("noisy: closed");
    for i in 0..n { print("noisy: made", i); yield i; }
}
fn counted(n: i64) -> Generator<i64> { for _i in 0..n { calls += 1; yield calls; } }
fn generic<T>(x: T) -> T { return x; }
fn by_struct(p: P) -> i64 { return p.x; }
fn fresh() -> P { return P { x: 1 }; }
struct Q { p: ptr<i64> }
fn by_pointer(p: ptr<i64>) -> i64 { return p[0]; }
fn fresh_q() -> Q { return Q { p: null }; }
struct E {}
fn empty(_e: E) {}
fn view(xs: [i64]) -> [i64] { return xs; }
"""


# every test twice: native entry points, Python wrappers (conftest.embedding)
pytestmark = pytest.mark.usefixtures("embedding")


@pytest.fixture(scope="module")
def mod(embedding):
    return pycoro.compile(SOURCE)


def test_scalar_functions(mod):
    assert mod.add(2, 3) == 5
    assert mod.add(-2**63, -1) == 2**63 - 1   # wraps, as PyCoro's arithmetic does
    assert mod.half(3) == 1.5
    assert mod.small(250, -7, 0.5) == 243.5
    assert mod.negate(True) is False
    assert mod.bump() is None
    assert mod.calls_so_far() == 1


def test_only_what_python_can_call_is_exported(mod):
    for name in ("generic", "by_pointer", "fresh_q", "range", "sum", "block_on"):
        assert not hasattr(mod, name), name
    assert "add" in repr(mod)


@pytest.mark.parametrize("name, why", [
    ("generic", "it is generic: a caller from Python or C cannot choose its type arguments; export a function "
                "that calls it"),
    ("by_pointer", "parameter `p: ptr<i64>` is a pointer: only scalars (`iN uN fN bool`), structs of them and "
                   "slices of scalars cross to Python and C"),
    ("fresh_q", "its result `Q` is a struct whose field `p: ptr<i64>` does not cross: only a scalar, a struct "
                "of them, nothing, or a Generator or Stream of one of those crosses to Python and C"),
    ("empty", "parameter `_e: E` is a struct without fields (C has none): only scalars (`iN uN fN bool`), structs "
              "of them and slices of scalars cross to Python and C"),
    ("view", "its result `[i64]` is a slice (a view of memory, which does not come back): only a scalar, a struct "
             "of them, nothing, or a Generator or Stream of one of those crosses to Python and C"),
])
def test_a_function_that_is_not_exported_says_why(mod, name, why):
    """LANGUAGE.md §9 / issue 21: no silent omissions."""
    with pytest.raises(AttributeError) as err:
        getattr(mod, name)
    assert str(err.value) == f"{name!r} cannot be called from Python: {why}"
    with pytest.raises(AttributeError, match="has no function 'range'"):   # the stdlib's are not the program's
        mod.range


def test_a_shared_library_notes_what_it_leaves_out(tmp_path, pycoro):
    (tmp_path / "m.pc").write_text("fn add(a: i64, b: i64) -> i64 { return a + b; }\n"
                                   "fn at(p: ptr<i64>) -> i64 { return p[0]; }\n")
    proc = pycoro("build", "--emit", "shared", "m.pc", "-o", "libm2.so", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("note: `at` is not in the library: parameter `p: ptr<i64>` is a pointer: only scalars "
                           "(`iN uN fN bool`), structs of them and slices of scalars cross to Python and C\n")


@pytest.mark.parametrize("call, message", [
    (lambda m: m.add(1), "fn add(a: i64, b: i64) -> i64 takes 2 arguments, 1 given"),
    (lambda m: m.add(1, "2"), "argument 2 (`b: i64`) of fn add(a: i64, b: i64) -> i64 must be i64, not str"),
    (lambda m: m.add(1, 2.0), "argument 2 (`b: i64`) of fn add(a: i64, b: i64) -> i64 must be i64, not float"),
    (lambda m: m.add(True, 2), "argument 1 (`a: i64`) of fn add(a: i64, b: i64) -> i64 must be i64, not bool"),
    (lambda m: m.small(256, 0, 0.0), "argument 1 (`x: u8`) of fn small(x: u8, y: i32, z: f32) -> f32: "
     "256 does not fit in u8"),
    (lambda m: m.negate(1), "argument 1 (`b: bool`) of fn negate(b: bool) -> bool must be bool, not int"),
    (lambda m: m.squares(), "fn squares(n: i64) -> Generator<i64> takes 1 argument, 0 given"),
    (lambda m: m.small(0, 0, 10 ** 400), "argument 3 (`z: f32`) of fn small(x: u8, y: i32, z: f32) -> f32: "
     f"{10 ** 400} is too large for a float"),
])
def test_arguments_are_checked(mod, call, message):
    with pytest.raises(TypeError) as err:
        call(mod)
    assert str(err.value) == message


EDGES = """
fn same_i64(x: i64) -> i64 { return x; }
fn same_u64(x: u64) -> u64 { return x; }
fn same_i8(x: i8) -> i8 { return x; }
fn same_u32(x: u32) -> u32 { return x; }
fn same_f32(x: f32) -> f32 { return x; }
fn nothing() { }
fn tops(n: i64) -> Generator<u64> { for i in 0..n { yield 18446744073709551615 - (i as u64); } }
fn quarters(n: i64) -> Generator<f32> { for i in 0..n { yield (i as f32) / 4.0; } }
fn low_bytes(n: i64) -> Generator<u8> { for i in 0..n { yield (i * 100) as u8; } }
fn signs(n: i64) -> Generator<i8> { for i in 0..n { yield -(i as i8); } }
"""


def test_scalars_at_the_edges_of_their_types(embedding):
    """Each scalar type's extremes in and out, the same through the native
    entry points as through the Python wrappers (python_entries.py)."""
    mod = pycoro.compile(EDGES)
    assert mod.same_i64(-2**63) == -2**63 and mod.same_i64(2**63 - 1) == 2**63 - 1
    assert mod.same_u64(2**64 - 1) == 2**64 - 1 and mod.same_u64(0) == 0
    assert mod.same_i8(-128) == -128 and mod.same_u32(2**32 - 1) == 2**32 - 1
    assert mod.same_f32(0.1) == 0.10000000149011612 and mod.same_f32(3) == 3.0
    assert mod.nothing() is None
    for call, message in [
            (lambda: mod.same_i64(2**63), "argument 1 (`x: i64`) of fn same_i64(x: i64) -> i64: "
                                          "9223372036854775808 does not fit in i64"),
            (lambda: mod.same_u64(-1), "argument 1 (`x: u64`) of fn same_u64(x: u64) -> u64: -1 does not fit in u64"),
            (lambda: mod.same_u64(2**64), "argument 1 (`x: u64`) of fn same_u64(x: u64) -> u64: "
                                          "18446744073709551616 does not fit in u64"),
            (lambda: mod.same_i8(128), "argument 1 (`x: i8`) of fn same_i8(x: i8) -> i8: 128 does not fit in i8"),
            (lambda: mod.same_f32(False), "argument 1 (`x: f32`) of fn same_f32(x: f32) -> f32 must be f32, not bool"),
            (lambda: mod.nothing(1), "fn nothing() takes 0 arguments, 1 given")]:
        with pytest.raises(TypeError) as err:
            call()
        assert str(err.value) == message
    assert list(mod.tops(2)) == [2**64 - 1, 2**64 - 2]
    assert list(mod.quarters(3)) == [0.0, 0.25, 0.5]
    assert list(mod.low_bytes(4)) == [0, 100, 200, 44]
    assert list(mod.signs(3)) == [0, -1, -2]


def test_subclasses_of_int_and_float_are_accepted(mod):
    """What is not exactly an `int` or a `float` takes the Python wrapper's way, with the same result."""
    import enum

    class Small(enum.IntEnum):
        TWO = 2

    class Real(float):
        pass

    assert mod.add(Small.TWO, 3) == 5 and mod.half(Real(3.0)) == 1.5
    assert mod.add(b=Small.TWO, a=1) == 3


def test_the_c_librarys_arithmetic_costs_no_flush_and_no_fault_catching(embedding, capfd):
    """A C function known to neither print nor fault (libm's, `abs`; exports._QUIET_C)
    needs no stdout flushed and no fault handler around a step; the pure
    ones let a generator run ahead, `rand` (state) does not; any other C
    function is assumed to do all three."""
    mod = pycoro.compile("""
extern fn labs(x: i64) -> i64;
extern fn sqrt(x: f64) -> f64;
extern fn rand() -> i32;
extern fn srand(seed: u32);
extern fn puts(s: ptr<u8>) -> i32;
extern fn isalpha(c: i32) -> i32;
fn distances(n: i64) -> Generator<f64> { for i in 0..n { yield sqrt((labs(i) * labs(i)) as f64); } }
fn dice(n: i64) -> Generator<i32> { for _i in 0..n { yield rand() % 6; } }
fn seed(s: u32) { srand(s); }
fn shout(n: i64) -> i64 { puts("shout"); return n; }
fn letter(c: i32) -> bool { return isalpha(c) != 0; }   // glibc indexes a table: it may fault
""", cache=False)
    flags = {name: (e.effects, e.output, e.faults) for name, e in mod._exports.items()}
    assert flags == {"distances": (False, False, False), "dice": (True, False, False),
                     "seed": (True, False, False), "shout": (True, True, True), "letter": (True, True, True)}
    assert list(mod.distances(3)) == [0.0, 1.0, 2.0]
    mod.seed(7)
    first = list(mod.dice(5))
    mod.seed(7)
    it = mod.dice(5)
    assert [next(it) for _ in range(2)] == first[:2]
    mod.seed(7)   # not run ahead: the next value is drawn now, after the reseed
    assert next(it) == first[0]
    print("python", flush=True)
    assert mod.shout(3) == 3
    assert capfd.readouterr().out == "python\nshout\n"


def test_calls_and_steps_are_native_where_cpython_allows(embedding):
    """Issue 21 item 5: a scalar call is a builtin function of compiled code
    (no ctypes, no Python frame), a generator of scalars steps in its
    `tp_iternext`; structs, slices and the Python wrappers' mode keep to Python."""
    import types
    mod = pycoro.compile(SOURCE + "struct S { a: f64 }\nfn s(x: S) -> f64 { return x.a; }\n"
                         "fn by_slice(xs: [i64]) -> i64 { return xs.len(); }\n")
    native = embedding == "native"
    assert isinstance(mod.add.func, types.BuiltinFunctionType) == native
    assert isinstance(mod.bump.func, types.BuiltinFunctionType) == native
    assert not isinstance(mod.s.func, types.BuiltinFunctionType)
    assert not isinstance(mod.by_slice.func, types.BuiltinFunctionType)
    assert isinstance(mod.squares(3), pycoro.embed.NativeSteps) == native
    assert repr(mod.add) == "<pycoro function fn add(a: i64, b: i64) -> i64>"
    assert repr(mod.squares(3)) == "<pycoro generator squares>"


def test_a_generator_is_a_lazy_python_iterator(mod):
    it = mod.squares(5)
    assert iter(it) is not None and next(it) == 0
    assert list(it) == [1, 4, 9, 16]
    with pytest.raises(StopIteration):
        next(it)
    assert sum(mod.squares(1000)) == sum(v * v for v in range(1000))
    assert list(mod.parity(3)) == [True, False, True]


def test_close_runs_defers_and_use_after_close_is_an_error(mod, capfd):
    it = mod.noisy(5)
    assert next(it) == 0
    it.close()
    it.close()   # twice is fine
    assert capfd.readouterr().out == "noisy: made 0\nnoisy: closed\n"
    with pytest.raises(ValueError, match="used after close"):
        next(it)
    with pytest.raises(ValueError, match="used after close"):
        list(it)


def test_a_generator_is_a_context_manager_and_collected(mod, capfd):
    with mod.noisy(3) as it:
        assert next(it) == 0
    assert capfd.readouterr().out == "noisy: made 0\nnoisy: closed\n"
    abandoned = mod.noisy(3)
    next(abandoned)
    del abandoned
    gc.collect()
    assert capfd.readouterr().out == "noisy: made 0\nnoisy: closed\n"


def test_effects_interleave_with_the_consumer_in_order(mod, capfd):
    for v in mod.noisy(2):
        print("python: got", v)
    assert capfd.readouterr().out.splitlines() == [
        "noisy: made 0", "python: got 0", "noisy: made 1", "python: got 1", "noisy: closed"]


def test_only_generators_without_effects_run_ahead(mod):
    exports = mod._exports
    assert not exports["squares"].effects and not exports["parity"].effects
    assert exports["noisy"].effects      # prints
    assert exports["counted"].effects    # writes a global another export reads
    it = mod.counted(3)
    before = mod.calls_so_far()
    assert next(it) == before + 1
    assert mod.calls_so_far() == before + 1        # not run ahead
    it.close()


STREAMS = """
fn srange(lo: i64, hi: i64) -> Stream<i64> { var i = lo; while i < hi { yield i; i += 1; } }
fn halves(n: i32) -> Stream<f64> {
    defer print("halves: closed");
    for i in 0..n { print("halves: made", i); yield (i as f64) / 2.0; }
}
fn evens(n: i64) -> Stream<bool> { for i in 0..n { yield i % 2 == 0; } }
fn risky(n: i64) -> Stream<i64> { for i in 0..n { yield 10 / (2 - i); } }
"""


@pytest.fixture(scope="module")
def streams():
    return pycoro.compile(STREAMS)


def test_a_stream_is_a_python_iterator_like_a_generator(streams, capfd):
    it = streams.srange(0, 5)
    assert next(it) == 0 and list(it) == [1, 2, 3, 4]
    assert sum(streams.srange(0, 10**5)) == sum(range(10**5))
    assert list(streams.evens(3)) == [True, False, True]
    assert not streams._exports["srange"].effects and streams._exports["halves"].effects
    with pytest.raises(TypeError) as err:
        streams.srange(1.5, 2)
    assert str(err.value) == ("argument 1 (`lo: i64`) of fn srange(lo: i64, hi: i64) -> Stream<i64> "
                              "must be i64, not float")
    # effects in order, one value per step; close and collection run the defers
    for v in streams.halves(2):
        print("python: got", v)
    assert capfd.readouterr().out.splitlines() == [
        "halves: made 0", "python: got 0.0", "halves: made 1", "python: got 0.5", "halves: closed"]
    with streams.halves(3) as it:
        assert next(it) == 0.0
    with pytest.raises(ValueError, match="used after close"):
        next(it)
    abandoned = streams.halves(3)
    next(abandoned)
    del abandoned
    gc.collect()
    assert capfd.readouterr().out == "halves: made 0\nhalves: closed\nhalves: made 0\nhalves: closed\n"


def test_a_panicking_stream_yields_what_came_before_then_raises(streams):
    it = streams.risky(5)
    assert next(it) == 5 and next(it) == 10
    with pytest.raises(pycoro.PanicError, match="division by zero"):
        next(it)


def test_compile_errors_raise_compile_error():
    with pytest.raises(pycoro.CompileError) as err:
        pycoro.compile("fn f() -> i64 { return true; }", name="bad.pc")
    assert "bad.pc:1:24: error: expected `i64`, found `bool`" in str(err.value)


def test_compile_file(tmp_path):
    src = tmp_path / "gen.pc"
    src.write_text("fn range(lo: i64, hi: i64) -> Generator<i64> { var i = lo; while i < hi { yield i; i += 1; } }\n"
                   "fn add(a: i64, b: i64) -> i64 { return a + b; }\n")
    mod = pycoro.compile_file(src)
    assert mod.add(2, 3) == 5
    assert list(mod.range(0, 5)) == [0, 1, 2, 3, 4]
    with pytest.raises(pycoro.CompileError, match="no such file"):
        pycoro.compile_file(tmp_path / "missing.pc")


# ---- the on-disk cache of compiled modules (issue 5 item 4)

@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYCORO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _no_compiling(monkeypatch):
    from pycoro.pipeline import driver

    def refuse(*_):
        raise AssertionError("compiled although the cache has it")
    monkeypatch.setattr(driver.Compilation, "check", refuse)


def test_the_same_program_twice_is_loaded_from_the_cache(cache_dir, monkeypatch):
    source = "fn cube(x: i64) -> i64 { return x * x * x; }\nfn up(n: i64) -> Generator<i64> { for i in 0..n { yield i; } }"
    first = pycoro.compile(source)
    assert not first._from_cache and first.cube(3) == 27
    _no_compiling(monkeypatch)
    second = pycoro.compile(source)
    assert second._from_cache
    assert second.cube(4) == 64 and list(second.up(3)) == [0, 1, 2]
    with pytest.raises(TypeError, match=r"fn cube\(x: i64\) -> i64 takes 1 argument, 2 given"):
        second.cube(1, 2)


def test_the_cache_key_covers_options_and_imports(cache_dir, tmp_path):
    (tmp_path / "helper.pc").write_text("fn base() -> i64 { return 1; }\n")
    (tmp_path / "main.pc").write_text('import "helper.pc";\nfn value() -> i64 { return base() + 10; }\n')
    assert pycoro.compile_file(tmp_path / "main.pc").value() == 11
    assert pycoro.compile_file(tmp_path / "main.pc")._from_cache
    assert not pycoro.compile_file(tmp_path / "main.pc", opt_level=0)._from_cache
    (tmp_path / "helper.pc").write_text("fn base() -> i64 { return 2; }\n")
    changed = pycoro.compile_file(tmp_path / "main.pc")
    assert not changed._from_cache and changed.value() == 12
    assert not pycoro.compile_file(tmp_path / "main.pc", cache=False)._from_cache


def test_a_damaged_cache_entry_is_compiled_again(cache_dir):
    source = "fn seven() -> i64 { return 7; }"
    pycoro.compile(source)
    for entry in cache_dir.glob("module.o-*"):
        entry.write_bytes(b"not an object file")
    again = pycoro.compile(source)
    assert not again._from_cache and again.seven() == 7


def test_batches_grow_from_a_few_values_to_many():
    from itertools import islice

    from pycoro.embed import BATCH, FIRST_BATCH, batch_sizes
    from pycoro.frontend.exports import Export
    from pycoro.frontend.types import I64, VOID
    pure = Export("g", (), VOID, I64, effects=False, borrows=False)
    assert list(islice(batch_sizes(pure), 10)) == [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 4096]
    assert (FIRST_BATCH, BATCH) == (16, 4096)
    for effects, borrows in ((True, False), (False, True)):
        assert list(islice(batch_sizes(Export("g", (), VOID, I64, effects=effects, borrows=borrows)), 3)) == [1, 1, 1]


# ---- panics become Python exceptions

PANICS = """
fn div(a: i64, b: i64) -> i64 { return a / b; }
fn pick(i: i64) -> i64 { var a: [i64; 3] = [1, 2, 3]; return a[i]; }
fn checked(x: i64) { assert(x > 0, "x must be positive"); }
fn tenths(n: i64) -> Generator<i64> { for i in 0..n { yield 10 / (3 - i); } }
fn noisy_tenths(n: i64) -> Generator<i64> {
    defer print("noisy_tenths: closed");
    for i in 0..n { print("noisy_tenths: making", i); yield 10 / (3 - i); }
}
fn fragile(n: i64) -> Generator<i64> {
    defer { print("fragile: closing"); if n > 1 { panic("cannot stop early"); } }
    for i in 0..n { yield i; }
}
"""


@pytest.fixture(scope="module")
def panicky():
    return pycoro.compile(PANICS, name="panics.pc")


def test_a_panic_in_a_function_is_a_python_exception(panicky):
    with pytest.raises(pycoro.PanicError, match=r"^division by zero at panics\.pc:2:40$"):
        panicky.div(1, 0)
    with pytest.raises(pycoro.PanicError,
                       match=r"^index out of bounds: the length is 3 but the index is 7 at panics\.pc:3:62$"):
        panicky.pick(7)
    with pytest.raises(pycoro.PanicError, match=r"^x must be positive at panics\.pc:4:"):
        panicky.checked(-1)
    assert isinstance(pycoro.PanicError("x"), RuntimeError)
    assert panicky.div(7, 2) == 3 and panicky.pick(2) == 3   # the module goes on working


LEVELS = """
fn down(n: i64) -> Generator<i64> {
    if n == 0 { co_return; }
    yield n;
    yield from down(n - 1);
}
fn until(n: i64, at: i64) -> i64 {
    var s = 0;
    for v in down(n) { if v == at { panic("found"); } s += v; }
    return s;
}
"""


def test_a_caught_panic_gives_back_the_native_levels_of_the_loops_it_left():
    """`until`'s loop runs `down` as a recursive function (middle/
    internal_iteration.py) for its first 512 levels, then makes the
    generators. A panic caught for Python abandons the loop where it
    stood, frames included (700 levels: those past 512); `__pc_try` puts
    the count of native levels back, so a later call of 100 levels makes no
    frame, and abandons none. (It used to keep the count of the abandoned
    loop: every later call made its generators from the start.)"""
    module = pycoro.compile(LEVELS, name="levels.pc")
    live_frames = ctypes.CFUNCTYPE(ctypes.c_int64)(module._runtime.address("__pc_live_frames"))
    with pytest.raises(pycoro.PanicError, match=r"^found at levels\.pc:9:37$"):
        module.until(700, 1)
    abandoned = live_frames()
    assert abandoned > 0
    for _ in range(3):
        with pytest.raises(pycoro.PanicError, match=r"^found at levels\.pc:9:37$"):
            module.until(100, 1)
        assert live_frames() == abandoned
    assert module.until(300, -1) == 45150


def test_a_panicking_generator_yields_what_came_before_then_raises(panicky):
    it = panicky.tenths(10)   # runs ahead in batches, yet the values before the panic come first
    got = []
    with pytest.raises(pycoro.PanicError, match=r"^division by zero at panics\.pc:5:"):
        for v in it:
            got.append(v)
    assert got == [3, 5, 10]
    assert list(it) == []     # finished, as a Python generator that raised


def test_a_panic_keeps_the_order_of_effects(panicky, capfd):
    with pytest.raises(pycoro.PanicError):
        for v in panicky.noisy_tenths(10):
            print("python: got", v)
    assert capfd.readouterr().out.splitlines() == [
        "noisy_tenths: making 0", "python: got 3", "noisy_tenths: making 1", "python: got 5",
        "noisy_tenths: making 2", "python: got 10", "noisy_tenths: making 3"]


def test_a_panic_while_closing_is_raised_by_close(panicky, capfd):
    it = panicky.fragile(5)
    assert next(it) == 0
    with pytest.raises(pycoro.PanicError, match=r"^cannot stop early at panics\.pc:"):
        it.close()
    with pytest.raises(ValueError):
        next(it)
    assert capfd.readouterr().out == "fragile: closing\n"


# ---- C functions that do not exist (issue 19: the interpreter died of SIGSEGV)

def test_a_missing_c_function_is_a_compile_error_not_a_crash():
    source = "extern fn sqrtt(x: f64) -> f64;\nfn root(x: f64) -> f64 { return sqrtt(x); }\n"
    with pytest.raises(pycoro.CompileError) as err:
        pycoro.compile(source, name="m.pc", cache=False)
    text = str(err.value)
    assert "m.pc:1:11: error: cannot find the C function `sqrtt` in this process" in text
    assert "m.pc:2:33: note: used here" in text and text.endswith("hint: did you mean `sqrt`?")
    declared_only = pycoro.compile("extern fn sqrtt(x: f64) -> f64;\nfn one() -> i64 { return 1; }\n", cache=False)
    assert declared_only.one() == 1


USES_A_LIBRARY = """
import ctypes, sys
import pycoro
if sys.argv[2] == "load":
    ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
try:
    mod = pycoro.compile("extern fn cfun_add(a: i64, b: i64) -> i64;\\n"
                         "fn twice(x: i64) -> i64 { return cfun_add(x, x); }\\n", name="c.pc")
    print(mod.twice(21), mod._from_cache)
except pycoro.CompileError as err:
    print(err)
"""


def test_a_c_function_of_a_library_loaded_into_python(cache_dir, tmp_path):
    """From Python, a C function is looked for in the process, where a library
    loaded with RTLD_GLOBAL is found; a cached module that needs one this
    process lacks is compiled again, to say so, rather than crash."""
    import os
    import subprocess
    import sys

    from pycoro.backend.c_compiler import c_compiler
    cc = c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "cfun.c").write_text("long cfun_add(long a, long b) { return a + b; }\n")
    library = tmp_path / "libcfun.so"
    subprocess.run([cc, "-shared", "-fPIC", str(tmp_path / "cfun.c"), "-o", str(library)], check=True)

    def run(load: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", USES_A_LIBRARY, str(library), load], capture_output=True,
                              text=True, env={**os.environ, "PYCORO_CACHE_DIR": str(cache_dir)})
    first = run("load")
    assert first.stdout == "42 False\n", first.stderr
    assert run("load").stdout.split()[0] == "42"   # from the cache (unless pycoro's sources just changed)
    proc = run("no")
    assert proc.returncode == 0, proc.stderr
    assert "c.pc:1:11: error: cannot find the C function `cfun_add` in this process" in proc.stdout
    assert "ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)" in proc.stdout


# ---- faults in compiled code called from Python (issue 19)

FAULTS = """
fn deep(n: i64) -> i64 { var pad: [i64; 64]; pad[n % 64] = n; return deep(n + 1) + pad[(n + 1) % 64]; }
fn read(address: i64) -> i64 { let p = address as ptr<i64>; return p[0]; }
fn ok(n: i64) -> i64 { return n + 1; }
fn deeper(n: i64) -> Generator<i64> { yield n; yield deep(n); }
"""


def test_a_stack_overflow_or_a_bad_pointer_is_a_panic_error_not_a_crash(recwarn):
    mod = pycoro.compile(FAULTS, name="faults.pc", cache=False)
    with pytest.raises(pycoro.PanicError, match=r"^stack overflow \(a recursion too deep, or without end\)$"):
        mod.deep(0)
    with pytest.raises(pycoro.PanicError, match=r"^segmentation fault \(an invalid pointer\)$"):
        mod.read(16)
    assert mod.ok(1) == 2
    it = mod.deeper(5)
    assert next(it) == 5
    with pytest.raises(pycoro.PanicError, match="stack overflow"):
        next(it)
    with pytest.raises(pycoro.PanicError, match="stack overflow"):
        mod.deep(0)   # again: the signal stack and the handler are set up afresh


def test_only_calls_that_may_fault_pay_for_catching_faults(recwarn):
    """Catching a fault costs system calls at each call: only exports that may
    recurse, call C or through a pointer, use raw pointers or keep big arrays
    on the stack pay them (exports.may_fault)."""
    source = FAULTS + """
fn big(n: i64) -> i64 { var a: [i64; 200000]; a[n] = 1; return a[0]; }
fn walk(n: i64) -> Generator<i64> { if n == 0 { co_return; } yield from walk(n - 1); yield n; }
fn squares(n: i64) -> Generator<i64> { for i in 0..n { yield i * i; } }
fn through(f: fn(i64) -> i64, n: i64) -> i64 { return f(n); }
fn calls_through(n: i64) -> i64 { return through(ok, n); }
"""
    mod = pycoro.compile(source, name="faults.pc", cache=False)
    faults = {name: e.faults for name, e in mod._exports.items()}
    assert faults == {"deep": True, "read": True, "ok": False, "deeper": True, "big": True, "walk": True,
                      "squares": False, "calls_through": True}
    assert list(mod.walk(3)) == [1, 2, 3] and mod.big(2) == 0 and mod.calls_through(1) == 2


HOST_HANDLER_AFTER_A_FAULT = """
import ctypes, faulthandler, warnings
import pycoro
faulthandler.enable()
warnings.simplefilter("ignore")
mod = pycoro.compile(FAULTS, name="faults.pc", cache=False)
try:
    mod.deep(0)
except pycoro.PanicError as err:
    print(err, flush=True)
ctypes.string_at(16)   # a fault of Python's own: faulthandler's again
"""


def test_the_hosts_fault_handler_is_back_after_a_call():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", f"FAULTS = {FAULTS!r}\n{HOST_HANDLER_AFTER_A_FAULT}"],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout == "stack overflow (a recursion too deep, or without end)\n", proc.stderr
    assert proc.returncode == -11 and "Fatal Python error: Segmentation fault" in proc.stderr


PYTHONIC = """
/// The sum of a and b.
/// (Two lines.)
fn add(a: i64, b: i64) -> i64 { return a + b; }
// not a doc comment
fn sub(a: i64, b: i64) -> i64 { return a - b; }
fn evens(n: i64) -> Generator<i64> { for i in 0..n { if i % 2 == 0 { yield i; } } }
"""


def test_keywords_signatures_and_doc_comments():
    """Issue 21 item 4: keyword arguments, inspect.signature and help() show the
    PyCoro signature, `///` comments are the docstring."""
    import inspect
    mod = pycoro.compile(PYTHONIC)
    assert mod.add(b=2, a=1) == 3 and mod.add(1, b=5) == 6
    assert list(mod.evens(n=5)) == [0, 2, 4]
    assert str(inspect.signature(mod.add)) == "(a: 'i64', b: 'i64') -> 'i64'"
    assert str(inspect.signature(mod.evens)) == "(n: 'i64') -> 'Generator<i64>'"
    assert mod.add.__doc__ == "fn add(a: i64, b: i64) -> i64\n\nThe sum of a and b.\n(Two lines.)"
    assert mod.sub.__doc__ == "fn sub(a: i64, b: i64) -> i64"
    import pydoc
    assert "add(a: 'i64', b: 'i64') -> 'i64'\n    fn add(a: i64, b: i64) -> i64\n    \n    The sum of a and b." \
        in pydoc.render_doc(mod.add, renderer=pydoc.plaintext)
    with pytest.raises(TypeError, match=r"^fn add\(a: i64, b: i64\) -> i64: got an unexpected keyword argument 'c'$"):
        mod.add(1, 2, c=3)
    with pytest.raises(TypeError, match=r"^fn add\(a: i64, b: i64\) -> i64: got an unexpected keyword argument 'c'$"):
        mod.add(1, c=3)   # named before the missing `b`, as Python's own call does



def test_a_parameter_named_as_a_python_keyword_takes_a_trailing_underscore():
    """PEP 8's `class_`, in the signature and as the keyword (the positions are
    the same); more underscores where another parameter has that name. It
    used to be an internal ValueError of inspect at compile time."""
    import inspect
    mod = pycoro.compile("fn area(class: i64, b: i64) -> i64 { return class * b; }\n"
                         "fn g(lambda: i64, class_: i64, class: i64) -> Generator<i64> { yield lambda + class_ + class; }\n"
                         "fn same(None: bool) -> bool { return None; }\n")
    assert str(inspect.signature(mod.area)) == "(class_: 'i64', b: 'i64') -> 'i64'"
    assert mod.area(2, 3) == 6 and mod.area(class_=2, b=4) == 8 and mod.same(None_=True) is True
    assert str(inspect.signature(mod.g)) == "(lambda_: 'i64', class_: 'i64', class__: 'i64') -> 'Generator<i64>'"
    assert list(mod.g(1, class_=20, class__=300)) == [321]
    with pytest.raises(TypeError, match=r"^fn area\(class: i64, b: i64\) -> i64: got an unexpected keyword argument 'class'$"):
        mod.area(**{"class": 1, "b": 2})

def test_a_compile_error_comes_from_the_users_call():
    import traceback
    with pytest.raises(pycoro.CompileError) as err:
        pycoro.compile("fn f() -> i64 { return true; }")
    frames = traceback.extract_tb(err.value.__traceback__)
    assert [f.name for f in frames] == ["test_a_compile_error_comes_from_the_users_call", "compile"]


from crossing_programs import STRUCTS  # noqa: E402  (shared with test_shared)


@pytest.mark.parametrize("cache", [False, True])
def test_structs_cross_as_named_tuples(cache, capfd):
    """Issue 21 item 3 (LANGUAGE.md §9 [data]): a struct of scalars (or of such
    structs) goes in as a tuple or named tuple and comes back as a named tuple
    with its field names, for calls and as a generator's values."""
    for _ in range(2 if cache else 1):   # the second from the cache's entry
        mod = pycoro.compile(STRUCTS, cache=cache)
    assert mod.norm2((3.0, 4.0)) == 25.0
    seg = mod.flip(((0.0, 0.0), (2.0, 4.0), True))
    assert seg == ((2.0, 4.0), (0.0, 0.0), False)
    assert type(seg).__name__ == "Seg" and seg.a.x == 2.0 and seg.closed is False
    assert mod.norm2(seg.a) == 20.0   # a named tuple goes back in
    assert [p.x for p in mod.walk((1.0, 2.0), 3)] == [1.0, 2.0, 3.0]
    assert [s.closed for s in mod.loud(2)] == [False, True]   # one step per value: it prints
    assert capfd.readouterr().out == "loud 0\nloud 1\n"
    with pytest.raises(TypeError, match=r"must be a tuple of 2 fields \(x: f64, y: f64\), not tuple"):
        mod.norm2((1.0,))
    with pytest.raises(TypeError, match=r"field `x` must be f64, not str"):
        mod.norm2(("a", 1.0))




def test_struct_fields_keep_their_names():
    """LANGUAGE.md §9: the named tuple has the struct's field names, also those
    starting with `_` (namedtuple renamed them: `S(_0=1, …)`, and ctypes
    refused a field named `_fields_`); a Python keyword takes a trailing
    underscore, as a parameter does, and so does a named tuple's own name."""
    mod = pycoro.compile("struct S { _x: i64, class: f64, _fields_: bool, _make: i8 }\n"
                         "fn f(s: S) -> S { return s; }\n"
                         "fn g(n: i64) -> Generator<S> { for i in 0..n { yield S { _x: i, class: 0.5, _fields_: true, "
                         "_make: 3 }; } }\n")
    s = mod.f((1, 2.5, False, -4))
    assert repr(s) == "S(_x=1, class_=2.5, _fields_=False, _make_=-4)" and repr(list(mod.g(1))) == \
        "[S(_x=0, class_=0.5, _fields_=True, _make_=3)]"
    assert (s._x, s.class_, s._fields_, s._make_) == (1, 2.5, False, -4) and s == (1, 2.5, False, -4)
    assert s._fields == ("_x", "class_", "_fields_", "_make_")
    assert s._asdict() == {"_x": 1, "class_": 2.5, "_fields_": False, "_make_": -4}
    assert repr(s._replace(_x=7)) == "S(_x=7, class_=2.5, _fields_=False, _make_=-4)"
    assert type(s)(1, 2.0, _fields_=True, _make_=0) == type(s)._make([1, 2.0, True, 0]) == (1, 2.0, True, 0)
    assert mod.f(s) == s   # goes back in

def test_a_generator_of_structs_is_its_own_iterator():
    """As a Python generator is (`iter(g) is g`); it used to hand out an
    itertools.chain over its batches, which went on yielding the values
    fetched ahead after close()."""
    mod = pycoro.compile("struct S { a: i16 }\n"
                         "fn g(n: i64) -> Generator<S> { for i in 0..n { yield S { a: i as i16 }; } }\n")
    g = mod.g(100)
    assert iter(g) is g and next(g) == (0,) and next(g).a == 1
    g.close()
    for use in (next, iter, list):
        with pytest.raises(ValueError, match=r"^g: generator used after close\(\)$"):
            use(g)
    assert list(mod.g(50)) == [(i,) for i in range(50)]   # batches of 16, then 32, then the end

def test_a_program_may_name_things_as_the_wrappers_do(embedding, tmp_path, pycoro):
    """The export wrappers name their own things with `__` (exports.positional):
    a function called `c` or `n`, a generator called `buf`, a parameter named
    as its function, all export (they did not check before)."""
    source = """
fn c(x: i64) -> i64 { return x + 1; }
fn n(n: i64) -> i64 { return n * 2; }
fn context(cap: i64) -> i64 { return cap; }
fn buf(cap: i64) -> Generator<i64> { for i in 0..cap { yield i; } }
fn g(g: i64) -> Generator<i64> { for i in 0..g { yield c(i); } }
"""
    mod = pycoro_compile(source)
    assert (mod.c(1), mod.n(3), mod.context(4)) == (2, 6, 4)
    assert list(mod.buf(3)) == [0, 1, 2] and list(mod.g(2)) == [1, 2]
    np = pytest.importorskip("numpy")
    assert mod.buf(4).to_numpy().tolist() == [0, 1, 2, 3] and isinstance(mod.g(1).to_numpy(), np.ndarray)
    (tmp_path / "names.pc").write_text(source)
    proc = pycoro("build", "--emit", "shared", "names.pc", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def pycoro_compile(source: str):
    return pycoro.compile(source, cache=False)


def test_the_package_lists_what_it_imports_on_first_use():
    """pycoro.CompileError and friends are imported on first use, yet dir(),
    help() and pickling know them as pycoro's."""
    import pickle

    from pycoro.common import diagnostics
    for name in ("CompileError", "CompileWarning", "InternalCompilerError", "PanicError", "compile", "compile_file"):
        assert name in dir(pycoro)
    assert pycoro.CompileError is diagnostics.CompileError and repr(pycoro.CompileError) == "<class 'pycoro.CompileError'>"
    assert repr(pycoro.InternalCompilerError) == "<class 'pycoro.InternalCompilerError'>"
    assert type(pickle.loads(pickle.dumps(pycoro.CompileError([])))) is pycoro.CompileError


# ---- misuse from Python: an exception, never a crash of the interpreter

def in_another_python(code: str, embedding: str) -> str:
    """What `code` prints, run by another Python with this embedding (native
    entry points or Python wrappers alone), so that a crash fails the test
    instead of ending pytest."""
    import subprocess
    import sys
    setup = f"import pycoro, pycoro.embed\npycoro.embed.NATIVE = {embedding == 'native'}\n"
    proc = subprocess.run([sys.executable, "-c", setup + code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# named as the module's own attributes are, or as its internals were
CLASHING = ("functions", "_exports", "_unexported", "_from_cache", "_runtime", "_functions",
            "_loaded", "_kept", "_try", "_guarded", "_address", "_collect_context", "_collect_types",
            "_raise_panic", "_native", "_init_native")
NAMED_AS_THE_MODULE = """
import gc
names = NAMES
source = "fn add(a: i64, b: i64) -> i64 { return a + b; }\\n" \\
         "fn squares(n: i64) -> Generator<i64> { for i in 0..n { yield i * i; } }\\n" + \\
         "".join(f"fn {name}() -> i64 {{ return {i}; }}\\n" for i, name in enumerate(names))
mod = pycoro.compile(source)
gc.collect()
print(mod.add(1, 2), list(mod.squares(3)), mod.squares(3).to_numpy().tolist())
print([mod.functions[name]() for name in names])
print([name for name in names if callable(getattr(mod, name, None))])
print(type(mod.functions).__name__, type(mod._exports).__name__, type(mod._from_cache).__name__)
"""


def test_an_export_named_as_the_modules_own_attributes_breaks_nothing(embedding):
    """An export used to be set as an attribute over the module's internals
    (`_loaded`, `_try`, …): a call then crashed the interpreter. The
    internals are out of reach now; an export named as one of the module's
    few own attributes is only in `functions`, any other is an attribute too."""
    out = in_another_python(NAMED_AS_THE_MODULE.replace("NAMES", repr(CLASHING)), embedding)
    assert out.splitlines() == [
        "3 [0, 1, 4] [0, 1, 4]",
        str(list(range(len(CLASHING)))),
        str([name for name in CLASHING if name not in pycoro.embed.Module.__slots__ + ("functions",)]),
        "dict dict bool",
    ]


CALLED_BACK = """
import sys
mod = pycoro.compile('''
fn g(n: i64) -> Generator<i64> { defer print("g: closed"); for i in 0..n { print("g:", i); yield i; } }
fn s(n: i64) -> Stream<i64> { defer print("s: closed"); for i in 0..n { print("s:", i); yield i; } }
struct P { x: i64 }
fn p(n: i64) -> Generator<P> { defer print("p: closed"); for i in 0..n { print("p:", i); yield P { x: i }; } }
''')
real = sys.stdout

class CallingBack:
    # a stdout whose flush (before a step that may print) uses the generator being stepped
    def __init__(self, use):
        self.use, self.refused = use, []
    def write(self, text):
        return real.write(text)
    def flush(self):
        real.flush()
        use, self.use = self.use, None
        if use is not None:
            try:
                use()
            except ValueError as err:
                self.refused.append(str(err))

for make in (mod.g, mod.s, mod.p):
    for use in (lambda gen: gen.close, lambda gen: gen.__next__, lambda gen: lambda: list(gen)):
        gen = make(3)
        next(gen)
        sys.stdout = calling_back = CallingBack(use(gen))
        value = next(gen)
        sys.stdout = real
        print(calling_back.refused, value, list(gen))
"""


def test_a_generator_that_is_executing_can_be_neither_stepped_nor_closed(embedding):
    """As Python's generators: `ValueError: generator already executing`. A
    step of a generator that may print flushes Python's stdout first, which
    runs Python code: a flush that closed the generator destroyed the frame
    the step then resumed (a crash)."""
    out = in_another_python(CALLED_BACK, embedding).splitlines()
    expected = []
    for name, value in (("g", "1"), ("s", "1"), ("p", "P(x=1)")):
        for _ in range(3):
            expected += [f"{name}: 0", f"{name}: 1", f"{name}: 2", f"{name}: closed",
                         f"['generator already executing'] {value} [{value.replace('1', '2')}]"]
    assert out == expected


CLOSED_FROM_A_THREAD = """
import os, sys, threading, time
mod = pycoro.compile('''
fn g(n: i64) -> Generator<i64> { defer print("bye"); for i in 0..n { print(i); yield i; } }
struct P { x: i64 }
fn p(n: i64) -> Generator<P> { defer print("bye"); for i in 0..n { print(i); yield P { x: i }; } }
''')
shown = os.dup(1)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)   # the generators' output
said = set()
for make in (mod.g, mod.p):
    for _ in range(20):
        gen, stop = make(1 << 40), []
        def consume():
            try:
                for _ in gen:
                    if stop:
                        break
            except ValueError as err:   # closed, or being closed, meanwhile
                said.add(str(err))
        consumer = threading.Thread(target=consume)
        consumer.start()
        time.sleep(0.001)
        try:
            gen.close()
        except ValueError as err:   # it was executing
            said.add(str(err))
        stop.append(True)
        consumer.join()
        gen.close()
os.dup2(shown, 1)
print(said <= {"generator already executing", "g: generator used after close()", "p: generator used after close()"})
"""


def test_a_generator_closed_by_another_thread_while_it_runs(embedding):
    """The flush before a step lets other threads in: a close() then found the
    generator executing and destroyed its frame all the same (a crash)."""
    assert in_another_python(CLOSED_FROM_A_THREAD, embedding) == "True\n"


MADE_WITHOUT_A_CALL = """
import copy
mod = pycoro.compile('''
fn g(n: i64) -> Generator<i64> { for i in 0..n { yield i; } }
fn s(n: i64) -> Stream<i64> { for i in 0..n { yield i; } }
struct P { x: i64 }
fn p(n: i64) -> Generator<P> { for i in 0..n { yield P { x: i }; } }
''')
for make in (mod.g, mod.s, mod.p):
    gen = make(2)
    kind = type(gen)
    for attempt in (lambda: kind(), lambda: kind.__new__(kind), lambda: copy.copy(gen)):
        try:
            print("made", next(attempt()))
        except TypeError as err:
            print(err)
    if kind.__module__ == "pycoro":   # a native type's (CPython's own check)
        try:
            print("made", next(object.__new__(kind)))
        except TypeError:
            print("refused")
    print(list(gen))
"""


def test_a_generator_object_is_made_only_by_calling_its_function(embedding):
    """As CPython's generators: `type(g)()`, `type(g).__new__(type(g))` and
    copies are refused. One made so had no frame, and its step ended the
    process with a panic (a null pointer)."""
    out = in_another_python(MADE_WITHOUT_A_CALL, embedding).splitlines()
    expected = []
    for name in ("g", "s", "p"):
        kind = f"pycoro.generator_{name}" if embedding == "native" and name != "p" else "pycoro.embed.GeneratorObject"
        expected += [f"cannot create '{kind}' instances"] * 2 + [f"cannot pickle '{kind}' object"]
        expected += ["refused"] * (kind != "pycoro.embed.GeneratorObject")
        expected.append("[P(x=0), P(x=1)]" if name == "p" else "[0, 1]")
    assert out == expected


FLUSHES_THAT_FAIL = """
import sys
mod = pycoro.compile('''
fn g(xs: [u8]) -> Generator<i64> { defer print("g: closed"); for i in 0..xs.len() { print("g: made", i); yield xs[i] as i64; } }
struct P { x: i64 }
fn s(n: i64) -> Generator<P> { defer print("s: closed"); for i in 0..n { print("s: made", i); yield P { x: i }; } }
fn p(a: i64) -> i64 { print("p:", a); return a + 1; }
''')
real = sys.stdout

class BrokenPipe:
    def write(self, text):
        return len(text)
    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")

data = bytearray(b"\\x07\\x08\\x09")
for gen in (mod.g(data), mod.s(3)):
    print(next(gen), flush=True)
    sys.stdout = BrokenPipe()
    try:
        gen.close()
    except BrokenPipeError as err:
        failed = err
    sys.stdout = real
    print(repr(failed), gen)
    for use in (next, iter):
        try:
            use(gen)
        except (ValueError, TypeError) as err:
            print(type(err).__name__, err)
data.extend(bytes(100_000))   # released with the frame: it may move
sys.stdout = None
results = [mod.p(1), list(mod.g(b"\\x05")), list(mod.s(1))]
sys.stdout = real
print(results)
"""


def test_a_flush_that_fails_or_no_stdout_at_all(embedding):
    """A close() whose flush of sys.stdout fails destroys the frame all the
    same (its defers run, its buffers are released), then raises the flush's
    error: it used to leave the frame, which a later next() resumed with the
    buffers released. And without a sys.stdout (pythonw, or None), a
    function that may print has nothing to flush, as print() has nowhere to write."""
    out = in_another_python(FLUSHES_THAT_FAIL, embedding).splitlines()
    assert out == ["g: made 0", "7", "g: closed", "BrokenPipeError(32, 'Broken pipe') <pycoro generator g (closed)>",
                   "ValueError g: generator used after close()", "ValueError g: generator used after close()",
                   "s: made 0", "P(x=0)", "s: closed",
                   "BrokenPipeError(32, 'Broken pipe') <pycoro generator s (closed)>",
                   "ValueError s: generator used after close()", "ValueError s: generator used after close()",
                   "p: 1", "g: made 0", "g: closed", "s: made 0", "s: closed", "[2, [5], [P(x=0)]]"]


def test_a_bug_in_pycoro_is_an_internal_compiler_error(monkeypatch):
    """As the CLI's exit status 70: not a bare exception from pycoro's insides."""
    from pycoro.pipeline import driver

    def broken(self):
        raise KeyError("boom")
    monkeypatch.setattr(driver.Compilation, "check", broken)
    with pytest.raises(pycoro.InternalCompilerError) as err:
        pycoro.compile("fn f() -> i64 { return 1; }", cache=False)
    assert str(err.value) == "internal compiler error: KeyError: 'boom' (please report it)"
    assert isinstance(err.value.__cause__, KeyError)


def test_an_export_named_as_a_metaclass_attribute_is_an_attribute():
    """`type.mro` is no instance's attribute: an export `mro` is callable as one."""
    assert pycoro.compile("fn mro(x: i64) -> i64 { return x + 1; }").mro(1) == 2


def test_a_struct_field_named_as_a_tuples_own_takes_an_underscore():
    mod = pycoro.compile("struct S { __slots__: i64, __len__: i64, y: i64 }\n"
                         "fn mk(a: i64) -> S { return S { __slots__: a, __len__: a, y: a }; }\n")
    s = mod.mk(5)
    assert len(s) == 3 and s._fields == ("__slots___", "__len___", "y") and s.__len___ == 5

