"""The interface every coroutine ABI's emitter implements.

clang emits every coroutine with one skeleton (`EmitCoroutineBody`) and one
suspend emitter used by `co_await`, `co_yield` and the initial and final
suspends; LLVM keeps one ABI class per lowering (`SwitchABI`, `AnyRetconABI`,
`AsyncABI`). Each pycoro ABI is one module under middle/coro/ implementing
this class; `emitter_for` is the only place that branches on the ABI.
Async functions have no promise: coro/async_.py's AsyncEmitter emits what
differs in their bodies (FnGen.task).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from ...frontend.types import abi_of

if TYPE_CHECKING:
    from ...frontend.program import CoroutineInfo
    from ..irgen import FnGen


class CoroutineEmitter:
    def __init__(self, fg: "FnGen", info: "CoroutineInfo"):
        self.fg = fg
        self.info = info

    def begin(self) -> None:
        """The ramp: identify the coroutine, allocate its frame, initialise the
        promise, and take the initial suspend; the builder is left at the body."""
        raise NotImplementedError

    def promise(self) -> ir.Value:
        """The address of the promise state, inside the coroutine."""
        raise NotImplementedError

    def suspend(self, name: str) -> None:
        """A suspend point (after a `yield`'s hook ran): on resumption the builder
        continues after it; when the coroutine is destroyed there, the pending
        cleanups of every scope run and the frame is freed."""
        raise NotImplementedError

    def await_(self, info, awaiter: ir.Value) -> None:
        """`await`: ask the awaiter whether to suspend, suspend through its
        `await_suspend`; the builder is left where `await_resume` is called."""
        raise NotImplementedError

    def transfer(self, handle: ir.Value) -> None:
        """Suspend and resume `handle` instead (symmetric transfer, no stack growth)."""
        raise NotImplementedError

    def co_return(self) -> None:
        """Leave the body (after `co_return`'s hook ran and the scopes unwound)."""
        raise NotImplementedError

    def end(self) -> None:
        """After the body: the final suspend, the frame's cleanup and the return
        of the handle to the ramp's caller."""
        raise NotImplementedError

    def suspend_with(self, name: str, value: ir.Value, t) -> None:
        """`yield value` in a returned-continuation coroutine (no promise hook)."""
        raise NotImplementedError


def emitter_for(fg: "FnGen", info: "CoroutineInfo") -> CoroutineEmitter:
    from .retcon import RetconEmitter
    from .switch import SwitchEmitter
    emitters = {"switch": SwitchEmitter, "retcon": RetconEmitter, "retcon_once": RetconEmitter}
    return emitters[info.abi](fg, info)


def handle_op(fg: "FnGen", t, name: str, handle: ir.Value | None, promise_align: int = 8,
              owning: bool = False) -> ir.Value | None:
    """An operation on a handle of type `t` (its ABI's), from any function;
    `destroy` destroys what an owning handle holds."""
    from . import async_, retcon, switch
    ops = {"switch": lambda: switch.handle_op(fg, name, handle, promise_align, owning),
           "async": lambda: async_.handle_op(fg, name, handle, t),
           "retcon": lambda: retcon.handle_op(fg, name, handle, t),
           "retcon_once": lambda: retcon.handle_op(fg, name, handle, t)}
    return ops[abi_of(t)]()
