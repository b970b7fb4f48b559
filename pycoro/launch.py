"""The `pycoro` command's entry point, and how its actions run.

`main` recognises the plain forms of `pycoro run` and `pycoro build` itself
and runs them without the CLI's option parser (typer, ~20 ms to import): a
program compiled before then runs from the cache without the compiler or
LLVM either (rerun.py), as `python x.py` runs a module from its .pyc. Every
other command line goes to the CLI (cli.py), which parses the same options
and runs a program or builds it the same way.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

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
            import traceback
            traceback.print_exc()
        else:
            print("(set PYCORO_TRACEBACK=1 to see where; please report it)", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    return status or 0


# The plain forms of `pycoro run` and `pycoro build`: their options as cli.py
# declares them, option → (parameter, the values it takes; FLAG: none).
FLAG, ANY = (), None
OPT_LEVELS = ("0", "1", "2", "3")
TARGETS = ("native", "nvptx")
EMITS = ("exe", "obj", "shared", "llvm", "lowered", "asm", "ptx")
_PLAIN_OPTIONS = {
    "run": {"--check-leaks": ("check_leaks", FLAG), "--trampoline": ("trampoline", FLAG),
            "--real-time": ("real_time", FLAG)},
    "build": {"-o": ("output", ANY), "--output": ("output", ANY), "--target": ("target", TARGETS),
              "--arch": ("arch", ANY), "--emit": ("emit", EMITS),
              "--allow-device-heap": ("allow_device_heap", FLAG), "--real-time": ("real_time", FLAG)},
}
_DEFAULT_SUFFIX = {"exe": "", "obj": ".o", "shared": ".so", "llvm": ".ll", "lowered": ".ll",
                   "asm": ".s", "ptx": ".ptx"}


def plain_command(argv: list[str]) -> tuple[str, str, dict] | None:
    """`run FILE` or `build FILE` with only the options above and `-O N`/`-ON`:
    the command, the file and the parameters given; None for any other command
    line (cli.py parses it, and says what is wrong with it)."""
    if not argv or argv[0] not in _PLAIN_OPTIONS:
        return None
    options = _PLAIN_OPTIONS[argv[0]]
    file, params = None, {}
    args = iter(argv[1:])
    for arg in args:
        if arg in options:
            name, values = options[arg]
            value = True if values is FLAG else next(args, None)
            if value is None or (values is ANY and value.startswith("-")) or (values and value not in values):
                return None
            params[name] = value
        elif arg == "-O" or (arg.startswith("-O") and arg[2:] in OPT_LEVELS):
            level = arg[2:] or next(args, None)
            if level not in OPT_LEVELS:
                return None
            params["opt"] = int(level)
        elif arg.startswith("-") or file is not None:
            return None
        else:
            file = arg
    return (argv[0], file, params) if file is not None else None


def options_for(opt: int = 2, target: str = "native", arch: str | None = None, allow_device_heap: bool = False,
                trampoline: bool = False, real_time: bool = False):
    """The compilation options of a command (`pycoro run`'s cache entries are keyed by them)."""
    from .diagnostics import Diagnostic
    from .options import DEFAULT_GPU_ARCH, Options
    if arch is not None:
        from .backend.targets import nvptx_arches   # LLVM: only when asked about GPUs
        if arch not in nvptx_arches():
            raise CompileError([Diagnostic(f"unknown GPU architecture `{arch}`", None,
                                           hint="LLVM's NVPTX backend knows " + ", ".join(nvptx_arches()))])
    return Options(opt_level=opt, target=target, arch=arch or DEFAULT_GPU_ARCH,
                   allow_device_heap=allow_device_heap, trampoline=trampoline, real_time=real_time)


def compilation(file: str, options):
    from .diagnostics import print_warnings
    from .driver import Compilation   # the whole compiler: imported only when needed
    return Compilation.from_file(file, options, warn=print_warnings)


def run_program(file: str, opt: int = 2, check_leaks: bool = False, trampoline: bool = False,
                real_time: bool = False) -> int:
    """`pycoro run`: the program's exit status. From the cache when it was
    compiled before (rerun.py: no compiler, no LLVM), else compiled now."""
    # Compiled code never returns to Python's signal check: let Ctrl-C end the
    # program the way it ends a native one.
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    def action():
        from .rerun import run_cached
        options = options_for(opt, trampoline=trampoline, real_time=real_time)
        status = run_cached(file, options, check_leaks)
        if status is None:
            status = compilation(file, options).run(check_leaks)
        return status & 0xFF
    return guarded(action)


def build_program(file: str, output: str | None = None, target: str = "native", arch: str | None = None,
                  allow_device_heap: bool = False, emit: str | None = None, opt: int = 2,
                  real_time: bool = False) -> int:
    """`pycoro build`: writes the artefact; the exit status."""
    emit = emit or ("ptx" if target == "nvptx" else "exe")
    out = output or Path(file).with_suffix(_DEFAULT_SUFFIX[emit]).name or "a.out"
    if output is None and emit == "shared":
        out = f"lib{out}"   # gen.pc → libgen.so (and gen.h)

    def action():
        from .diagnostics import Diagnostic
        if emit == "ptx" and target != "nvptx":
            raise CompileError([Diagnostic("--emit ptx without --target nvptx: PTX is for GPUs", None)])
        if target != "nvptx" and (arch or allow_device_heap):
            raise CompileError([Diagnostic("--arch and --allow-device-heap are for --target nvptx", None)])
        compilation(file, options_for(opt, target, arch, allow_device_heap, real_time=real_time)).build(emit, out)
        return 0
    return guarded(action)


_PLAIN_ACTIONS = {"run": run_program, "build": build_program}


def main() -> None:
    plain = plain_command(sys.argv[1:])
    if plain is not None:
        command, file, params = plain
        sys.exit(_PLAIN_ACTIONS[command](file, **params))
    from .cli import main as cli_main   # typer, and the compiler on demand
    cli_main()
