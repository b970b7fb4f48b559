"""Python buffers into slice parameters (LANGUAGE.md §9 [data]): NumPy arrays,
`array.array`, `memoryview`, `bytearray`, and `bytes` where the function
never writes through the slice; without copying; refusals as TypeError."""
from __future__ import annotations

import array
import gc
import weakref

import pytest

import pycoro

np = pytest.importorskip("numpy")   # the buffer protocol needs no NumPy; these tests use it

SOURCE = """
fn mean(xs: [f64]) -> f64 {
    var s = 0.0;
    for v in xs { s += v; }
    return s / (xs.len() as f64);
}
fn scale(xs: [f64], by: f64) { for i in 0..xs.len() { xs[i] *= by; } }
fn fill_through(xs: [i32], v: i32) { set(xs, v); }
fn set(xs: [i32], v: i32) { for i in 0..xs.len() { xs[i] = v; } }
fn count_byte(data: [u8], b: u8) -> i64 { var n = 0; for v in data { if v == b { n += 1; } } return n; }
fn moving(xs: [f64], k: i64) -> Generator<f64> {
    for i in 0..xs.len() - k + 1 { yield mean(xs[i..i + k]); }
}
fn first(xs: [i64]) -> i64 { return xs[0]; }
"""


# every test twice: native entry points, Python wrappers (conftest.embedding)
pytestmark = pytest.mark.usefixtures("embedding")


@pytest.fixture(scope="module")
def mod(embedding):
    return pycoro.compile(SOURCE)


def test_numpy_arrays_go_in_without_copying(mod):
    x = np.arange(10.0)
    assert mod.mean(x) == 4.5
    mod.scale(x[2:5], 10.0)   # a C-contiguous view: writes land in x
    assert x.tolist() == [0.0, 1.0, 20.0, 30.0, 40.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    assert mod.mean(np.ones((2, 3))) == 1.0   # any C-contiguous array: its items in order
    assert mod.first(np.array([7, 8], dtype=np.int64)) == 7


def test_array_memoryview_bytearray_and_bytes(mod):
    a = array.array("d", [1.0, 2.0, 3.0])
    mod.scale(a, 2.0)
    assert a.tolist() == [2.0, 4.0, 6.0]
    assert mod.mean(memoryview(a)) == 4.0
    assert mod.count_byte(b"hello", ord("l")) == 2   # read-only: count_byte never writes
    assert mod.count_byte(bytearray(b"lll"), ord("l")) == 3
    assert mod.count_byte(memoryview(b"al"), ord("l")) == 1
    i32 = array.array("i", [0, 0])
    mod.fill_through(i32, 5)   # writes through a slice it passes on
    assert i32.tolist() == [5, 5]


def _refusal(call) -> str:
    with pytest.raises(TypeError) as err:
        call()
    return str(err.value)


def test_a_wrong_item_type_is_a_type_error_naming_the_parameter(mod):
    message = _refusal(lambda: mod.mean(np.arange(3, dtype=np.int64)))
    assert message.startswith("argument 1 (`xs: [f64]`) of fn mean(xs: [f64]) -> f64 must be a C-contiguous "
                              "buffer of f64 (such as a NumPy array of dtype float64), not a buffer of format")
    assert "not a buffer of format 'f'" in _refusal(lambda: mod.mean(array.array("f", [1.0])))
    assert _refusal(lambda: mod.mean([1.0, 2.0])).endswith("not list")


def test_a_non_contiguous_buffer_is_refused(mod):
    assert _refusal(lambda: mod.mean(np.arange(6.0)[::2])).endswith(
        "it is not C-contiguous (numpy.ascontiguousarray makes a copy that is)")
    assert "not C-contiguous" in _refusal(lambda: mod.mean(memoryview(array.array("d", [1, 2, 3, 4]))[::2]))


def test_a_read_only_buffer_is_refused_only_where_the_function_writes(mod):
    read_only = np.arange(3.0)
    read_only.flags.writeable = False
    assert mod.mean(read_only) == 1.0
    for call in (lambda: mod.scale(read_only, 2.0), lambda: mod.scale(b"12345678", 2.0),
                 lambda: mod.fill_through(bytes(8), 1)):
        assert _refusal(call).endswith("it is read-only, and the function may write through it")


def test_a_pointer_into_a_slice_counts_as_a_write():
    """A `ptr` is unchecked: a function that takes one into its slice (or hands
    the slice to one that does) gets no read-only buffer."""
    mod = pycoro.compile("fn poke(xs: [u8]) { let p = &xs[0]; p[0] = 88u8; }\n"
                         "fn via(xs: [u8]) { poke(xs); }\n")
    data = b"hello"
    for call in (lambda: mod.poke(data), lambda: mod.via(data)):
        assert _refusal(call).endswith("it is read-only, and the function may write through it")
    assert data == b"hello"
    writable = bytearray(b"hello")
    mod.via(writable)
    assert writable == b"Xello"



def test_a_slice_handed_to_c_counts_as_a_write():
    """An `extern fn` gets a pointer and a length: C may write through it."""
    mod = pycoro.compile("extern fn bzero(xs: [u8]);\n"
                         "fn clear(xs: [u8]) -> u8 { bzero(xs); return xs[0]; }\n"
                         "fn tail(xs: [u8]) -> u8 { clear(xs[1..]); return xs[0]; }\n")
    data = b"hello"
    for call in (lambda: mod.clear(data), lambda: mod.tail(data)):
        assert _refusal(call).endswith("it is read-only, and the function may write through it")
    assert data == b"hello"
    writable = bytearray(b"hello")
    assert mod.tail(writable) == ord("h") and writable == b"h\0\0\0\0"


def test_writes_through_a_receiver_a_with_or_a_generators_value_count():
    """The slice reaches the write through a struct's method, a `with`'s
    binding or a generator's value: still the function's write."""
    mod = pycoro.compile("""
struct H { s: [u8] }
impl H { fn set(self) { self.s[0] = 65u8; } fn get(self) -> u8 { return self.s[0]; } }
fn by_method(xs: [u8]) { let h = H { s: xs }; h.set(); }
fn reads(xs: [u8]) -> u8 { let h = H { s: xs }; return h.get(); }
fn lend(xs: [u8]) -> Once<[u8]> { yield xs; }
fn by_with(xs: [u8]) { with s in lend(xs) { s[0] = 66u8; } }
fn hand(xs: [u8]) -> Generator<[u8]> { yield xs; }
fn by_value(xs: [u8]) { var it = hand(xs); it.next(); let s = it.value(); s[0] = 67u8; }
""")
    data = bytes([1])
    for call in (mod.by_method, mod.by_with, mod.by_value):
        assert _refusal(lambda: call(data)).endswith("it is read-only, and the function may write through it")
    assert data == bytes([1]) and mod.reads(data) == 1
    writable = bytearray(3)
    for call in (mod.by_method, mod.by_with, mod.by_value):
        call(writable)
        assert writable[0] in b"ABC"


def test_writes_through_a_handle_passed_on_reassigned_or_iterated_count():
    """A generator handle handed to a function, a handle reassigned, a
    Stream's value() and a struct iterable's own next(): each carries what
    its slices view to the write."""
    mod = pycoro.compile("""
fn gen(xs: [u8]) -> Generator<[u8]> { yield xs; }
fn consume(g: Generator<[u8]>) { for p in g { p[0] = 88u8; } }
fn handed(xs: [u8]) { consume(gen(xs)); }
var spare: [u8; 3];
fn reassigned(xs: [u8]) { var g = gen(spare[..]); g = gen(xs); g.next(); let p = g.value(); p[0] = 88u8; }
fn sgen(xs: [u8]) -> Stream<[u8]> { yield xs; }
fn streamed(xs: [u8]) { var s = sgen(xs); s.next(); let p = s.value(); p[1] = 89u8; }
struct Scrub { xs: [u8], i: i64 }
impl Scrub {
    fn next(mut self) -> bool { if self.i >= self.xs.len() { return false; } self.xs[self.i] = 0u8; self.i += 1; return true; }
    fn value(self) -> i64 { return self.i; }
}
fn scrubbed(xs: [u8]) { for _v in (Scrub { xs: xs, i: 0 }) {} }
fn reads(xs: [u8]) -> i64 { var n = 0; for p in gen(xs) { n += p[0] as i64; } return n; }
""")
    data = b"abc"
    for call in (mod.handed, mod.reassigned, mod.streamed, mod.scrubbed):
        assert _refusal(lambda: call(data)).endswith("it is read-only, and the function may write through it")
    assert data == b"abc" and mod.reads(data) == ord("a")


def test_a_function_that_may_keep_its_slice_is_not_exported():
    """A buffer is lent for the call: one kept in a global would be used after
    Python released it (the next call crashed the interpreter)."""
    mod = pycoro.compile("var kept: [f64];\nfn keep(xs: [f64]) { kept = xs; }\n"
                         "fn sum(xs: [f64]) -> f64 { var s = 0.0; for v in xs { s += v; } return s; }\n")
    assert mod.sum(np.array([1.0, 2.0])) == 3.0
    with pytest.raises(AttributeError) as err:
        mod.keep
    assert str(err.value) == ("'keep' cannot be called from Python: it may keep its slice `xs` after it returns "
                              "(in a global, a spawned task, a function value, or what a pointer or `mut self` "
                              "reaches): a buffer is lent to it "
                              "only for the call")


def test_a_bool_buffer_must_hold_bools():
    """A PyCoro bool is the byte 0 or 1, and compiled code counts on it: a
    NumPy view of other bytes as bool made wrong counts (and `b as i64` 255).
    Its bytes are checked, and one with another byte is refused."""
    mod = pycoro.compile("fn count(xs: [bool]) -> i64 { var n: i64 = 0; for v in xs { if v { n += 1; } } return n; }\n"
                         "fn flags(xs: [bool]) -> Generator<bool> { for v in xs { yield v; } }\n")
    good = np.array([True, False, True])
    assert mod.count(good) == 2 and list(mod.flags(good)) == [True, False, True] and mod.count(np.zeros(0, bool)) == 0
    assert mod.count(memoryview(bytes([1, 0, 1, 1])).cast("?")) == 3
    bad = np.array([0, 2, 1, 255], np.uint8).view(np.bool_)
    for name, call in (("fn count(xs: [bool]) -> i64", mod.count), ("fn flags(xs: [bool]) -> Generator<bool>", mod.flags)):
        assert _refusal(lambda: call(bad)) == (
            f"argument 1 (`xs: [bool]`) of {name} must hold bools, but item 1 is the byte 2 "
            "(a bool is 0 or 1: a NumPy view of other bytes as bool is not)")
    assert _refusal(lambda: mod.count(bad[3:])).endswith("item 0 is the byte 255 (a bool is 0 or 1: a NumPy view "
                                                         "of other bytes as bool is not)")
    assert mod.count(bad[2:3]) == 1   # a view of its bools


def test_a_bool_output_made_with_np_empty_goes_in():
    """A buffer the function writes is not checked: its bytes may be what
    np.empty left there."""
    mod = pycoro.compile("fn fill(out: [bool]) { for i in 0..out.len() { out[i] = i % 2 == 0; } }\n")
    out = np.frombuffer(bytes([7, 200, 3]), np.uint8).copy().view(np.bool_)
    mod.fill(out)
    assert out.view(np.uint8).tolist() == [1, 0, 1]


def test_a_generator_that_cannot_print_never_flushes_python(monkeypatch):
    """Ending (and destroying) a generator of structs that prints nothing does
    not call sys.stdout.flush(): a flush that failed there lost the last
    batch of values (and under Jupyter each is a round trip)."""
    mod = pycoro.compile("struct P { a: i64 }\nfn ps(n: i64) -> Generator<P> { for i in 0..n { yield P { a: i }; } }\n")

    class Failing:
        def write(self, text):
            return len(text)

        def flush(self):
            raise OSError("flush failed")
    g = mod.ps(3)
    monkeypatch.setattr("sys.stdout", Failing())
    assert [p.a for p in g] == [0, 1, 2]

def test_a_buffer_refused_for_its_own_reason_says_it(mod):
    released = memoryview(bytearray(16)).cast("d")
    released.release()
    assert _refusal(lambda: mod.mean(released)).endswith(
        "memoryview says: operation forbidden on released memoryview object")
    assert "ndarray says: cannot include dtype 'M' in a buffer" in \
        _refusal(lambda: mod.first(np.array([1, 2], dtype="datetime64[s]")))


def test_a_generator_reads_and_writes_its_buffer_when_python_asks():
    """Not run ahead: Python may change the buffer between two steps, or look
    at what the generator wrote into it."""
    mod = pycoro.compile("fn walk(xs: [i64]) -> Generator<i64> { for v in xs { yield v; } }\n"
                         "fn double(xs: [i64]) -> Generator<i64> { for i in 0..xs.len() { xs[i] *= 2; yield xs[i]; } }\n"
                         "fn stream(xs: [i64]) -> Stream<i64> { for v in xs { yield v; } }\n")
    for make in (mod.walk, mod.stream):
        data = np.arange(6)
        g = make(data)
        assert next(g) == 0
        data[1:] = 100
        assert list(g) == [100] * 5
    data = np.arange(1, 5)
    g = mod.double(data)
    assert next(g) == 2
    assert data.tolist() == [2, 2, 3, 4]
    assert g.to_numpy().tolist() == [4, 6, 8] and data.tolist() == [2, 4, 6, 8]
    assert mod._exports["walk"].lockstep and not mod._exports["walk"].effects


def test_a_generator_keeps_its_buffer_alive(mod):
    class Tracked(np.ndarray):
        pass
    data = np.arange(6.0).view(Tracked)
    alive = weakref.ref(data)
    g = mod.moving(data, 3)
    del data
    gc.collect()
    assert alive() is not None
    assert list(g) == [1.0, 2.0, 3.0, 4.0]
    del g
    gc.collect()
    assert alive() is None   # released with the frame


def test_a_generator_fills_a_numpy_array():
    """Issue 21 item 5's spelling: `g.to_numpy()`, written in place in batches."""
    mod = pycoro.compile("fn numbers(lo: i64, hi: i64) -> Generator<i64> { for i in lo..hi { yield i; } }\n"
                         "fn loud(n: i64) -> Generator<f64> { for i in 0..n { print(i); yield i as f64; } }\n"
                         "fn flags(n: i64) -> Generator<bool> { for i in 0..n { yield i % 2 == 0; } }\n")
    big = mod.numbers(0, 100_000).to_numpy()
    assert big.dtype == np.int64 and (big == np.arange(100_000)).all()
    started = mod.numbers(0, 5)
    next(started)
    assert started.to_numpy().tolist() == [1, 2, 3, 4]   # what is left
    assert mod.loud(3).to_numpy().tolist() == [0.0, 1.0, 2.0]   # one value at a time: it prints
    assert mod.flags(4).to_numpy().tolist() == [True, False, True, False]
    assert mod.numbers(0, 0).to_numpy().tolist() == []


COLLECTED = """
fn numbers(lo: i64, hi: i64) -> Generator<i64> { for i in lo..hi { yield i; } }
fn bytes_of(xs: [u8]) -> Generator<u8> { for v in xs { yield v ^ 255; } }
fn quarters(n: i64) -> Generator<f32> { for i in 0..n { yield (i as f32) / 4.0; } }
fn means(xs: [f64], k: i64) -> Generator<f64> {
    var s = 0.0;
    for i in 0..xs.len() {
        s += xs[i];
        if i >= k { s -= xs[i - k]; }
        if i >= k - 1 { yield s / (k as f64); }
    }
}
fn bumped(xs: [i64]) -> Generator<i64> { for i in 0..xs.len() { xs[i] += 1; yield xs[i]; } }
fn breaks(n: i64) -> Generator<i64> { for i in 0..n { yield 100 / (1000 - i); } }
"""


def test_to_numpy_of_a_fresh_generator_drains_it_in_one_call(monkeypatch):
    """Issue 21 item 5: an untouched generator without effects is made again
    inside one native call and drained into memory that becomes the array's
    (python_entries._collect_source, pycoro/arrays.py): the same values as
    the step-by-step way, whatever the item type or arguments."""
    from pycoro import arrays
    mod = pycoro.compile(COLLECTED)
    xs = np.arange(1000, dtype=np.float64) % 7
    expected_means = [xs[i - 3:i + 1].mean() for i in range(3, 1000)]
    for way in ("collect", "no room", "no reservation"):
        if way == "no room":   # a reservation too small for the values: the frame made at the call makes them
            monkeypatch.setattr(arrays, "RESERVE", 4096)
        if way == "no reservation":
            monkeypatch.setattr(arrays, "reserve", lambda: None)
        big = mod.numbers(5, 200_005).to_numpy()
        assert big.dtype == np.int64 and big.tolist() == list(range(5, 200_005)), way
        assert mod.bytes_of(b"\x00\x0f").to_numpy().tolist() == [255, 240]
        assert mod.quarters(3).to_numpy().tolist() == [0.0, 0.25, 0.5]
        assert np.allclose(mod.means(xs, 4).to_numpy(), expected_means)
        owned = np.zeros(3, np.int64)
        assert mod.bumped(owned).to_numpy().tolist() == [1, 1, 1] and owned.tolist() == [1, 1, 1], way
        with pytest.raises(pycoro.PanicError, match="division by zero"):
            mod.breaks(2000).to_numpy()
        g = mod.breaks(10)
        assert g.to_numpy().tolist() == [0] * 10 and list(g) == []   # drained: finished
    kept = mod.numbers(0, 10).to_numpy()
    view = kept[2:4]
    del kept
    gc.collect()
    assert view.tolist() == [2, 3]   # the memory lives as long as any view of it


def test_to_numpy_arrays_kept_and_freed_in_any_order():
    """The memory of a freed array is kept for the next to_numpy (arrays.py's
    spare): arrays kept, freed and made again in any order hold their own values."""
    import random
    mod = pycoro.compile(COLLECTED)
    rng = random.Random(7)
    live = []
    for _ in range(60):
        lo, n = rng.randrange(100), rng.choice([0, 1, 511, 512, 4096, 70_000])
        live.append((lo, mod.numbers(lo, lo + n).to_numpy()))
        if rng.random() < 0.6:
            del live[rng.randrange(len(live))]
            gc.collect()
        for start, values in live:
            assert values.tolist() == list(range(start, start + len(values)))


def test_to_numpy_after_a_step_raises_a_panic_that_came_after_the_values():
    """A generator run ahead that panicked: to_numpy raises (as list() does),
    not an array that looks complete."""
    mod = pycoro.compile("fn tenths(n: i64) -> Generator<i64> { for i in 0..n { yield 100 / (5 - i); } }")
    g = mod.tenths(10)
    assert next(g) == 20
    with pytest.raises(pycoro.PanicError, match="division by zero"):
        g.to_numpy()


def test_to_numpy_from_threads():
    """Threads making and dropping arrays: the spare memory (arrays.py) has one
    owner at a time (two threads took the same range, and one wrote into it
    after the other unmapped it)."""
    import sys
    import threading
    mod = pycoro.compile(COLLECTED)
    failures = []

    def work():
        try:
            for i in range(150):
                values = mod.numbers(i, i + 5000 + 37 * i).to_numpy()
                if values[0] != i or values[-1] != i + 5000 + 37 * i - 1:
                    failures.append(i)
                del values
        except BaseException as err:   # noqa: BLE001 - reported below
            failures.append(err)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []


def test_numpy_scalars_are_numbers():
    """As numba takes them: an integer one for an integer, any for a float,
    NumPy's bool for a bool; refusals name NumPy's type."""
    mod = pycoro.compile("fn add(a: i64, b: u8) -> i64 { return a + (b as i64); }\n"
                         "fn half(x: f64) -> f64 { return x / 2.0; }\n"
                         "fn negate(b: bool) -> bool { return !b; }\n")
    assert mod.add(np.int64(5), np.uint8(7)) == 12 and mod.add(np.int32(-3), 0) == -3
    assert mod.half(np.float32(3.0)) == 1.5 and mod.half(np.int64(3)) == 1.5
    assert mod.negate(np.bool_(True)) is False
    assert _refusal(lambda: mod.add(0, np.int64(300))).endswith(": 300 does not fit in u8")
    assert _refusal(lambda: mod.negate(np.int64(1))).endswith("must be bool, not numpy.int64")
    assert _refusal(lambda: mod.add(np.bool_(True), 0)).endswith(f"must be i64, not numpy.{type(np.bool_(True)).__name__}")
    assert _refusal(lambda: mod.add(np.float64(1.0), 0)).endswith("must be i64, not numpy.float64")
