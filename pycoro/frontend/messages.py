"""Every message the checker reports, in one place (mypy's messages.py).

Message construction stays here; the checker only chooses which to report.
"""
from __future__ import annotations


def q(x: object) -> str:
    return f"`{shortened(str(x))}`"


LONG_TYPE = 60   # characters: a type written longer shows its outer two levels of type arguments


def shortened(text: str) -> str:
    """A long type with what is nested deeper than two levels of `<…>` left
    out (`Generator<Pair<Generator<…>, i64>>`), as rustc shortens long types."""
    if len(text) <= LONG_TYPE:
        return text
    out, depth = [], 0
    for ch in text:
        if ch == "<":
            depth += 1
            if depth <= 3:
                out.append("<" if depth <= 2 else "<…")
        elif ch == ">":
            if depth <= 3:
                out.append(">")
            depth -= 1
        elif depth <= 2:
            out.append(ch)
    return "".join(out)


# names and declarations
def stdlib_internal(name: str) -> str:
    return f"{q(name)} is internal to the standard library (names starting with `__` are)"
def duplicate(name: str) -> str: return f"{q(name)} is defined more than once"
def stdlib_name_hint(name: str, file: str) -> str:
    return f"{q(name)} comes from {file}, which shares one namespace with the program: choose another name"
def first_defined_here() -> str: return "first defined here"
def unknown_name(name: str) -> str: return f"cannot find {q(name)} in this scope"
def unknown_type(name: str) -> str: return f"unknown type {q(name)}"
def did_you_mean(name: str) -> str: return f"did you mean {q(name)}?"
def import_hint(name: str, module: str) -> str: return f'{q(name)} is in `{module}`: add `import "{module}";`'
def as_hint(expr: str, t: object) -> str: return f"convert it: `{expr} as {t}`"
def fields_hint(t: object, names: list[str]) -> str:
    return f"{q(t)} has no fields" if not names else \
        f"{q(t)} has field{'s' * (len(names) > 1)} " + ", ".join(map(q, names))
def type_arity(name: str, want: int, got: int) -> str:
    return f"{q(name)} takes {want} type argument{'s' * (want != 1)} but {got} were given"
def not_generic(name: str) -> str: return f"{q(name)} is not generic"
def type_too_large(t: object, size: int, limit: int) -> str:
    return f"type {q(t)} is too large: {size} bytes (the limit is {limit >> 30} GiB)"
def recursive_struct(name: str) -> str: return f"struct {q(name)} contains itself and would have infinite size"
def import_not_found(path: str) -> str: return f"cannot find module {q(path)}"
def cannot_read(path: str, why: str) -> str: return f"cannot read {q(path)}: {why}"
def no_main() -> str: return "program has no `main` function"
def bad_main() -> str: return "`main` must be declared `fn main()`, `fn main() -> i32` or `async fn main()`"
def builtin_redefined(name: str) -> str: return f"{q(name)} is a built-in function of the prelude and cannot be redefined"
def self_outside_impl() -> str: return "`self` parameter is only allowed in methods (inside `impl` or `promise`)"
def self_not_first() -> str: return "`self` must be the first parameter"
def generic_extern() -> str: return "an `extern fn` cannot be generic"
def unknown_intrinsic(name: str) -> str: return f"{q(name)} is not an intrinsic pycoro knows"
def known_intrinsics(names) -> str: return "intrinsics are: " + ", ".join(map(q, names))
def intrinsic_shape(name: str) -> str: return f"intrinsic {q(name)} is declared with the wrong signature"
def intrinsic_type(name: str, accepts: str, t: object) -> str: return f"{q(name)} takes {accepts}, not {q(t)}"
def instantiated_here(display: str) -> str: return f"in {q(display)}, instantiated here"
def instantiation_too_deep(name: str) -> str:
    return f"instantiating {q(name)} never ends: each instance needs a larger one"
def not_on_gpu(what: str) -> str: return f"{what} cannot run on a GPU"
def kernel_needs_gpu() -> str: return "a `kernel fn` is GPU code"
def gpu_builtin(name: str) -> str: return f"`{name}()` exists only in GPU code"
def gpu_hint() -> str: return "build it with `pycoro build --target nvptx`"
def kernel_generic() -> str: return "a `kernel fn` cannot be generic"
def kernel_returns(t: object) -> str: return f"a `kernel fn` returns nothing, not {q(t)}"
def kernel_coroutine() -> str: return "a `kernel fn` cannot be a coroutine"
def kernel_param(t: object) -> str: return f"a `kernel fn` takes scalars and pointers, not {q(t)}"
def gpu_coroutine_recursion(callee: str, caller: str) -> str:
    how = "calls itself" if callee == caller else f"is called recursively (here from {q(caller)})"
    return (f"coroutine {q(callee)} {how}: its frames cannot be bounded, "
            "and a GPU thread's local memory is fixed")
def gpu_recursion_hint() -> str:
    return "GPU code cannot recurse through coroutines: walk the structure with a loop and an explicit stack"
def kernel_called(name: str) -> str: return f"`kernel fn` {q(name)} is launched from the host and cannot be called"

# types and values
def mismatch(expected: object, found: object) -> str: return f"expected {q(expected)}, found {q(found)}"
def literal_out_of_range(value: int, t: object) -> str: return f"literal {value} does not fit in {q(t)}"
def cannot_infer_null() -> str: return "cannot infer the pointer type of `null`"
def cannot_infer_array() -> str: return "cannot infer the element type of an empty array"
def bad_operand(op: str, t: object) -> str: return f"operator `{op}` cannot be applied to {q(t)}"
def operand_mismatch(op: str, lt: object, rt: object) -> str:
    return f"operator `{op}` needs operands of the same type, found {q(lt)} and {q(rt)}"
def bad_cast(src: object, dst: object) -> str: return f"cannot cast {q(src)} to {q(dst)}"
def not_callable(t: object) -> str: return f"{q(t)} is not a function"
def arity(name: str, want: int, got: int) -> str:
    return f"{q(name)} takes {want} argument{'s' * (want != 1)} but {got} {'was' if got == 1 else 'were'} given"
def arity_at_least(name: str, want: int, got: int) -> str:
    return f"{q(name)} takes at least {want} argument{'s' * (want != 1)} but {got} {'was' if got == 1 else 'were'} given"
def cannot_infer_type_args(name: str) -> str: return f"cannot infer the type arguments of {q(name)}"
def no_field(t: object, name: str) -> str: return f"type {q(t)} has no field {q(name)}"
def no_method(t: object, name: str) -> str: return f"type {q(t)} has no method {q(name)}"
def ptr_field_hint(name: str) -> str: return f"index the pointer first: `p[0].{name}`"
def not_indexable(t: object) -> str: return f"type {q(t)} cannot be indexed"
def index_not_int(t: object) -> str: return f"array index must be an integer, found {q(t)}"
def not_sliceable(t: object) -> str: return f"type {q(t)} cannot be sliced"
def slice_ptr_hint() -> str: return "a pointer has no length: `slice(p, n)` makes a slice of `n` elements at `p`"
def slice_temporary() -> str: return "cannot slice a temporary array: it would be gone at the end of the statement"
def slice_temporary_hint() -> str: return "bind the array to a variable first (`var a = …;`), then slice `a[..]`"
def slice_of_owning(t: object) -> str:
    return f"a slice cannot view {q(t)}: that type owns coroutines, and a slice only borrows (index the array itself)"
def slice_it_hint(name: str) -> str:
    return f"a slice views an array place: write `{name}[..]`"
def slice_returned() -> str: return "returned"
def slice_yielded() -> str: return "yielded"
def slice_stored(where: str | None) -> str:
    return f"stored in global {where}" if where else "stored where this function's locals cannot outlive it"
def slice_escapes(name: str, how: str) -> str:
    return f"a slice of {q(name)} cannot be {how}: it would outlive {q(name)}"
def slice_escapes_hint() -> str:
    return "take the slice as a parameter (it then views the caller's array), or return or yield the elements themselves"
def slice_stored_hint() -> str:
    return "store the array itself, or slice an array that lives as long (a global's)"
def slice_outlives(name: str, holder: str) -> str:
    return f"a slice of {q(name)} cannot be kept in {q(holder)}, which could outlive {q(name)}"
def slice_holder_hint(name: str) -> str:
    return f"declare the variable after {q(name)}, in its scope or an inner one"
def write_through_slice(name: str) -> str:
    return f"cannot write through a slice of {q(name)}: {q(name)} cannot be assigned to"
def slice_written_by(name: str, callee: str) -> str:
    return f"{q(callee)} may write through this slice, but {q(name)} cannot be assigned to"
def slice_kept_by(name: str, callee: str) -> str:
    return (f"{q(callee)} may keep this slice after it returns (in a global, a spawned task, or through a "
            f"function value), and {q(name)} dies with this call")
def slice_to_unknown(name: str) -> str:
    return (f"a slice of {q(name)} cannot go through a function value: whether the function writes through "
            f"it or keeps it is unknown, and {q(name)} cannot be assigned to or dies with this call")
def slice_bound(t: object) -> str: return f"slice bounds must be integers, found {q(t)}"
def slice_needs_ptr(t: object) -> str: return f"`slice(p, n)` takes a pointer and a length, found {q(t)}"
def not_a_struct(name: str) -> str: return f"{q(name)} is not a struct"
def missing_fields(names: list[str]) -> str: return "missing field" + "s" * (len(names) > 1) + " " + ", ".join(map(q, names))
def duplicate_field(name: str) -> str: return f"field {q(name)} is given more than once"
def not_a_value(name: str) -> str: return f"{q(name)} is not a value"
def generic_fn_value(name: str) -> str: return f"cannot take the address of generic function {q(name)}"
def coroutine_fn_value(name: str) -> str:
    return f"cannot take the address of coroutine {q(name)}: a function pointer points to a plain function"
def coroutine_fn_value_hint(name: str, params: list[tuple[str, object]], ret: object) -> str:
    decl = ", ".join(f"{p}: {t}" for p, t in params)
    args = ", ".join(p for p, _ in params)
    return (f"wrap it in a plain function that returns its handle, and use that one: "
            f"`fn make_{name}({decl}) -> {ret} {{ return {name}({args}); }}`")
def not_printable(t: object) -> str: return f"cannot print a value of type {q(t)}"
def extern_arg(t: object) -> str: return f"cannot pass a value of type {q(t)} to a C function"
def extern_result(t: object) -> str: return f"a C function cannot return a value of type {q(t)}"
def cannot_infer_let(name: str) -> str: return f"cannot infer the type of {q(name)}"

# places and mutability
def not_assignable() -> str: return "cannot assign to this expression"
def assign_immutable(name: str) -> str: return f"cannot assign twice to immutable binding {q(name)}"
def assign_param(name: str) -> str: return f"cannot assign to parameter {q(name)}"
def assign_self() -> str: return "cannot assign to a field of `self` in a method that takes `self` by value"
def mut_method_on_immutable(method: str, name: str) -> str:
    return f"cannot call `mut self` method {q(method)} on immutable {q(name)}"
def not_addressable() -> str: return "cannot take the address of this expression"
def let_needs_init(name: str) -> str: return f"immutable binding {q(name)} needs an initializer"
def global_not_const() -> str: return "a global's initializer must be a constant"

# control flow
def break_outside_loop(kw: str) -> str: return f"`{kw}` outside of a loop"
def jump_out_of_defer(kw: str) -> str: return f"cannot `{kw}` out of a `defer`"
def missing_return(name: str, t: object) -> str:
    return f"function {q(name)} must return a value of type {q(t)} on every path"
def return_value_in_void(name: str) -> str: return f"function {q(name)} returns nothing (`void`); remove the value"
def return_missing_value(t: object) -> str: return f"this function must return a value of type {q(t)}"
def co_return_outside() -> str: return "`co_return` outside a coroutine"
def defer_declares() -> str: return "a `defer` cannot declare a variable"
def cond_not_bool(t: object) -> str: return f"condition must be `bool`, found {q(t)}"
def range_bound(t: object) -> str: return f"range bounds must be integers, found {q(t)}"
def not_iterable(t: object) -> str:
    return f"type {q(t)} is not iterable: it needs `next(mut self) -> bool` and `value(self) -> T`"

# coroutines
def return_in_coroutine() -> str: return "`return` in a coroutine"
def coroutine_return_type(name: str, t: object) -> str:
    return f"coroutine {q(name)} must return a promise handle type such as `Generator<T>`, not {q(t)}"
def missing_hook(promise: str, hook: str, what: str) -> str:
    return f"promise {q(promise)} has no `{hook}`, which {what} needs"
def unknown_abi(name: str) -> str: return f"unknown coroutine ABI {q(name)}: expected `switch`, `retcon(N)` or `retcon_once(N)`"
def retcon_needs_size(abi: str) -> str: return f"`abi {abi}` needs the size of its inline buffer: `abi {abi}(N);`"
def retcon_buffer_too_large(size: int, limit: int) -> str:
    return f"an inline buffer of {size} bytes is too large: it lives in the caller's stack frame (the limit is {limit >> 20} MiB)"
def switch_takes_no_size() -> str: return "`abi switch` takes no buffer size"
def retcon_initial(abi: str, mode: str) -> str:
    return f"a `{abi}` coroutine must be declared `initial {mode};`"
def retcon_member(abi: str, what: str) -> str:
    why = ("it ends by returning a null continuation" if what.startswith("a `final`")
           else "the yielded value travels with the continuation")
    return f"a `{abi}` promise cannot declare {what}: {why}"
def retcon_generic(name: str) -> str:
    return f"retcon promise {q(name)} needs a type parameter: its first one is the type of the values it yields"
def retcon_forbids(what: str, abi: str) -> str: return f"{what} is not available in a `{abi}` coroutine"
def once_yields(problem: str) -> str: return f"a `retcon_once` coroutine must yield exactly once; {problem}"
def with_needs_once(t: object) -> str:
    return f"`with` needs a `retcon_once` coroutine such as `Once<T>`, found {q(t)}"
def use_after_move(name: str) -> str: return f"use of moved value {q(name)}"
def use_after_partial_move(name: str, part: str) -> str:
    return f"use of partly moved value {q(name)}: {q(part)} was moved out of it"
def moved_here() -> str: return "moved here"
def move_used_by_defer(name: str) -> str:
    return f"cannot move {q(name)}: a `defer` above uses it, and runs after this"
def deferred_here() -> str: return "the `defer` that uses it"
def move_in_loop(name: str) -> str:
    return f"cannot move {q(name)} out of a variable declared outside this loop: it would be moved again in the next iteration"
def owning_in_aggregate(t: object) -> str:
    return f"{q(t)} holds a coroutine handle, which cannot be stored in a global"
def owning_in_promise_state(t: object, field: str) -> str:
    return (f"{q(t)} would keep a coroutine handle in its promise state (`{field}`), "
            "which is not supported yet")
def owning_yielded_by_retcon(t: object) -> str:
    return (f"{q(t)} would yield coroutine handles, which a returned-continuation coroutine "
            "cannot do yet (each `value()` would copy the handle)")
# How a coroutine comes to refer to a place (a Borrow's `via`): these read in the messages below.
def promise_var_initialised(name: str) -> str:
    return f"promise state starts zeroed: `var {name}` cannot have an initial value"
def promise_var_hint(name: str) -> str:
    return f"set `self.{name}` in a hook, or through `h.promise().{name}` once the coroutine is made"
def empty_yielded_by_retcon(t: object) -> str:
    return f"{q(t)} would yield values of no bytes, which a returned-continuation coroutine cannot hand over"
def via_method(method: str) -> str: return f"`mut self` method {q(method)}"
def via_slice() -> str: return "a slice of it"
def borrowing_coroutine_moved(via: str, place: str) -> str:
    return f"this coroutine refers to {place} (through {via}) and cannot be moved: it could outlive it"
def borrowing_coroutine_outlives(via: str, place: str, holder: str) -> str:
    return (f"this coroutine refers to {place} (through {via}) and cannot be "
            f"kept in {q(holder)}, which could outlive it")
def borrowing_coroutine_holder_hint(place: str) -> str:
    return (f"declare the variable after {place}, in its scope or an inner one; or consume the coroutine "
            "where it is made (`for`, `with`, `await`, `yield from`)")
def borrowing_coroutine_hint(method: str | None) -> str:
    by_value = f"; or let {q(method)} take `self` by value" if method else ""
    return ("consume it where it is made (`for`, `with`, `await`, `yield from`) or keep it in a local "
            f"variable{by_value}")
def borrowing_coroutine_kept(callee: str) -> str:
    return f"{q(callee)} moves this parameter on (returns, stores or passes it)"
def slice_spawned() -> str: return "given to a spawned task"
def borrowing_task(via: str, place: str) -> str:
    return f"a spawned task cannot refer to {place} (through {via}): it could outlive it"
def borrowing_task_hint(method: str | None) -> str:
    return "await the call in place instead" + (f", or let {q(method)} take `self` by value" if method else "")
def move_out_of_place() -> str: return "a coroutine handle can only be moved out of a local variable or its fields, not out of a pointer, an array element, `self` or a temporary"
def hook_result(hook: str) -> str: return f"`{hook}` returning a value is not supported yet"
def make_it_a_coroutine() -> str:
    return "a function is a coroutine only if its body has `yield` or `co_return`: end it with `co_return;`"
def not_awaitable(t: object) -> str: return f"a value of type {q(t)} cannot be awaited"
def bad_awaiter(t: object) -> str: return f"{q(t)} does not follow the awaiter protocol"
def awaiter_needs(missing: list[str]) -> str:
    need = ("`fn await_ready(mut self) -> bool`, `fn await_suspend(mut self, h: Handle)` "
            "(returning nothing, `bool` or `Handle`) and `fn await_resume(mut self) -> T`")
    return f"an awaiter needs {need}" + (f"; missing: {', '.join(missing)}" if missing else "")
def bad_hook(name: str, want: str) -> str: return f"promise hook `{name}` must be declared `{want}`"
def coroutine_return_hint() -> str:
    return ("a function whose body has `yield`, `await` or `co_return` is a coroutine; "
            "declare its result as a promise handle, e.g. `-> Generator<i64>` or `-> Task<i64>`")
_HOOK_SIGNATURES = {
    "yield_value": "fn yield_value(mut self, v: T)",
    "return_value": "fn return_value(mut self, v: T)",
    "return_void": "fn return_void(mut self)",
    "yield_from": "fn yield_from(mut self, inner: ptr<G>) -> W  (W an awaiter; see the prelude's Generator)",
    "allocate": "fn allocate(size: u64) -> ptr<u8>",
    "deallocate": "fn deallocate(p: ptr<u8>)",
}
def hook_hint(promise: str, hook: str) -> str:
    return f"add `{_HOOK_SIGNATURES.get(hook, hook)}` to `promise {promise}`"


# async functions (LANGUAGE.md §7)
def async_not_awaited(name: str) -> str:
    return f"{q(name)} is an `async fn`: call it with `await {name}(…)` or start a task with `spawn {name}(…)`"
def async_called_outside(name: str, caller: str) -> str:
    return f"{q(name)} is an `async fn`: only an `async fn` can call it (`await {name}(…)` or `spawn {name}(…)`), and {q(caller)} is not one"
def async_main_hint() -> str: return "declare `async fn main()` to run the program as a task"
def async_await_outside(name: str) -> str: return f"an `async fn` can only be awaited inside an `async fn`; {q(name)} is not one"
def async_await_operand(t: object) -> str:
    return f"`await` in an `async fn` takes a call of an `async fn` or a `Join<T>`, found {q(t)}"
def async_forbids(what: str) -> str: return f"{what} is not available in an `async fn`"
def spawn_outside() -> str: return "`spawn` is only available inside an `async fn`"
def spawn_operand() -> str: return "`spawn` takes a call of an `async fn`: `spawn f(…)`"
def async_value(name: str) -> str: return f"{q(name)} is an `async fn` and cannot be used as a value"
def async_abi_coroutine(t: object) -> str:
    return f"{q(t)} is the handle of a spawned task; a coroutine cannot return it"
def async_promise_members() -> str: return "a promise with `abi async;` declares nothing else: it names the handle of a task"


# hints
def struct_literal_hint(name: str) -> str: return f"build a struct with `{name} {{ field: value, … }}`"
def explicit_type_args_hint(name: str, generics) -> str:
    return f"give them explicitly: `{name}<{', '.join(generics)}>(…)`"
def no_self_hint(name: str) -> str: return f"{q(name)} has no `self` parameter"
def declare_var_hint(name: str) -> str: return f"declare it with `var {name}`"
def copy_param_hint(name: str) -> str: return f"copy it into a variable: `var {name} = {name};`"
def annotate_null_hint(name: str) -> str: return f"write `let {name}: ptr<T> = null;`"
def annotate_let_hint(name: str) -> str: return f"write `var {name}: T;`"
def gpu_extern_hint() -> str: return "GPU code cannot call C functions"
def intrinsic_signature_hint(signature: str) -> str: return f"declare it `{signature}`"
def kernel_generator_hint() -> str: return "run a generator inside the kernel instead: `for v in g(…) { … }`"
def use_co_return_hint() -> str: return "use `co_return` in a coroutine"
def use_return_hint() -> str: return "use `return` in a function that is not a coroutine"
def async_return_hint() -> str: return "an `async fn` returns with `return`"
def yield_from_other_hint(inner: object) -> str:
    return (f"`yield from` hands the consumer to a generator of this promise's own kind; "
            f"`for v in … {{ yield v; }}` passes on the values of a {q(inner)}")
def retcon_yield_from_hint() -> str:
    return ("a returned-continuation coroutine can only `yield`; "
            "`for v in g { yield v; }` passes on another generator's values")
