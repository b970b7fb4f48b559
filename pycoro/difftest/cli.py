"""python -m pycoro.difftest -n N --layers arith,control --seed S --jobs J
[--out DIR] [--exe-share F] [--reduce] [--timeout T]

Runs N programs of each layer (seeds S … S+N-1), prints a line per failure
and a summary; each failing program goes to DIR as LAYER-SEED.pc and .py
(reduced when --reduce), with what went wrong in LAYER-SEED.txt. Exit status
1 when anything failed."""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

from .generate import KNOWN_BUGS, generate
from .layers import LAYERS
from .reduce import reduce
from .runner import Runner, exe_for


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pycoro.difftest", description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=50, help="programs per layer")
    ap.add_argument("--layers", default="arith,control", help=f"comma-separated, of: {', '.join(sorted(LAYERS))}")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", type=Path, default=Path("difftest-failures"))
    ap.add_argument("--exe-share", type=float, default=0.25, help="share of programs also built and run as executables")
    ap.add_argument("--reduce", action="store_true", help="reduce failing programs before saving them")
    ap.add_argument("--reduce-seconds", type=float, default=300)
    ap.add_argument("--timeout", type=float, default=30, help="seconds per compile or run")
    ap.add_argument("--avoid-known", action="store_true",
                    help=f"do not generate the known compiler bugs ({', '.join(KNOWN_BUGS)})")
    ap.add_argument("--no-fork-server", action="store_true",
                    help="start a fresh `python -m pycoro` for every compile (slower; the fork server imports it once)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    layers = [x for x in args.layers.split(",") if x]
    for name in layers:
        if name not in LAYERS:
            ap.error(f"unknown layer {name!r} (known: {', '.join(sorted(LAYERS))})")

    runner = Runner(args.timeout, avoid=KNOWN_BUGS if args.avoid_known else (), fork_server=not args.no_fork_server)
    tasks = [(layer, seed, exe_for(seed, args.exe_share)) for layer in layers
             for seed in range(args.seed, args.seed + args.n)]
    start = time.perf_counter()
    done = Counter()
    clean = Counter()
    kinds = Counter()
    failed = []

    def on_result(r):
        done[r.layer] += 1
        if not r.failures:
            clean[r.layer] += 1
        else:
            failed.append(r)
            for f in r.failures:
                kinds[f"{f.config}:{f.kind}"] += 1
            save(r, args.out, None, 0)   # at once: reduced (when asked) after the run
            print(f"FAIL {r.layer} seed {r.seed}: " + "; ".join(
                f"{f.config} {f.kind}: {f.detail.splitlines()[0] if f.detail else ''}" for f in r.failures), flush=True)
        if not args.quiet and sum(done.values()) % 25 == 0:
            print(f"  … {sum(done.values())}/{len(tasks)} programs, {time.perf_counter() - start:.0f} s", flush=True)

    try:
        runner.run_many(tasks, args.jobs, on_result)
        elapsed = time.perf_counter() - start
        if args.reduce:
            for r in failed:
                save(r, args.out, runner, args.reduce_seconds)
    finally:
        runner.close()
    total = sum(done.values())
    print(f"\n{total} programs in {elapsed:.1f} s ({total / elapsed:.2f} programs/s, {args.jobs} jobs)")
    for layer in layers:
        print(f"  {layer}: {done[layer]} programs, {clean[layer]} clean")
    if kinds:
        print("failures by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
        print(f"saved to {args.out}/")
    return 1 if failed else 0


def save(r, out: Path, runner: Runner | None, seconds: float) -> Path:
    """Write a failing program (reduced when a runner is given) to `out`."""
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{r.layer}-{r.seed}"
    pc, py, failures = r.pc, r.py, r.failures
    if runner is not None:
        program = generate(r.seed, r.layer, runner.avoid)
        key = failures[0].key
        configs = (key[0],) if key[0] != "oracle" else ()

        def still_fails(p) -> bool:
            return key in {f.key for f in runner.check(p.pc(), p.py(), configs)}
        print(f"reducing {r.layer} seed {r.seed} ({key[0]} {key[1]}) …", flush=True)
        small = reduce(program, still_fails, seconds)
        pc, py = small.pc(), small.py()
        failures = runner.check(pc, py, configs) or failures
        stem.with_suffix(".orig.pc").write_text(r.pc)
    stem.with_suffix(".pc").write_text(pc)
    stem.with_suffix(".py").write_text(py)
    stem.with_suffix(".txt").write_text("\n\n".join(f"{f.config} {f.kind}:\n{f.detail}" for f in failures) + "\n")
    return stem


if __name__ == "__main__":
    sys.exit(main())
