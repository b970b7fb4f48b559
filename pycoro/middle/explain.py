"""`pycoro explain`: what each coroutine costs, read back from what LLVM produced.

llvmlite reports no optimisation remarks, so the facts come from the IR:
- the frame layout: CoroSplit's `%<ramp>.Frame` struct type after an `-O0`
  lowering, its fields named by the `<value>.reload.addr` GEPs that address them;
- the frame size at the chosen level: the constant the ramp passes to the
  frame allocator after the pipeline;
- elision per call site: each ramp passes its hidden call-site id to the
  allocator (ModuleGen.explain); a site whose id still reaches an allocator
  call, or a ramp call that was not inlined, allocates its frame on the heap.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from ..frontend.program import FnInstance
from .runtime import symbol as rt_symbol


@dataclass
class FrameReport:
    coroutine: str
    abi: str
    size: int | None          # bytes allocated for the frame at the chosen level
    layout_size: int | None   # bytes of the -O0 frame type
    align: int | None
    fields: list[tuple[str, str, int]] = field(default_factory=list)  # name, LLVM type, bytes


@dataclass
class SiteReport:
    where: str
    caller: str
    callee: str
    elided: bool
    span: object = None   # the call's Span, for diagnostics


_RELOAD = re.compile(r'%"?([\w.$-]+?)(?:\.reload|\.spill)?\.addr\d*"? = getelementptr inbounds (?:nuw )?'
                     r'%"?([\w.<>,$-]+)\.Frame"?, ptr %[\w."]+, i32 0, i32 (\d+)')
_FIXED = {0: "resume function", 1: "destroy function"}


def frames(o0: llvm.ModuleRef, target_data: llvm.TargetData, coroutines: list[FnInstance],
           o2_text: str) -> list[FrameReport]:
    text = str(o0)
    names: dict[tuple[str, int], str] = {}
    for value, frame, index in _RELOAD.findall(text):
        names.setdefault((frame, int(index)), _source_name(value))
    reports = []
    for inst in coroutines:
        report = FrameReport(inst.display, inst.coro.abi, _allocated(o2_text, inst.symbol), None, None)
        try:
            ty = o0.get_struct_type(f"{inst.symbol}.Frame")
        except NameError:
            ty = None
        if ty is not None:
            report.layout_size = target_data.get_abi_size(ty)
            report.align = target_data.get_abi_alignment(ty)
            elements = list(ty.elements)
            for i, el in enumerate(elements):
                if i in _FIXED:
                    name = _FIXED[i]
                elif i == len(elements) - 1 and str(el).startswith("i") and int(str(el)[1:]) <= 8:
                    name = "suspend index"
                else:
                    name = names.get((inst.symbol, i), "spilled value")
                    if i == 2:
                        name = f"promise {inst.coro.promise}"
                type_name = f"%{el.name}" if el.is_struct and el.name else str(el)
                report.fields.append((name, type_name, target_data.get_abi_size(el)))
        reports.append(report)
    return reports


def _source_name(value: str) -> str:
    return re.sub(r"\.\d+$", "", value)


def _allocated(o2_text: str, ramp: str) -> int | None:
    body = _function_body(o2_text, ramp)
    if body is None:
        return None
    m = re.search(rf'call[^\n]*@"?{re.escape(rt_symbol("coro_alloc"))}"?\(i64 (\d+)', body)
    return int(m.group(1)) if m else None


def _function_body(text: str, symbol: str) -> str | None:
    m = re.search(rf'^define [^\n]*@"?{re.escape(symbol)}"?\(.*?^}}', text, re.M | re.S)
    return m.group(0) if m else None


def sites(o2_text: str, recorded: list[tuple[FnInstance, object, FnInstance]]) -> list[SiteReport]:
    alloc = re.escape(rt_symbol("coro_alloc"))
    reports = []
    for site_id, (caller, span, callee) in enumerate(recorded):
        allocates = re.search(rf'@"?{alloc}"?\(i64 [^,]+, i32 {site_id}\)', o2_text) or \
            re.search(rf'@"?{re.escape(callee.symbol)}"?\([^)]*i32 {site_id}\)', o2_text)
        reports.append(SiteReport(str(span), caller.display, callee.display, not allocates, span))
    return reports
