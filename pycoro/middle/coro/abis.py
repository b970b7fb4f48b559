"""The one place that picks a function's ABI (base.CoroutineABI): an
ordinary function's, or a coroutine's by its promise (`abi switch;`, `abi
retcon(N);`, `abi retcon_once(N);`), or an `async fn`'s. Switched-resume
coroutines go through the resume loop (trampoline.py) when the module is
compiled for a target without tail calls. Adding an ABI is a module with its
CoroutineABI and BodyEmitter, and a line here."""
from __future__ import annotations

from ...frontend.types import Type, abi_of
from .async_ import ASYNC
from .base import CoroutineABI
from .retcon import RETCON
from .switch import SWITCH
from .trampoline import TRAMPOLINED_SWITCH

PLAIN = CoroutineABI()


class ABIs:
    """The ABIs of one module."""

    def __init__(self, trampoline: bool):
        self.by_name: dict[str, CoroutineABI] = {
            "plain": PLAIN, "switch": TRAMPOLINED_SWITCH if trampoline else SWITCH,
            "retcon": RETCON, "retcon_once": RETCON, "async": ASYNC}

    def of_function(self, inst) -> CoroutineABI:
        if inst.is_async:
            return self.by_name["async"]
        return self.by_name["plain" if inst.coro is None else inst.coro.abi]

    def of_handle(self, t: Type) -> CoroutineABI:
        """The ABI of the coroutines a handle of type t (a promise type or `Handle`) holds."""
        return self.by_name[abi_of(t)]

    def all(self) -> list[CoroutineABI]:
        return list(dict.fromkeys(self.by_name.values()))
