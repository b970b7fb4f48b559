"""pycoro.common.record: the frontend's syntax tree, types and checked program are
records; they must behave as the dataclasses they replaced did (the cache
keys compilations by `repr(options)`, the checker compares types by value,
the stdlib's syntax trees are pickled)."""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from dataclasses import field as dc_field

import pytest

from pycoro.common.diagnostics import Span
from pycoro.frontend import ast
from pycoro.frontend.types import I64, IntT, PtrT
from pycoro.pipeline.options import Options
from pycoro.common.record import FrozenRecordError, field, fields, record, replace


@record(frozen=True)
class Point:
    x: int
    y: int = 0


@record(frozen=True)
class Point3(Point):
    z: int = 0


@record
class Bag:
    name: str
    items: list = field(default_factory=list)


@record(eq=False)
class Node:
    label: str


def test_fields_inherit_in_order_with_defaults():
    assert fields(Point3(1, 2, 3)) == ("x", "y", "z")
    assert Point3(1) == Point3(1, 0, 0)
    assert Point(y=5, x=4).y == 5
    with pytest.raises(TypeError):
        Point()
    with pytest.raises(TypeError):
        Point(1, 2, w=3)


def test_frozen_records_refuse_assignment_and_hash_by_value():
    p = Point(1, 2)
    with pytest.raises(FrozenRecordError):
        p.x = 3
    with pytest.raises(AttributeError):
        del p.y
    assert p == Point(1, 2) and p != Point(2, 1) and p != Point3(1, 2)
    assert hash(p) == hash(Point(1, 2))
    assert len({p, Point(1, 2), Point(1, 3)}) == 2


def test_mutable_records_compare_by_value_and_are_unhashable():
    a, b = Bag("a"), Bag("a")
    a.items.append(1)
    assert b.items == [] and a != b   # each record gets its own list
    b.items.append(1)
    assert a == b
    with pytest.raises(TypeError):
        hash(a)


def test_identity_records_keep_object_equality_and_hash():
    a, b = Node("n"), Node("n")
    assert a != b and a == a
    assert len({a: 1, b: 2}) == 2


def test_repr_is_dataclass_repr():
    @dataclass(frozen=True)
    class Reference:
        opt_level: int = 2
        items: list = dc_field(default_factory=list)

    @record(frozen=True)
    class Mirror:
        opt_level: int = 2
        items: list = field(default_factory=list)

    Mirror.__qualname__ = Reference.__qualname__ = "Settings"
    assert repr(Mirror(3, [1])) == repr(Reference(3, [1])) == "Settings(opt_level=3, items=[1])"
    assert repr(Options()).startswith("Options(opt_level=2, ")   # pycoro.pipeline.options: the cache keys by it


def test_replace_and_match():
    assert replace(Point3(1, 2, 3), y=9) == Point3(1, 9, 3)
    with pytest.raises(TypeError):
        replace(Point(1), w=1)
    match Point3(1, 2, 3):
        case Point3(a, b, z=c):
            assert (a, b, c) == (1, 2, 3)


def test_the_compiler_records():
    span = Span("f.pc", 1, 2)
    tree = ast.Module(span, "f.pc", (ast.Import(span, "std/iter"),))
    back = pickle.loads(pickle.dumps(tree))
    assert back.decls[0].path == "std/iter" and back.span == span
    with pytest.raises(FrozenRecordError):
        tree.path = "g.pc"
    assert IntT(64, True) == I64 and PtrT(I64) == PtrT(IntT(64, True))
    assert {PtrT(I64): 1}[PtrT(IntT(64, True))] == 1
    assert ast.fields(tree) == ("span", "path", "decls")
