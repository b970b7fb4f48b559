"""Time a workload and its native anchors under eight placements of their code.

    python bench/layouts.py [--rounds 3] [workloads…]   (default: gen_noinline)

A loop whose every step is an indirect call and a return is sensitive to
where its code lies: on the project's Intel machine the same machine code
(pycoro's and clang++'s resume function are instruction for instruction the
same in gen_noinline) takes 1.4 or 1.7 ns per step depending only on its
address. One build is one draw from that lottery, so run.py's ratio for
such a workload says as much about the linker as about the compiler. This
script compiles each variant to assembly (pycoro `--emit asm`, `cc -S`,
`clang++ -S`, and the C anchor through clang too: "C (clang)", the same C
through LLVM's code generator), moves all of its code by 0, 16, …, 112
bytes (padding at the start of `.text`), and reports for each placement
the best of `--rounds` runs, then the median over placements.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ANCHORS, TABLE, WORKLOADS, cxx, measure  # noqa: E402

SHIFTS = range(0, 128, 16)


def assembly(workload: str, tmp: Path) -> dict[str, tuple[Path, list[str], str]]:
    """Per variant: its assembly, the libraries to link it with, and the
    compiler that links it (clang's assembly has directives GNU as does not
    know: `.addrsig`)."""
    out: dict[str, tuple[Path, list[str], str]] = {}
    asm = tmp / f"{workload}.pycoro.s"
    subprocess.run([sys.executable, "-m", "pycoro", "build", "-O2", "--emit", "asm", f"{workload}.pc",
                    "-o", str(asm)], cwd=WORKLOADS, check=True)
    out["pycoro"] = (asm, ["-lm"], "cc")

    def anchor(name: str, command: list[str], source: Path, libraries: list[str]) -> None:
        asm = tmp / f"{workload}.{len(out)}.s"
        subprocess.run([*command, "-O2", "-S", str(source), "-o", str(asm)], check=True)
        out[name] = (asm, libraries, command[0])

    anchors, c_source = TABLE[workload][1], ANCHORS / f"{workload}.c"
    if "c" in anchors and c_source.exists():
        anchor("C", ["cc"], c_source, ["-lm"])
        if cxx():   # the same C through LLVM: whether a difference is the C or the compiler
            anchor("C (clang)", [cxx(), "-x", "c"], c_source, ["-lm"])
    if "cpp" in anchors and cxx():
        anchor(cxx(), [cxx(), "-std=c++20"], ANCHORS / f"{workload}.cpp", ["-lstdc++", "-lm"])
    return out


def shifted(asm: Path, shift: int, exe: Path, libraries: list[str], linker: str) -> None:
    """`asm` assembled and linked with `shift` bytes before its first function."""
    text = asm.read_text().replace("\t.text\n", f"\t.text\n\t.zero {shift}\n", 1) if shift else asm.read_text()
    moved = exe.with_suffix(".s")
    moved.write_text(text)
    subprocess.run([linker, str(moved), "-o", str(exe), *libraries], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("workloads", nargs="*", default=["gen_noinline"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for workload in args.workloads:
            print(f"{workload} ({TABLE[workload][0]}), best of {args.rounds} per placement:")
            for name, (asm, libraries, linker) in assembly(workload, tmp).items():
                figures = []
                for shift in SHIFTS:
                    exe = tmp / f"{workload}.{name}.{shift}"
                    shifted(asm, shift, exe, libraries, linker)
                    figures.append(min(measure([str(exe)])[1] for _ in range(args.rounds)))
                row = " ".join(f"{f:.2f}" for f in figures)
                print(f"  {name:12s} {row}   median {statistics.median(figures):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
