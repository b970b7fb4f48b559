"""Memoising a pure function of one syntax node or type for as long as that
node or type lives: the memo is keyed weakly, so nothing of a compilation
survives it (an lru_cache kept up to 65,536 syntax trees and types of
compilations long gone)."""
from __future__ import annotations

import functools
import weakref
from typing import Callable, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def while_alive(fn: Callable[[K], V]) -> Callable[[K], V]:
    """`fn(key)` computed once per key while the key lives. Keys compare as they
    define: syntax nodes by identity, types by value (an equal type finds the
    entry of another)."""
    memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(fn)
    def memoised(key):
        try:
            return memo[key]
        except KeyError:
            value = memo[key] = fn(key)
            return value
    memoised.memo = memo
    return memoised
