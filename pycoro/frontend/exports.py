"""What a program exports to C and Python (LANGUAGE.md §9), and the PyCoro
wrappers that give each export a C ABI.

A top-level, non-generic function is exported when its parameters are
scalars (`iN uN fN bool`) and its result is a scalar, nothing, or a
`Generator<scalar>` / `Stream<scalar>` (below, `Generator` stands for both).
For each one, `wrapper_source` writes small PyCoro functions, appended to the
program, whose signatures C can call (a `bool` crosses as a `u8`, which C's
`bool` is in every ABI we target):

    fn __export_NAME(params) -> R                       a plain function
    fn __export_NAME(params) -> Generator<T>            a generator: create
    fn __export_next_NAME(g: ptr<Generator<T>>) -> u8   one step: a value is ready
    fn __export_value_NAME(g: ptr<Generator<T>>) -> T   that value
    fn __export_fill_NAME(g, buf: ptr<T>, cap) -> i64   up to cap steps into buf
    fn __export_destroy_NAME(g: ptr<Generator<T>>)      runs pending defers, frees

A generator crosses as its owning handle (the frame's address; a Stream's: its
control block's) in a slot its caller owns. Shared libraries (backend/clib.py)
give these wrappers C names; pycoro.embed calls them through `guarded_source`'s
wrappers, which catch panics. Both fills share one loop, `__export_fill_into_NAME`.

`has_effects` decides whether a generator may be run ahead of its consumer
(docs/embedding.md): only if it and everything it calls never prints, calls
C, touches a mutable global, or calls through a function pointer.
"""
from __future__ import annotations

from .program import (
    BuiltinCall,
    CheckedProgram,
    DirectCall,
    FnInstance,
    GlobalVar,
    IndirectCall,
)
from . import ast
from .layout import StructLayouts
from .types import BOOL, PRIMITIVES, VOID, ArrayT, PromiseT, PtrT, SliceT, StructT, Type, is_scalar
from ..common.paths import in_stdlib
from ..common.record import record

GENERATOR_STEPS = ("next", "value", "fill", "destroy")   # the wrappers a generator has besides create


@record(frozen=True)
class ExportStruct(Type):
    """A struct that crosses to Python and C (its fields scalars or such structs),
    as plain data: its PyCoro name (`Point`, `Pair<i64>`) and its fields."""
    __hash__ = Type.__hash__
    name: str
    fields: tuple[tuple[str, Type], ...]

    def __str__(self) -> str:
        return self.name


def _crossing(t: Type, layouts: StructLayouts) -> Type | None:
    """`t` as it crosses (a StructT as an ExportStruct), or None when it cannot:
    scalars, and structs of scalars or such structs."""
    if is_scalar(t):
        return t
    if isinstance(t, StructT) and layouts.fields(t):
        fields = tuple((n, _crossing(ft, layouts)) for n, ft in layouts.fields(t))
        return ExportStruct(str(t), fields) if all(ft is not None for _, ft in fields) else None
    return None


def _param_crossing(t: Type, layouts: StructLayouts) -> Type | None:
    """A parameter's: a scalar, a struct of them, or a slice of scalars."""
    if isinstance(t, SliceT) and is_scalar(t.elem):
        return t
    return _crossing(t, layouts)


def _type_to_json(t: Type):
    if isinstance(t, ExportStruct):
        return {"struct": t.name, "fields": [[n, _type_to_json(ft)] for n, ft in t.fields]}
    return str(t)


def _type_from_json(data) -> Type:
    if isinstance(data, dict):
        return ExportStruct(data["struct"], tuple((n, _type_from_json(ft)) for n, ft in data["fields"]))
    return SliceT(PRIMITIVES[data[1:-1]]) if data.startswith("[") else PRIMITIVES[data]


@record(frozen=True)
class Export:
    name: str
    params: tuple[tuple[str, Type], ...]
    result: Type             # a plain function's result (VOID: none); a generator's is Generator<item>
    item: Type | None        # generators: the type of their values
    effects: bool = True     # may print, call C or touch a mutable global (then: one step per value)
    kind: str = "Generator"  # generators: the prelude promise, `Generator` or `Stream`
    faults: bool = True      # may fault rather than panic (may_fault): pycoro.embed then catches faults
    written: tuple[str, ...] = ()   # slice parameters it may write through (others accept read-only buffers)
    doc: str = ""            # its `///` comment lines, without the slashes (Python's docstring)
    output: bool = True      # may write to stdout (prints, calls C): pycoro.embed flushes around its calls
    borrows: bool = True     # generators: a parameter views memory Python lends it (a slice)

    @property
    def lockstep(self) -> bool:
        """Whether a generator runs one step per value Python asks for: it has
        effects, or its steps read or write memory Python lent it, which Python
        may change or look at between two `next()`s."""
        return self.effects or self.borrows

    @property
    def result_text(self) -> str:
        return f"{self.kind}<{self.item}>" if self.item is not None else str(self.result)

    @property
    def signature(self) -> str:
        params = ", ".join(f"{n}: {t}" for n, t in self.params)
        returns = self.item is not None or self.result != VOID
        return f"fn {self.name}({params})" + (f" -> {self.result_text}" if returns else "")

    def wrappers(self) -> list[str]:
        """The wrapper functions' names (`__export_…`), create first."""
        if self.item is None:
            return [f"__export_{self.name}"]
        return [f"__export_{self.name}", *(f"__export_{step}_{self.name}" for step in GENERATOR_STEPS)]

    def guarded(self) -> list[str]:
        """The wrappers pycoro.embed calls through the runtime's `__pc_try`, so
        that a panic becomes a Python exception: `fn(context: ptr<u8>)` each."""
        if self.item is None:
            return [f"__export_try_{self.name}"]
        return [f"__export_try_fill_{self.name}", f"__export_try_destroy_{self.name}"]

    # An export survives in a cache as plain data: its types are all primitives.
    def to_json(self) -> dict:
        return {"name": self.name, "params": [[n, _type_to_json(t)] for n, t in self.params],
                "result": _type_to_json(self.result), "item": None if self.item is None else _type_to_json(self.item),
                "effects": self.effects, "kind": self.kind, "faults": self.faults, "written": list(self.written),
                "doc": self.doc, "output": self.output, "borrows": self.borrows}

    @classmethod
    def from_json(cls, data: dict) -> "Export":
        item = None if data["item"] is None else _type_from_json(data["item"])
        result = VOID if item is not None else _type_from_json(data["result"])
        return cls(data["name"], tuple((n, _type_from_json(t)) for n, t in data["params"]), result, item,
                   data["effects"], data["kind"], data.get("faults", True), tuple(data.get("written", ())),
                   data.get("doc", ""), data.get("output", True), data.get("borrows", True))


def slice_length_name(name: str, params) -> str:
    """The C parameter that carries the length of slice parameter `name`."""
    taken = {n for n, _ in params}
    length = f"{name}_len"
    while length in taken:
        length += "_"
    return length


# the prelude's generators, and how a wrapper destroys one through a pointer to its handle
_DESTROY = {"Generator": "__g[0].handle().destroy()", "Stream": "__g[0].__destroy()"}


def _generated_item(t: Type, layouts: StructLayouts) -> Type | None:
    """T for a `Generator<T>` or `Stream<T>` of a T that crosses."""
    if isinstance(t, PromiseT) and t.decl.name in _DESTROY and in_stdlib(t.decl.span.file) and t.args:
        return _crossing(t.args[0], layouts)
    return None


def doc_comment(lines: list[str], decl_line: int) -> str:
    """The `///` lines right above line `decl_line` (1-based) of a file, as the
    text of a docstring (Rust's doc comments; `//` comments are not docs)."""
    docs = []
    i = decl_line - 2
    while i >= 0 and lines[i].lstrip().startswith("///"):
        text = lines[i].lstrip()[3:]
        docs.append(text[1:] if text.startswith(" ") else text)
        i -= 1
    return "\n".join(reversed(docs))


def exports(program: CheckedProgram, texts: dict[str, str] | None = None) -> list[Export]:
    """`texts`: the program's files (their `///` comments become docstrings)."""
    found = []
    for f in program.functions:
        d = f.decl
        if d.kind != "fn" or d.generics or f.self_mode is not None or f.display != d.name \
                or in_stdlib(d.span.file) or d.name.startswith("__"):
            continue
        item = _generated_item(f.ret, program.layouts)
        params = tuple((n, _param_crossing(t, program.layouts)) for n, t in f.params)
        result = VOID if f.ret == VOID else _crossing(f.ret, program.layouts)
        if all(t is not None for _, t in params) and (result is not None or item) and not _kept_slice(f):
            written = tuple(n for i, (n, t) in enumerate(f.params)
                            if isinstance(t, SliceT) and i in f.written_params | f.pointed_params)
            text = (texts or {}).get(d.span.file)
            doc = doc_comment(text.splitlines(), d.span.line) if text else ""
            found.append(Export(d.name, params, VOID if item else result, item, has_effects(f),
                                f.ret.decl.name if item else "Generator", may_fault(f, program.layouts), written,
                                doc, writes_output(f), any(program.layouts.views(t) for _, t in f.params)))
    return found


def _kind_of(t: Type, layouts: StructLayouts, result: bool = False) -> str:
    """A type in words, for why it cannot cross (as a parameter, or a `result`)."""
    match t:
        case StructT() if not layouts.fields(t):
            return "a struct without fields (C has none)"
        case StructT():
            name, ft = next((n, ft) for n, ft in layouts.fields(t) if _crossing(ft, layouts) is None)
            return f"a struct whose field `{name}: {ft}` does not cross"
        case ArrayT():
            return "an array"
        case PtrT():
            return "a pointer"
        case SliceT() if result:
            return "a slice (a view of memory, which does not come back)"
        case SliceT():
            return "a slice of non-scalars"
        case PromiseT():
            return "a coroutine handle"
    return "not a scalar"


def unexported(modules: list[ast.Module], program: CheckedProgram, found: list[Export]) -> dict[str, str]:
    """Why each top-level function of the program that is not exported is not
    (LANGUAGE.md §9): asked for from Python, it is an AttributeError saying so;
    `--emit shared` notes it."""
    exported = {e.name for e in found}
    instances = {id(f.decl): f for f in program.functions if f.self_mode is None}
    reasons = {}
    for module in modules:
        for d in module.decls:
            if not isinstance(d, ast.FnDecl) or d.name in exported or d.name.startswith("__") \
                    or in_stdlib(d.span.file):
                continue
            reasons[d.name] = _reason(d, instances.get(id(d)), program.layouts)
    return reasons


def _reason(d: ast.FnDecl, f: FnInstance | None, layouts: StructLayouts) -> str:
    kinds = {"async": "it is an `async fn`: it runs on std/async's scheduler, among other tasks, not as a call",
             "kernel": "it is a GPU kernel: launch it with pycoro.gpu",
             "extern": "it is a C function (`extern fn`) the program calls: it is defined outside it",
             "intrinsic": "it is an intrinsic of the compiler"}
    if d.kind in kinds:
        return kinds[d.kind]
    if d.generics:
        return "it is generic: a caller from Python or C cannot choose its type arguments; export a function that calls it"
    if f is None:
        return "it did not compile"
    for name, t in f.params:
        if _param_crossing(t, layouts) is None:
            return (f"parameter `{name}: {t}` is {_kind_of(t, layouts)}: only scalars (`iN uN fN bool`), "
                    "structs of them and slices of scalars cross to Python and C")
    kept = _kept_slice(f)
    if kept is not None:
        return (f"it may keep its slice `{kept}` after it returns (in a global, a spawned task, a function "
                "value, or what a pointer or `mut self` reaches): a buffer is lent to it only for the call")
    return (f"its result `{f.ret}` is {_kind_of(f.ret, layouts, result=True)}: only a scalar, a struct of them, "
            "nothing, or a Generator or Stream of one of those crosses to Python and C")


def _kept_slice(f: FnInstance) -> str | None:
    """The first slice parameter `f` may keep beyond its call (check/views.py):
    what a caller lends it (a Python buffer, C's memory) would be used after
    the loan ends."""
    return next((name for i, (name, t) in enumerate(f.params)
                 if isinstance(t, SliceT) and i in f.escaping_params), None)


def _callees(f: FnInstance):
    for target in f.calls.values():
        if isinstance(target, DirectCall):
            yield target.fn
    yield from f.hooks.values()
    for protocol in f.iters.values():
        # a returned-continuation handle's own (HandleCall) call nothing else
        yield from (x for x in (protocol.next, protocol.value) if isinstance(x, FnInstance))
    for info in f.awaits.values():
        yield from (x for x in (info.transform, info.ready, info.suspend, info.resume) if x is not None)
    if f.coro is not None:
        yield from (x for x in (f.coro.return_void, f.coro.final_transfer, f.coro.allocate,
                                f.coro.deallocate) if x is not None)


def has_effects(root: FnInstance) -> bool:
    """Whether `root` or anything it calls may print, call C, reach a mutable
    global, or call through a function pointer (conservatively: effects)."""
    return _reaches(root, lambda f: _may_write_output(f) or (f.is_extern and not _c_function_in(f, _PURE_C)) or
                    any(isinstance(r, GlobalVar) and r.decl.mutable for r in f.refs.values()))


def writes_output(root: FnInstance) -> bool:
    """Whether `root` or anything it calls may write to stdout: print, call C
    (which may print), or call through a function pointer (which may do either)."""
    return _reaches(root, _may_write_output)


def _may_write_output(f: FnInstance) -> bool:
    return (f.is_extern and not _c_function_in(f, _QUIET_C)) or \
        any(isinstance(target, IndirectCall) or (isinstance(target, BuiltinCall) and target.name == "print")
            for target in f.calls.values())


# C library functions of scalars that, whatever their arguments, neither write
# output nor fault (libm's, libc's integer arithmetic and case mapping): calling
# one needs neither stdout flushed nor faults caught around it, which cost
# pycoro.embed ~0.1 and ~1.5 µs per step. The pure ones keep no state either,
# so a generator may run ahead over them; `rand` and its kin do keep state.
_PURE_C = frozenset({
    *(f"{name}{suffix}" for name in (
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "hypot",
        "floor", "ceil", "round", "trunc", "rint", "nearbyint", "fabs", "fmod", "remainder", "fmin", "fmax",
        "fdim", "fma", "copysign", "erf", "erfc", "tgamma", "lgamma") for suffix in ("", "f")),
    "abs", "labs", "llabs", "toupper", "tolower",   # not the `is…` tests: glibc indexes a table with any int
})
_QUIET_C = _PURE_C | {"rand", "srand", "random", "srandom"}


def _c_function_in(f: FnInstance, names: frozenset[str]) -> bool:
    """Whether `f` is an extern of `names`, declared with scalars only."""
    return f.is_extern and f.symbol in names and (f.ret == VOID or is_scalar(f.ret)) and \
        all(is_scalar(t) for _, t in f.params)


def _reaches(root: FnInstance, test) -> bool:
    """Whether `test` holds for `root` or anything it calls."""
    seen, todo = set(), [root]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if test(f):
            return True
        todo.extend(_callees(f))
    return False


# Locals beyond this many bytes in one function could overflow a stack alone.
BIG_FRAME = 1 << 20


def may_fault(root: FnInstance, layouts: StructLayouts) -> bool:
    """Whether running `root` may end in a fault (SIGSEGV) rather than a
    panic: a stack overflow (it or what it calls may recurse, call through a
    function pointer or into C, or keep over BIG_FRAME bytes of locals), or
    an access through a raw pointer in the program's code. pycoro.embed catches faults only
    around such calls: catching costs system calls at every call."""
    graph: dict[int, list[FnInstance]] = {}
    todo = [root]
    while todo:
        f = todo.pop()
        if id(f) in graph:
            continue
        if (f.is_extern and not _c_function_in(f, _QUIET_C)) or \
                any(isinstance(target, IndirectCall) for target in f.calls.values()):
            return True
        own = not in_stdlib(f.decl.span.file)   # the stdlib's raw pointers are the compiler's own
        if own and any(isinstance(node, ast.Index) and isinstance(f.types.get(node.base), PtrT) for node in f.types):
            return True
        if own and sum(layouts.size_align(v.type)[0] for v in f.locals.values() if isinstance(v.type, (ArrayT, StructT))) > BIG_FRAME:
            return True
        graph[id(f)] = callees = list(_callees(f))
        todo.extend(callees)
    return _has_cycle(graph)


def _has_cycle(graph: dict[int, list[FnInstance]]) -> bool:
    """Whether a function of `graph` (id → callees) can reach itself."""
    state: dict[int, int] = {}   # 1: on the path being walked, 2: done
    for start in graph:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(graph[start]))]
        while stack:
            node, callees = stack[-1]
            callee = next(callees, None)
            if callee is None:
                state[node] = 2
                stack.pop()
            elif state.get(id(callee)) == 1:
                return True
            elif id(callee) not in state:
                state[id(callee)] = 1
                stack.append((id(callee), iter(graph.get(id(callee), ()))))
    return False


def c_type(t: Type) -> str:
    return "u8" if t == BOOL else str(t)


def c_params(e: Export, prefix: str = "") -> list[str]:
    """A wrapper's parameters (or context fields): a bool as a u8, a slice as
    its pointer and its length."""
    out = []
    for n, t in e.params:
        if isinstance(t, SliceT):
            out += [f"{prefix}{n}: ptr<{t.elem}>", f"{prefix}{slice_length_name(n, e.params)}: i64"]
        else:
            out.append(f"{prefix}{n}: {c_type(t)}")
    return out


def c_arg(name: str, t: Type, e: Export | None = None, base: str = "") -> str:
    """The argument the wrapper passes for parameter `name` (read from `base`)."""
    if isinstance(t, SliceT):
        return f"slice({base}{name}, {base}{slice_length_name(name, e.params)})"
    return f"{base}{name} != 0" if t == BOOL else f"{base}{name}"


def positional(e: Export, prefix: str = "__a") -> Export:
    """`e` with its parameters named by position (`__a0`, `__a1`, …): in a
    wrapper, no parameter can hide the function it calls (`fn n(n: i64)`),
    nor be called `result`."""
    return Export(e.name, tuple((f"{prefix}{i}", t) for i, (_, t) in enumerate(e.params)), e.result, e.item)


def wrapper_source(exported: list[Export]) -> str:
    """PyCoro source giving each export a C ABI (bool as u8). Every name of
    the wrappers' own starts with `__`, which programs may not use: a
    function or a parameter of the program can never be hidden by one."""
    out = []
    for e in exported:
        by_place = positional(e)
        params = ", ".join(c_params(by_place))
        call = f"{e.name}({', '.join(c_arg(n, t, by_place) for n, t in by_place.params)})"
        if e.item is None:
            ret = "" if e.result == VOID else f" -> {c_type(e.result)}"
            body = f"{call};" if e.result == VOID else f"return {call}{' as u8' * (e.result == BOOL)};"
            out.append(f"fn __export_{e.name}({params}){ret} {{ {body} }}")
            continue
        g, item, as_c = e.result_text, c_type(e.item), " as u8" * (e.item == BOOL)
        out.append(
            f"fn __export_{e.name}({params}) -> {g} {{ return {call}; }}\n"
            f"fn __export_next_{e.name}(__g: ptr<{g}>) -> u8 {{ return __g[0].next() as u8; }}\n"
            f"fn __export_value_{e.name}(__g: ptr<{g}>) -> {item} {{ return __g[0].value(){as_c}; }}\n"
            # counts into n[0] as it goes: after a panic (pycoro.embed), the
            # values written before it are still counted
            f"fn __export_fill_into_{e.name}(__g: ptr<{g}>, __buf: ptr<{item}>, __cap: i64, __n: ptr<i64>) {{\n"
            f"    __n[0] = 0;\n"
            f"    while __n[0] < __cap {{\n"
            f"        if !__g[0].next() {{ break; }}\n"
            f"        __buf[__n[0]] = __g[0].value(){as_c};\n"
            f"        __n[0] += 1;\n"
            f"    }}\n"
            f"}}\n"
            f"fn __export_fill_{e.name}(__g: ptr<{g}>, __buf: ptr<{item}>, __cap: i64) -> i64 {{\n"
            f"    var __n: i64 = 0;\n"
            f"    __export_fill_into_{e.name}(__g, __buf, __cap, &__n);\n"
            f"    return __n;\n"
            f"}}\n"
            f"fn __export_destroy_{e.name}(__g: ptr<{g}>) {{ {_DESTROY[e.kind]}; }}")
    return "\n".join(out)


def guarded_source(exported: list[Export]) -> str:
    """Wrappers taking their arguments and result in a context struct, for
    the runtime's `__pc_try(body, context)` (pycoro.embed): `struct
    __Call_NAME { a0, a1, …, result }`, and for a generator `struct
    __Fill_NAME { g, buf, cap, n }` (a destroy's context is the handle's slot)."""
    out = []
    for e in exported:
        if e.item is None:
            # fields by position (a0, a1, …): a parameter may be called `result`
            by_place = positional(e, "a")
            fields = c_params(by_place) + ([] if e.result == VOID else [f"result: {c_type(e.result)}"])
            call = f"{e.name}({', '.join(c_arg(n, t, by_place, '__c[0].') for n, t in by_place.params)})"
            body = call if e.result == VOID else f"__c[0].result = {call}{' as u8' * (e.result == BOOL)}"
            if not fields:
                out.append(f"fn __export_try_{e.name}(__context: ptr<u8>) {{ {body}; }}")
                continue
            out.append(f"struct __Call_{e.name} {{ {', '.join(fields)} }}\n"
                       f"fn __export_try_{e.name}(__context: ptr<u8>) {{\n"
                       f"    let __c = __context as ptr<__Call_{e.name}>;\n    {body};\n}}")
            continue
        g = e.result_text
        out.append(
            f"struct __Fill_{e.name} {{ g: ptr<{g}>, buf: ptr<{c_type(e.item)}>, cap: i64, n: i64 }}\n"
            f"fn __export_try_fill_{e.name}(__context: ptr<u8>) {{\n"
            f"    let __c = __context as ptr<__Fill_{e.name}>;\n"
            f"    __export_fill_into_{e.name}(__c[0].g, __c[0].buf, __c[0].cap, &__c[0].n);\n}}\n"
            f"fn __export_try_destroy_{e.name}(__context: ptr<u8>) {{\n"
            f"    __export_destroy_{e.name}(__context as ptr<{g}>);\n}}")
    return "\n".join(out)


# Runtime functions an embedding calls: calls that catch panics (and faults), and the message.
RUNTIME_ENTRIES = ("__pc_try", "__pc_try_faults", "__pc_panic_message")


def wrapper_symbols(exported: list[Export]) -> tuple[str, ...]:
    return tuple(w for e in exported for w in (*e.wrappers(), *e.guarded())) + RUNTIME_ENTRIES
