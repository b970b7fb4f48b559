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
from collections.abc import Sequence

import llvmlite.binding as llvm

from ..frontend.program import FnInstance
from ..common.paths import in_stdlib
from ..common.record import field, record
from .coro.retcon import buffer_bytes
from .runtime import symbol as rt_symbol


@record
class FrameReport:
    coroutine: str
    abi: str                  # `switch`, `retcon(64)`, …
    size: int | None          # bytes allocated for the frame at the chosen level
    layout_size: int | None   # bytes of the -O0 frame type
    align: int | None
    fields: list[tuple[str, str, int]] = field(default_factory=list)  # name, LLVM type, bytes


@record
class SiteReport:
    where: str
    caller: str
    callee: str
    elided: bool
    span: object = None   # the call's Span, for diagnostics
    buffer: int | None = None    # a retcon coroutine's: bytes of the buffer in its control block
    overflows: bool = False      # a retcon frame bigger than that buffer (then on the heap)
    async_kind: str | None = None   # an async call: "inlined", "call" (awaited) or "spawn"
    context: int | None = None      # then: the callee's context, in bytes
    # why the site makes no frame: "pushed" (a loop run as a recursive function,
    # middle/internal_iteration.py), "in place" (an awaited task's body, middle/awaited_in_place.py)
    no_frame: str | None = None


_RELOAD = re.compile(r'%"?([A-Za-z_][\w.$-]*?)(?:(?:\.reload|\.spill)?\.addr\d*)?"? = getelementptr inbounds (?:nuw )?'
                     r'%"?([\w.<>,$-]+)\.Frame"?, ptr %[\w."]+, i32 0, i32 (\d+)')
_FIXED = {0: "resume function", 1: "destroy function"}


def frames(o0: llvm.ModuleRef, target_data: llvm.TargetData, coroutines: list[FnInstance],
           o2_text: str) -> list[FrameReport]:
    names = _field_names(o0)
    reports = []
    for inst in coroutines:
        switched = inst.coro.abi == "switch"
        abi = "switch" if switched else f"{inst.coro.abi}({inst.coro.buffer})"
        # a retcon frame is allocated by LLVM's ramp only when it outgrows its buffer
        report = FrameReport(inst.display, abi, _allocated(o2_text, inst.symbol) if switched else None,
                             None, None)
        ty = _frame_type(o0, inst.symbol)
        if ty is not None:
            report.layout_size = target_data.get_abi_size(ty)
            report.align = target_data.get_abi_alignment(ty)
            elements = list(ty.elements)
            for i, el in enumerate(elements):
                if switched and i in _FIXED:
                    name = _FIXED[i]
                elif switched and i == len(elements) - 1 and str(el).startswith("i") and int(str(el)[1:]) <= 8:
                    name = "suspend index"
                elif switched and i == 2:
                    name = f"promise {inst.coro.promise}"
                else:
                    name = names.get((inst.symbol, i)) or "spilled value"
                type_name = f"%{el.name}" if el.is_struct and el.name else str(el)
                report.fields.append((name, type_name, target_data.get_abi_size(el)))
        reports.append(report)
    return reports


def async_frames(o0: llvm.ModuleRef, target_data: llvm.TargetData, functions: list[FnInstance],
                 o_text: str) -> list[FrameReport]:
    """An async fn's frame lives in its context, which its caller allocates on the
    task's stack: `size` is the whole context (header, result, arguments and
    frame) as CoroSplit wrote it into the function's async function pointer."""
    names = _field_names(o0)
    reports = []
    for inst in functions:
        m = re.search(rf'^@"?{re.escape(inst.symbol)}\.fp"? = [^\n]*<{{ i32 0, i32 (\d+) }}>', o_text, re.M)
        report = FrameReport(inst.display, "async", int(m.group(1)) if m else None, None, None)
        ty = _frame_type(o0, inst.symbol)
        if ty is not None:
            report.layout_size = target_data.get_abi_size(ty)
            report.align = target_data.get_abi_alignment(ty)
            for i, el in enumerate(ty.elements):
                type_name = f"%{el.name}" if el.is_struct and el.name else str(el)
                report.fields.append((names.get((inst.symbol, i)) or "spilled value", type_name,
                                      target_data.get_abi_size(el)))
        reports.append(report)
    return reports


def async_sites(recorded: list[tuple[FnInstance, object, FnInstance, str]],
                frames: list[FrameReport]) -> list[SiteReport]:
    """Per `await`/`spawn` of an async fn in the program's own files: whether the
    callee's body was inlined, or where its context lives. A site inlined into
    several callers is reported once per distinct outcome."""
    sizes = {f.coroutine: f.size for f in frames if f.abi == "async"}
    seen, reports = set(), []
    for caller, span, callee, kind in recorded:
        key = (str(span), callee.display, kind)
        if in_stdlib(span.file) or key in seen:
            continue
        seen.add(key)
        reports.append(SiteReport(str(span), caller.display, callee.display, kind == "inlined", span,
                                  async_kind=kind, context=sizes.get(callee.display)))
    return sorted(reports, key=lambda r: (r.span.file, r.span.line, r.span.col, r.async_kind))


def _field_names(o0: llvm.ModuleRef) -> dict[tuple[str, int], str]:
    """(coroutine symbol, frame field index) → the source name it was spilled from."""
    names: dict[tuple[str, int], str] = {}
    for value, frame, index in _RELOAD.findall(str(o0)):
        names.setdefault((frame, int(index)), _source_name(value))
    return names


def _frame_type(o0: llvm.ModuleRef, symbol: str):
    """CoroSplit's frame type of a coroutine, if it has one."""
    try:
        return o0.get_struct_type(f"{symbol}.Frame")
    except NameError:
        return None


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


def sites(o2_text: str, recorded: list[tuple[FnInstance, object, FnInstance]],
          frames: list[FrameReport],
          frameless: Sequence[tuple[str, FnInstance, object, FnInstance]] = ()) -> list[SiteReport]:
    """Per call site, whether the frame (retcon: the control block holding the
    buffer) was placed in the caller's stack frame; the `frameless` ones (a
    loop's generator run as a recursive function, an awaited task run in
    place: SiteReport.no_frame says which) make none."""
    alloc = re.escape(rt_symbol("coro_alloc"))
    sizes = {f.coroutine: f.layout_size for f in frames}
    reports = []
    for site_id, (caller, span, callee) in enumerate(recorded):
        allocates = re.search(rf'@"?{alloc}"?\(i64 [^,]+, i32 {site_id}\)', o2_text)
        report = SiteReport(str(span), caller.display, callee.display, not allocates, span)
        if callee.coro.abi == "switch":
            # a ramp that was not inlined allocates its frame itself
            report.elided = not (allocates or re.search(
                rf'@"?{re.escape(callee.symbol)}"?\([^)]*i32 {site_id}\)', o2_text))
        else:
            report.buffer = callee.coro.buffer
            report.overflows = (sizes.get(callee.display) or 0) > buffer_bytes(callee.ret)
        reports.append(report)
    reports += [SiteReport(str(span), caller.display, callee.display, elided=True, span=span, no_frame=why)
                for why, caller, span, callee in frameless]
    return _merged(reports)


def _merged(reports: list[SiteReport]) -> list[SiteReport]:
    """One report per call in the source: a call emitted more than once (a
    recursive generator's body run in place at each of its `yield from`s,
    middle/guards.py) is elided only where every copy is (a copy LLVM
    removed allocates nothing, and reads as elided)."""
    merged: dict[tuple[str, str, str], SiteReport] = {}
    for report in reports:
        key = (report.where, report.caller, report.callee)
        first = merged.setdefault(key, report)
        if first is not report:
            first.elided = first.elided and report.elided
            first.overflows = first.overflows or report.overflows
    return list(merged.values())
