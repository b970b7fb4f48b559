"""LLVM's default pipeline (coroutine passes included at every level)."""
from __future__ import annotations

import llvmlite.binding as llvm

from ..frontend.program import CheckedProgram, IndirectCall


def licm_promotion_safe(program: CheckedProgram) -> bool:
    """Whether LICM may promote memory to registers in this program's loops.

    Not where a function value is called (`f(v)` with `f: fn(…)`, as std/iter's
    `map` and `filter` do). Scalar promotion replaces a load of such a pointer,
    stored in the same loop (a coroutine frame elided into the loop keeps its
    parameters there), with the stored function: the call becomes direct, to
    a function that always returns, and so no longer "may not transfer
    execution" to the next instruction; LICM does not tell its cached
    analysis (InstructionPrecedenceTracking), and llvmlite's LLVM, built with
    assertions, aborts the whole process when it next checks the cache:
    `for i in 0..2 { print(sum(chain(map(range(0, 1), f), map(range(0, 1), f)))); }`
    at -O2. A release build of LLVM would only keep a stale, conservative cache.

    This is the check for modules lowered without counting (explain's); a
    program's lowering counts the calls through function values it emits
    (irgen's `function_value_calls`), and a generator given a named function
    (`map(xs, triple)`) is a copy that calls it directly (ModuleGen.specialised),
    so std/iter's pipelines keep promotion: without it, gen_pipeline's loops
    stayed nested (1.9x clang++)."""
    return not any(isinstance(target, IndirectCall) for inst in program.functions
                   for target in inst.calls.values())


def _set_licm_promotion(enabled: bool) -> None:
    # a process-wide LLVM option: each pipeline run sets it for itself
    llvm.set_option("", f"-disable-licm-promotion={'false' if enabled else 'true'}")


def run_pipeline(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, level: int,
                 vectorize: bool = True, licm_promotion: bool = True) -> None:
    """`-O<level>`: LLVM's default module pipeline, through llvmlite's pass builder."""
    _set_licm_promotion(licm_promotion)
    options = llvm.create_pipeline_tuning_options(speed_level=level)
    if not vectorize:
        options.loop_vectorization = False
        options.slp_vectorization = False
    builder = llvm.create_pass_builder(target_machine, options)
    builder.getModulePassManager().run(module, builder)


def run_gpu_pipeline(module: llvm.ModuleRef, gpu_machine: llvm.TargetMachine,
                     cpu_machine: llvm.TargetMachine, level: int, licm_promotion: bool = True) -> None:
    """`-O<level>` for a GPU module: the coroutines are lowered and their frames
    placed under a CPU's cost model, then the GPU's pipeline tunes the result.

    Under the cost model of a target with divergent branches (NVPTX, AMDGPU),
    LLVM's pipeline leaves the frames of a generator chain on the heap that it
    elides on every CPU target: in `sum(map(range(0, n), f))` only the outermost
    frame was placed. On a GPU a heap frame is an error, so the placement must
    not depend on that. The first run does not vectorise: vector shapes are the
    GPU pipeline's to choose."""
    if level > 0:
        run_pipeline(module, cpu_machine, level, vectorize=False, licm_promotion=licm_promotion)
    run_pipeline(module, gpu_machine, level, licm_promotion=licm_promotion)


_SMALL_RAMP = 64   # instructions; a lazy generator's ramp, frame allocation inlined, has about 30


def inline_ramps(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, level: int) -> None:
    """Inline coroutines' ramps, now ordinary functions, into their callers (-O2 and up).

    CoroSplit runs inside the inliner's walk of the call graph: when it turns a
    coroutine into a ramp (allocate the frame, store the arguments, return the
    handle) and its resume functions, the inliner has already passed the
    ramp's callers, and a recursive generator's resume function keeps a call
    to its own ramp for every `yield from`. One always-inliner run over the
    ramps, then InstCombine and SimplifyCFG, removes those calls. Only small
    ramps: one that runs its coroutine's body up to the first suspend point
    (`initial run`) may be any size."""
    if level < 2:
        return
    names = {f.name for f in module.functions}
    ramps = [f for f in module.functions if not f.is_declaration and f"{f.name}.resume" in names
             and sum(1 for block in f.blocks for _ in block.instructions) <= _SMALL_RAMP]
    if not ramps:
        return
    for ramp in ramps:
        ramp.add_function_attribute("alwaysinline")
    builder = llvm.create_pass_builder(target_machine, llvm.create_pipeline_tuning_options(speed_level=level))
    passes = llvm.create_new_module_pass_manager()
    passes.add_always_inliner_pass()
    passes.add_instruction_combine_pass()
    passes.add_simplify_cfg_pass()
    passes.add_global_dead_code_eliminate_pass()
    passes.run(module, builder)
