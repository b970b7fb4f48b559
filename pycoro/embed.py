"""PyCoro from Python (LANGUAGE.md §9): `pycoro.compile(source)` and
`pycoro.compile_file(path)` return a module whose attributes are the
program's exported functions (frontend/exports.py says which those are, and
writes the wrappers that give them a C ABI).

The program is compiled to object code for this process and loaded with
MCJIT; the object code and the list of exports are kept in the on-disk cache
(cache.py), so compiling the same program again loads it without compiling.

Batching (docs/embedding.md): a generator the checker proves free of
observable effects — it never prints, calls C, or touches a mutable global,
nor does anything it calls — and that is lent no Python buffer is run ahead,
up to `BATCH` values per native call; any other runs exactly one step per
value Python asks for, so its prints interleave with the consumer's, and it
reads and writes a buffer when Python would, as they would in Python.
"""
from __future__ import annotations

import array
import ctypes
import functools
import inspect
import itertools
import keyword
import numbers
import operator
import sys
import threading
import warnings
import weakref
from pathlib import Path

from . import arrays, cpython
from .backend import jit, targets
from .common.diagnostics import CompileError, CompileWarning, Diagnostic, render_all
from .pipeline.driver import Compilation, Options
from .frontend import python_entries
from .frontend.exports import Export, ExportStruct
from .frontend.types import BOOL, VOID, FloatT, IntT, SliceT, Type

# Values per native call for a generator that may run ahead: the first call
# asks for FIRST_BATCH (a consumer that takes one value wastes little work),
# each next one for twice as many, up to BATCH (a native call costs about
# 1 µs: at 4096 values that is 0.25 ns per value).
FIRST_BATCH, BATCH = 16, 4096


def batch_sizes(e: Export):
    """The sizes of successive native calls: always one value for a generator
    with observable effects, or one whose slices view Python's memory."""
    if e.lockstep:
        return itertools.repeat(1)
    growing = itertools.takewhile(lambda n: n < BATCH, (FIRST_BATCH << i for i in itertools.count()))
    return itertools.chain(growing, itertools.repeat(BATCH))

_ARRAY_CODES = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I",
                "i64": "q", "u64": "Q", "f32": "f", "f64": "d", "bool": "B"}
# ctypes type per scalar type, as it crosses the wrappers' C ABI (a bool as a u8)
C_TYPES = {**{f"i{b}": getattr(ctypes, f"c_int{b}") for b in (8, 16, 32, 64)},
           **{f"u{b}": getattr(ctypes, f"c_uint{b}") for b in (8, 16, 32, 64)},
           "f32": ctypes.c_float, "f64": ctypes.c_double, "bool": ctypes.c_uint8}


def compile(source: str, name: str = "<string>", opt_level: int = 2, cache: bool = True) -> "Module":
    """Compile PyCoro source; raise `pycoro.CompileError` with its diagnostics,
    and issue a `pycoro.CompileWarning` per warning.
    `cache=False`: compile even if the on-disk cache has this program."""
    found: list = []
    options = Options(opt_level=opt_level, need_main=False)
    try:
        module = Module(Compilation(source, name, Path.cwd(), options, warn=_collect(found)), cache)
    except Exception as err:  # noqa: BLE001 - each kind is told apart by _for_the_user
        error, cause = _for_the_user(err)
        raise error from cause
    _issue(found)
    return module


def compile_file(path: str | Path, opt_level: int = 2, cache: bool = True) -> "Module":
    found: list = []
    options = Options(opt_level=opt_level, need_main=False)
    try:   # a missing file is a CompileError too
        module = Module(Compilation.from_file(str(path), options, warn=_collect(found)), cache)
    except Exception as err:  # noqa: BLE001 - each kind is told apart by _for_the_user
        error, cause = _for_the_user(err)
        raise error from cause
    _issue(found)
    return module


class InternalCompilerError(RuntimeError):
    """A bug in pycoro met while compiling (the CLI's `internal compiler
    error`, exit status 70): the program may be fine. Its `__cause__` is
    where pycoro failed, for a report."""


InternalCompilerError.__module__ = "pycoro"


def _for_the_user(err: Exception) -> tuple[Exception, Exception | None]:
    """What compiling raises for `err`, and the cause it names: a compile error
    from the user's call, not from pycoro's insides; a program too deep for the
    compiler's recursion a CompileError, as the CLI says it; any other failure
    an InternalCompilerError (the CLI's status 70) that names where pycoro
    failed, not a bare exception from somewhere inside."""
    if isinstance(err, CompileError):
        return err.with_traceback(None), None
    if isinstance(err, RecursionError):
        return CompileError([Diagnostic("program is nested too deeply for pycoro", None)]), None
    return InternalCompilerError(f"internal compiler error: {type(err).__name__}: {err} (please report it)"), err


def _collect(found: list):
    """A compilation's `warn`: keep each warning (and the sources it points into)."""
    return lambda warning, sources: found.append((warning, sources))


def _issue(found: list) -> None:
    """Warnings as Python's: shown once per place in the caller's code, by default."""
    for warning, sources in found:
        text = warning if isinstance(warning, str) else render_all(warning, sources=sources)
        warnings.warn(text, CompileWarning, stacklevel=3)


class PanicError(RuntimeError):
    """A panic in compiled code called from Python (an index out of bounds,
    a division by zero, `assert`, `panic`, a stack overflow): the message is
    the panic's, with its position where it has one (`division by zero at
    gen.pc:3:12`)."""


PanicError.__module__ = "pycoro"   # met as pycoro.PanicError


class Module:
    """A compiled program as Python sees it: each exported function is an
    attribute, and in `functions`. The module's own attributes are few and
    fixed (`_MODULE_OWN`: `functions`, `_exports`, `_runtime`, … and
    object's); what the compiled code needs is in `_runtime`, which no
    PyCoro name can reach. An export with one of those names is only in
    `functions` (it used to replace the attribute, and a call then crashed)."""

    __slots__ = ("_runtime", "_exports", "_unexported", "_from_cache", "_functions", "__dict__")

    def __init__(self, compilation: Compilation, cache: bool = True):
        found, code, self._from_cache = compilation.export_object(use_cache=cache)
        self._unexported = compilation.unexported
        self._exports = {e.name: e for e in found}
        self.__name__ = compilation.display
        self._runtime = Runtime(code, compilation.options.opt_level)
        self._functions = {e.name: _function(self._runtime, e, self.__name__) for e in found}
        for name, function in self._functions.items():
            if name not in _MODULE_OWN:
                self.__dict__[name] = function

    @property
    def functions(self) -> dict:
        """The exported functions by name (what `%%pycoro` puts in a notebook)."""
        return dict(self._functions)

    def __getattr__(self, name: str):
        # only for names that are not attributes: a function that is not exported says why
        if name in Module.__slots__:   # not set: __init__ failed before it
            raise AttributeError(name)
        why = self._unexported.get(name)
        if why is None:
            raise AttributeError(f"pycoro module {self.__dict__.get('__name__', '?')!r} has no function {name!r}")
        raise AttributeError(f"{name!r} cannot be called from Python: {why}")

    def __repr__(self) -> str:
        return f"<pycoro module {self.__name__!r}: {', '.join(self._exports) or 'no exports'}>"


# The names a Module's instances have of their own (its class's, not the
# metaclass's: an export `mro` is an attribute, as `type.mro` is no instance's)
_MODULE_OWN = frozenset(name for cls in Module.__mro__ for name in vars(cls))


class Runtime:
    """The compiled code of a module, loaded, and what calls into it need:
    the runtime's `__pc_try`, and what the native entry points point at.
    Functions and generators hold it, which keeps the code loaded."""

    def __init__(self, code: bytes, opt_level: int):
        self.loaded = jit.Loaded.from_object(code, targets.native_machine(opt_level, jit=True))
        try_type = ctypes.PYFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
        # calls that may fault also catch faults (exports.may_fault), at a few system calls per call
        self.try_ = {False: try_type(self.address("__pc_try")), True: try_type(self.address("__pc_try_faults"))}
        self.panic_message = ctypes.PYFUNCTYPE(ctypes.c_char_p)(self.address("__pc_panic_message"))
        self.native = NATIVE and cpython.AVAILABLE
        self.kept: list = []   # what the native code points at: method definitions, the API's objects
        self.collect_types: dict[str, type] = {}
        self.claim = None   # python_entries' `claim(gen)`, made with the first native generator type
        self._all_bools = None
        if self.native:
            self._init_native()

    def _init_native(self) -> None:
        """Tell the native entry points (python_entries.py) what they call and
        compare with: the objects stay alive as long as this runtime."""
        hooks = [_flush_python, self.raise_panic, _generator_ended, _generator_panicked, _generator_executing]
        self.kept += hooks
        api = _PyApi(*map(id, (int, float, True, False, None)), *map(id, hooks),
                     *(self.address(f) for f in python_entries.API_RUNTIME.values()),
                     *(_c_function(name) for name in python_entries.API_FUNCTIONS))
        ctypes.PYFUNCTYPE(None, ctypes.c_void_p)(self.address("__py_init"))(ctypes.addressof(api))

    def collect_context(self, e: Export) -> type:
        """The ctypes struct `__py_collect_NAME` takes (python_entries): the
        arguments as the create wrapper takes them, then the buffer."""
        found = self.collect_types.get(e.name)
        if found is None:
            fields = _argument_fields(e) + [("buf", ctypes.c_void_p), ("cap", ctypes.c_int64), ("n", ctypes.c_int64)]
            found = self.collect_types[e.name] = type(f"Collect_{e.name}", (ctypes.Structure,), {"_fields_": fields})
        return found

    def check_bools(self, where, buffer: "Buffer") -> None:
        """A buffer lent to a `[bool]` must hold bools: each byte 0 or 1."""
        if self._all_bools is None:
            self._all_bools = ctypes.PYFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_int64)(
                self.address("__py_all_bools"))
        if not self._all_bools(buffer.address, buffer.length):
            data = ctypes.string_at(buffer.address, buffer.length)
            at = next(i for i, byte in enumerate(data) if byte > 1)
            raise TypeError(f"{where} must hold bools, but item {at} is the byte {data[at]} "
                            "(a bool is 0 or 1: a NumPy view of other bytes as bool is not)")

    def raise_panic(self) -> None:
        raise PanicError(self.panic_message().decode(errors="replace"))

    def address(self, symbol: str) -> int:
        return self.loaded.address(f"pc.{symbol}")

    def guarded(self, wrapper: int, context: int | None, faults: bool = True) -> None:
        """Call `wrapper(context)` through the runtime's `__pc_try`: a panic in
        it comes back here, and is raised as a PanicError (with `faults`, a
        fault too: a stack overflow, a bad pointer)."""
        if self.try_[faults](wrapper, context):
            self.raise_panic()


def _check_args(e: Export, args: tuple, runtime: Runtime) -> tuple[list, list["Buffer"]]:
    """The values the wrapper takes (a slice as its address and length), and
    the buffers borrowed for them, to release when the call (or the
    generator holding them) is done."""
    if len(args) != len(e.params):
        raise TypeError(f"{e.signature} takes {len(e.params)} argument{'s' * (len(e.params) != 1)}, "
                        f"{len(args)} given")
    values, held = [], []
    try:
        for i, ((name, t), a) in enumerate(zip(e.params, args)):
            if isinstance(t, SliceT):
                buffer = Buffer(_Where(e, i), t.elem, a, writable=name in e.written)
                held.append(buffer)
                if t.elem == BOOL and name not in e.written:   # (one it may write may be an np.empty output)
                    runtime.check_bools(_Where(e, i), buffer)
                values += [buffer.address, buffer.length]
            elif isinstance(t, ExportStruct):
                values.append(struct_argument(_Where(e, i), t, a))
            else:
                values.append(scalar_argument(_Where(e, i), t, a))
    except BaseException:
        _release(held)
        raise
    return values, held


def struct_argument(where, t: ExportStruct, a) -> ctypes.Structure:
    """A tuple (or named tuple, or any sequence) of a struct's fields in order,
    checked field by field, as the struct's C layout."""
    if isinstance(a, (str, bytes)) or not hasattr(a, "__len__") or len(a) != len(t.fields):
        raise TypeError(f"{where} must be a tuple of {len(t.fields)} fields "
                        f"({', '.join(f'{n}: {ft}' for n, ft in t.fields)}), not {type(a).__name__}")
    values = []
    for (name, ft), v in zip(t.fields, a):
        inner = f"{where}, field `{name}`"
        values.append(struct_argument(inner, ft, v) if isinstance(ft, ExportStruct) else scalar_argument(inner, ft, v))
    return struct_ctype(t)(*values)


_STRUCT_TYPES: dict[ExportStruct, tuple[type, type]] = {}


def _struct_types(t: ExportStruct) -> tuple[type, type]:
    """The ctypes Structure of a struct (its C layout, as PyCoro lays it out;
    its fields named by position, f0, f1, …: a PyCoro field may be named as
    ctypes' own attributes, `_fields_`) and the named tuple Python receives
    it as."""
    found = _STRUCT_TYPES.get(t)
    if found is None:
        fields = [(f"f{i}", struct_ctype(ft) if isinstance(ft, ExportStruct) else C_TYPES[str(ft)])
                  for i, (_, ft) in enumerate(t.fields)]
        name = "".join(ch if ch.isalnum() else "_" for ch in t.name).strip("_")
        names = python_names([n for n, _ in t.fields], reserved=_NAMED_TUPLE_OWN)
        found = _STRUCT_TYPES[t] = (type(name, (ctypes.Structure,), {"_fields_": fields}), _named_tuple(name, names))
    return found


# A named tuple's own attributes, and a tuple's (`__len__`, `__new__`): a
# field named as one of them takes a trailing underscore, as a Python keyword
# does (a field `__len__` made len() call an int).
_NAMED_TUPLE_OWN = frozenset({"_fields", "_field_defaults", "_make", "_asdict", "_replace", "__slots__",
                              "__match_args__", "__getnewargs__", "__module__", "__qualname__", "__dict__",
                              "__weakref__", *dir(tuple)})


def _named_tuple(name: str, fields: list[str]) -> type:
    """A named tuple class with exactly these field names, as
    collections.namedtuple makes (`_fields`, `_make`, `_asdict`, `_replace`, a
    repr with the names, made by position or by keyword), but for the names
    that start with `_`, which PyCoro allows and namedtuple renames (`_x` to `_0`)."""
    fields = tuple(fields)
    by_name = inspect.Signature([inspect.Parameter(f, inspect.Parameter.POSITIONAL_OR_KEYWORD) for f in fields])

    def __new__(cls, /, *values, **named):
        return tuple.__new__(cls, by_name.bind(*values, **named).args)

    def _make(cls, values):
        made = tuple.__new__(cls, values)
        if len(made) != len(fields):
            raise TypeError(f"expected {len(fields)} values, got {len(made)}")
        return made

    def _replace(self, /, **changes):
        made = self._make(map(changes.pop, fields, self))
        if changes:
            raise ValueError(f"got unexpected field names: {list(changes)!r}")
        return made

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{f}={v!r}' for f, v in zip(fields, self))})"

    namespace = {"__doc__": f"{name}({', '.join(fields)})", "__slots__": (), "_fields": fields,
                 "_field_defaults": {}, "__match_args__": fields, "__new__": __new__, "_make": classmethod(_make),
                 "_replace": _replace, "__repr__": __repr__, "_asdict": lambda self: dict(zip(fields, self)),
                 "__getnewargs__": lambda self: tuple(self)}
    namespace.update((f, property(operator.itemgetter(i), doc=f"Alias for field number {i}"))
                     for i, f in enumerate(fields))
    return type(name, (tuple,), namespace)


def struct_ctype(t: ExportStruct) -> type:
    return _struct_types(t)[0]


def struct_result(t: ExportStruct, value: ctypes.Structure):
    """A struct from compiled code as a named tuple with its field names."""
    layout, named = _struct_types(t)
    fields = []
    for (place, _), (_, ft) in zip(layout._fields_, t.fields):
        v = getattr(value, place)
        fields.append(struct_result(ft, v) if isinstance(ft, ExportStruct) else (bool(v) if ft == BOOL else v))
    return tuple.__new__(named, fields)


def _release(held: list["Buffer"]) -> None:
    for buffer in held:
        buffer.release()


class _PyBuffer(ctypes.Structure):
    """CPython's `Py_buffer` (the buffer protocol, PEP 3118)."""
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


_GET_BUFFER = ctypes.pythonapi.PyObject_GetBuffer
_GET_BUFFER.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_RELEASE_BUFFER = ctypes.pythonapi.PyBuffer_Release
_RELEASE_BUFFER.argtypes = [ctypes.POINTER(_PyBuffer)]
_RELEASE_BUFFER.restype = None
_PYBUF_WRITABLE, _PYBUF_FORMAT, _PYBUF_C_CONTIGUOUS = 0x1, 0x4, 0x38

# struct-module format characters (PEP 3118) of each scalar type's items, by size
_SIGNED, _UNSIGNED = "bhilqn", "BHILQN"


def _accepts(t: Type, fmt: str, itemsize: int) -> bool:
    """Whether items of format `fmt` (native order) and `itemsize` bytes are `t`s."""
    fmt = fmt.lstrip("@=" + ("<" if sys.byteorder == "little" else ">"))
    if len(fmt) != 1:
        return False
    if t == BOOL:
        return fmt == "?"
    if isinstance(t, FloatT):
        return fmt == {32: "f", 64: "d"}[t.bits] and itemsize == t.bits // 8
    return fmt in (_SIGNED if t.signed else _UNSIGNED) and itemsize == t.bits // 8


class Buffer:
    """A Python object's memory lent to a slice parameter, without copying
    (LANGUAGE.md §9): held (so the object stays alive and its memory put)
    until `release()`."""

    def __init__(self, where, elem: Type, obj, writable: bool):
        self._view, self._held = _PyBuffer(), False
        flags = _PYBUF_C_CONTIGUOUS | _PYBUF_FORMAT | (_PYBUF_WRITABLE if writable else 0)
        wanted = f"a C-contiguous buffer of {elem} (such as a NumPy array of dtype {_numpy_dtype(elem)})"
        try:
            _GET_BUFFER(obj, ctypes.byref(self._view), flags)
        except TypeError:
            raise TypeError(f"{where} must be {wanted}, not {type(obj).__name__}") from None
        except (BufferError, ValueError) as err:   # NumPy says ValueError
            raise TypeError(f"{where} must be {wanted}: {self._refused(obj, flags, err)}") from None
        self._held = True
        fmt = (self._view.format or b"B").decode()
        if not _accepts(elem, fmt, self._view.itemsize):
            self.release()
            raise TypeError(f"{where} must be {wanted}, not a buffer of format {fmt!r} "
                            f"({self._view.itemsize}-byte items)")
        self.address = self._view.buf or 0
        self.length = self._view.len // self._view.itemsize if self._view.itemsize else 0

    def _refused(self, obj, flags: int, err: Exception) -> str:
        """Why the exporter refused: not C-contiguous (its own words say so:
        bytes', array's, NumPy's), read-only (it lends the memory for reading),
        or its own reason (a released memoryview, a dtype with no buffer format)."""
        if "contiguous" in str(err):
            return "it is not C-contiguous (numpy.ascontiguousarray makes a copy that is)"
        if flags & _PYBUF_WRITABLE:
            try:
                _GET_BUFFER(obj, ctypes.byref(self._view), flags & ~_PYBUF_WRITABLE)
            except (BufferError, ValueError, TypeError):
                pass
            else:
                _RELEASE_BUFFER(ctypes.byref(self._view))
                return "it is read-only, and the function may write through it"
        return f"{type(obj).__name__} says: {err}"

    def release(self) -> None:
        if self._held:
            self._held = False
            _RELEASE_BUFFER(ctypes.byref(self._view))

    def __del__(self):
        self.release()


def _numpy_dtype(t: Type) -> str:
    return "bool" if t == BOOL else ("float" if isinstance(t, FloatT) else ("int" if t.signed else "uint")) + \
        str(t.bits)


class _Where:
    """`argument 2 (`x: u8`) of fn f(…)`, written only when an error needs it."""

    def __init__(self, e: Export, index: int):
        self.e, self.index = e, index

    def __str__(self) -> str:
        name, t = self.e.params[self.index]
        return f"argument {self.index + 1} (`{name}: {t}`) of {self.e.signature}"


def scalar_argument(where, t: Type, a) -> int | float:
    """A Python value checked for a scalar parameter of type `t` (a bool as 0/1);
    `where` (anything `str()` makes the place of) names it in an error. As
    numba does, NumPy's scalars are numbers too: an integer one (anything
    `operator.index` takes, but a bool) for an integer, any real for a float."""
    if t == BOOL:
        if _is_bool(a):
            return int(bool(a))
    elif not _is_bool(a):
        if isinstance(t, IntT):
            try:
                a = operator.index(a)   # int, IntEnum, numpy.int64, …
            except TypeError:
                pass
            else:
                if not t.min <= a <= t.max:
                    raise TypeError(f"{where}: {a} does not fit in {t}")
                return a
        elif isinstance(a, numbers.Real):   # int, float, numpy.float32, …
            try:   # (then to an f32 as C converts a double: past its range, inf)
                return float(a)
            except OverflowError:   # an int past any float's range
                raise TypeError(f"{where}: {a} is too large for a float") from None
    raise TypeError(f"{where} must be {t}, not {_type_name(a)}")


def _is_bool(a) -> bool:
    """`True`/`False`, or NumPy's bool scalar (no int: it has no `__index__`)."""
    return isinstance(a, bool) or (type(a).__module__ == "numpy" and type(a).__name__ in ("bool", "bool_"))


def _type_name(a) -> str:
    """`list`, or `numpy.bool` (NumPy's names are Python's: `bool`, `int64`)."""
    kind = type(a)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _signature(e: Export) -> inspect.Signature:
    """The PyCoro signature as Python's (`inspect.signature`, `help()`): the
    parameters by their names (as Python spells them), annotated with their
    PyCoro types."""
    names = python_names([name for name, _ in e.params])
    params = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str(t))
              for name, (_, t) in zip(names, e.params)]
    returns = e.result_text if e.item is not None or e.result != VOID else None
    return inspect.Signature(params, return_annotation=returns if returns else inspect.Signature.empty)


def python_names(names: list[str], reserved: frozenset[str] = frozenset()) -> list[str]:
    """PyCoro names as Python spells keyword arguments and attributes: one
    that is a Python keyword (`class`, `None`), or in `reserved`, takes a
    trailing underscore (PEP 8's `class_`), more if another name has that."""
    taken, spelt = set(names), []
    for name in names:
        if keyword.iskeyword(name) or name in reserved:
            name += "_"
            while name in taken:
                name += "_"
            taken.add(name)
        spelt.append(name)
    return spelt


def _bind(e: Export, signature: inspect.Signature, args: tuple, keywords: dict) -> tuple:
    """Keyword arguments in their places (Python's own words for a wrong name;
    as a Python function's call, an unknown keyword is named before a missing
    argument)."""
    unknown = next((k for k in keywords if k not in signature.parameters), None)
    if unknown is not None:
        raise TypeError(f"{e.signature}: got an unexpected keyword argument {unknown!r}")
    try:
        return signature.bind(*args, **keywords).args
    except TypeError as err:
        raise TypeError(f"{e.signature}: {err}") from None


def _function(runtime: Runtime, e: Export, module_name: str):
    signature = _signature(e)
    if e.item is None:
        fields = _argument_fields(e)
        if e.result != VOID:
            fields += _c_fields("result", e.result)
        # the arguments and the result travel in a struct (exports.guarded_source)
        context_type = type(f"Call_{e.name}", (ctypes.Structure,), {"_fields_": fields}) if fields else None
        wrapper = runtime.address(f"__export_try_{e.name}")
        convert = bool if e.result == BOOL else None

        def call(*args, **keywords):
            values, held = _check_args(e, _bind(e, signature, args, keywords) if keywords else args, runtime)
            context = context_type(*values) if context_type else None
            if e.output:
                _flush_python()
            try:
                runtime.guarded(wrapper, ctypes.addressof(context) if context is not None else None, e.faults)
            finally:
                _release(held)
                if e.output:
                    _flush_c()
            if e.result == VOID:
                return None
            if isinstance(e.result, ExportStruct):
                return struct_result(e.result, context.result)
            return convert(context.result) if convert else context.result
    else:
        # the create wrapper takes a struct by address (pycoro's convention for aggregates)
        argtypes = [ctypes.c_void_p if isinstance(t, ExportStruct) else c
                    for _, t in e.params for _, c in _c_fields("", t)]
        create = ctypes.PYFUNCTYPE(ctypes.c_void_p, *argtypes)(runtime.address(f"__export_{e.name}"))
        fill = runtime.address(f"__export_try_fill_{e.name}")
        destroy = runtime.address(f"__export_try_destroy_{e.name}")
        code = e.item if isinstance(e.item, ExportStruct) else _ARRAY_CODES[str(e.item)]
        generator_class = native_generator_type(runtime, e) if runtime.native and python_entries.native_step(e) \
            else GeneratorObject

        def call(*args, **keywords):
            values, held = _check_args(e, _bind(e, signature, args, keywords) if keywords else args, runtime)
            try:   # Generator and Stream are lazy: this runs none of the body (the frame copies its arguments)
                frame = create(*(ctypes.addressof(v) if isinstance(v, ctypes.Structure) else v for v in values))
            except BaseException:
                _release(held)
                raise
            # the generator keeps the buffers (and their objects) until its frame is destroyed
            return generator_class._make(runtime, e, frame, fill, destroy, code, held, values)
    function = Function(call)
    if runtime.native and python_entries.native_call(e):
        # the native entry converts exact ints, floats and bools itself; `call` does the rest, and says what is wrong
        function = Function(cpython.builtin_function(e.name, runtime.address(f"__py_call_{e.name}"), call,
                                                     runtime.kept))
    function.__name__ = function.__qualname__ = e.name
    function.__doc__ = f"{e.signature}\n\n{e.doc}" if e.doc else e.signature
    function.__signature__ = signature
    function.__module__ = module_name
    function._export = e
    return function


class Function(functools.partial):
    """An exported PyCoro function as Python sees it: called natively where its
    arguments allow (python_entries.py), with its PyCoro signature, name and
    doc comment for `inspect` and `help()`. (A partial: the one builtin type
    that is both called without a Python frame and takes attributes.)"""

    def __get__(self, obj, cls=None):
        return self   # a plain callable as a class attribute too, as builtins are

    def __repr__(self) -> str:
        return f"<pycoro function {self._export.signature}>"


def _argument_fields(e: Export) -> list[tuple[str, type]]:
    """A context struct's fields for `e`'s arguments, by position (a0, a1, …:
    exports.guarded_source's and python_entries' structs)."""
    return [field for i, (_, t) in enumerate(e.params) for field in _c_fields(f"a{i}", t)]


def _c_fields(name: str, t: Type) -> list[tuple[str, type]]:
    """How a parameter crosses the wrappers' C ABI: a scalar as itself (a bool as a
    u8), a slice as its address and its length."""
    if isinstance(t, SliceT):
        return [(name, ctypes.c_void_p), (f"{name}_len", ctypes.c_int64)]
    if isinstance(t, ExportStruct):
        return [(name, struct_ctype(t))]
    return [(name, C_TYPES[str(t)])]


class _Fill(ctypes.Structure):
    """The context of `__export_try_fill_NAME` (exports.guarded_source)."""
    _fields_ = [("g", ctypes.c_void_p), ("buf", ctypes.c_void_p), ("cap", ctypes.c_int64), ("n", ctypes.c_int64)]


class GeneratorObject:
    """A PyCoro generator as a Python iterator and context manager: `close()`
    (or leaving a `with`, exhaustion, garbage collection) destroys its frame,
    running its pending `defer`s; using it after `close()` raises ValueError.
    A panic while it runs is raised as a PanicError, and finishes it. As a
    Python generator, one that is executing (a step, a close) can be neither
    stepped nor closed (ValueError) by the Python code that runs meanwhile
    (flushing stdout runs Python code, which may call back, or let another
    thread in): each claims it first.

    This class steps the frame through ctypes, in batches where it may run
    ahead, and hands out a batch's values one at a time (it is its own
    iterator, as Python's generators are); a generator of scalars gets a
    subclass whose `__next__` is native (NativeSteps)."""

    def __new__(cls, *args, **keywords):
        # as for CPython's generators, only a call of the function makes one
        raise TypeError(f"cannot create '{cls.__module__}.{cls.__qualname__}' instances")

    @classmethod
    def _make(cls, *args):
        gen = cls._allocate()
        gen.__init__(*args)
        return gen

    _allocate = classmethod(object.__new__)

    def __reduce_ex__(self, protocol):
        raise TypeError(f"cannot pickle '{type(self).__module__}.{type(self).__qualname__}' object")

    def __init__(self, runtime: Runtime, export: Export, frame: int, fill: int, destroy: int, code: str,
                 held: list[Buffer] = (), arguments: list = ()):
        self._runtime = runtime              # keeps the compiled code loaded
        self._export = export
        self._arguments = arguments          # as the create wrapper took them (to_numpy may make it again)
        self._slot = ctypes.c_void_p(frame)  # the owning handle: the frame's address
        self._code = code
        self._fill, self._closed = fill, False
        self._as_bool = export.item == BOOL
        # Destroying the frame must not wait for this object's __del__ ordering.
        self._finalizer = weakref.finalize(self, _destroy_frame, destroy, self._slot, runtime, list(held),
                                           export.output)
        self._pending = None      # a panic to raise once the values made before it are handed out
        self._ready = iter(())    # the values of the last batch not handed out yet
        self._sizes = None        # the sizes of the batches to come (then a buffer and a context), from the first
        self._executing = threading.Lock()

    def _new_buffer(self, cap: int):
        """Where a batch of values comes back: an array.array of scalars (slicing
        one copies in C), or a ctypes array of a struct."""
        if isinstance(self._code, ExportStruct):
            return (struct_ctype(self._code) * cap)()
        return array.array(self._code, bytes(array.array(self._code).itemsize * cap))

    def _next_batch(self):
        """The first value of the next batch: the frame run for up to a batch
        of values."""
        self._claim()
        try:   # (published while claimed: another thread's batch must not overwrite it unread)
            self._ready = iter(self._batch())
        finally:
            self._unclaim()
        return next(self)

    def _batch(self) -> list:
        self._check_open()
        self._raise_pending()
        if not self._slot.value:   # exhausted, or finished another way (a panic, to_numpy drained it)
            raise StopIteration
        if self._sizes is None:
            self._sizes, self._buffer = batch_sizes(self._export), self._new_buffer(0)
            self._context = _Fill(ctypes.addressof(self._slot), 0, 0, 0)
        cap, context = next(self._sizes), self._context
        if len(self._buffer) < cap:
            self._buffer = self._new_buffer(cap)
        buf = self._buffer
        context.buf = ctypes.addressof(buf) if isinstance(buf, ctypes.Array) else buf.buffer_info()[0]
        context.cap = cap
        output = self._export.output
        if output:
            _flush_python()
        try:
            self._run_fill(context)
        except PanicError as panic:   # raised after the values made before it
            self._pending = panic
        finally:
            if output:
                _flush_c()
        if context.n < cap and self._slot.value:
            # exhausted: destroy the frame now (not `closed`: next() says
            # StopIteration); what that raises (a defer's panic, a failing
            # flush) comes after the values made before it, as a panic's does
            try:
                self._finalizer()
            except Exception as err:  # noqa: BLE001 - raised at the next step, whatever it is
                self._pending = self._pending or err
        return self._values(buf, context.n)

    def _run_fill(self, context: "_Fill") -> None:
        """One native call of the fill wrapper with `context`."""
        try:
            self._runtime.guarded(self._fill, ctypes.addressof(context), self._export.faults)
        except PanicError:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """After a panic the frame was left mid-step: it can be neither resumed
        nor destroyed (its defers might run twice). It is leaked, and the
        generator is finished, as a Python generator that raised."""
        self._finalizer.detach()
        self._slot.value = 0

    def _values(self, buf, n: int):
        if isinstance(self._code, ExportStruct):
            return [struct_result(self._code, buf[i]) for i in range(n)]
        return [bool(v) for v in buf[:n]] if self._as_bool else buf[:n]

    def _claim(self) -> None:
        """Mark the generator executing, if it is not already (ValueError):
        what Python does to the frame is done in between `_claim` and `_unclaim`."""
        if not self._executing.acquire(blocking=False):
            raise ValueError(_EXECUTING)

    def _unclaim(self) -> None:
        self._executing.release()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"{self._export.name}: generator used after close()")

    def _raise_pending(self) -> None:
        if self._pending is not None:
            panic, self._pending = self._pending, None
            raise panic

    def __iter__(self):
        self._check_open()
        return self

    def __next__(self):
        for value in self._ready:
            return value
        return self._next_batch()

    def to_numpy(self):
        """The generator's remaining values as a NumPy array of its item's dtype.
        A generator without effects writes them straight into the array's
        memory, in batches that double (docs/embedding.md); any other goes
        value by value, as `numpy.fromiter` would."""
        import numpy as np
        item = self._export.item
        if isinstance(item, ExportStruct):
            return np.array(list(self), dtype=object)
        dtype = np.dtype(_numpy_dtype(item))
        if self._export.effects or self._sizes is not None or self._closed:
            return np.fromiter(self, dtype)
        self._claim()
        try:
            return self._fill_array(dtype)
        finally:
            self._unclaim()

    def _fill_array(self, dtype):
        """to_numpy of a generator without effects, claimed."""
        import numpy as np
        self._check_open()
        if self._untouched() and python_entries.native_collect(self._export):
            collected = self._collect(dtype)
            if collected is not None:
                return collected
        head = self._run_ahead()   # then a panic that came after them, if one did
        out = np.empty(max(FIRST_BATCH * 64, 2 * len(head)), dtype)
        out[:len(head)] = head
        n, context = len(head), _Fill(ctypes.addressof(self._slot), 0, 0, 0)
        while self._slot.value:
            if n == len(out):   # grow by doubling (np.resize would refill, not just copy)
                bigger = np.empty(2 * len(out), dtype)
                bigger[:n] = out
                out = bigger
            cap = len(out) - n
            context.buf, context.cap = out.ctypes.data + n * dtype.itemsize, cap
            self._run_fill(context)
            n += context.n
            if context.n < cap:
                self._finalizer()
        return out[:n].copy() if n < len(out) // 2 else out[:n]

    def _run_ahead(self) -> list:
        """The values made ahead and not handed out yet (NativeSteps keeps some)."""
        return []

    def _untouched(self) -> bool:
        """Whether the frame is there and has never run."""
        return self._sizes is None and bool(self._slot.value)

    def _collect(self, dtype):
        """All the values, from a generator made again from the arguments and
        drained in one native call (python_entries: its frame elided, its loop
        fused with the stores): first into a small NumPy array; if they do
        not fit, made again into memory that becomes the array's
        (arrays.py). None if that memory cannot be had or does not hold them
        all (the frame made at the call then makes them: nothing observable
        ran). Otherwise that frame, which never ran, is destroyed."""
        import numpy as np
        small = np.empty(COLLECT_SMALL, dtype)
        n = self._drain(small.ctypes.data, COLLECT_SMALL)
        if n >= 0:
            self._finalizer()
            return small[:n].copy() if n < COLLECT_SMALL // 4 else small[:n]
        base = arrays.reserve()
        if base is None:
            return None
        try:
            n = self._drain(base, arrays.RESERVE // dtype.itemsize)
        except BaseException:
            arrays.release(base)
            raise
        if n < 0:
            arrays.release(base)
            return None
        self._finalizer()
        return arrays.keep(base, n * dtype.itemsize, dtype)

    def _drain(self, address: int, cap: int) -> int:
        """The collect into `cap` values at `address`: how many, or -1 (more).
        A panic finishes the generator."""
        e = self._export
        context = self._runtime.collect_context(e)(*self._arguments, address, cap, 0)
        try:
            self._runtime.guarded(self._runtime.address(f"__py_collect_{e.name}"), ctypes.addressof(context),
                                  e.faults)
        except BaseException:
            self._finalizer()
            raise
        return context.n

    def close(self) -> None:
        """Destroy the frame (running its pending defers). Closing twice is
        allowed; closing one that is executing is not (ValueError)."""
        self._claim()
        try:
            if not self._closed:
                self._closed = True
                self._drop_ready()
                self._finalizer()
        finally:
            self._unclaim()

    def _drop_ready(self) -> None:
        self._ready = iter(())   # values made ahead are dropped with the frame

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<pycoro generator {self._export.name}{' (closed)' * self._closed}>"


class NativeSteps(GeneratorObject):
    """A generator of scalars whose `__next__` is its native step
    (python_entries.py): CPython calls it as it calls its own generators'.
    One not in lockstep (no effects, no buffer lent) is run ahead into a buffer in the object, a few
    dozen values at a time. The native type it derives from
    (`native_generator_type`) holds the step's state
    (python_entries.GENERATOR_FIELDS); the step hands the end and a panic
    back to the methods here."""

    _allocate = classmethod(cpython.allocate)   # (its native base cannot be instantiated)

    def __init__(self, *args, **keywords):
        super().__init__(*args, **keywords)
        self._slot_address = ctypes.addressof(self._slot)
        self._ask = 1 if self._export.lockstep else python_entries.FIRST_RUN_AHEAD

    def _ended(self):
        """The buffer is empty and the frame gone (closed, panicked) or just
        exhausted (destroyed now)."""
        self._check_open()
        self._raise_pending()
        self._finalizer()
        raise StopIteration

    def _panicked(self):
        try:
            self._runtime.raise_panic()
        except PanicError as panic:
            self._pending = panic
        self._abandon()

    def _run_ahead(self) -> list:
        values = [next(self) for _ in range(self._count - self._index)]
        self._raise_pending()   # to_numpy: not an array that looks complete
        return values

    def _untouched(self) -> bool:
        return self._count == 0 and self._index == 0 and bool(self._slot.value)

    def _drop_ready(self) -> None:
        self._count = 0   # values made ahead are dropped with the frame

    def _claim(self) -> None:
        if not self._runtime.claim(self):   # (the test and the mark the native step does)
            raise ValueError(_EXECUTING)

    def _unclaim(self) -> None:
        self._running = 0


def native_generator_type(runtime: Runtime, e: Export) -> type:
    """The Python class of generator `e`'s objects: its native step as
    `__next__`, the rest NativeSteps'."""
    if runtime.claim is None:
        runtime.claim = cpython.builtin_function("claim", runtime.address("__py_claim"), None, runtime.kept)
    values = 1 if e.lockstep else python_entries.RUN_AHEAD
    base = cpython.iterator_type(f"steps_{e.name}", runtime.address(f"__py_next_{e.name}"),
                                 list(python_entries.GENERATOR_FIELDS), values * _item_size(e.item))
    return type(f"generator_{e.name}", (base, NativeSteps), {"__module__": "pycoro"})


def _item_size(t: Type) -> int:
    return ctypes.sizeof(C_TYPES[str(t)])


def _generator_ended(gen: NativeSteps):
    gen._ended()


def _generator_panicked(gen: NativeSteps):
    gen._panicked()


_EXECUTING = "generator already executing"   # Python's own words


def _generator_executing(gen: NativeSteps):
    raise ValueError(_EXECUTING)


# to_numpy's first try, in values: a small array from NumPy, without the
# system calls of a reservation (arrays.py), which only more values need.
COLLECT_SMALL = 4096


def _c_function(name: str) -> int:
    """The address of a function of CPython's API or of the C library."""
    library = _libc if name == "fflush" else ctypes.pythonapi
    return ctypes.cast(getattr(library, name), ctypes.c_void_p).value


class _PyApi(ctypes.Structure):
    """What `__py_init` takes (python_entries.API_FIELDS): addresses of objects
    and functions."""
    _fields_ = [(name, ctypes.c_void_p) for name, _ in python_entries.API_FIELDS]


# Whether exports get their native entry points (python_entries.py) where
# CPython allows; tests turn it off to run the Python wrappers alone.
NATIVE = True


def _destroy_frame(destroy: int, slot: ctypes.c_void_p, runtime: Runtime, held: list[Buffer] = (),
                   output: bool = True) -> None:
    """Destroy the frame in `slot`, running its pending defers, and release
    the buffers it viewed. Python's stdout is flushed first where the
    generator may print (`output`: its defers may); a flush that fails does
    not keep the frame: it is destroyed all the same, then the error raised."""
    try:
        if slot.value:
            try:
                if output:
                    _flush_python()
            finally:
                _run_destroy(destroy, slot, runtime)
    finally:
        _release(held)   # the frame no longer views them


def _run_destroy(destroy: int, slot: ctypes.c_void_p, runtime: Runtime) -> None:
    try:
        runtime.guarded(destroy, ctypes.addressof(slot))   # runs pending defers, which may print (or panic)
    finally:
        slot.value = 0
        _flush_c()


# Python and the compiled code buffer stdout separately: around a call that may
# print, both are flushed so that lines come out in the order they were written.
_libc = ctypes.CDLL(None)


def _flush_python() -> None:
    stdout = sys.stdout
    if stdout is not None:   # none (pythonw, or set so): nothing to flush, as print() then writes nothing
        stdout.flush()


def _flush_c() -> None:
    _libc.fflush(None)
