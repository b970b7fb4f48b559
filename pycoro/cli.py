"""The `pycoro` command: parses options and calls the driver, nothing more."""
from __future__ import annotations

from enum import Enum
from typing import Optional

import typer

from .launch import EMITS, TARGETS, build_program, compilation, guarded, options_for, run_program

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="pycoro: compile and run PyCoro programs.")


Emit = Enum("Emit", {name: name for name in EMITS}, type=str)
Target = Enum("Target", {name: name for name in TARGETS}, type=str)
OptLevel = typer.Option(2, "-O", min=0, max=3, help="optimisation level, -O0 … -O3")
TargetOption = typer.Option(Target.native, "--target", help="native (this CPU) or nvptx (PTX for NVIDIA GPUs)")
ArchOption = typer.Option(None, "--arch", help="nvptx: the GPU architecture, sm_XX (default sm_80)")
RealTimeOption = typer.Option(False, "--real-time",
                              help="async programs: `sleep` and `now()` use the wall clock, not virtual time")


def _guard(action) -> None:
    """Run a compiler action and exit with its status (launch.guarded)."""
    raise typer.Exit(guarded(action))


@app.command()
def run(file: str = typer.Argument(..., help="the .pc program"), opt: int = OptLevel,
        check_leaks: bool = typer.Option(False, "--check-leaks", help="count coroutine frames; fail if any leak"),
        trampoline: bool = typer.Option(False, "--trampoline",
                                        help="symmetric transfer through a resume loop, as on GPUs"),
        real_time: bool = RealTimeOption):
    """Compile FILE in memory (JIT) and run `main`; exit with its status."""
    raise typer.Exit(run_program(file, opt, check_leaks, trampoline, real_time))


@app.command()
def build(file: str = typer.Argument(..., help="the .pc program"),
          output: Optional[str] = typer.Option(None, "-o", "--output", help="where to write"),
          target: Target = TargetOption,
          arch: Optional[str] = ArchOption,
          allow_device_heap: bool = typer.Option(False, "--allow-device-heap",
                                                 help="nvptx: accept coroutine frames from the device heap"),
          emit: Optional[Emit] = typer.Option(None, "--emit", help="default: exe, or ptx for --target nvptx"),
          opt: int = OptLevel,
          real_time: bool = RealTimeOption):
    """Write an artefact: a native executable, a shared library with its C header, or PTX for --target nvptx."""
    raise typer.Exit(build_program(file, output, target.value, arch, allow_device_heap, emit and emit.value, opt,
                                   real_time))


@app.command()
def check(file: str = typer.Argument(..., help="the .pc program"), target: Target = TargetOption):
    """Parse and type-check FILE only."""
    _guard(lambda: (compilation(file, options_for(target=target.value)).check(), 0)[1])


@app.command()
def explain(file: str = typer.Argument(..., help="the .pc program"), opt: int = OptLevel,
            target: Target = TargetOption, arch: Optional[str] = ArchOption):
    """Report coroutine frames, their ABIs, and heap elision per call site."""

    def action():
        frames, sites = compilation(file, options_for(opt, target.value, arch)).explain()
        print(render_explain(file, opt, frames, sites, gpu=target is Target.nvptx))
        return 0
    _guard(action)


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


_ASYNC_PLACEMENT = {
    "inlined": "inlined: runs in the awaiting fn's context",
    "call": "its {} context on the task's stack",
    "spawn": "a new task: its {} context in the task's block",
}


def _placement(s, gpu: bool) -> str:
    if s.async_kind is not None:
        return _ASYNC_PLACEMENT[s.async_kind].format(f"{s.context} B" if s.context else "")
    heap = "device heap: refused unless --allow-device-heap" if gpu else "heap-allocated"
    if s.buffer is None:   # switched-resume: the frame
        return f"elided: lives in {s.caller}'s stack frame" if s.elided else heap
    # returned-continuation: the control block with the buffer, and the frame in it
    where = f"buffer in {s.caller}'s stack frame" if s.elided else f"buffer {heap}"
    frame = f"frame too big for the {s.buffer}-byte buffer: {heap}" if s.overflows else "frame in the buffer"
    return f"{where}; {frame}"


def render_explain(file: str, opt: int, frames, sites, gpu: bool = False) -> str:
    if not frames:
        return f"{file}: no coroutines"
    out = [f"coroutines in {file} (-O{opt})", ""]
    rows = []
    for f in frames:
        size = f"{f.size} B" if f.size is not None else (f"{f.layout_size} B" if f.layout_size else "-")
        if f.abi == "async":
            size += " context"
        rows.append([f.coroutine, f.abi, size, f"{f.align}" if f.align else "-"])
    out += _table(["coroutine", "ABI", "frame", "align"], rows)
    if any(f.abi == "async" for f in frames):
        out += ["", "an async fn's frame lives in its context (with its result and arguments), "
                    "which its caller allocates on the task's stack"]
    for f in frames:
        if f.fields:
            out += ["", f"frame of {f.coroutine} ({f.layout_size} B at -O0):"]
            out += ["  " + line for line in _table(["field", "LLVM type", "bytes"],
                                                    [[n, t, str(b)] for n, t, b in f.fields])]
    out += ["", "call sites"]
    rows = [[s.where, s.caller, s.callee, _placement(s, gpu)] for s in sites]
    out += _table(["site", "caller", "coroutine", "frame"], rows) if rows else ["  (none)"]
    return "\n".join(out)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
