"""The `pycoro` command's entry point.

`main` recognises the plain forms of `pycoro run`, `build`, `check` and
`explain` itself (commands.plain_command) and runs them without the CLI's
option parser (typer, ~20 ms to import): a program compiled before then runs from the
cache without the compiler or LLVM either (rerun.py), as `python x.py` runs
a module from its .pyc. Every other command line goes to typer (app.py),
which parses the same declared options and runs the same actions.

Where a compile server runs (server.py), a command that would compile is
handed to it (client.py): `pycoro run` once the cache has missed, `build`,
`check` and `explain` at once.
"""
from __future__ import annotations

import gc
import os
import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] != ["run"]:
        # bin/pycoro's, where its launcher found no server to hand this to (a
        # `run`'s is commands.run_program's); the worker does not see it
        launch_command = os.environ.pop("PYCORO_COMMAND", None)   # (launch.py's COMMAND_VARIABLE)
        status = _delegate(argv)   # before the CLI's own modules: a served command needs none of them
        if status is not None:
            if launch_command is not None:
                from .client import tell_launcher
                tell_launcher(launch_command)
            _leave(status)
    from . import commands
    served = False

    def delegate() -> int | None:   # after the cache, in run_program
        nonlocal served
        status = _delegate(argv)
        served = status is not None
        return status
    if argv[:1] == ["run"]:
        commands.delegate = delegate
    status = run_here(argv)
    if served:
        _leave(status)
    sys.exit(status)


def _leave(status: int) -> None:
    """End a command the compile server ran: its output is written (by the
    worker), this process has nothing to clean up, and Python's own
    finalisation took ~3 ms of every served command."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say
            pass
    from .client import end_by, pending_signal
    if pending_signal:   # the program was killed by it, told on run_program's thread
        end_by(pending_signal[-1])
    os._exit(status & 0xFF)


def run_here(argv: list[str]) -> int:
    """Run the command line in this process (a server's worker runs it so too)."""
    from .commands import COMMANDS, plain_command
    if argv[:1] and argv[0] in COMMANDS:
        # A command that compiles lives for one compilation. What the compiler
        # makes (the syntax tree, llvmlite's IR) is freed by reference counting
        # or lives to the end, so the cycle collector's passes over it found
        # little and cost 4-11% of a build: medians of 9 interleaved builds,
        # tree_walk 334 -> 319 ms, async_pingpong 560 -> 506, gen_sum 256 ->
        # 228; a 4,000-line program 15.1 -> 13.2 s at the same peak memory
        # (250 MB). Not `lsp` or `server` (they live on), nor `import pycoro`
        # (the host's collector is the host's).
        gc.disable()
    plain = plain_command(argv)
    if plain is not None:
        command, file, params = plain
        return COMMANDS[command].action(file, **params)
    from .app import main as typer_main   # typer, and the compiler on demand
    typer_main(argv)
    return 0


def exit_fork(command, tell=None) -> None:
    """End a forked process (a compile server's worker, the difftest's fork
    server's child) as the `pycoro` process would have ended: with
    `command()`'s exit status (a SystemExit as Python reports it, any other
    exception's traceback and status 70), its output flushed, Python's and
    the C stdio of a program it ran; `tell(status)` then, before the process
    ends. Never returns: a fork must not go back into its server's code."""
    code = 70
    try:
        code = command()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if not isinstance(done.code, (int, type(None))):
            print(done.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - reported as the command's own failure would be
        import traceback
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say
                pass
        import ctypes
        import os
        ctypes.CDLL(None).fflush(None)
        if tell is not None:
            tell(code & 0xFF)
        os._exit(code & 0xFF)


def _delegate(argv: list[str]) -> int | None:
    from .client import delegate
    return delegate(argv)
