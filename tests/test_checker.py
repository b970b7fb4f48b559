"""The checker's error cases, in-process: one mistake each, exact message and position."""
from __future__ import annotations

from pathlib import Path

import pytest

from pycoro.common.diagnostics import CompileError, Span
from pycoro.pipeline.driver import Compilation


def refused(source: str) -> list:
    """The diagnostics of a program the checker refuses."""
    with pytest.raises(CompileError) as err:
        Compilation(source, "t.pc", Path(".")).check()
    return err.value.diagnostics


def diagnose(body: str, top: str = "") -> list[str]:
    source = f"{top}\nfn main() {{\n{body}\n}}\n"
    try:
        Compilation(source, "t.pc", Path(".")).check()
    except CompileError as err:
        return [f"{d.span.line}:{d.span.col}: {d.message}" if d.span else d.message
                for d in err.diagnostics]
    return []


CASES = [
    # (top-level declarations, body of main, expected diagnostics; main's body starts on line 3)
    ("let g = yield 1;", "", ["1:9: a global's initializer must be a constant"]),
    # a `with` body runs (or the `with` panics); its `break` leaves the loop around it
    ("fn lk(p: ptr<i64>) -> Once<ptr<i64>> { yield p; }\n"
     "fn h(x: ptr<i64>) -> i64 { loop { with _q in lk(x) { break; } } }", "",
     ["2:4: function `h` must return a value of type `i64` on every path"]),
    ("fn lk(p: ptr<i64>) -> Once<ptr<i64>> { yield p; }\nfn h(x: ptr<i64>) -> i64 { with _q in lk(x) { return 1; } }",
     "var x = 5; print(h(&x));", []),
    # a pointer into a slice is unchecked, as `&a[i]` is: a `let` array's slice may go there
    ("fn first(xs: [i64]) -> i64 { let p = &xs[0]; return p[0]; }", "let a = [1, 2, 3]; print(first(a[..]));", []),
    ("", "let x: i32 = 1.5;", ["3:14: expected `i32`, found `f64`"]),
    ("", "let x = 1; x += 1;", ["3:12: cannot assign twice to immutable binding `x`"]),
    ("", "var x: u8 = -1;", ["3:14: literal -1 does not fit in `u8`"]),
    ("", "let b = 1 < 2.0;", ["3:9: operator `<` needs operands of the same type, found `i64` and `f64`"]),
    ("", "let s = \"a\" + \"b\";", ["3:9: operator `+` cannot be applied to `str`"]),
    ("", "let p = null;", ["3:9: cannot infer the pointer type of `null`"]),
    ("", "let a = [1, 2.0];", ["3:13: expected `i64`, found `f64`"]),
    ("", "let a = [1, 2]; let b = a[true];", ["3:27: array index must be an integer, found `bool`"]),
    ("", "let x = 5; let y = x[0];", ["3:20: type `i64` cannot be indexed"]),
    ("", "let x = 1 as bool;", ["3:9: cannot cast `i64` to `bool`"]),
    ("", "let x = true as f64;", ["3:9: cannot cast `bool` to `f64`"]),
    ("", "print(main);", ["3:7: cannot print a value of type `fn()`"]),
    ("struct S { a: i64 }", "print(S { a: 1 });", ["3:7: cannot print a value of type `S`"]),
    ("struct S { a: i64 }", "let s = S { a: 1 }; s.a();", ["3:21: `i64` is not a function"]),
    ("struct S { a: i64 }", "let s = S { a: 1 }; let p = &s; print(p.a);",
     ["3:39: type `ptr<S>` has no field `a`"]),
    ("fn f<T>(a: T, b: T) {}", "f(1, true);", ["3:3: expected `bool`, found `i64`"]),
    ("fn f<T>(a: T, b: T) {}", "f(1i32, true);", ["3:9: expected `i32`, found `bool`"]),
    ("fn f(a: i64) {}", "f(x: 1);", ["3:4: expected ',' or ')', found ':'"]),
    ("extern fn puts(s: ptr<u8>) -> i32;", "puts(5);", ["3:6: expected `ptr<u8>`, found `i64`"]),
    ("extern fn printf(f: ptr<u8>, ...) -> i32;", "printf();", ["3:1: `printf` takes at least 1 argument but 0 were given"]),
    ("", "assert(1);", ["3:8: condition must be `bool`, found `i64`"]),
    ("", "panic(1);", ["3:7: expected `str`, found `i64`"]),
    ("", "assert(true, 5);", ["3:14: expected `str`, found `i64`"]),
    ("", "defer let x = 1;", ["3:7: a `defer` cannot declare a variable"]),
    ("", "for i in 0..2.5 { }", ["3:13: expected `i64`, found `f64`"]),
    ("", "for c in 5 { }", ["3:10: type `i64` is not iterable: it needs `next(mut self) -> bool` and `value(self) -> T`"]),
    ("", "var v: vec<i64>;", ["3:8: unknown type `vec`"]),
    ("", "var v: ptr<i64, i64>;", ["3:8: `ptr` takes 1 type argument but 2 were given"]),
    ("", "var v: i64<i64>;", ["3:8: `i64` is not generic"]),
    ("fn f() -> i64 { return 1; }", "let x: bool = f();", ["3:15: expected `bool`, found `i64`"]),
    ("fn f(self) {}", "", ["1:6: `self` parameter is only allowed in methods (inside `impl` or `promise`)"]),
    ("", "let x = 1; let y = x.foo;", ["3:20: type `i64` has no field `foo`"]),
    ("struct P { x: i64 }\nimpl P { fn get(self) -> i64 { return self.x; } }",
     "let p = P { x: 1 }; print(p.gte());", ["4:27: type `P` has no method `gte`"]),
]


@pytest.mark.parametrize("top,body,expected", CASES, ids=[c[1][:40] for c in CASES])
def test_checker_error(top, body, expected):
    assert diagnose(body, top) == expected


def test_hint_suggests_a_close_name():
    source = "fn main() { let count = 1; print(cuont); }\n"
    with pytest.raises(CompileError) as err:
        Compilation(source, "t.pc", Path(".")).check()
    assert err.value.diagnostics[0].hint == "did you mean `count`?"


def test_errors_do_not_cascade():
    # One unknown name: one error, not one per use of the broken expression.
    assert diagnose("let x = nope + 1; let y = x * 2; print(y);") == ["3:9: cannot find `nope` in this scope"]


def test_an_async_fn_called_outside_one_is_one_error_with_a_way_out():
    # Its result is not the `void` it seems to be: no second error about
    # `block_on`'s argument, and `main` is told how to become a task.
    diags = refused("async fn go() -> i64 { return 1; }\nfn main() { block_on(go()); let _x = go() + 1; }\n")
    message = "`go` is an `async fn`: only an `async fn` can call it (`await go(…)` or `spawn go(…)`), and `main` is not one"
    assert [(d.span.col, d.message, d.hint) for d in diags] == \
        [(22, message, "declare `async fn main()` to run the program as a task"),
         (38, message, "declare `async fn main()` to run the program as a task")]


def test_an_async_method_called_bare_is_named_as_written():
    diags = refused("async fn main() { let ch = channel<i64>(1); ch.send(1); }\n")
    assert [d.message for d in diags] == \
        ["`ch.send` is an `async fn`: call it with `await ch.send(…)` or start a task with `spawn ch.send(…)`"]


def test_a_generic_stdlib_function_not_imported_gets_the_import_hint():
    diags = refused("fn main() { let _ch = channel<i64>(1); }\n")
    assert [(d.message, d.hint) for d in diags] == \
        [("cannot find `channel` in this scope", '`channel` is in `std/async`: add `import "std/async";`')]


def test_an_error_in_a_generic_body_says_which_instance_and_where_it_was_asked_for():
    source = """fn inner<T>(x: T) -> T { return x * 2; }
fn outer<T>(x: T) -> T { return inner(x); }
struct W<T> { v: T }
impl<T> W<T> { fn get(self) -> T { return outer(self.v); } }
fn main() {
    print(outer(2));
    let w = W { v: true };
    print(w.get());
}
"""
    with pytest.raises(CompileError) as err:
        Compilation(source, "t.pc", Path(".")).check()
    assert str(err.value) == """\
t.pc:1:33: error: operator `*` needs operands of the same type, found `bool` and `i64`
fn inner<T>(x: T) -> T { return x * 2; }
                                ^~~~~
t.pc:2:33: note: in `inner<bool>`, instantiated here
fn outer<T>(x: T) -> T { return inner(x); }
                                ^~~~~~~~
t.pc:4:43: note: in `outer<bool>`, instantiated here
impl<T> W<T> { fn get(self) -> T { return outer(self.v); } }
                                          ^~~~~~~~~~~~~
t.pc:8:11: note: in `W<bool>.get`, instantiated here
    print(w.get());
          ^~~~~~~"""


def test_errors_in_generic_instances_come_in_the_order_the_instances_were_asked_for():
    source = """fn twice<T>(x: T) -> T { return x + x; }
fn main() { print(twice(1), twice(true), twice("a"), twice(false)); }
"""
    assert [(d.message, d.notes) for d in refused(source)] == [
        ("operator `+` cannot be applied to `bool`", [("in `twice<bool>`, instantiated here", Span("t.pc", 2, 29, 2, 40))]),
        ("operator `+` cannot be applied to `str`", [("in `twice<str>`, instantiated here", Span("t.pc", 2, 42, 2, 52))]),
    ]   # twice<bool> once, though asked for twice


def test_an_error_in_a_generic_signature_says_which_instance_too():
    source = """fn count() -> Generator<i64> { yield 1; }
fn pass<T>(x: T) -> Stream<T> { yield x; }
fn outer<T>(x: T) { for g in pass(x) { } }
fn main() { outer(count()); }
"""
    (only,) = refused(source)
    assert (only.span.line, only.span.col) == (2, 21)
    assert [(text, span.line, span.col) for text, span in only.notes] == [
        ("in `pass<Generator<i64>>`, instantiated here", 3, 30),
        ("in `outer<Generator<i64>>`, instantiated here", 4, 13),
    ]


def test_a_name_the_stdlib_defines_gets_a_hint_to_choose_another():
    (first, *_) = refused("struct Maybe { x: i64 }\nfn main() {}\n")
    assert first.message == "`Maybe` is defined more than once"
    assert first.hint == "`Maybe` comes from <stdlib>/prelude.pc, which shares one namespace with the program: choose another name"


@pytest.mark.parametrize("body,hint", [
    ("var a = [1, 2]; let s: [i64] = a;", "a slice views an array place: write `a[..]`"),
    ("var a = [1, 2]; let p = &a[0]; let s = p[0..1];",
     "a pointer has no length: `slice(p, n)` makes a slice of `n` elements at `p`"),
    ("fn make() -> [i64; 2] { return [1, 2]; }\nfn g() { let s = make()[..]; }",
     "bind the array to a variable first (`var a = …;`), then slice `a[..]`"),
    ("let a = [1, 2]; let s = a[..]; s[0] = 3;", "declare it with `var a`"),
    ("fn g(a: [i64; 2]) { let s = a[..]; s[0] = 3; }", "copy it into a variable: `var a = a;`"),
])
def test_slice_mistakes_get_a_hint(body, hint):
    source = body if body.startswith("fn") else f"fn main() {{ {body} }}\n"
    diagnostics = refused(source + ("\nfn main() {}\n" if body.startswith("fn") else ""))
    assert [d.hint for d in diagnostics] == [hint]


def test_yield_from_a_stream_hints_at_a_loop():
    diagnostics = refused("fn up(n: i64) -> Stream<i64> { for i in 0..n { yield i; } }\n"
                          "fn g() -> Generator<i64> { yield from up(3); }\n"
                          "fn main() { for v in g() { print(v); } }\n")
    assert [(d.message, d.hint) for d in diagnostics] == [(
        "expected `Generator<i64>`, found `Stream<i64>`",
        "`yield from` hands the consumer to a generator of this promise's own kind; "
        "`for v in … { yield v; }` passes on the values of a `Stream<i64>`")]


@pytest.mark.parametrize("source, expected", [
    # the stdlib's `__` names are its own
    ('import "std/async";\nasync fn main() { let p: ptr<Generator<i64>> = null; let _g = __take(p); }\n',
     ["2:63: `__take` is internal to the standard library (names starting with `__` are)"]),
    ('import "std/async";\nasync fn main() { let _t: ptr<__Task> = null; }\n',
     ["2:31: `__Task` is internal to the standard library (names starting with `__` are)"]),
    ('import "std/async";\nasync fn main() { __timer_count = 1; }\n',
     ["2:19: `__timer_count` is internal to the standard library (names starting with `__` are)"]),
    ('import "std/async";\nasync fn main() { let c = __Chunk { prev: null, next: null, cap: 0u64, used: 0u64 }; }\n',
     ["2:27: `__Chunk` is internal to the standard library (names starting with `__` are)"]),
    ("fn s() -> Stream<i64> { yield 1; }\nfn main() { var x = s(); x.__destroy(); }\n",
     ["2:26: `__destroy` is internal to the standard library (names starting with `__` are)"]),
    # a slice a spawned task or a channel keeps may not outlive its array
    ('import "std/async";\nasync fn add(xs: [i64]) -> i64 { await sleep(10); xs[0] += 1; return xs[0]; }\n'
     "async fn leaker(xs: [i64]) { let _j = spawn add(xs); }\n"
     "async fn main() { var arr = [1, 2, 3]; await leaker(arr[..]); }\n",
     ["4:53: `leaker` may keep this slice after it returns (in a global, a spawned task, or through a function "
      "value), and `arr` dies with this call"]),
    ('import "std/async";\nasync fn put(ch: Channel<[i64]>) { var arr = [1, 2, 3]; await ch.send(arr[..]); }\n'
     "async fn main() { let ch = channel<[i64]>(2); await put(ch); }\n",
     ["2:71: `Channel<[i64]>.send` may keep this slice after it returns (in a global, a spawned task, or through a "
      "function value), and `arr` dies with this call"]),
    # a method is defined once for a type
    ("struct B { v: i64 }\nimpl B { fn get(self) -> i64 { return 1; } }\n"
     "impl B { fn get(self) -> i64 { return 2; } }\nfn main() {}\n", ["3:13: `get` is defined more than once"]),
    ("struct Box<T> { v: T }\nimpl<T> Box<T> { fn get(self) -> T { return self.v; } }\n"
     "impl Box<i64> { fn get(self) -> i64 { return 0; } }\nimpl Box<f64> { fn twice(self) -> f64 { return 2.0; } }\n"
     "impl Box<i32> { fn twice(self) -> i32 { return 2; } }\nfn main() {}\n",
     ["3:20: `get` is defined more than once"]),
    ("struct Two<A, B> { a: A, b: B }\nimpl<T> Two<T, i64> { fn get(self) -> i64 { return 1; } }\n"
     "impl<T> Two<i64, T> { fn get(self) -> i64 { return 2; } }\nimpl<T> Two<T, T> { fn same(self) -> i64 { return 3; } }\n"
     "impl Two<i64, f64> { fn same(self) -> i64 { return 4; } }\nfn main() {}\n",
     ["3:26: `get` is defined more than once"]),
    # promise hooks are declared as LANGUAGE.md §5.1 gives them
    ("promise P { abi switch; fn return_void(mut self, x: i64) {} }\nfn g() -> P { co_return; }\n"
     "fn main() { let _h = g(); }\n", ["1:28: promise hook `return_void` must be declared `fn return_void(mut self)`"]),
    ("promise P { abi switch; fn return_void(mut self) {} fn final_suspend(mut self) -> i64 { return 1; } }\n"
     "fn g() -> P { co_return; }\nfn main() { let _h = g(); }\n",
     ["1:56: promise hook `final_suspend` must be declared `fn final_suspend(mut self) -> Handle`"]),
    ("promise P { abi switch; fn return_void(mut self) {} fn yield_value(v: i64) {} }\n"
     "fn g() -> P { yield 1; }\nfn main() { let _h = g(); }\n",
     ["1:56: promise hook `yield_value` must be declared `fn yield_value(mut self, v: T)`"]),
    ("struct W {}\nimpl W { fn await_ready(mut self, _x: i64) -> bool { return false; }\n"
     "fn await_suspend(mut self, _h: Handle) {} fn await_resume(mut self) {} }\n"
     "promise P { abi switch; fn return_void(mut self) {} }\nfn g() -> P { await W {}; }\n"
     "fn main() { let _h = g(); }\n", ["5:21: `W` does not follow the awaiter protocol"]),
    # a handle is a pointer: a struct holding a Generator of itself is finite,
    # and refused for what its promise state would hold
    ("struct L { g: Generator<L> }\nfn main() {}\n",
     ["1:15: `Generator<L>` would keep a coroutine handle in its promise state (`current`), which is not "
      "supported yet"]),
])
def test_declarations_a_program_may_not_make(source, expected):
    assert [f"{d.span.line}:{d.span.col}: {d.message}" for d in refused(source)] == expected


@pytest.mark.parametrize("source, expected", [
    # a parameter `mut self` outside a method is refused, and the body's names
    # still line up with the parameters (it crashed the checker)
    ("fn f(mut self, v: i64) { print(v); }\nfn main() {}\n",
     ["1:6: `self` parameter is only allowed in methods (inside `impl` or `promise`)"]),
    # import paths the system could not take are diagnostics, not crashes
    ('import "\\0";\nfn main() {}\n', ["1:1: an import path cannot contain `\\0`"]),
    ('import "\\xc3";\nfn main() {}\n', ["1:1: an import path must be UTF-8 text"]),
    ('import "";\nfn main() {}\n', ["1:1: an import path cannot be empty"]),
    (f'import "{"x" * 300}";\nfn main() {{}}\n', [f"1:1: cannot read `{'x' * 300}`: file name too long"]),
    # a generic `main` cannot be C's
    ("fn main<T>() {}\n", ["1:4: `main` must be declared `fn main()`, `fn main() -> i32` or `async fn main()`"]),
    # hooks a `for` or an `await` calls cannot be async fns (the IR was invalid)
    ("struct A {}\nimpl A { async fn await_ready(mut self) -> bool { return false; }\n"
     "fn await_suspend(mut self, _h: Handle) {} fn await_resume(mut self) {} }\n"
     "fn t() -> Task<void> { await A {}; }\nfn main() { block_on(t()); }\n", ["4:30: `A` does not follow the awaiter protocol"]),
    ("struct It { n: i64 }\nimpl It { async fn next(mut self) -> bool { return false; } fn value(self) -> i64 { return 1; } }\n"
     "fn main() { for v in (It { n: 1 }) { print(v); } }\n",
     ["3:23: type `It` is not iterable: it needs `next(mut self) -> bool` and `value(self) -> T`"]),
    # a negative literal past i64 wrapped; one past f64 crashed the compiler
    ("fn main() { let x = -9223372036854775809; print(x); }\n", ["1:22: literal -9223372036854775809 does not fit in `i64`"]),
    (f"fn main() {{ let x: f64 = 1{'0' * 309}; print(x); }}\n", [f"1:26: literal 1{'0' * 309} does not fit in `f64`"]),
    # a slice is a pointer and a length: a struct may hold a slice of itself
    ("struct Node { kids: [Node], v: i64 }\nstruct Bad { kids: [Bad], g: Generator<i64> }\nfn main() {}\n",
     ["2:20: a slice cannot view `Bad`: that type owns coroutines, and a slice only borrows (index the array itself)"]),
    # a returned-continuation buffer lives on the caller's stack; LLVM aborted on a yielded value of no bytes
    ("promise Big<T> { abi retcon(99999999999999999); initial suspend; }\nfn g() -> Big<i64> { yield 1; }\n"
     "fn main() { for v in g() { print(v); } }\n",
     ["1:18: an inline buffer of 99999999999999999 bytes is too large: it lives in the caller's stack frame "
      "(the limit is 1 MiB)"]),
    ("struct E {}\nfn g() -> Once<E> { yield E {}; }\nfn main() { with _e in g() {} }\n",
     ["2:11: `Once<E>` would yield values of no bytes, which a returned-continuation coroutine cannot hand over"]),
    # promise state starts zeroed: an initial value was ignored
    ("promise P { abi switch; var c: i64 = 5; fn return_void(mut self) {} }\nfn g() -> P { co_return; }\n"
     "fn main() { var x = g(); print(x.promise().c); }\n",
     ["1:38: promise state starts zeroed: `var c` cannot have an initial value"]),
    ('import "/dev/zero";\nfn main() {}\n', ["1:1: cannot read `/dev/zero`: not a regular file"]),
], ids=["mut_self_outside_a_method", "nul_in_import", "import_not_utf8", "empty_import", "import_too_long", "generic_main",
        "async_awaiter_hook", "async_next", "negative_literal", "float_literal", "slice_of_itself", "retcon_buffer",
        "empty_yield", "promise_var_initialised", "import_device"])
def test_what_a_mutation_fuzzer_found(source, expected):
    assert [f"{d.span.line}:{d.span.col}: {d.message}" for d in refused(source)] == expected
