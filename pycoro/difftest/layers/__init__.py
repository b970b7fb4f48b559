"""The layers of the differential tester, and their registry.

A layer is a module in this package that defines a `Layer` subclass and
registers it with `@register`. Importing the package imports every module in
it, so adding a layer is adding a file: nothing else names it.

A layer may
- add top-level declarations (`declare`: globals, structs, functions …,
  with `g.add_decl`, `g.add_function`), run before `main` is generated,
  in the order of the chain;
- add statement kinds (`statements`): (weight, maker) pairs, a maker being
  `maker(g) -> Stmt | None` (None: not possible here, another is tried);
- add expression kinds (`expressions`): (weight, maker) pairs, a maker being
  `maker(g, ty, ctx) -> Expr | None` for a wanted type `ty` (None when it
  cannot make one of that type); `ctx` is False when no context gives an
  unsuffixed literal its type, and then the result must be `typed()`.

`requires` names the layers it builds on; `chain(name)` is the layer with
all it requires, first things first. A program "of layer L" is generated
with every kind of L's chain, L's own kinds weighted up (`boost`).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

LAYERS: dict[str, Layer] = {}


class Layer:
    name: str = ""
    requires: tuple[str, ...] = ()
    boost: float = 2.0   # how much more often this layer's own kinds are drawn in its programs

    def declare(self, g) -> None:
        """Add top-level declarations to the program being generated."""

    def statements(self) -> list[tuple[float, Callable]]:
        return []

    def expressions(self) -> list[tuple[float, Callable]]:
        return []


def register(cls):
    """Class decorator: make the layer known by its name."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    LAYERS[cls.name] = cls()
    return cls


def _load() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


def chain(name: str) -> list[Layer]:
    """`name`'s layer after every layer it requires (each once)."""
    out: list[Layer] = []

    def visit(n: str) -> None:
        if n not in LAYERS:
            raise KeyError(f"unknown layer {n!r} (known: {', '.join(sorted(LAYERS))})")
        for req in LAYERS[n].requires:
            visit(req)
        if LAYERS[n] not in out:
            out.append(LAYERS[n])
    visit(name)
    return out


_load()
