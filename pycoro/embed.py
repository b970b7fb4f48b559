"""PyCoro from Python (LANGUAGE.md §9): `pycoro.compile(source)` and
`pycoro.compile_file(path)` return a module whose attributes are the
program's exported functions.

A top-level, non-generic function is exported when its parameters are
scalars (`iN uN fN bool`) and its result is a scalar, nothing, or a
`Generator<scalar>`. For each one, pycoro adds small PyCoro wrappers to the
program (below) that give it a C ABI without `i1`s (a `bool` crosses as a
`u8`); a generator crosses as a frame in a slot Python owns, with
`create`, `next` (fills a buffer with up to N values) and `destroy`.

Batching (docs/embedding.md): a generator the checker proves free of
observable effects — it never prints, calls C, or touches a mutable global,
nor does anything it calls — is run ahead up to `BATCH` values per native
call; any other runs exactly one step per value Python asks for, so its
prints interleave with the consumer's as they would in Python.
"""
from __future__ import annotations

import array
import ctypes
import itertools
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path

from .driver import Compilation, Options
from .frontend.program import BuiltinCall, CheckedProgram, DirectCall, FnInstance, GlobalVar, IndirectCall
from .frontend.types import BOOL, VOID, FloatT, IntT, PromiseT, Type

BATCH = 256   # values per native call for a generator that may run ahead

_ARRAY_CODES = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I",
                "i64": "q", "u64": "Q", "f32": "f", "f64": "d", "bool": "B"}
# ctypes type per scalar type, as it crosses the wrappers' C ABI (a bool as a u8)
C_TYPES = {**{f"i{b}": getattr(ctypes, f"c_int{b}") for b in (8, 16, 32, 64)},
           **{f"u{b}": getattr(ctypes, f"c_uint{b}") for b in (8, 16, 32, 64)},
           "f32": ctypes.c_float, "f64": ctypes.c_double, "bool": ctypes.c_uint8}


def compile(source: str, name: str = "<string>", opt_level: int = 2) -> "Module":
    """Compile PyCoro source; raise `pycoro.CompileError` with its diagnostics."""
    return Module(source, name, Path.cwd(), opt_level)


def compile_file(path: str | Path, opt_level: int = 2) -> "Module":
    c = Compilation.from_file(str(path))   # reads it, reporting a missing file as a CompileError
    return Module(c.source, c.display, c.base_dir, opt_level)


def _is_scalar(t: Type) -> bool:
    return isinstance(t, (IntT, FloatT)) or t == BOOL


def _generated_item(t: Type) -> Type | None:
    """T for a `Generator<T>` of a scalar T."""
    if isinstance(t, PromiseT) and t.decl.name == "Generator" and t.args and _is_scalar(t.args[0]):
        return t.args[0]
    return None


@dataclass
class Export:
    name: str
    params: list[tuple[str, Type]]
    ret: Type
    item: Type | None        # generators: the type of their values
    effects: bool = True     # may print, call C or touch a mutable global (then: one step per value)

    @property
    def batch(self) -> int:
        """Values per native call, for a generator."""
        return 1 if self.effects else BATCH

    @property
    def signature(self) -> str:
        params = ", ".join(f"{n}: {t}" for n, t in self.params)
        return f"fn {self.name}({params})" + ("" if self.ret == VOID else f" -> {self.ret}")


def exports(program: CheckedProgram) -> list[Export]:
    found = []
    for f in program.functions:
        d = f.decl
        if d.kind != "fn" or d.generics or f.self_mode is not None or f.display != d.name \
                or d.span.file.startswith("<stdlib>") or d.name.startswith("__"):
            continue
        item = _generated_item(f.ret)
        if all(_is_scalar(t) for _, t in f.params) and (_is_scalar(f.ret) or f.ret == VOID or item):
            found.append(Export(d.name, list(f.params), f.ret, item, _has_effects(f)))
    return found


def _callees(f: FnInstance):
    for target in f.calls.values():
        if isinstance(target, DirectCall):
            yield target.fn
    yield from f.hooks.values()
    for protocol in f.iters.values():
        yield protocol.next
        yield protocol.value
    for info in f.awaits.values():
        yield from (x for x in (info.transform, info.ready, info.suspend, info.resume) if x is not None)
    if f.coro is not None:
        yield from (x for x in (f.coro.return_void, f.coro.final_transfer, f.coro.allocate,
                                f.coro.deallocate) if x is not None)


def _has_effects(root: FnInstance) -> bool:
    """Whether `root` or anything it calls may print, call C, reach a mutable
    global, or call through a function pointer (conservatively: effects)."""
    seen, todo = set(), [root]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if f.is_extern:
            return True
        for target in f.calls.values():
            if isinstance(target, IndirectCall) or (isinstance(target, BuiltinCall) and target.name == "print"):
                return True
        if any(isinstance(r, GlobalVar) and r.decl.mutable for r in f.refs.values()):
            return True
        todo.extend(_callees(f))
    return False


def _wrappers(exported: list[Export]) -> str:
    """PyCoro source giving each export a C ABI (bool as u8)."""
    def c_type(t: Type) -> str:
        return "u8" if t == BOOL else str(t)

    def c_arg(name: str, t: Type) -> str:
        return f"{name} != 0" if t == BOOL else name

    out = []
    for e in exported:
        params = ", ".join(f"{n}: {c_type(t)}" for n, t in e.params)
        args = ", ".join(c_arg(n, t) for n, t in e.params)
        if e.item is None:
            ret = "" if e.ret == VOID else f" -> {c_type(e.ret)}"
            call = f"{e.name}({args})" + (" as u8" if e.ret == BOOL else "")
            body = f"{call};" if e.ret == VOID else f"return {call};"
            out.append(f"fn __export_{e.name}({params}){ret} {{ {body} }}")
            continue
        g, item = f"Generator<{e.item}>", c_type(e.item)
        value = "slot[0].value()" + (" as u8" if e.item == BOOL else "")
        sep = ", " if params else ""
        out.append(
            f"fn __export_{e.name}({params}{sep}slot: ptr<{g}>) {{ slot[0] = {e.name}({args}); }}\n"
            f"fn __export_next_{e.name}(slot: ptr<{g}>, buf: ptr<{item}>, cap: i64) -> i64 {{\n"
            f"    var n: i64 = 0;\n"
            f"    while n < cap {{ if !slot[0].next() {{ break; }} buf[n] = {value}; n += 1; }}\n"
            f"    return n;\n"
            f"}}\n"
            f"fn __export_destroy_{e.name}(slot: ptr<{g}>) {{ slot[0].handle().destroy(); }}")
    return "\n".join(out)


class Module:
    def __init__(self, source: str, name: str, base_dir: Path, opt_level: int):
        options = Options(opt_level=opt_level, need_main=False)
        program = Compilation(source, name, base_dir, options).check()
        self._exports = {e.name: e for e in exports(program)}
        wrapped = source + "\n" + _wrappers(list(self._exports.values())) + "\n"
        symbols = [f"__export_{n}" for n in self._exports] + \
            [f"__export_{w}_{e.name}" for e in self._exports.values() if e.item is not None
             for w in ("next", "destroy")]
        build = Compilation(wrapped, name, base_dir, Options(opt_level=opt_level, need_main=False,
                                                                exports=tuple(symbols)))
        self._loaded = build.load()
        self.__name__ = name
        for e in self._exports.values():
            setattr(self, e.name, _function(self, e))

    def _address(self, symbol: str) -> int:
        return self._loaded.address(f"pc.{symbol}")

    def __repr__(self) -> str:
        return f"<pycoro module {self.__name__!r}: {', '.join(self._exports) or 'no exports'}>"


def _check_args(e: Export, args: tuple) -> list:
    if len(args) != len(e.params):
        raise TypeError(f"{e.signature} takes {len(e.params)} argument{'s' * (len(e.params) != 1)}, "
                        f"{len(args)} given")
    values = []
    for i, ((name, t), a) in enumerate(zip(e.params, args)):
        values.append(scalar_argument(f"argument {i + 1} (`{name}: {t}`) of {e.signature}", t, a))
    return values


def scalar_argument(where: str, t: Type, a) -> int | float:
    """A Python value checked for a scalar parameter of type `t` (a bool as 0/1)."""
    if t == BOOL and isinstance(a, bool):
        return int(a)
    if isinstance(t, IntT) and isinstance(a, int) and not isinstance(a, bool):
        if not t.min <= a <= t.max:
            raise TypeError(f"{where}: {a} does not fit in {t}")
        return a
    if isinstance(t, FloatT) and isinstance(a, (int, float)) and not isinstance(a, bool):
        return float(a)
    raise TypeError(f"{where} must be {t}, not {type(a).__name__}")


def _function(module: Module, e: Export):
    argtypes = [C_TYPES[str(t)] for _, t in e.params]
    if e.item is None:
        restype = None if e.ret == VOID else C_TYPES[str(e.ret)]
        native = ctypes.PYFUNCTYPE(restype, *argtypes)(module._address(f"__export_{e.name}"))
        convert = bool if e.ret == BOOL else None

        def call(*args):
            values = _check_args(e, args)
            if e.effects:
                _flush_python()
            result = native(*values)
            if e.effects:
                _flush_c()
            return convert(result) if convert else result
    else:
        create = ctypes.PYFUNCTYPE(None, *argtypes, ctypes.c_void_p)(module._address(f"__export_{e.name}"))
        step = ctypes.PYFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
            module._address(f"__export_next_{e.name}"))
        destroy = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)(module._address(f"__export_destroy_{e.name}"))
        code = _ARRAY_CODES[str(e.item)]

        def call(*args):
            values = _check_args(e, args)
            return GeneratorObject(module, e, lambda slot: create(*values, slot), step, destroy, code)
    call.__name__ = e.name
    call.__qualname__ = e.name
    call.__doc__ = e.signature
    return call


class GeneratorObject:
    """A PyCoro generator as a Python iterator and context manager: `close()`
    (or leaving a `with`, exhaustion, garbage collection) destroys its frame,
    running its pending `defer`s; using it after `close()` raises ValueError."""

    def __init__(self, module: Module, export: Export, create, step, destroy, code: str):
        self._module = module            # keeps the compiled code alive
        self._export = export
        self._slot = ctypes.c_void_p(0)  # the owning handle: the frame's address
        create(ctypes.addressof(self._slot))
        # values come back through an array.array: slicing one copies in C
        self._buffer = array.array(code, bytes(array.array(code).itemsize * export.batch))
        self._step, self._closed = step, False
        as_bool = export.item == BOOL
        self._as_bool = as_bool
        # Destroying the frame must not wait for this object's __del__ ordering.
        self._finalizer = weakref.finalize(self, _destroy_frame, destroy, self._slot, module)
        # Iteration drains batches in C (itertools.chain), one native call per batch.
        self._items = itertools.chain.from_iterable(self._batches())

    def _batches(self):
        buf, cap, address = self._buffer, len(self._buffer), self._buffer.buffer_info()[0]
        effects = self._export.effects
        while True:
            if self._closed:
                raise ValueError(f"{self._export.name}: generator used after close()")
            if effects:
                _flush_python()
            n = self._step(ctypes.addressof(self._slot), address, cap)
            if effects:
                _flush_c()
            if n:
                yield [bool(v) for v in buf[:n]] if self._as_bool else buf[:n]
            if n < cap:
                self._finalizer()   # exhausted: destroy the frame now (not `closed`: next() says StopIteration)
                return

    def __iter__(self):
        if self._closed:
            raise ValueError(f"{self._export.name}: generator used after close()")
        return self._items

    def __next__(self):
        if self._closed:
            raise ValueError(f"{self._export.name}: generator used after close()")
        return next(self._items)

    def close(self) -> None:
        """Destroy the frame (running its pending defers). Closing twice is allowed."""
        if not self._closed:
            self._closed = True
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<pycoro generator {self._export.name}{' (closed)' * self._closed}>"


def _destroy_frame(destroy, slot: ctypes.c_void_p, module: Module) -> None:
    if slot.value:
        _flush_python()
        destroy(ctypes.addressof(slot))   # runs pending defers, which may print
        _flush_c()
        slot.value = 0


# Python and the compiled code buffer stdout separately: around a call that may
# print, both are flushed so that lines come out in the order they were written.
_libc = ctypes.CDLL(None)


def _flush_python() -> None:
    sys.stdout.flush()


def _flush_c() -> None:
    _libc.fflush(None)
