"""The `pycoro` command's entry point, and how its actions run.

`main` recognises the plain forms of `pycoro run` itself and runs them
without the CLI's option parser (typer): a program compiled before then runs
from the cache without the compiler or LLVM either (rerun.py), as `python
x.py` runs a module from its .pyc. Every other command line goes to the CLI
(cli.py), which parses the same options and runs a program the same way.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import traceback

from .diagnostics import CompileError, LeakError, print_diagnostics

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 70


def in_big_stack(action):
    """Run `action` on a thread with a 512 MiB stack: the parser and checker recurse
    once per nesting level of the program (and a program run in this process gets
    the same stack)."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = action()
        except BaseException as err:  # re-raised on the calling thread
            outcome["error"] = err
    threading.stack_size(512 * 1024 * 1024)
    sys.setrecursionlimit(200_000)
    thread = threading.Thread(target=target, name="pycoro")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def guarded(action) -> int:
    """Run a compiler action; its exit status: its own, 1 for diagnostics, 70
    for a bug in pycoro."""
    try:
        status = in_big_stack(action)
    except CompileError as err:
        print_diagnostics(err.diagnostics)
        return EXIT_USER_ERROR
    except LeakError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USER_ERROR
    except RecursionError:
        print("error: program is nested too deeply for pycoro", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as err:  # noqa: BLE001 - every other failure is ours
        print(f"internal compiler error: {type(err).__name__}: {err}", file=sys.stderr)
        if os.environ.get("PYCORO_TRACEBACK"):
            traceback.print_exc()
        else:
            print("(set PYCORO_TRACEBACK=1 to see where; please report it)", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    return status or 0


# `pycoro run`'s flags as cli.run declares them: (flag, its parameter)
_RUN_FLAGS = {"--check-leaks": "check_leaks", "--trampoline": "trampoline", "--real-time": "real_time"}
_OPT_LEVELS = ("0", "1", "2", "3")


def plain_run(argv: list[str]) -> tuple[str, dict] | None:
    """`run FILE` with only `-O N`/`-ON` and cli.run's flags: the file and the
    run's parameters; None for any other command line (cli.py parses it)."""
    if not argv or argv[0] != "run":
        return None
    file, params = None, {"opt": 2, **dict.fromkeys(_RUN_FLAGS.values(), False)}
    args = iter(argv[1:])
    for arg in args:
        if arg in _RUN_FLAGS:
            params[_RUN_FLAGS[arg]] = True
        elif arg == "-O" or (arg.startswith("-O") and arg[2:] in _OPT_LEVELS):
            level = arg[2:] or next(args, None)
            if level not in _OPT_LEVELS:
                return None
            params["opt"] = int(level)
        elif arg.startswith("-") or file is not None:
            return None
        else:
            file = arg
    return (file, params) if file is not None else None


def run_options(opt: int, trampoline: bool, real_time: bool):
    """The compilation options of `pycoro run` (its cache entries are keyed by them)."""
    from .options import Options
    return Options(opt_level=opt, trampoline=trampoline, real_time=real_time)


def run_program(file: str, opt: int = 2, check_leaks: bool = False, trampoline: bool = False,
                real_time: bool = False) -> int:
    """`pycoro run`: the program's exit status. From the cache when it was
    compiled before (rerun.py: no compiler, no LLVM), else compiled now."""
    # Compiled code never returns to Python's signal check: let Ctrl-C end the
    # program the way it ends a native one.
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    def action():
        from .rerun import run_cached
        options = run_options(opt, trampoline, real_time)
        status = run_cached(file, options, check_leaks)
        if status is None:
            from .driver import Compilation   # the whole compiler: only when needed
            status = Compilation.from_file(file, options).run(check_leaks)
        return status & 0xFF
    return guarded(action)


def main() -> None:
    plain = plain_run(sys.argv[1:])
    if plain is not None:
        file, params = plain
        sys.exit(run_program(file, **params))
    from .cli import main as cli_main   # typer, and the compiler on demand
    cli_main()
