"""The differential tester (pycoro.difftest): a fixed sample of random
programs must agree with their Python oracles; the generator is deterministic;
the reducer shrinks a failing program.

Programs steer clear of the compiler bugs known and not yet fixed
(generate.KNOWN_BUGS). The long run is opt-in: PYCORO_DIFFTEST=N runs N
programs of each layer
(PYCORO_DIFFTEST_LAYERS=arith,control,… ; default: every layer) and saves
each failing program under PYCORO_DIFFTEST_OUT (default difftest-failures/).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pycoro.difftest import LAYERS, generate
from pycoro.difftest import model as m
from pycoro.difftest.cli import save
from pycoro.difftest.generate import KNOWN_BUGS
from pycoro.difftest.reduce import reduce
from pycoro.difftest.runner import Runner, exe_for
from pycoro.difftest.types import ArrayT, SliceT

# three programs of each plain layer (and of slices), one of each coroutine layer (each of those
# takes a few seconds: the sample stays well under a minute on 2 cores)
SAMPLE = ([(layer, seed) for layer in ("arith", "control", "slices") for seed in range(3)]
          + [(layer, 0) for layer in ("generators", "send", "promises", "streams", "tasks", "async")])
LONG = int(os.environ.get("PYCORO_DIFFTEST", "0"))


@pytest.fixture(scope="module")
def runner():
    r = Runner(timeout=60, avoid=KNOWN_BUGS)
    yield r
    r.close()


@pytest.mark.parametrize(("layer", "seed"), SAMPLE)
def test_sample_agrees_with_oracle(runner, layer, seed):
    result = runner.run_one(layer, seed, exe=seed == 0)
    assert not result.failures, (result.failures, result.pc)


# Programs of the streams layer's endless streams that found the two stream
# dispatch miscompiles (docs/testing.md) on the compilers before their fixes:
# seed 2800252 on b5147bc^ (`edefer0 -1` printed as `edefer0 -255`: a step
# dispatched among another stream's continuations, whose bool LICM wrote over
# the frame; tests/programs/stream_dispatch_one_coroutine.pc), and seed
# 2700147 on c85555a (a generic stream's continuation, `@"pc.en2<…,…>…"`,
# reached through a function returning one of two streams, never ran:
# tests/programs/stream_dispatch_generic_names.pc).
DISPATCH_SHAPES = [(2800252, ("defer print(\"edefer0\"", "loop {\n        yield es")),
                   (2700147, ("fn en2<T, U>(", "fn pk0("))]


@pytest.mark.parametrize(("seed", "shape"), DISPATCH_SHAPES)
def test_the_stream_dispatch_shapes_agree_with_oracle(runner, seed, shape):
    program = generate(seed, "streams").pc()
    assert all(part in program for part in shape)
    result = runner.run_one("streams", seed, exe=False)
    assert not result.failures, (result.failures, result.pc)


def test_generator_is_deterministic():
    for layer in ("arith", "control"):
        a, b = generate(7, layer), generate(7, layer)
        assert a.pc() == b.pc() and a.py() == b.py()
        assert generate(8, layer).pc() != a.pc()


def test_programs_are_not_trivial():
    program = generate(3, "control").pc()
    for word in ("struct", "fn ", "for ", "defer", "while", "impl"):
        assert word in "".join(generate(s, "control").pc() for s in range(5)), word
    assert program.count("\n") > 60


def test_slices_layer_makes_every_kind():
    text = "".join(generate(s, "slices").pc() for s in range(6))
    for word in ("[..]", "..]", "[..", ".len()", "for e", "-> Generator<", " in sg", "h0.next()", "defer print(\"sdefer",
                 "fn sf", ": [bool]", "var s"):
        assert word in text, word


def test_slice_oracle_views_the_array(runner):
    """The oracle's slices are views: a write through a sub-slice shows in the
    array and in the slice it was cut from, `for` reads each element when it
    gets there, and an index past the end panics; pycoro agrees."""
    arr, st, i64 = ArrayT("i64", 4), SliceT("i64"), "i64"

    def at(e, k):
        return m.Index(i64, e, m.Lit(i64, k))
    a, s, t, e = m.Var(arr, "a"), m.Var(st, "s"), m.Var(st, "t"), m.Var(i64, "e")
    body = [m.Let("a", arr, m.ArrayLit(arr, [m.Lit(i64, k) for k in (1, 2, 3, 4)])),
            m.Let("s", st, m.SliceOf(st, a, m.Lit(i64, 1), None), False, annotate=False),
            m.Let("t", st, m.SliceOf(st, s, None, m.Lit(i64, 2)), False),
            m.Assign(at(t, 1), "+=", m.Lit(i64, 10)),
            m.Print("w", [at(a, 2), at(s, 1), m.Len(i64, t)]),
            m.ForIn("e", s, m.Block([m.Assign(at(s, 2), "+=", e), m.Print("v", [e])])),
            m.Print("x", [at(t, 2)])]
    program = m.Program([m.FnDecl("main", [], None, m.Block(body))], "slices")
    assert _oracle_output(program) == ["w 13 13 2", "v 2", "v 13", "v 19"]
    assert not runner.check(program.pc(), program.py(), ("O0",))


class _Panic(Exception):
    pass


def _oracle_output(program) -> list[str]:
    """What the oracle prints, run in this process (fast; a panic ends it early)."""
    ns = {"__name__": "oracle"}

    def panic(msg):
        raise _Panic(msg)
    try:
        exec(compile(program.py(), "oracle", "exec"), ns)  # noqa: S102 - our own generated oracle
        ns["_panic"], ns["_flush"] = panic, lambda: None
        ns["main"]()
    except _Panic:
        pass
    except Exception:  # noqa: BLE001 - a reduction that broke the program (a name it dropped)
        return []
    return "".join(ns["_out"]).splitlines()


def _oracle_prints(program, label: str) -> bool:
    return any(line.split(" ")[0] == label for line in _oracle_output(program))


def test_reducer_shrinks_a_failing_program():
    """A 'failure' that holds whenever the program prints the line of one
    print statement: the reducer keeps that statement and little else."""
    program = generate(2, "control")
    labels = [line.split(" ")[0] for line in _oracle_output(program)]
    label = [x for x in labels if x.startswith("p")][-1]
    small = reduce(program, lambda p: _oracle_prints(p, label), seconds=40)
    assert _oracle_prints(small, label)
    assert len(small.pc()) < len(program.pc()) / 3, small.pc()


def test_exe_share_is_a_share():
    chosen = sum(exe_for(seed, 0.25) for seed in range(1000))
    assert 150 < chosen < 350
    assert not any(exe_for(seed, 0) for seed in range(100))


@pytest.mark.skipif(not LONG, reason="set PYCORO_DIFFTEST=N to run N random programs of each layer")
def test_long_run(tmp_path):
    layers = [x for x in os.environ.get("PYCORO_DIFFTEST_LAYERS", ",".join(LAYERS)).split(",") if x]
    out = Path(os.environ.get("PYCORO_DIFFTEST_OUT", "difftest-failures"))
    runner = Runner(timeout=60, avoid=KNOWN_BUGS)
    try:
        tasks = [(layer, seed, exe_for(seed, 0.25)) for layer in layers for seed in range(LONG)]
        failed = [r for r in runner.run_many(tasks, os.cpu_count() or 2) if r.failures]
        for r in failed:
            save(r, out, None, 0)
    finally:
        runner.close()
    assert not failed, [(r.layer, r.seed, [(f.config, f.kind, f.detail[:200]) for f in r.failures]) for r in failed]
