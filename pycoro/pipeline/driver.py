"""One compilation: options in, the stages called in order, artefacts out.

    parse → check → lower (LLVM IR) → link the runtime → verify → pipeline
          → (native) inline ramps, preserve_none resume functions → emit

Each stage is a method named for it that computes its product once, from
its predecessor's product, and keeps it: an nvptx build, a shared library
and `pycoro.compile` parse and check a program once, and an nvptx build runs
the pipeline twice only when the trampoline is really needed. Each stage's
time is kept in `stage_times` (`pycoro build --time-stages` prints them).
Invalid IR is our bug, never the user's: it is caught here and reported as an
internal compiler error before LLVM can abort the process.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import shlex
import time
from pathlib import Path

import llvmlite.binding as llvm

from ..common import cache
from . import rerun
from ..backend import backtrace, clib, cold_runtime, jit, link, symbols, targets
from ..common.diagnostics import (CompileError, Diagnostic, LeakError, Reporter, Sources, Span, decode_source,
                                  in_source_order, render_all)
from ..frontend import ast, exports, literals, python_entries, recursion, unreachable, unused
from ..frontend.check import ProgramChecker, check_program
from ..frontend.parser import keep_parsed, parse, parse_cached
from ..frontend.gpu import GPU_TARGETS
from ..frontend.program import CheckedProgram, DirectCall, FnInstance
from ..frontend.resolve import load, span_of
from ..common.paths import WRAPPERS_FILE, in_stdlib, stdlib_dir, stdlib_display
from ..common.record import replace
from ..middle import gpu, intrinsics
from ..middle.irgen import ModuleGen
from ..middle.irgen.debuginfo import dwarf_path
from ..middle.coro import first_resume, resume_cc
from ..middle.coro.rewrite import rewrite
from ..middle.devirtualise import devirtualise_steps
from ..middle.passes import inline_ramps, licm_promotion_safe, run_gpu_pipeline, run_pipeline
from ..middle.runtime import LIVE_FRAMES, SHARED_STATE
from .options import Options

__all__ = ["Compilation", "InternalError", "LeakError", "Options"]


class InternalError(Exception):
    """A bug in pycoro (the CLI reports it as `internal compiler error`, status 70)."""


class Compilation:
    def __init__(self, source: str, display: str, base_dir: Path, options: Options = Options(), warn=None):
        self.source = source
        self.display = display
        self.base_dir = base_dir
        self.options = options
        # Warnings (frontend/recursion.py) go to `warn(diagnostics, sources)` as
        # they are found (`sources`: to render their lines), and to
        # `warn(text, None)` again from a cache entry, where given.
        self.warn = warn
        self.warnings: list[Diagnostic] = []
        # what stays visible after linking the runtime (lower() adds the kernels)
        self.entry_points = {"main", LIVE_FRAMES, *(f"pc.{name}" for name in options.exports)}
        self.sources = Sources({display: source})   # every file read, for diagnostics
        self.stage_times: list[tuple[str, float]] = []   # (stage, seconds), in the order they ran
        self.imported: list[Path] = []   # the program's own files it imports (for the module cache)
        # the products of the stages, computed once
        self._modules: list[ast.Module] | None = None
        self._checkers: dict[bool, tuple[ProgramChecker, CheckedProgram]] = {}
        self._lowered_ir: dict[bool, str] = {}
        # of the lowered program's coroutines, for the backtrace table (ModuleGen.coroutine_links)
        self.coroutine_links: dict[str, int] = {}
        self.resumed_in_loops: set[str] = set()   # (ModuleGen.resumed_in_loops)
        self.stream_steps = False   # a stream's step to devirtualise (middle/devirtualise.py)
        self.function_value_calls: dict[bool, int] = {}   # per lowering (trampoline or not): emitted calls through fn values
        self._optimised: dict[tuple[bool, bool], llvm.ModuleRef] = {}
        self._exports: dict[bool, tuple[list[exports.Export], Compilation]] = {}   # by `python`
        self.unexported: dict[str, str] = {}   # the top-level functions not exported, and why (exports.unexported)

    @classmethod
    def from_file(cls, path: str, options: Options = Options(), warn=None) -> "Compilation":
        p = Path(path)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise CompileError([Diagnostic(f"no such file: {path}", None)]) from None
        except OSError as err:
            why = (err.strerror or str(err)).lower()   # "is a directory", not "[Errno 21] Is a directory: 'x'"
            raise CompileError([Diagnostic(f"cannot read {path}: {why}", None)]) from None
        return cls(decode_source(data, path), path, p.resolve().parent, options, warn)

    @contextlib.contextmanager
    def stage(self, name: str):
        """Time one stage; a CompileError from below the driver gets this
        compilation's sources, to show the lines it points at."""
        start = time.perf_counter()
        try:
            yield
        except CompileError as err:
            raise err.with_sources(self.sources) from None
        finally:
            self.stage_times.append((name, time.perf_counter() - start))

    # ---- stages
    def parse(self) -> list[ast.Module]:
        if self._modules is None:
            # std/async comes with an `async fn` only where one can run (not on GPUs)
            async_prelude = not (self.gpu or self.options.gpu_emulation)
            with self.stage("parse"):
                self._modules = load(self.display, self.source, self.base_dir, read=self.imported,
                                     async_prelude=async_prelude, sources=self.sources)
        return self._modules

    def check(self, need_main: bool | None = None) -> CheckedProgram:
        need_main = self.options.need_main if need_main is None else need_main
        return self._checker(need_main)[1]

    def _checker(self, need_main: bool) -> tuple[ProgramChecker, CheckedProgram]:
        if need_main not in self._checkers:
            modules = self.parse()
            with self.stage("check"):
                reporter = Reporter()
                # Kernels run on the CPU obey the GPU's rules, so results can be compared.
                rules = "nvptx" if self.options.gpu_emulation else self.options.target
                checker = ProgramChecker(modules, reporter, rules)
                program = checker.run(need_main and rules not in GPU_TARGETS, self.display)
                reporter.check()
                self._warn(in_source_order(unused.warnings(program) + unreachable.warnings(program)
                                            + recursion.warnings(program) + literals.warnings(program)))
            self._checkers[need_main] = checker, program
        return self._checkers[need_main]

    @property
    def checked(self) -> CheckedProgram:
        return self.check()

    def _warn(self, found: list[Diagnostic]) -> None:
        """Report warnings not reported before."""
        new = [d for d in found if all((d.message, d.span) != (w.message, w.span) for w in self.warnings)]
        self.warnings += new
        if new and self.warn is not None:
            self.warn(new, self.sources)

    @property
    def warnings_text(self) -> str:
        """The warnings as a cache entry keeps them, to show again when it is used."""
        return render_all(self.warnings, sources=self.sources)

    def lower(self) -> str:
        """LLVM IR as the frontend emits it (`--emit llvm`)."""
        return self._lower(self.trampoline)

    def _lower(self, trampoline: bool) -> str:
        if trampoline not in self._lowered_ir:
            program = self.check()
            with self.stage("lower"):
                kernels = [f.decl.name for f in program.functions if f.decl.kind == "kernel"]
                self.entry_points |= set(map(gpu.launcher_name, kernels)) if self.options.gpu_emulation \
                    else set(kernels)
                generator = self._generator(program, trampoline)
                module = generator.generate(entry=True, internal=True)
                self.coroutine_links.update(generator.coroutine_links)
                self.resumed_in_loops |= generator.resumed_in_loops
                self.stream_steps |= generator.stream_steps
                self.function_value_calls[trampoline] = generator.function_value_calls
                module.triple = targets.triple_for(self.options.target)
                self._lowered_ir[trampoline] = str(module)
        return self._lowered_ir[trampoline]

    def _generator(self, program: CheckedProgram, trampoline: bool, explain: bool = False) -> ModuleGen:
        o = self.options
        return ModuleGen(program, self.display, explain=explain, trampoline=trampoline,
                         gpu_emulation=o.gpu_emulation, exported=frozenset(o.exports),
                         real_time=o.real_time, inline_bodies=o.opt_level > 0,
                         internal_iteration=o.opt_level > 0 and not self.gpu and not o.gpu_emulation,
                         debug=o.debug and not explain and not self.gpu, reyield=self.gpu or o.reyield)

    @property
    def gpu(self) -> bool:
        return self.options.target == "nvptx"

    @functools.cached_property
    def trampoline(self) -> bool:
        """Whether symmetric transfer goes through a resume loop (coro/trampoline.py).

        NVPTX has no tail calls, so a transfer that survives the pipeline as a
        `musttail` call would take a stack frame per hop there; such a GPU
        program is compiled again with the loop. Only then: the loop's code can
        keep CoroElide from placing a pipeline of generators, which never
        transfer once their frames are placed."""
        if self.options.trampoline:
            return True
        if not self.gpu:
            return False
        return "musttail call" in str(self._optimised_module(trampoline=False, jit=False))

    def _optimised_module(self, trampoline: bool, jit: bool) -> llvm.ModuleRef:
        """The program lowered, linked with the runtime and through the pipeline
        (the product the trampoline's question and an nvptx build share)."""
        key = trampoline, jit
        if key not in self._optimised:
            text = self._lower(trampoline)
            promote = self.function_value_calls[trampoline] == 0
            self._optimised[key] = self.optimise(self.link_runtime(text), self.machine(jit), promote=promote)
        return self._optimised[key]

    def machine(self, jit: bool = False) -> llvm.TargetMachine:
        return self.options.machine(jit)

    def link_runtime(self, ir_text: str) -> llvm.ModuleRef:
        with self.stage("link runtime"):
            return self._link_runtime(ir_text)

    def _link_runtime(self, ir_text: str) -> llvm.ModuleRef:
        module = _parse_ir(ir_text, self.display)
        runtime = _parse_ir(str(gpu.runtime_module()), "<runtime>") if self.gpu else _native_runtime()
        # The runtime's state (frame free lists, counters) is private to the
        # program: internal globals are addressed directly, not through the GOT.
        # What the program's code uses too (SHARED_STATE) is linked by name
        # first, then made internal.
        shared_state = set(SHARED_STATE.values())
        for state in runtime.global_variables:
            if not state.is_declaration and not state.name.startswith("llvm.") and state.name not in shared_state:
                state.linkage = "internal"   # (llvm.used stays appending)
        if not self.gpu:
            # The runtime's cold code is assembly that names what it uses in the
            # runtime (cold_runtime.py): a program's own function or variable of
            # the same name must not take that name in the linked module.
            shared = _cold_split().shared
            for value in [*module.functions, *module.global_variables]:
                if not value.is_declaration and value.name in shared:
                    value.name += ".program"
        module.link_in(runtime)
        for state in module.global_variables:
            if state.name in shared_state:
                state.linkage = "internal"
        if not self.gpu:
            _never_merged(module)
        kept = set(self.entry_points)
        if self.options.debug and not self.gpu:
            # what reads the backtrace table (optnone: the pipeline passes it
            # by), named only by the table, which is linked in after the
            # pipeline (backend/backtrace.py)
            reporter = _parse_ir(backtrace_ir(), "<runtime backtraces>")
            for state in reporter.global_variables:
                if not state.is_declaration:
                    state.linkage = "internal"
            module.link_in(reporter)
            kept |= set(backtrace.ENTRY_POINTS)
        # Only the entry points (C's `main`, kernels) are seen from outside: the
        # pipeline may then drop the runtime functions a program does not use,
        # and inline the rest.
        for fn in module.functions:
            if not fn.is_declaration and fn.name not in kept:
                fn.linkage = "internal"
            elif fn.name in backtrace.ENTRY_POINTS:
                fn.visibility = "hidden"
        return module

    def optimise(self, module: llvm.ModuleRef, machine: llvm.TargetMachine,
                 level: int | None = None, promote: bool | None = None) -> llvm.ModuleRef:
        """Target the module, verify it, and run the pipeline (at -O<level>, default the option's).
        `promote`: whether LICM may promote memory (middle/passes.licm_promotion_safe;
        by default, whether the program calls no function value anywhere)."""
        if promote is None:
            promote = licm_promotion_safe(self.checked)
        with self.stage("optimise"):
            module.triple = machine.triple
            module.data_layout = str(machine.target_data)
            _verify(module)
            level = self.options.opt_level if level is None else level
            if self.gpu:
                run_gpu_pipeline(module, machine, targets.native_machine(level), level, promote)
            else:
                run_pipeline(module, machine, level, licm_promotion=promote)
        return module

    # ---- artefacts
    def lowered(self, jit_mode: bool = False) -> tuple[llvm.ModuleRef, llvm.TargetMachine]:
        machine = self.machine(jit=jit_mode)
        module = self._optimised_module(self.trampoline, jit_mode)
        # after the pipeline, for code that runs (not for `explain`, which
        # reads frames and allocation sites back from the pipeline's output)
        devirtualise = self.options.opt_level > 0 and self.stream_steps   # (GPU builds too)
        if devirtualise or not self.gpu:
            del self._optimised[self.trampoline, jit_mode]   # changed below: not the pipeline's product any more
        if devirtualise:
            with self.stage("devirtualise"):
                promote = self.function_value_calls[self.trampoline] == 0
                module = devirtualise_steps(module, lambda m: self.optimise(m, machine, promote=promote))
        if not self.gpu:
            with self.stage("place ramps"):
                inline_ramps(module, machine, self.options.opt_level)
                if self.options.opt_level > 0:
                    calling_convention = [resume_cc.preserve_none_text] if resume_cc.applies(machine.triple) else []
                    candidates = frozenset(self.resumed_in_loops)
                    module = rewrite(module, [*calling_convention,
                                              lambda text: first_resume.split_first_resumes(text, candidates),
                                              *([_without_entry_values] if self.options.debug else [])])
            with self.stage("cold code"):   # the runtime's, compiled once (backend/cold_runtime.py)
                cold_runtime.attach(module, _cold_assembly(machine, self.options, jit_mode))
        if self.gpu and not self.options.allow_device_heap:
            self._require_local_frames(module)
        return module, machine

    def _require_local_frames(self, module: llvm.ModuleRef) -> None:
        """On a GPU a frame must live in the thread's local memory: a kernel that
        still allocates one from the device heap after the pipeline is refused,
        naming each call site whose frame was not placed (LANGUAGE.md §8)."""
        if not _calls(str(module), "malloc"):
            return
        frames, sites = self.explain(built=module)
        sizes = {f.coroutine: f.size or f.layout_size for f in frames}
        # placing a frame in its caller's is the optimiser's work (CoroElide): -O0 does none
        hint = "at -O0 no frame is placed in local memory: build with -O1 or more" if self.options.opt_level == 0 \
            else ("GPU frames must be provably temporary: consume the coroutine where it is created "
                  "(`for v in g(…)`, `await t(…)`), or build with --allow-device-heap")
        # a returned-continuation frame bigger than its promise's buffer is
        # allocated by LLVM's retcon lowering wherever the buffer is
        overflowing = [Diagnostic(
            f"the frame of coroutine `{s.callee}` (called in `{s.caller}`) would come from the device heap: "
            f"it takes {sizes.get(s.callee)} bytes, more than the {s.buffer}-byte buffer of its promise",
            s.span, hint="keep less alive across its `yield`s, or give it a promise of your own with a bigger "
                         "`abi retcon(N)`") for s in sites if s.overflows]
        raise CompileError(overflowing + [
            Diagnostic(f"the frame of coroutine `{s.callee}` (called in `{s.caller}`) would come "
                       "from the device heap: it could not be placed in the thread's local memory",
                       s.span, hint=hint) for s in sites if not s.elided] or
            [Diagnostic("a coroutine frame would come from the device heap", None,
                        hint="build with --allow-device-heap to accept it")], self.sources)

    def explain(self, built: llvm.ModuleRef | None = None) -> tuple[list, list]:
        """Frames and elision, read back from LLVM's output (middle/explain.py).
        `built`: the module the build made, if there is one."""
        from ..middle import explain
        program = self.check()
        trampoline = self.trampoline
        with self.stage("lower"):
            gen = self._generator(program, trampoline, explain=True)
            # every function stays for its report, but on a GPU only the
            # kernels' code runs: a copy of a function inlined into them, kept
            # for no caller, was reported as the device heap the build refuses not
            text = str(gen.generate(entry=True, internal=self.gpu))
        machine = self.machine()
        lowered = {level: self.optimise(_parse_ir(text, self.display), machine, level)
                   for level in (0, self.options.opt_level)}
        # The program's own coroutines, and the library's ones it calls.
        called = {id(callee) for _, _, callee in gen.sites}
        coroutines = [f for f in program.functions if f.coro is not None and
                      (id(f) in called or not in_stdlib(f.decl.span.file))]
        o2_text = str(lowered[self.options.opt_level])
        frames = explain.frames(lowered[0], machine.target_data, coroutines, o2_text)
        # the program's own async fns, and the library's ones it awaits as calls or spawns
        awaited = {id(callee) for _, _, callee, kind in gen.async_sites if kind != "inlined"}
        async_fns = [f for f in program.functions if f.is_async and
                     (id(f) in awaited or not in_stdlib(f.decl.span.file))]
        contexts = explain.async_frames(lowered[0], machine.target_data, async_fns, o2_text)
        sites = explain.sites(o2_text, gen.sites, frames, gen.frameless_sites)
        if self.gpu:
            # Explain's coroutines take a call-site argument, which changes what
            # LLVM inlines: a frame it reports from the heap may be one the
            # build places. Where the build allocates none, it placed them all.
            if built is None:
                built = self._optimised_module(trampoline, jit=False)
            if not _calls(str(built), "malloc"):
                sites = [replace(s, elided=True) if s.no_frame is None and s.async_kind is None else s
                         for s in sites]
        return frames + contexts, sites + explain.async_sites(gen.async_sites, contexts)

    def run(self, check_leaks: bool = False, use_cache: bool = True) -> int:
        """Compile for this process (or take the object code from the on-disk
        cache, as Python takes a .pyc) and call `main`. The cache keeps the
        code linked as a shared library too, which a later `pycoro run` loads
        without LLVM (rerun.py)."""
        def compile() -> tuple[bytes, dict]:
            module, machine = self.lowered(jit_mode=True)
            externs = self.require_externs("c")   # as `pycoro build` links: the two agree
            code = self.object_code(module, machine)
            return code, {"frame_counter": LIVE_FRAMES, "externs": externs,
                                                 "warnings": self.warnings_text}
        code, meta, _ = self.cached_for_process(rerun.KIND, compile, use_cache, link_shared=True)
        return rerun.run_object(code, meta, self.options, check_leaks)

    def load(self, use_cache: bool = True) -> tuple[jit.Loaded, bool]:
        """Compile for the host and load into this process (pycoro.gpu's kernels
        on the CPU), the object code from the on-disk cache where it has it
        (the second item: whether it did)."""
        def compile() -> tuple[bytes, dict]:
            module, machine = self.lowered(jit_mode=True)
            externs = self.require_externs("process")
            return self.object_code(module, machine), {"externs": externs, "warnings": self.warnings_text}
        code, _, hit = self.cached_for_process("loaded", compile, use_cache)
        return jit.Loaded.from_object(code, targets.native_machine(self.options.opt_level, jit=True)), hit

    def ptx(self, use_cache: bool = True) -> tuple[str, bool]:
        """The PTX of an nvptx compilation (pycoro.gpu loads it), from the
        on-disk cache where it has it (keyed by the options: the arch too;
        the second item: whether it did)."""
        def compile() -> tuple[bytes, dict]:
            module, machine = self.lowered()
            return machine.emit_assembly(module).encode(), {"warnings": self.warnings_text}
        code, meta, hit = self.cached_object("ptx", compile, use_cache)
        self._warn_again(hit, meta)
        return code.decode(), hit

    def for_arch(self, arch: str) -> "Compilation":
        """The same program for another GPU architecture: what the frontend
        made (it does not depend on the architecture) is shared, not redone."""
        other = Compilation(self.source, self.display, self.base_dir, replace(self.options, arch=arch), self.warn)
        other.sources, other.stage_times, other.imported, other.warnings = \
            self.sources, self.stage_times, self.imported, self.warnings
        other._modules, other._checkers = self.parse(), self._checkers
        return other

    def _warn_again(self, hit: bool, meta: dict) -> None:
        """Show again the warnings a cache entry that was used keeps."""
        if hit and meta.get("warnings") and self.warn is not None:
            self.warn(meta["warnings"], None)

    def with_exports(self, python: bool = False) -> tuple[list[exports.Export], "Compilation"]:
        """The program's exports (LANGUAGE.md §9), and a compilation of the
        program with their C-ABI wrappers added and kept visible (`python`:
        and the native entry points CPython calls, python_entries.py)."""
        if python not in self._exports:
            found, checker, wrapped, wrappers = self._wrapped
            kept = exports.wrapper_symbols(found) + (python_entries.symbols(found) if python else ())
            options = replace(self.options, need_main=False, exports=kept)
            library = Compilation(self.source, self.display, self.base_dir, options, self.warn)
            library.sources, library.stage_times, library.imported = self.sources, self.stage_times, self.imported
            library.warnings = self.warnings
            library._modules = [*self.parse(), wrappers]
            library._checkers[False] = checker, wrapped
            self._exports[python] = found, library
        return self._exports[python]

    @functools.cached_property
    def _wrapped(self):
        """The wrappers of the exports (both kinds: a library leaves the native
        entry points out, unused), checked as one more module of the program
        already checked: the program is parsed and checked once, and the
        wrappers once (the checker they extend is this compilation's)."""
        checker, program = self._checker(need_main=False)
        found = exports.exports(program, self.sources.texts)
        self.unexported = exports.unexported(self.parse(), program, found)
        text = "\n".join([exports.wrapper_source(found), exports.guarded_source(found), python_entries.source(found)])
        with self.stage("check wrappers"):
            wrappers = parse(text + "\n", WRAPPERS_FILE)
            reporter = Reporter()
            wrapped = checker.extend(wrappers, reporter)
            if reporter.failed:
                raise InternalError("the export wrappers do not check:\n" + render_all(reporter.diagnostics))
        return found, checker, wrapped, wrappers

    def export_object(self, use_cache: bool = True) -> tuple[list[exports.Export], bytes, bool]:
        """The program's exports and the object code of it with their wrappers,
        compiled for loading into this process (pycoro.embed); the third item
        says whether it came from the on-disk cache (cache.py) instead."""
        def compile() -> tuple[bytes, dict]:
            found, library = self.with_exports(python=True)
            module, machine = library.lowered(jit_mode=True)
            externs = library.require_externs("process")   # where the code will run
            code = library.object_code(module, machine)
            return code, {"exports": [e.to_json() for e in found], "externs": externs,
                          "warnings": self.warnings_text, "unexported": self.unexported}
        code, meta, hit = self.cached_for_process("module", compile, use_cache)
        self.unexported = meta.get("unexported", {})
        return [exports.Export.from_json(e) for e in meta["exports"]], code, hit

    def require_externs(self, where: str) -> list[str]:
        """The C functions the checked program calls (or takes the address of),
        anywhere in its code; each must exist in scope `where`
        (backend/symbols.py: "c" or "process"), else a CompileError at its
        `extern fn` declaration. An `extern fn` only declared may be missing."""
        used = _used_externs(self.checked)
        missing = [symbol for symbol in used if not symbols.defined(symbol, where)]
        if missing:
            raise CompileError([_missing_extern(symbol, *used[symbol], where) for symbol in missing], self.sources)
        return sorted(used)

    def cached_object(self, kind: str, compile, use_cache: bool, link_shared: bool = False,
                      valid=None) -> tuple[bytes, object, bool]:
        """`compile()`'s object code and metadata (JSON), or the cache's
        (cache.object_key says what an entry is keyed by; `valid(meta)`, where
        given, must hold for an entry to be used); `link_shared`: a new entry
        keeps the code linked as a shared library too."""
        digest = cache.object_key(kind, self.source, self.base_dir, self.options, self.display)
        if use_cache:
            hit = cache.load_object(kind, digest)
            if hit is not None and (valid is None or valid(hit[1])):
                return hit[0], hit[1], True
        code, meta = compile()
        if use_cache:
            shared = link.shared_from_object(code) if link_shared else None
            cache.store_object(kind, digest, code, meta, self.imported, shared)
        return code, meta, False

    def cached_for_process(self, kind: str, compile, use_cache: bool,
                           link_shared: bool = False) -> tuple[bytes, object, bool]:
        """cached_object, for code that runs in this process: an entry whose C
        functions (its metadata's "externs") this process lacks is compiled
        again, to say so (as rerun.py does); an entry used shows its warnings
        again."""
        code, meta, hit = self.cached_object(kind, compile, use_cache, link_shared,
                                             valid=lambda meta: symbols.all_defined(meta["externs"], "process"))
        self._warn_again(hit, meta)
        return code, meta, hit

    def shared_library(self, output: str) -> str:
        """Write a shared library of the program's exports and its C header
        (backend/clib.py); return the header's path."""
        found, library = self.with_exports()
        prefix = clib.prefix_for(output)
        names = clib.c_names(found, prefix)
        module, machine = library.lowered()
        clib.expose(module, {**{f"pc.{w}": c for w, c in names.items()}, LIVE_FRAMES: f"{prefix}_live_frames",
                             **{entry: entry for entry in backtrace.ENTRY_POINTS}})   # (hidden: for the table)
        link.write_shared(self.object_code(module, machine), output)
        header = clib.header_path(output, prefix)
        Path(header).write_text(clib.header(found, prefix, self.display))
        if self.warn is not None:
            for name, why in self.unexported.items():
                self.warn(f"note: `{name}` is not in the library: {why}", None)
        return header

    def build(self, emit: str, output: str) -> None:
        """Write the artefact `emit` to `output`. A path that cannot be written
        is the user's error (status 1), found before compiling where it can be
        (as cc and rustc, pycoro creates no directories)."""
        shared = emit == "shared" and self.options.target == "native"
        paths = [output, clib.header_path(output, clib.prefix_for(output))] if shared else [output]
        for path in paths:
            _require_writable(path)
        try:
            self._build(emit, output, shared)
        except OSError as err:
            if err.filename not in paths:
                raise
            raise CompileError([_unwritable(err.filename, (err.strerror or str(err)).lower())]) from None

    def _build(self, emit: str, output: str, shared: bool) -> None:
        if shared:
            self.shared_library(output)
            return
        writers = _WRITERS[self.options.target]
        if emit != "llvm" and emit not in writers:
            raise CompileError([Diagnostic(
                f"--emit {emit} is not available for --target {self.options.target} "
                f"(use {', '.join(sorted([*writers, 'llvm']))})", None)])
        if emit == "llvm":
            text = self.lower()
            _verify(_parse_ir(text, self.display))  # never write IR LLVM would reject
            Path(output).write_text(text)
            return
        module, machine = self.lowered()
        if emit == "exe":
            self.require_externs("c")   # what `cc -lm` links; an object file may leave them undefined
        if emit == "exe":
            link.write_executable(self.object_code(module, machine), output, self.options.libraries,
                                  self.options.library_dirs)
            return
        if emit in _FROM_OBJECT_CODE:
            writers[emit](self.object_code(module, machine), output)
            return
        if not self.gpu:
            backtrace.link_empty(module, machine)   # what the runtime refers to (no object code to read)
        with self.stage("emit"):
            writers[emit](module, machine, output)

    def object_code(self, module: llvm.ModuleRef, machine: llvm.TargetMachine) -> bytes:
        """Native object code of a lowered module, with the table of its
        backtraces (backend/backtrace.py: built from its DWARF with -g)."""
        with self.stage("emit"):
            return backtrace.emit_object(module, machine, self.options.debug, self._dwarf_file_names(),
                                         self.coroutine_links)

    def _dwarf_file_names(self) -> dict[str, str]:
        """How the DWARF names each source file → how diagnostics and panics name it."""
        return {os.path.join(*dwarf_path(display)): display for display in self.sources.texts}


def _without_entry_values(text: str) -> str:
    """CoroSplit describes an async function's variables in its context by the
    context register's entry value (`DW_OP_LLVM_entry_value, 1, …`); where
    instruction selection then makes such a location indirect, LLVM 22
    asserts ("not an expression", MachineInstr.cpp) and aborts. Described by
    the register's current value instead, the variable is shown while the
    context is live, which is where a debugger stops in the body."""
    return text.replace("DW_OP_LLVM_entry_value, 1, ", "")


def _used_externs(program: CheckedProgram) -> dict[str, tuple[ast.FnDecl, Span]]:
    """symbol → (its `extern fn` declaration, the first place the program's
    code calls it or takes its address), for every C function it uses."""
    used: dict[str, tuple[ast.FnDecl, Span]] = {}
    for inst in program.functions:
        targets = [(call.callee.span, target.fn) for call, target in inst.calls.items()
                   if isinstance(target, DirectCall)]
        targets += [(name.span, target) for name, target in inst.refs.items() if isinstance(target, FnInstance)]
        for span, fn in targets:
            if not fn.is_extern:
                continue
            decl, first = used.get(fn.symbol, (fn.decl, span))
            if span.file == first.file and (span.line, span.col) < (first.line, first.col):
                first = span
            used[fn.symbol] = (decl, first)
    return used


def _missing_extern(symbol: str, decl: ast.FnDecl, use: Span, where: str) -> Diagnostic:
    near = symbols.suggestion(symbol, where)
    if near is not None:
        hint = f"did you mean `{near}`?"
    elif where == "c":
        hint = "`pycoro run` and `pycoro build` link the C and math libraries (libc, libm): give others with -l NAME"
    else:
        hint = ("load the library that defines it into Python first: "
                "ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)")
    place = symbols.C_LIBRARIES if where == "c" else "this process"
    return Diagnostic(f"cannot find the C function `{symbol}` in {place}", span_of(decl),
                      notes=[("used here", use)], hint=hint)


def _unwritable(path: str, why: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(f"cannot write {path}: {why}", None, hint=hint)


def _require_writable(path: str) -> None:
    """That `path` can be written (a file in an existing, writable directory)."""
    target = Path(path)
    folder = target.parent
    if not folder.exists():
        command = f"mkdir -p {shlex.quote(str(folder))}"
        raise CompileError([_unwritable(path, f"no such directory {folder}", hint=f"create it first "
                                        f"(`{command}`): pycoro build, like cc, does not create directories")])
    if not folder.is_dir():
        raise CompileError([_unwritable(path, f"{folder} is not a directory")])
    if target.is_dir():
        raise CompileError([_unwritable(path, "it is a directory")])
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise CompileError([_unwritable(path, "permission denied")])


def _write_ir(module: llvm.ModuleRef, machine: llvm.TargetMachine, path: str) -> None:
    Path(path).write_text(str(module))


# What `--emit` writes after the pipeline, per target (`llvm` is written before it).
_WRITERS = {
    "native": {"lowered": _write_ir, "asm": link.write_assembly,
               "obj": link.write_object, "exe": link.write_executable},   # these two: from object code
    "nvptx": {"lowered": _write_ir, "ptx": link.write_assembly, "asm": link.write_assembly},
}
_FROM_OBJECT_CODE = {"obj", "exe"}


def _calls(ir_text: str, symbol: str) -> bool:
    return re.search(rf'call [^\n]*@"?{re.escape(symbol)}"?\(', ir_text) is not None


@functools.cache
def runtime_ir() -> str:
    """The runtime (stdlib/rt.pc), compiled once and kept in the on-disk cache."""
    return _runtime_unit("rt", _compile_runtime)


@functools.cache
def backtrace_ir() -> str:
    """The runtime's backtraces (stdlib/rt_backtrace.pc), linked into programs
    with debug information only (backend/backtrace.py), compiled once and kept
    in the on-disk cache."""
    return _runtime_unit("rt_backtrace", _compile_backtraces)


# The native runtime parsed before a fork (preload), for the first compilation after it.
_preloaded_runtime: list[llvm.ModuleRef] = []


def preload() -> None:
    """For a process that forks compilations (the compile server, cli/server.py):
    do once, before the forks, what each compilation would repeat: parse the
    native runtime's IR (linking it in consumes it, so the copy each fork has
    serves one compilation) and keep the stdlib's syntax trees in memory
    (frozen records: whatever a compilation does, they stay as parsed)."""
    keep_parsed()
    for path in stdlib_dir().glob("*.pc"):
        parse_cached(path.read_text(encoding="utf-8"), stdlib_display(path.stem))
    preload_runtime()


def preload_runtime() -> None:
    """Parse the native runtime for the next compilation (after one that took it)."""
    _preloaded_runtime[:] = [_parse_ir(_cold_split().program_runtime, "<runtime>")]


def _native_runtime() -> llvm.ModuleRef:
    if _preloaded_runtime:
        return _preloaded_runtime.pop()
    return _parse_ir(_cold_split().program_runtime, "<runtime>")


@functools.cache
def _cold_split() -> cold_runtime.Split:
    """The native runtime as programs link it, its never-optimised functions
    apart (backend/cold_runtime.py)."""
    return cold_runtime.split(runtime_ir(), tuple(f"pc.{name}" for name in _NEVER_OPTIMISED))


_cold_assemblies: dict[str, cold_runtime.Assembly] = {}


def _cold_assembly(machine: llvm.TargetMachine, options: Options, jit: bool) -> cold_runtime.Assembly:
    """The runtime's never-optimised functions as assembly for this machine
    (compiled once; kept in the on-disk cache, as the runtime's IR is)."""
    split = _cold_split()
    digest = cache.key(split.program_runtime, *split.units.values(), cache.host_id(), options.target_cpu,
                       str(options.opt_level), str(jit))
    if digest not in _cold_assemblies:
        import marshal
        stored = cache.load_bytes("rt_cold", digest)
        try:
            code, calls = marshal.loads(stored) if stored is not None else (None, None)
            assembly = cold_runtime.Assembly(code, calls) if code is not None else None
        except (EOFError, ValueError, TypeError):
            assembly = None
        if assembly is None:
            assembly = cold_runtime.assemble(split, machine)
            cache.store("rt_cold", digest, marshal.dumps((assembly.code, assembly.calls)))
        _cold_assemblies[digest] = assembly
    return _cold_assemblies[digest]


def _runtime_unit(name: str, compile) -> str:
    path = stdlib_dir() / f"{name}.pc"
    source = path.read_text(encoding="utf-8")
    digest = cache.key(source)
    cached = cache.load(f"{name}.ll", digest)
    if cached is None:
        cached = compile(source, path)
        cache.store(f"{name}.ll", digest, cached)
    return cached


def _runtime_module(source: str, path: Path, name: str):
    modules = load(stdlib_display(name), source, path.parent, prelude=False)
    reporter = Reporter()
    program = check_program(modules, reporter, need_main=False)
    if reporter.failed:
        raise InternalError(f"the runtime ({name}.pc) does not compile:\n" +
                            "\n".join(d.message for d in reporter.diagnostics))
    return ModuleGen(program, f"pycoro.{name}").generate(entry=False)


def _compile_backtraces(source: str, path: Path) -> str:
    """Left out of the pipeline (it runs once, after a panic): optimising it
    doubled the time of compiling a small program with -g."""
    module = _runtime_module(source, path, "rt_backtrace")
    for function in module.functions:
        if not function.is_declaration:
            function.attributes.update({"noinline", "optnone"})
    return str(module)


def _compile_runtime(source: str, path: Path) -> str:
    module = _runtime_module(source, path, "rt")
    for name in _NEVER_OPTIMISED:
        function = module.get_global(f"pc.{name}")
        function.attributes.add("noinline")
        function.attributes.add("optnone")
    for name in _PANICS:
        module.get_global(f"pc.{name}").attributes.update({"noinline", "cold"})
    for symbol, shared in SHARED_STATE.items():
        module.get_global(symbol).name = shared
    return str(module)


# Runtime functions that every program's pipeline skips. `print_float` (60
# lines: snprintf/strtod until the digits read back, then Python's layout)
# cost LLVM's -O2 pipeline 20 ms on its own and 80 ms once inlined into a
# program's float `print`s: most of compiling a small program. Its time is
# that of snprintf, which optimising the code around the calls does not change.
# The others run at most once in a program's life: at start-up (finding the
# stack, loading the unwinder: kept out of the C `main` they are called from,
# the second tests the backtrace table, linked in after the pipeline), at a
# fault, or on the way to a panic's exit.
# Optimised, they were 40% of the instructions of a small program's module
# and cost every build 5-10 ms of pipeline and code generation (issue 23;
# the programs' own code is the same instruction for instruction). Since
# then they are not code-generated with each program either: compiled once
# to assembly, they join its object as module asm (backend/cold_runtime.py;
# 8-16 ms of every build: gen_sum's 82 -> 75 ms, async_pingpong's 392 -> 378).
_NEVER_OPTIMISED = ("print_float", "find_stack", "load_unwinder", "on_fault", "on_fault_in_try",
                    "fail", "__pc_panic_bounds", "__pc_panic_slice", "report_backtrace", "backtrace_wanted")


# The ways into a panic: cold and never inlined, as Rust's panic functions.
# Inlined where a program has few panic sites (often in a library of
# exports, where `__pc_coro_alloc`'s out-of-memory panic may be the only
# one), the panic's formatting and longjmp grew every generator's ramp past
# what the inliner takes, and no frame was elided (`for v in gen()` in an
# exported function ran gen on the heap).
_PANICS = ("__pc_panic", "__pc_panic_bounds", "__pc_panic_slice", "fail")


def _never_merged(module: llvm.ModuleRef) -> None:
    """The ways into a panic marked `nomerge` in a linked module (on its one
    function of each name, definition or declaration: the program declares
    those of the cold runtime itself), so that no two calls of one are merged
    and each keeps its own position and inlined-at chain in the debug
    information. Merged (LLVM's tail merging joins `call; unreachable`
    sequences that differ only in their arguments), a panic's call had line
    0 in the scope of the function everything was inlined into: a backtrace
    through three inlined tasks, or through two inlined array reads, showed
    `main` alone."""
    for name in _PANICS:
        try:
            function = module.get_function(f"pc.{name}")
        except NameError:   # a module that never panics this way
            continue
        function.add_function_attribute("nomerge")


def _parse_ir(text: str, name: str) -> llvm.ModuleRef:
    problems = intrinsics.validate(text)
    if problems:
        raise InternalError(f"{name}: " + "; ".join(problems))
    try:
        module = llvm.parse_assembly(text)
    except RuntimeError as err:
        raise InternalError(f"LLVM rejected the IR for {name}: {err}") from None
    return module


def _verify(module: llvm.ModuleRef) -> None:
    try:
        module.verify()
    except RuntimeError as err:
        raise InternalError(f"invalid LLVM IR: {err}") from None
