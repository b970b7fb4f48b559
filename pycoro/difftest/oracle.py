"""The prelude of every oracle (the Python twin of a generated program): the
rules of PyCoro's integers and of `print`, as LANGUAGE.md §2 and §4 and
docs/decisions.md state them.

- arithmetic wraps, two's complement, in the operands' type (`_i8(v)` …);
- `/` and `%` truncate toward zero; a zero divisor panics ("division by
  zero" / "remainder by zero"); `MIN / -1` wraps to MIN and `MIN % -1` is 0;
- a shift amount is taken modulo the width of the shifted value's type; `>>`
  is arithmetic on signed types;
- `x as T` between integer types (and from bool) keeps the low bits, as a wrap;
- `print` writes its arguments separated by one space: integers in decimal,
  bools as true/false, strings as they are;
- a panic flushes stdout, writes `panic: …` to stderr and exits with 101 at
  once (no `defer` runs: os._exit, not an exception through `finally`);
- an array index outside 0..N panics;
- a slice is a `_Sl`: the list it views (an array's own list, never a copy),
  the offset of its first element and its length; `s[i]` reads and writes
  that list, bounds-checked; a sub-slice shares it; `for v in s` reads each
  element when its turn comes. Out-of-range bounds panic with Rust's two
  messages, as pycoro's runtime does (`slice index starts at LO but ends at
  HI` when a bound is negative or LO > HI, else `range end index HI out of
  range for slice of length N`).
"""
from __future__ import annotations

from .types import INT_TYPES, bits, signed


def _int_helpers(t: str) -> str:
    b = bits(t)
    mask = (1 << b) - 1
    if signed(t):
        half = 1 << (b - 1)
        wrap = f"def _{t}(v):\n    return ((v + {half}) & {mask}) - {half}\n"
    else:
        wrap = f"def _{t}(v):\n    return v & {mask}\n"
    return wrap + f"""def _div_{t}(a, b):
    if b == 0:
        _panic("division by zero")
    q = abs(a) // abs(b)
    return _{t}(q if (a < 0) == (b < 0) else -q)
def _rem_{t}(a, b):
    if b == 0:
        _panic("remainder by zero")
    r = abs(a) % abs(b)
    return _{t}(-r if a < 0 else r)
def _shl_{t}(a, s):
    return _{t}(a << (s % {b}))
def _shr_{t}(a, s):
    return a >> (s % {b})
"""


PRELUDE = '''import os
import sys

_out = []


def _flush():
    sys.stdout.write("".join(_out))
    sys.stdout.flush()
    _out.clear()


def _panic(msg):
    _flush()
    sys.stderr.write("panic: " + msg + "\\n")
    sys.stderr.flush()
    os._exit(101)


def _fmt(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


def _p(*args):
    _out.append(" ".join(map(_fmt, args)) + "\\n")
    if len(_out) > 512:
        _flush()


def _ck(i, n):
    if not 0 <= i < n:
        _panic(f"index out of bounds: the length is {n} but the index is {i}")
    return i


class _Sl:
    """A slice: `n` elements of the list `a` from `o` on."""
    __slots__ = ("a", "o", "n")

    def __init__(self, a, o, n):
        self.a, self.o, self.n = a, o, n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            _panic(f"index out of bounds: the length is {self.n} but the index is {i}")
        return self.a[self.o + i]

    def __setitem__(self, i, v):
        if not 0 <= i < self.n:
            _panic(f"index out of bounds: the length is {self.n} but the index is {i}")
        self.a[self.o + i] = v

    def __iter__(self):
        for k in range(self.n):
            yield self.a[self.o + k]


def _sl(x, lo, hi):
    """`x[lo..hi]` of an array (a list) or a slice; None for an omitted bound."""
    if type(x) is list:
        x = _Sl(x, 0, len(x))
    lo = 0 if lo is None else lo
    hi = x.n if hi is None else hi
    if lo < 0 or hi < 0 or lo > hi:
        _panic(f"slice index starts at {lo} but ends at {hi}")
    if hi > x.n:
        _panic(f"range end index {hi} out of range for slice of length {x.n}")
    return _Sl(x.a, x.o + lo, hi - lo)


class _Hd:
    """A generator handle driven by hand (`h.next()`, `h.value()`)."""

    def __init__(self, gen):
        self.gen, self.cur = gen, None

    def next(self):
        try:
            self.cur = next(self.gen)
            return True
        except StopIteration:
            return False

    def value(self):
        return self.cur


def _put(dst, src):
    """Assign a whole struct or array in place, all the way down: a `mut self`
    may be the address of any part of it (`g[0].m()` and the method assigns
    the whole `g`: its `self` sees the new `g[0]`). `src` is a fresh value."""
    keys = range(len(dst)) if type(dst) is list else list(src)
    for k in keys:
        if type(dst[k]) in (list, dict):
            _put(dst[k], src[k])
        else:
            dst[k] = src[k]


def _cp(v):
    """A deep copy of an aggregate (structs are dicts, arrays lists): value semantics."""
    if type(v) is list:
        return [_cp(x) for x in v]
    if type(v) is dict:
        return {k: _cp(x) for k, x in v.items()}
    return v


''' + "".join(_int_helpers(t) for t in INT_TYPES) + "\n"

EPILOGUE = '''

if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    _status = main()
    _flush()
    sys.exit((_status or 0) & 255)
'''
