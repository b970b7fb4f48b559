"""Records: the part of `dataclasses` the compiler uses, made cheaply.

`@dataclass` compiles four or five methods per class, with one `exec` each,
and asks `inspect` for a signature to write a docstring: about 0.3 ms per
class. The compiler defines about a hundred, so every start of it paid
~25 ms for them, and a cached `pycoro run` paid 5 ms to import `dataclasses`
and `inspect`. A record compiles only what must be fast per class, in one
`exec`: `__init__`, and `__eq__`/`__hash__` when it compares by value. Its
`__repr__`, its frozenness and its field list are shared code.

    @record(frozen=True)                 # like @dataclass(frozen=True)
    class Span:
        file: str
        line: int
        notes: list[str] = field(default_factory=list)

`eq=False` compares by identity (and keeps `object.__hash__`); otherwise a
frozen record hashes by value, a mutable one is unhashable, and a
`__hash__` the class defines itself is kept, as dataclass does.
`fields(x)` is the names of a record's fields, in order; `replace(x,
**changes)` makes a changed copy.
"""
from __future__ import annotations

_MISSING = object()


class FrozenRecordError(AttributeError):
    """Assigning to a field of a frozen record (dataclasses' FrozenInstanceError)."""


class _Factory:
    def __init__(self, make):
        self.make = make


def field(*, default_factory) -> object:
    """A field whose default is made afresh for each record (`default_factory()`)."""
    return _Factory(default_factory)


def fields(x) -> tuple[str, ...]:
    return x.__record_fields__


def replace(x, **changes):
    return type(x)(**{name: getattr(x, name) for name in x.__record_fields__} | changes)


def record(cls=None, /, *, frozen: bool = False, eq: bool = True):
    def make(cls):
        return _build(cls, frozen, eq)
    return make if cls is None else make(cls)


def _repr(self) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__)
    return f"{type(self).__qualname__}({shown})"


def _frozen_setattr(self, name, value):
    raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _frozen_delattr(self, name):
    raise FrozenRecordError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


def _build(cls, frozen: bool, eq: bool):
    inherited = getattr(cls, "__record_fields__", ())
    defaults = dict(getattr(cls, "__record_defaults__", {}))
    own = [name for name in cls.__dict__.get("__annotations__", {}) if name not in inherited]
    for name in own:
        if name in cls.__dict__:
            defaults[name] = cls.__dict__[name]
            if isinstance(defaults[name], _Factory):
                delattr(cls, name)   # as dataclass does: no class attribute for a factory
    names = inherited + tuple(own)

    scope: dict[str, object] = {"MISSING": _MISSING}
    params, body = [], []
    for name in names:
        default = defaults.get(name, _MISSING)
        if isinstance(default, _Factory):
            scope[f"make_{name}"] = default.make
            params.append(f"{name}=MISSING")
            body.append(f" d[{name!r}] = make_{name}() if {name} is MISSING else {name}")
        else:
            if default is not _MISSING:
                scope[f"default_{name}"] = default
            params.append(name if default is _MISSING else f"{name}=default_{name}")
            body.append(f" d[{name!r}] = {name}")
    source = [f"def __init__(self, {', '.join(params)}):", " d = self.__dict__", *body, " pass"]
    if eq:
        mine = "(" + "".join(f"self.{n}," for n in names) + ")"
        theirs = "(" + "".join(f"other.{n}," for n in names) + ")"
        source += ["def __eq__(self, other):",
                   f" if other.__class__ is self.__class__: return {mine} == {theirs}",
                   " return NotImplemented",
                   f"def __hash__(self): return hash({mine})"]
    exec("\n".join(source), scope)

    cls.__init__ = scope["__init__"]
    cls.__init__.__qualname__ = f"{cls.__qualname__}.__init__"
    if eq:
        cls.__eq__ = scope["__eq__"]
        if "__hash__" not in cls.__dict__:
            cls.__hash__ = scope["__hash__"] if frozen else None
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    cls.__record_fields__ = names
    cls.__match_args__ = names   # `case PromiseT(decl, args):`
    cls.__record_defaults__ = defaults
    return cls
