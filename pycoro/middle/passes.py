"""LLVM's default pipeline (coroutine passes included at every level)."""
from __future__ import annotations

import llvmlite.binding as llvm


def run_pipeline(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, level: int) -> None:
    """`-O<level>`: LLVM's default module pipeline, through llvmlite's pass builder."""
    options = llvm.create_pipeline_tuning_options(speed_level=level)
    builder = llvm.create_pass_builder(target_machine, options)
    builder.getModulePassManager().run(module, builder)
