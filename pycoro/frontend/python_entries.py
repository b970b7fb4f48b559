"""Native entry points for CPython (pycoro.embed): PyCoro source, compiled
with the program for `pycoro.compile`, that Python calls without ctypes.

Why native (docs/decisions.md, "Calls from Python"): a ctypes call costs
about a microsecond of argument conversion before any work is done, and a
Python-level wrapper as much again; numba's wrappers are C functions
written against CPython's API, and so are these:

    fn __py_call_NAME(fallback, args, nargs, kwnames) -> PyObject*
        a METH_FASTCALL|METH_KEYWORDS function: positional arguments of the
        exact Python types (`int`, `float`, `bool`) are converted here and
        the export called through the runtime's `__pc_try`; anything else
        (keywords, a wrong count, a value to reject with a message) goes
        to `fallback`, the Python wrapper that checks and explains.
    fn __py_next_NAME(gen) -> PyObject*
        the `tp_iternext` of a generator's Python type: a resumption of its
        frame per value, as CPython's own generators do (or, one not in
        `lockstep`: without effects and lent no buffer, a few dozen values
        into a buffer in the object at a time).
    fn __py_collect_NAME(context)
        `to_numpy()`'s: the generator made and drained in one call.
    fn __py_claim(unused, args, nargs, kwnames) -> PyObject*
        `claim(gen)`, for what Python does to a generator's frame (close,
        to_numpy): marks it executing, or says it is already (a step is).
    fn __py_all_bools(p, n) -> bool
        whether a buffer lent to a `[bool]` parameter holds only bools.

An export with a slice or struct parameter, or a struct result, has no
native call (its Python wrapper converts them); a generator of structs has
no native step.

What the code needs from the process it runs in (type objects, `True`,
`False`, `None`, the Python callables it hands errors to, the runtime's
`__pc_try`) is passed once after loading, by `__py_init(api)`: its
symbols are not PyCoro's to name.
"""
from __future__ import annotations

from .exports import Export, ExportStruct, c_arg, c_params, c_type, positional
from .types import BOOL, VOID, FloatT, IntT, SliceT, Type

# What pycoro.embed passes to `__py_init` (embed._PyApi mirrors it), in four
# kinds: objects the code compares with, Python callables it hands work to,
# the runtime's calls that catch panics, and CPython's C API (`ptr<u8>` is a
# `PyObject *`). The API's functions come as pointers, not as `extern fn`s:
# the wrappers module is shared with `--emit shared`, whose library must not
# name a symbol only a Python process has, and a declaration here would
# clash with the program's own `extern fn fflush`.
API_OBJECTS = ("int_type", "float_type", "true_", "false_", "none")
API_HOOKS = (
    "flush_python",         # sys.stdout.flush(), before code that may print
    "panicked",             # raises the runtime's panic message as a PanicError
    "generator_ended",      # gen → raises StopIteration (destroying the frame), a pending panic or ValueError
    "generator_panicked",   # gen → finishes it, keeps the PanicError to raise after the values made before
    "generator_executing",  # gen → raises ValueError: generator already executing
)
API_RUNTIME = {"try_": "__pc_try", "try_faults": "__pc_try_faults"}   # field → runtime function
TRY = "fn(fn(ptr<u8>), ptr<u8>) -> i32"
API_FUNCTIONS = {
    "PyObject_Vectorcall": "fn(ptr<u8>, ptr<ptr<u8>>, u64, ptr<u8>) -> ptr<u8>",
    "PyObject_CallNoArgs": "fn(ptr<u8>) -> ptr<u8>",
    "PyObject_CallOneArg": "fn(ptr<u8>, ptr<u8>) -> ptr<u8>",
    "PyLong_AsLongLongAndOverflow": "fn(ptr<u8>, ptr<i32>) -> i64",
    "PyLong_AsUnsignedLongLong": "fn(ptr<u8>) -> u64",
    "PyLong_AsDouble": "fn(ptr<u8>) -> f64",
    "PyLong_FromLongLong": "fn(i64) -> ptr<u8>",
    "PyLong_FromUnsignedLongLong": "fn(u64) -> ptr<u8>",
    "PyFloat_AsDouble": "fn(ptr<u8>) -> f64",
    "PyFloat_FromDouble": "fn(f64) -> ptr<u8>",
    "PyErr_Occurred": "fn() -> ptr<u8>",
    "PyErr_Clear": "fn()",
    "Py_IncRef": "fn(ptr<u8>)",
    "Py_DecRef": "fn(ptr<u8>)",
    "fflush": "fn(ptr<u8>) -> i32",   # the C library's, after code that may print
}
API_FIELDS = (*((n, "ptr<u8>") for n in API_OBJECTS + API_HOOKS), *((n, TRY) for n in API_RUNTIME),
              *API_FUNCTIONS.items())

_HELPERS = f"""
struct __PyApi {{ {', '.join(f'{n}: {t}' for n, t in API_FIELDS)} }}
var __py: __PyApi;
fn __py_init(api: ptr<__PyApi>) {{ __py = api[0]; }}

fn __py_type(o: ptr<u8>) -> ptr<u8> {{ return (o as ptr<ptr<u8>>)[1]; }}

// An exact `int` in lo..=hi (a bool, an int subclass, one out of range: false).
fn __py_int(o: ptr<u8>, lo: i64, hi: i64, out: ptr<i64>) -> bool {{
    if __py_type(o) != __py.int_type {{ return false; }}
    var overflow: i32 = 0;
    let v = __py.PyLong_AsLongLongAndOverflow(o, &overflow);
    if overflow != 0 || v < lo || v > hi {{ return false; }}
    out[0] = v;
    return true;
}}

fn __py_u64(o: ptr<u8>, out: ptr<u64>) -> bool {{
    if __py_type(o) != __py.int_type {{ return false; }}
    let v = __py.PyLong_AsUnsignedLongLong(o);   // a negative one is an OverflowError
    if v == ~(0 as u64) && __py.PyErr_Occurred() != null {{ __py.PyErr_Clear(); return false; }}
    out[0] = v;
    return true;
}}

// A `float`, or an `int` (as the Python wrapper accepts one for a float).
fn __py_float(o: ptr<u8>, out: ptr<f64>) -> bool {{
    let t = __py_type(o);
    if t == __py.float_type {{ out[0] = __py.PyFloat_AsDouble(o); return true; }}
    if t != __py.int_type {{ return false; }}
    let v = __py.PyLong_AsDouble(o);
    if v == -1.0 && __py.PyErr_Occurred() != null {{ __py.PyErr_Clear(); return false; }}
    out[0] = v;
    return true;
}}

fn __py_bool(o: ptr<u8>, out: ptr<u8>) -> bool {{
    if o == __py.true_ {{ out[0] = 1; return true; }}
    if o == __py.false_ {{ out[0] = 0; return true; }}
    return false;
}}

fn __py_new_ref(o: ptr<u8>) -> ptr<u8> {{ __py.Py_IncRef(o); return o; }}
fn __py_bool_object(v: u8) -> ptr<u8> {{
    if v != 0 {{ return __py_new_ref(__py.true_); }}
    return __py_new_ref(__py.false_);
}}

// Python's buffered stdout written out before code that may print (false:
// flushing raised, and the exception is set).
fn __py_flush() -> bool {{
    let r = __py.PyObject_CallNoArgs(__py.flush_python);
    if r == null {{ return false; }}
    __py.Py_DecRef(r);
    return true;
}}
"""


# A native generator's object: the PyObject header (refcount, type), these
# words, then a buffer of values (pycoro.embed makes the type). A generator
# not in lockstep (no effects, no buffer lent: Export.lockstep) is run ahead into the buffer, FIRST_RUN_AHEAD values at
# first and twice as many each time, up to RUN_AHEAD (a native call costs
# about as much as handing out 20 values); any other one value at a time.
GENERATOR_FIELDS = ("_slot_address",   # where the frame's owning handle is (embed.GeneratorObject._slot)
                    "_index",          # the next value in the buffer to hand out
                    "_count",          # how many values the buffer holds
                    "_ask",            # how many values to ask the frame for next
                    "_running")        # 1 while executing: stepped, or closed (by __py_claim's caller)
FIRST_RUN_AHEAD, RUN_AHEAD = 8, 64
# the word of the object `_running` is (after the two of its header)
_RUNNING = 2 + GENERATOR_FIELDS.index("_running")

# As Python's generators, one that is executing cannot be stepped or closed:
# a step runs Python code (flushing stdout, the hooks), which may call back,
# or let another thread in. Testing and marking in one native call (the GIL
# held throughout) leaves no moment for either between them.
_CLAIM = f"""
fn __py_claim(unused: ptr<u8>, args: ptr<ptr<u8>>, nargs: i64, kwnames: ptr<u8>) -> ptr<u8> {{
    let o = args[0] as ptr<i64>;
    if o[{_RUNNING}] != 0 {{ return __py_new_ref(__py.false_); }}
    o[{_RUNNING}] = 1;
    return __py_new_ref(__py.true_);
}}
"""


# A PyCoro `bool` is the byte 0 or 1, and compiled code counts on it (LLVM
# loads an `i1`: another byte reads as either, or as itself: `b as i64` is
# 255), but a NumPy view of other bytes as bool is easily made. Checked for
# each buffer lent to a `[bool]`: an `or` of all its bytes, vectorised.
_ALL_BOOLS = """
fn __py_all_bools(p: ptr<u8>, n: i64) -> bool {
    var seen: u8 = 0;
    for i in 0..n { seen |= p[i]; }
    return seen <= 1;
}
"""


def native_call(e: Export) -> bool:
    """Whether `e` has a native call: scalar parameters and a scalar result (or none)."""
    return e.item is None and all(_scalar(t) for _, t in e.params) and (e.result == VOID or _scalar(e.result))


def native_step(e: Export) -> bool:
    """Whether generator `e` has a native step: scalar values."""
    return e.item is not None and _scalar(e.item)


def native_collect(e: Export) -> bool:
    """Whether generator `e` has a collect (`to_numpy`): scalar values, no
    effects, no slice it writes through (a collect that runs out of room
    leaves its work for the generator's own frame to do again)."""
    return native_step(e) and not e.effects and not e.written


def _scalar(t: Type) -> bool:
    return not isinstance(t, (SliceT, ExportStruct))


def symbols(exported: list[Export]) -> tuple[str, ...]:
    """The entry points pycoro.embed looks up (kept visible by the pipeline)."""
    steps = [f"__py_next_{e.name}" for e in exported if native_step(e)]
    bools = any(isinstance(t, SliceT) and t.elem == BOOL for e in exported for _, t in e.params)
    return ("__py_init", *(f"__py_call_{e.name}" for e in exported if native_call(e)),
            *steps, *(("__py_claim",) if steps else ()), *(("__py_all_bools",) if bools else ()),
            *(f"__py_collect_{e.name}" for e in exported if native_collect(e)))


def source(exported: list[Export]) -> str:
    """The entry points of `exported`, with what they share."""
    out = [_HELPERS, _CLAIM, _ALL_BOOLS]
    for e in exported:
        if native_call(e):
            out.append(_call_source(e))
        elif native_step(e):
            out.append(_step_source(e))
        if native_collect(e):
            out.append(_collect_source(e))
    return "\n".join(out)


def _guarded_call(e: Export, wrapper: str, context: str) -> list[str]:
    """`failed = wrapper(context)` through the runtime's `__pc_try` (its
    fault-catching kind where `e` may fault), both stdouts flushed around it
    where `e` may print."""
    call = f"    let failed = {'__py.try_faults' if e.faults else '__py.try_'}({wrapper}, {context});"
    if not e.output:
        return [call]
    return ["    if !__py_flush() { return null; }", call, "    __py.fflush(null);"]


def _converter(t: Type, obj: str, place: str) -> tuple[str, str]:
    """A test that reads Python object `obj` into `place` (a context field of
    `t`'s C type; false: not done), and the store that follows it, if any
    (through the locals `i` and `f`)."""
    if t == BOOL:
        return f"__py_bool({obj}, &{place})", ""
    if isinstance(t, FloatT):
        return f"__py_float({obj}, &f)", f"{place} = f as {t};"
    if isinstance(t, IntT) and not t.signed and t.bits == 64:
        return f"__py_u64({obj}, &{place})", ""
    assert isinstance(t, IntT)
    return f"__py_int({obj}, {t.min}, {t.max}, &i)", f"{place} = i as {t};"


def _object_of(t: Type, value: str) -> str:
    """A new reference to a Python object of `value`, a `t` in its C form."""
    if t == VOID:
        return "__py_new_ref(__py.none)"
    if t == BOOL:
        return f"__py_bool_object({value})"
    if isinstance(t, FloatT):
        return f"__py.PyFloat_FromDouble({value} as f64)"
    if not t.signed and t.bits == 64:
        return f"__py.PyLong_FromUnsignedLongLong({value})"
    return f"__py.PyLong_FromLongLong({value} as i64)"


def _call_source(e: Export) -> str:
    n = len(e.params)
    slow = "return __py.PyObject_Vectorcall(fallback, args, nargs as u64, kwnames);"
    lines = [f"fn __py_call_{e.name}(fallback: ptr<u8>, args: ptr<ptr<u8>>, nargs: i64, kwnames: ptr<u8>) -> ptr<u8> {{",
             f"    if nargs != {n} || kwnames != null {{ {slow} }}"]
    fields = n or e.result != VOID
    if fields:
        lines.append(f"    var c: __Call_{e.name};")
    lines.append("    var i: i64 = 0;\n    var f: f64 = 0.0;")
    for index, (_, t) in enumerate(e.params):
        test, store = _converter(t, f"args[{index}]", f"c.a{index}")
        lines.append(f"    if !{test} {{ {slow} }}")
        if store:
            lines.append(f"    {store}")
    lines += _guarded_call(e, f"__export_try_{e.name}", "&c as ptr<u8>" if fields else "null")
    lines.append("    if failed != 0 { return __py.PyObject_CallNoArgs(__py.panicked); }")
    lines.append(f"    return {_object_of(e.result, 'c.result')};\n}}")
    return "\n".join(lines)


def _step_source(e: Export) -> str:
    g, item = e.result_text, c_type(e.item)
    limit = 1 if e.lockstep else RUN_AHEAD
    lines = [
        f"fn __py_next_{e.name}(gen: ptr<u8>) -> ptr<u8> {{",
        "    let o = gen as ptr<i64>;",
        f"    let buffer = &o[{2 + len(GENERATOR_FIELDS)}] as ptr<{item}>;",
        "    let i = o[3];",
        f"    if i < o[4] {{ o[3] = i + 1; return {_object_of(e.item, 'buffer[i]')}; }}",
        f"    if o[{_RUNNING}] != 0 {{ return __py.PyObject_CallOneArg(__py.generator_executing, gen); }}",
        f"    o[{_RUNNING}] = 1;",
        f"    let r = __py_step_{e.name}(gen, o, buffer);",
        f"    o[{_RUNNING}] = 0;",
        "    return r;",
        "}",
        # the step proper, executing
        f"fn __py_step_{e.name}(gen: ptr<u8>, o: ptr<i64>, buffer: ptr<{item}>) -> ptr<u8> {{",
        # the slot holding the owning handle; 0 once the frame is gone (exhausted, closed, panicked)
        f"    let slot = o[2] as ptr<{g}>;",
        "    if (slot as ptr<u64>)[0] == 0 { return __py.PyObject_CallOneArg(__py.generator_ended, gen); }",
        "    let ask = o[5];",
        f"    var c = __Fill_{e.name} {{ g: slot, buf: buffer, cap: ask, n: 0 }};",
    ]
    lines += _guarded_call(e, f"__export_try_fill_{e.name}", "&c as ptr<u8>")
    lines += [
        f"    if ask < {limit} {{ o[5] = ask * 2; }}",
        "    o[3] = 0;",
        "    o[4] = c.n;",
        # the values made before a panic are handed out first, then the panic
        "    if failed != 0 {",
        "        let r = __py.PyObject_CallOneArg(__py.generator_panicked, gen);",
        "        if r == null { return null; }",
        "        __py.Py_DecRef(r);",
        "    }",
        "    if c.n == 0 { return __py.PyObject_CallOneArg(__py.generator_ended, gen); }",
        "    o[3] = 1;",
        f"    return {_object_of(e.item, 'buffer[0]')};",
        "}",
    ]
    return "\n".join(lines)


def _collect_source(e: Export) -> str:
    """`__py_collect_NAME(context)`, through `__pc_try`: creates the generator
    from the context's arguments and drains it into `buf`, room for `cap`
    values (`to_numpy`, pycoro/arrays.py); `n` is how many, or -1 if there
    were more. The generator is made and consumed in one function, so LLVM
    elides its frame and fuses its loop with this one, and the check for
    room is a second bound on the loop's count, which it still vectorises."""
    fields = ", ".join([*c_params(positional(e, "a")), f"buf: ptr<{c_type(e.item)}>", "cap: i64", "n: i64"])
    by_place = positional(e)   # __a0, __a1, …: nothing of the drain's hides the generator
    params = ", ".join([*c_params(by_place), f"__buf: ptr<{c_type(e.item)}>", "__cap: i64"])
    call = f"{e.name}({', '.join(c_arg(n, t, by_place) for n, t in by_place.params)})"
    forward = ", ".join([*(f"__c[0].{p.split(':')[0]}" for p in c_params(positional(e, "a"))),
                         "__c[0].buf", "__c[0].cap"])
    # The drain is a function of its own: inlined into the collect, its loop
    # is simplified once more and vectorised (written inline, it was not).
    return f"""struct __Collect_{e.name} {{ {fields} }}
fn __py_drain_{e.name}({params}) -> i64 {{
    var __n: i64 = 0;
    for __v in {call} {{
        if __n == __cap {{ return -1; }}
        __buf[__n] = __v{' as u8' * (e.item == BOOL)};
        __n += 1;
    }}
    return __n;
}}
fn __py_collect_{e.name}(__context: ptr<u8>) {{
    let __c = __context as ptr<__Collect_{e.name}>;
    __c[0].n = __py_drain_{e.name}({forward});
}}"""
