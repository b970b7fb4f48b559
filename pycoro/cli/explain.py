"""`pycoro explain`'s report: the frames of a program's coroutines and where
each call site's frame lives, as tables."""
from __future__ import annotations


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


_ASYNC_PLACEMENT = {
    "inlined": "inlined: runs in the awaiting fn's context",
    "call": "its {} context on the task's stack",
    "spawn": "a new task: its {} context in the task's block",
}


_NO_FRAME = {
    "pushed": "no frame: the loop runs {callee} as a recursive function",
    "in place": "no frame: awaited in place, {callee}'s body runs in {caller}",
}


def _placement(s, gpu: bool) -> str:
    if s.async_kind is not None:
        return _ASYNC_PLACEMENT[s.async_kind].format(f"{s.context} B" if s.context else "")
    if s.no_frame is not None:
        return _NO_FRAME[s.no_frame].format(callee=s.callee, caller=s.caller)
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
