"""The `pycoro` command's subcommands: each one's options, declared once,
and the action it runs.

`COMMANDS` is read by both command-line parsers: main.py's plain parser,
which runs `pycoro run`/`pycoro build` without typer (~20 ms to import) and,
from the cache, without the compiler or LLVM, and app.py, which builds
typer's commands from it for every other command line (help, `--x=y`,
mistakes). Light: nothing here imports the compiler until an action runs.
"""
from __future__ import annotations

import _thread   # `threading` (1.2 ms of a cached run's start) adds nothing this one thread needs
import os
import _signal as signal   # `signal` wraps it in enums: 1-2 ms of a light start
import sys

from ..common.record import record

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 70

FLAG, ANY = (), None   # an option's `values`: it takes none / any text
OPT_LEVELS = ("0", "1", "2", "3")
TARGETS = ("native", "nvptx")
EMITS = ("exe", "obj", "shared", "llvm", "lowered", "asm", "ptx")
_DEFAULT_SUFFIX = {"exe": "", "obj": ".o", "shared": ".so", "llvm": ".ll", "lowered": ".ll",
                   "asm": ".s", "ptx": ".ptx"}


@record(frozen=True)
class Option:
    names: tuple[str, ...]          # `-o`, `--output`
    param: str                      # the action's keyword parameter
    help: str
    values: tuple[str, ...] | None = FLAG   # FLAG, ANY or the values it takes
    default: object = False
    level: bool = False             # `-O N` / `-ON`: an optimisation level (an int)
    many: bool = False              # may be given again (`-l m -l z`, or `-lm -lz` as cc takes it): a tuple
    metavar: str = "TEXT"           # what help calls an option's value (ANY: text)


@record(frozen=True)
class Command:
    action: object                  # (file, **options) → exit status
    help: str
    options: tuple[Option, ...]
    plain: bool = False             # main.py runs it without typer when it can
    file_help: str = "the .pc program (`-`: read it from stdin)"   # what its one argument is


OPT = Option(("-O",), "opt", "optimisation level, -O0 … -O3", OPT_LEVELS, 2, level=True)
TARGET = Option(("--target",), "target", "native (this CPU) or nvptx (PTX for NVIDIA GPUs)", TARGETS, "native")
ARCH = Option(("--arch",), "arch", "nvptx: the GPU architecture, sm_XX (default sm_80)", ANY, None,
             metavar="SM_XX")
REAL_TIME = Option(("--real-time",), "real_time",
                   "async programs: `sleep` and `now()` use the wall clock, not virtual time")
TIME_STAGES = Option(("--time-stages",), "time_stages",
                     "print on stderr how long each stage of the compiler took")
CHECK_LEAKS = Option(("--check-leaks",), "check_leaks", "count coroutine frames; fail if any leak")
TRAMPOLINE = Option(("--trampoline",), "trampoline", "symmetric transfer through a resume loop, as on GPUs")
REYIELD = Option(("--reyield",), "reyield", "`yield from` as a loop that yields each value again, as on GPUs "
                 "(a test of GPU-bound code: recursive delegation then costs O(depth) a value)")
OUTPUT = Option(("-o", "--output"), "output", "where to write (`-`: stdout, for llvm, lowered, asm and ptx)",
                ANY, None, metavar="PATH")
TEXT_EMITS = ("llvm", "lowered", "asm", "ptx")
ALLOW_DEVICE_HEAP = Option(("--allow-device-heap",), "allow_device_heap",
                           "nvptx: accept coroutine frames from the device heap")
EMIT = Option(("--emit",), "emit", "what to write: exe (an executable, the default), obj (an object file), "
              "shared (a shared library and its C header), asm (assembly), llvm (LLVM IR as pycoro emits it), "
              "lowered (LLVM IR after the coroutine passes and the pipeline), ptx (PTX, for --target nvptx, "
              "its default); the text ones go to stdout with -o -", EMITS, None)
DEBUG = Option(("-g",), "debug", "DWARF for debuggers: line tables, variables, types (docs/debugging.md)")
TARGET_CPU = Option(("--target-cpu",), "target_cpu", "the CPU native code is for: native (this one's, the "
                    "default, as -march=native), generic (any x86-64: portable executables), or a CPU LLVM knows "
                    "(x86-64-v3, znver4, …)", ANY, "native", metavar="CPU")
LIBRARY = Option(("-l",), "libraries", "a C library for the program's extern fns: linked into an executable, "
                 "loaded for `run` (as cc's -l; repeatable)", ANY, (), many=True, metavar="NAME")
LIBRARY_DIR = Option(("-L",), "library_dirs", "a folder to find -l libraries in first (repeatable)", ANY, (),
                     many=True, metavar="DIR")
DENY_WARNINGS = Option(("--deny-warnings",), "deny_warnings",
                       "make every warning an error (exit status 1), as rustc's -D warnings")


def in_big_stack(action, light: bool = False):
    """Run `action` on a thread with a 512 MiB stack: the parser and checker recurse
    once per nesting level of the program (and a program run in this process gets
    the same stack).

    `threading` is imported here first, on the main thread, unless `light`
    (`pycoro run`: a cached run needs none of it, 1.2 ms, and Ctrl-C ends its
    process at once, SIG_DFL). Imported first on the big-stack thread (by
    the parser, by llvmlite), it took that thread for the main one, and the
    interpreter's exit waited for it: Ctrl-C in a `pycoro build` printed
    KeyboardInterrupt and then let the compilation finish and write its
    output."""
    if not light:
        import threading  # noqa: F401
    outcome: dict = {}
    done = _thread.allocate_lock()
    done.acquire()

    def target():
        try:
            outcome["value"] = action()
        except BaseException as err:  # re-raised on the calling thread
            outcome["error"] = err
        finally:
            done.release()
    _thread.stack_size(512 * 1024 * 1024)
    sys.setrecursionlimit(200_000)
    _thread.start_new_thread(target, ())
    done.acquire()   # (its thread ends right after: nothing of it is left to wait for)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def guarded(action, light: bool = False) -> int:
    """Run a compiler action; its exit status: its own, 1 for diagnostics, 70
    for a bug in pycoro. (`light`: in_big_stack's.)"""
    try:
        status = in_big_stack(action, light)
    except Exception as err:  # noqa: BLE001 - told apart below
        return _failed(err)
    return status or 0


def _failed(err: Exception) -> int:
    # (diagnostics imported here: 1.7 ms of a cached run, which needs it only to fail)
    from ..common.diagnostics import CompileError, LeakError, print_diagnostics
    if isinstance(err, CompileError):
        print_diagnostics(err.diagnostics, err.sources)
        return EXIT_USER_ERROR
    if isinstance(err, LeakError):
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USER_ERROR
    if isinstance(err, RecursionError):
        print("error: program is nested too deeply for pycoro", file=sys.stderr)
        return EXIT_USER_ERROR
    if isinstance(err, BrokenPipeError):
        # the reader went away (`pycoro explain f.pc | head`): nothing more to
        # say, as `build -o - | head` ends; Python's own flush at exit must not
        # meet the closed pipe again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 0
    # every other failure is ours
    print(f"internal compiler error: {type(err).__name__}: {err}", file=sys.stderr)
    if os.environ.get("PYCORO_TRACEBACK"):
        import traceback
        traceback.print_exception(err)
    else:
        print("(set PYCORO_TRACEBACK=1 to see where; please report it)", file=sys.stderr)
    return EXIT_INTERNAL_ERROR


def options_for(opt: int = 2, target: str = "native", arch: str | None = None, allow_device_heap: bool = False,
                trampoline: bool = False, real_time: bool = False, debug: bool = False, target_cpu: str = "native",
                libraries: tuple[str, ...] = (), library_dirs: tuple[str, ...] = (), reyield: bool = False):
    """The compilation options of a command (`pycoro run`'s cache entries are keyed
    by them); the C libraries they name (-l) are loaded into this process, where
    `run` calls them and `build` checks the extern fns it links against them."""
    from ..pipeline.options import DEFAULT_GPU_ARCH, Options, backtraces_wanted
    if arch is not None:
        from ..backend.targets import nvptx_arches   # LLVM: only when asked about GPUs
        if arch not in nvptx_arches():
            from ..common.diagnostics import CompileError, Diagnostic
            raise CompileError([Diagnostic(f"unknown GPU architecture `{arch}`", None,
                                           hint="LLVM's NVPTX backend knows " + ", ".join(nvptx_arches()))])
    options = Options(opt_level=opt, target=target, arch=arch or DEFAULT_GPU_ARCH,
                      allow_device_heap=allow_device_heap, trampoline=trampoline, real_time=real_time,
                      debug=debug or (target == "native" and backtraces_wanted()), target_cpu=target_cpu,
                      libraries=tuple(libraries), library_dirs=tuple(library_dirs), reyield=reyield)
    if options.libraries:
        from ..backend.symbols import load_libraries
        load_libraries(options.libraries, options.library_dirs)
    return options


STDIN = "-"   # the FILE that means: the program is read from stdin


def compilation(file: str, options, deny_warnings: bool = False):
    from ..common.diagnostics import decode_source, print_warnings
    from pathlib import Path
    from ..pipeline.driver import Compilation   # the whole compiler: imported only when needed
    warn = _denied if deny_warnings else print_warnings
    if file == STDIN:   # `pycoro run -`: imports are relative to the current directory
        try:
            if sys.stdin is None:   # (Python's, where descriptor 0 was closed)
                raise OSError("it is closed")
            data = sys.stdin.buffer.read()
        except OSError as err:
            from ..common.diagnostics import CompileError, Diagnostic
            raise CompileError([Diagnostic(f"cannot read the program from stdin: {err.strerror or err}",
                                           None)]) from None
        return Compilation(decode_source(data, "<stdin>"), "<stdin>", Path.cwd(), options, warn)
    return Compilation.from_file(file, options, warn=warn)


def _denied(warnings: list, sources) -> None:
    """--deny-warnings: the warnings are errors (the compilation stops at them).
    Such a command checks before it takes anything from the cache (whose
    entries keep their warnings only as text), so these are diagnostics."""
    from ..common.diagnostics import CompileError, Diagnostic
    denied = ("`--deny-warnings` makes every warning an error", None)
    raise CompileError([Diagnostic(w.message, w.span, "error", w.notes + [denied], w.hint)
                        for w in warnings], sources)


def stage_report(times: list[tuple[str, float]], from_cache: bool = False) -> str:
    """`--time-stages`: each stage's time (a stage that ran twice, summed and counted), and the total."""
    if not times:
        return "no compiler stage ran" + (": the program came from the cache" if from_cache else "")
    total: dict[str, list] = {}
    for name, seconds in times:
        entry = total.setdefault(name, [0.0, 0])
        entry[0] += seconds
        entry[1] += 1
    width = max(len(name) for name in [*total, "total"])
    lines = [f"{name:<{width}}  {seconds * 1000:8.1f} ms" + (f"  ({runs} runs)" if runs > 1 else "")
             for name, (seconds, runs) in total.items()]
    lines.append(f"{'total':<{width}}  {sum(s for _, s in times) * 1000:8.1f} ms")
    return "\n".join(lines)


def _guarded_and_timed(time_stages: bool, work, light: bool = False) -> int:
    """`work(made)` run as `guarded` runs an action (`made`: a list it appends
    the compilations it makes to, or None for a program run from the cache),
    then, with --time-stages, their stages' times on stderr, after any
    diagnostics."""
    made: list = []
    status = guarded(lambda: work(made), light)
    if time_stages:
        if DELEGATED in made:
            return status   # the worker reported its own stages
        times = [t for c in made if c is not None for t in c.stage_times]
        print(stage_report(times, from_cache=None in made), file=sys.stderr)
    return status


# `pycoro run` hands a program the cache does not have to this (main.py sets
# it where a compile server may run: client.delegate); its exit status, or None.
delegate = None
DELEGATED = "compiled by the server"   # what `made` holds for such a run


def run_program(file: str, opt: int = 2, check_leaks: bool = False, trampoline: bool = False,
                real_time: bool = False, time_stages: bool = False, debug: bool = False,
                deny_warnings: bool = False, target_cpu: str = "native", libraries: tuple[str, ...] = (),
                library_dirs: tuple[str, ...] = (), reyield: bool = False) -> int:
    """`pycoro run`: the program's exit status. From the cache when it was
    compiled before (rerun.py: no compiler, no LLVM), else compiled now."""
    # Compiled code never returns to Python's signal check: let Ctrl-C end the
    # program the way it ends a native one.
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    def work(made: list):
        from ..pipeline.launch import take_command
        from ..pipeline.rerun import run_cached
        launch_command = take_command()   # bin/pycoro's, for `pycoro run FILE` alone
        options = options_for(opt, trampoline=trampoline, real_time=real_time, debug=debug, target_cpu=target_cpu,
                              libraries=libraries, library_dirs=library_dirs, reyield=reyield)
        # --deny-warnings: compiled (its object code may still come from the
        # cache), for its warnings are diagnostics only in a check
        status = None if file == STDIN or deny_warnings else run_cached(file, options, check_leaks, launch_command)
        if status is None and delegate is not None:
            status = delegate()   # a compile server's worker compiles and runs it (and times it)
            if status is not None:
                made.append(DELEGATED)
                if launch_command is not None:
                    from .client import tell_launcher
                    tell_launcher(launch_command)
        if status is None:
            made.append(compilation(file, options, deny_warnings))
            if deny_warnings:
                made[-1].check()   # the warnings, as errors (a cache entry keeps only their text)
            status = made[-1].run(check_leaks)
        elif not made:
            made.append(None)   # from the cache
        if launch_command is not None and made[-1] is not None:   # compiled now: the next run needs no Python
            from ..pipeline.rerun import index_for_launcher
            index_for_launcher(file, options, launch_command)
        return status & 0xFF
    return _guarded_and_timed(time_stages, work, light=True)


def build_program(file: str, output: str | None = None, target: str = "native", arch: str | None = None,
                  allow_device_heap: bool = False, emit: str | None = None, opt: int = 2,
                  real_time: bool = False, time_stages: bool = False, debug: bool = False,
                  deny_warnings: bool = False, target_cpu: str = "native", libraries: tuple[str, ...] = (),
                  library_dirs: tuple[str, ...] = ()) -> int:
    """`pycoro build`: writes the artefact; the exit status."""
    from pathlib import Path   # not at the top: a cached `pycoro run` does without it
    emit = emit or ("ptx" if target == "nvptx" else "exe")
    out = output or Path(file).with_suffix(_DEFAULT_SUFFIX[emit]).name or "a.out"
    if output is None and emit == "shared":
        out = f"lib{out}"   # gen.pc → libgen.so (and gen.h)

    def work(made: list):
        from ..common.diagnostics import CompileError, Diagnostic
        if emit == "ptx" and target != "nvptx":
            raise CompileError([Diagnostic("--emit ptx without --target nvptx: PTX is for GPUs", None)])
        if target != "nvptx" and (arch or allow_device_heap):
            raise CompileError([Diagnostic("--arch and --allow-device-heap are for --target nvptx", None)])
        options = options_for(opt, target, arch, allow_device_heap, real_time=real_time, debug=debug,
                              target_cpu=target_cpu, libraries=libraries, library_dirs=library_dirs)
        made.append(compilation(file, options, deny_warnings))
        if out != "-":
            made[-1].build(emit, out)
            return 0
        if emit not in TEXT_EMITS:
            raise CompileError([Diagnostic(f"-o - writes text to stdout: --emit {emit} is not text", None,
                                           hint="--emit " + ", ".join(TEXT_EMITS) + " may go to stdout")])
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:   # the artefact as any build writes it, then shown
            made[-1].build(emit, os.path.join(tmp, "out"))
            sys.stdout.write(Path(tmp, "out").read_text())
        return 0
    return _guarded_and_timed(time_stages, work)


def check_program(file: str, target: str = "native", deny_warnings: bool = False) -> int:
    """`pycoro check`."""
    return guarded(lambda: (compilation(file, options_for(target=target), deny_warnings).check(), 0)[1])


def explain_program(file: str, opt: int = 2, target: str = "native", arch: str | None = None) -> int:
    """`pycoro explain`: the table of frames and call sites (explain.py) on stdout."""
    def action():
        from .explain import render_explain
        frames, sites = compilation(file, options_for(opt, target, arch)).explain()
        print(render_explain(file, opt, frames, sites, gpu=target == "nvptx"))
        return 0
    return guarded(action)


def gdb_program(file: str) -> int:
    """`pycoro gdb`: gdb on an executable, with pycoro's printers loaded."""
    import shutil
    from ..debugger import GDB_SCRIPT
    gdb = shutil.which("gdb")
    if gdb is None:
        print("error: gdb is not installed (Debian: apt install gdb)", file=sys.stderr)
        return EXIT_USER_ERROR
    # The program's own copy of the printers (its `.debug_gdb_scripts`) is
    # trusted, rather than declined with a page of advice; the package's copy,
    # loaded after it, replaces it (and serves programs built before it existed).
    os.execv(gdb, [gdb, "-q", "-iex", f"add-auto-load-safe-path {os.path.abspath(file)}", "-x", str(GDB_SCRIPT), file])


COMMANDS = {
    "run": Command(run_program, "Compile FILE in memory (JIT) and run `main`; exit with its status.",
                   (OPT, DEBUG, CHECK_LEAKS, TRAMPOLINE, REYIELD, REAL_TIME, TIME_STAGES, DENY_WARNINGS,
                    TARGET_CPU, LIBRARY, LIBRARY_DIR),
                   plain=True),
    "build": Command(build_program, "Write an artefact: a native executable, a shared library with its C "
                     "header, or PTX for --target nvptx.",
                     (OUTPUT, TARGET, ARCH, ALLOW_DEVICE_HEAP, EMIT, OPT, DEBUG, REAL_TIME, TIME_STAGES,
                      DENY_WARNINGS, TARGET_CPU, LIBRARY, LIBRARY_DIR), plain=True),
    "check": Command(check_program, "Parse and type-check FILE only.", (TARGET, DENY_WARNINGS), plain=True),
    "explain": Command(explain_program, "Report coroutine frames, their ABIs, and heap elision per call site.",
                       (OPT, TARGET, ARCH), plain=True),
    "gdb": Command(gdb_program, "Debug FILE, an executable built with -g, in gdb with pycoro's printers for "
                   "coroutine handles and its `pycoro chain` command.", (), file_help="an executable built with `pycoro build -g`"),
}


def plain_command(argv: list[str]) -> tuple[str, str, dict] | None:
    """`run`, `build`, `check` or `explain` and FILE with only their options,
    as separate words (`-O N` and `-ON` too): the command, the file and the parameters given;
    None for any other command line (app.py's typer parses it, and says what
    is wrong with it)."""
    if not argv or argv[0] not in COMMANDS or not COMMANDS[argv[0]].plain:
        return None
    options = {name: option for option in COMMANDS[argv[0]].options for name in option.names}
    file, params = None, {}
    args = iter(argv[1:])
    for arg in args:
        option = options.get(arg) or options.get(arg[:2])
        if option is not None and option.many:   # `-l m` or `-lm`
            value = arg[2:] if arg not in option.names else next(args, None)
            if not value or value.startswith("-"):
                return None
            params[option.param] = (*params.get(option.param, ()), value)
        elif option is not None and option.level:
            level = arg[2:] or next(args, None)
            if level not in OPT_LEVELS:
                return None
            params[option.param] = int(level)
        elif option is not None and arg in option.names:
            value = True if option.values is FLAG else next(args, None)
            if value is None or (option.values is ANY and value.startswith("-")) \
                    or (option.values and value not in option.values):
                return None
            params[option.param] = value
        elif arg.startswith("-") or file is not None:
            return None
        else:
            file = arg
    return (argv[0], file, params) if file is not None else None
