"""Random programs that move coroutine handles around: assignments, moves into
calls, blocks, structs and arrays, coroutines of a `mut self` method (which
refer to their counter), `defer`, `if`/`for`/`while` with `break`, `continue`
and `return`; in `main`, inside a generator destroyed while suspended, or in
`async fn main` with tasks and a channel.

A program the checker accepts must run clean: exit 0 under `--check-leaks`
(no frame leaked or freed twice, no crash), with the same output at -O0 and
-O2 (an async program may instead end in a deadlock panic at both). Programs
the checker refuses are not judged. Used by test_ownership_programs.py,
which runs only when PYCORO_FUZZ is set; by hand:

    python tests/ownership_programs.py SEED COUNT [main|generator|async]
"""
from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import run_pycoro

VARIABLES = ("a", "b", "c")
SHAPES = ("main", "generator", "async")

_COMMON = """var ticks: i64;
fn flip() -> bool { ticks += 1; return ticks % 3 != 0 && ticks < 40; }   // every loop ends
fn count(a: i64, n: i64) -> Generator<i64> { defer print("end", a); for i in 0..n { yield a + i; } }
fn sink(g: Generator<i64>) { var h = g; print("sink", h.next()); }
fn keep(g: Generator<i64>) -> Generator<i64> { return g; }
struct Two { g: Generator<i64>, n: i64 }
struct Counter { n: i64 }
impl Counter {   // its coroutines refer to the counter they were made from
    fn ticks(mut self, k: i64) -> Generator<i64> { for i in 0..k { self.n += 1; yield self.n; } }
}
"""
_LOCALS = "var ctr = Counter {{ n: 0 }}; var a = count(1, 2); var b = count(2, 3); var c = count(3, 1);"

_FRAMES = {
    "main": "fn main() {{\n" + _LOCALS + "\n{body}\n}}\n",
    "generator": ("fn body() -> Generator<i64> {{\n" + _LOCALS + "\n{body}\n}}\n"
                  "fn main() {{\n    var g = body();\n    print(\"first\", g.next(), g.value());\n"
                  "    print(\"second\", g.next(), g.value());\n    print(\"drop\");\n}}\n"),
    "async": ('import "std/async";\n'
              "async fn make(k: i64) -> Generator<i64> {{ await yield_now(); var g = count(k, 3); g.next(); return g; }}\n"
              "async fn main() {{\nlet ch = channel<Generator<i64>>(1000);\n" + _LOCALS + "\n{body}\n}}\n"),
}


def _statement(r: random.Random, shape: str, depth: int, in_loop: bool) -> str:
    v, k = r.choice(VARIABLES), r.randrange(100)
    refill = f" {v} = count({k}, 2);" if r.random() < 0.6 else ""
    choices = [
        lambda: f"{v} = count({k}, {r.randrange(1, 4)});",
        lambda: f"print({v}.next());",
        lambda: f"sink({v});" + refill,
        lambda: f"{{ var w = {v}; print(w.next()); }}" + refill,
        lambda: f'defer print("d", {v}.done());',
        lambda: f"defer sink({v});",   # moves it when the defer runs, not where it is written
        lambda: f"var t{k} = Two {{ g: {v}, n: {k} }}; print(t{k}.g.next()); {v} = t{k}.g;",
        lambda: f"var arr{k} = [{v}, count({k}, 2)]; print(arr{k}[1].next()); arr{k}[0] = count({k + 1}, 1);" + refill,
        lambda: f"{v} = keep({v}); print({v}.next());",
        lambda: f"print(Two {{ g: count({k}, 2), n: 1 }}.g.next());",
        lambda: f"{v} = ctr.ticks({r.randrange(1, 4)}); print({v}.next(), ctr.n);",
        lambda: f"{{ var inner = Counter {{ n: {k} }}; {v} = inner.ticks(2); }}",
        lambda: f"{{ var inner = Counter {{ n: {k} }}; var w = inner.ticks(2); print(w.next()); {v} = w; }}",
        lambda: "for t in ctr.ticks(2) { print(t); }",
    ]
    if depth < 2:
        inner = lambda loop: _block(r, shape, depth + 1, loop)  # noqa: E731
        choices += [
            lambda: f"if flip() {{ {inner(in_loop)} }}",
            lambda: f"if flip() {{ {inner(in_loop)} }} else {{ {inner(in_loop)} }}",
            lambda: f"for i{depth} in 0..2 {{ {inner(True)} }}",
            lambda: f"while flip() {{ {inner(True)} }}",
        ]
    if in_loop:
        choices += [lambda: "break;", lambda: "continue;"]
    if r.random() < 0.1:
        choices.append(lambda: "co_return;" if shape == "generator" else "return;")
    if shape == "generator":
        choices += [lambda: f"yield {k};"] * 2
    if shape == "async":
        choices += [
            lambda: f"{v} = await make({k});",
            lambda: f"{{ let j = spawn make({k}); }}",
            lambda: "await yield_now();",
            lambda: f"await ch.send({v}); {v} = count({k}, 2);",
            lambda: f"{{ let m = await ch.recv(); if m.ok {{ {v} = m.value; }} }}",
            lambda: f"{{ let j = spawn make({k}); {v} = await j; }}",
        ]
    return r.choice(choices)()


def _block(r: random.Random, shape: str, depth: int, in_loop: bool) -> str:
    return " ".join(_statement(r, shape, depth, in_loop) for _ in range(r.randrange(1, 4)))


def program(seed: int, shape: str = "main") -> str:
    r = random.Random(seed)
    body = " ".join(_statement(r, shape, 0, False) for _ in range(r.randrange(3, 8)))
    return _COMMON + _FRAMES[shape].format(body=body)


def _run(path: Path, opt: int) -> subprocess.CompletedProcess | None:
    try:
        return run_pycoro("run", f"-O{opt}", "--check-leaks", path, timeout=60)
    except subprocess.TimeoutExpired:
        return None


def problem(source: str, workdir: Path) -> str | None:
    """What is wrong with running `source`, if the checker accepts it; None
    when it runs clean or is refused."""
    path = workdir / "program.pc"
    path.write_text(source)
    o0 = _run(path, 0)
    if o0 is not None and o0.returncode == 1 and "error:" in o0.stderr and "leaked" not in o0.stderr:
        return "internal compiler error" if "internal compiler error" in o0.stderr else None
    o2 = _run(path, 2)
    if o0 is None or o2 is None:
        return "timed out"
    deadlock = all(p.returncode == 101 and "panic: deadlock" in p.stderr for p in (o0, o2))
    if o0.stdout != o2.stdout:
        return f"-O0 and -O2 differ:\n{o0.stdout}\n---\n{o2.stdout}"
    if not deadlock and (o0.returncode, o2.returncode) != (0, 0):
        return f"status {o0.returncode}/{o2.returncode}: {o0.stderr[-300:]} {o2.stderr[-300:]}"
    return None


def main() -> None:
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    shape = sys.argv[3] if len(sys.argv) > 3 else "main"
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seed, seed + count):
            found = problem(program(s, shape), Path(tmp))
            if found:
                print(f"seed {s} ({shape}): {found}")


if __name__ == "__main__":
    main()
