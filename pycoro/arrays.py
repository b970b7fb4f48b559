"""Memory for `GeneratorObject.to_numpy()`.

How many values a generator makes is known only once it has made them. A
buffer that doubles by `realloc` copies what it holds whenever the C library
cannot extend it (glibc keeps blocks of a few MB on its heap once one that
size has been freed): measured on 10^6 `i64`s, 0.7 to 4.8 ms against NumPy's
0.4 for `np.arange`; and a loop that checks for room at every value is not
vectorised. Instead, a range of address space is reserved up front, too big
to fill (the kernel gives it memory only where it is written), the values
are stored without a check for room but one LLVM can fold into the loop's
count, and what is left over is given back: the array owns the rest. Where
the range cannot be had (a small `ulimit -v`, strict overcommit), or a
generator makes more values than it holds, to_numpy takes its other way.

Memory the kernel has just given is zeroed on first touch: for 10^6 `i64`s
that is 0.28 ms of a 0.43 ms to_numpy. As the C library keeps freed blocks
for the next malloc (which NumPy's arrays then reuse, warm), the memory of
the last array freed (up to SPARE_LIMIT) is kept here, and the next
reservation starts with it where the address space after it is free.
"""
from __future__ import annotations

import ctypes
import mmap
import sys
import threading

# Address space asked for: 64 GiB, a tenth of a percent of x86-64's user space.
RESERVE = 1 << 36

_libc = ctypes.CDLL(None)
_mmap = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                         ctypes.c_int, ctypes.c_long)(("mmap", _libc))
_munmap = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)(("munmap", _libc))
_madvise = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)(("madvise", _libc))
_MAP_FAILED = ctypes.c_void_p(-1).value
_MAP_FIXED_NOREPLACE = 0x100000   # Linux 4.17; older kernels take it as a hint (checked below)
_LINUX = sys.platform.startswith("linux")
# Linux: no swap reserved for it (macOS never reserves any)
_MAP_NORESERVE = 0x4000 if _LINUX else 0
# Linux backs a big array with huge pages where asked (NumPy asks too, for
# arrays of 4 MiB and more): a 512th of the page faults. Not the first 4 MiB:
# a small array would have 2 MiB zeroed for it (1 ms for 10 values).
_HUGE_PAGES = getattr(mmap, "MADV_HUGEPAGE", None) if _LINUX else None
_SMALL = 1 << 22


SPARE_LIMIT = 1 << 26   # 64 MiB
_spare: tuple[int, int] | None = None   # (address, size) of the last array's memory freed
# Taking or replacing the spare: threads run Python between ctypes calls
# (which let go of the GIL), and a range must have one owner at a time.
_spare_lock = threading.Lock()


def reserve() -> int | None:
    """The address of RESERVE writable bytes, with memory only where written;
    None if the system refuses."""
    base = _grow_spare()
    if base is None:
        base = _map(None, RESERVE, 0)
    if base is not None and _HUGE_PAGES is not None:
        _madvise(base + _SMALL, RESERVE - _SMALL, _HUGE_PAGES)
    return base


def _map(address: int | None, size: int, flags: int) -> int | None:
    base = _mmap(address, size, mmap.PROT_READ | mmap.PROT_WRITE,
                 mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE | flags, -1, 0)
    return None if base in (None, _MAP_FAILED) else base


def _grow_spare() -> int | None:
    """The spare memory with the rest of a reservation mapped right after it,
    or None (no spare, or something else lives there: the spare is given back)."""
    global _spare
    with _spare_lock:
        taken, _spare = _spare, None
    if taken is None or not _LINUX:
        if taken is not None:
            _munmap(*taken)
        return None
    address, size = taken
    rest = _map(address + size, RESERVE - size, _MAP_FIXED_NOREPLACE)
    if rest == address + size:
        return address
    if rest is not None:   # a kernel that took the address as a hint
        _munmap(rest, RESERVE - size)
    _munmap(address, size)
    return None


def _free(address: int, size: int) -> None:
    """Memory an array no longer uses: kept as the spare (Linux, where a
    reservation can grow from it), or given back."""
    global _spare
    given_back = address, size
    if _LINUX and size <= SPARE_LIMIT:
        with _spare_lock:
            if _spare is None or _spare[1] < size:
                given_back, _spare = _spare, given_back
    if given_back is not None:
        _munmap(*given_back)


def release(base: int) -> None:
    """Give back a whole reservation (the values were not kept)."""
    _munmap(base, RESERVE)


def keep(base: int, used: int, dtype):
    """A NumPy array of the first `used` bytes of the reservation at `base`
    (items of `dtype`); the rest of the range is given back now, and the
    array's memory when the last array viewing it goes."""
    import numpy as np
    kept = max(-(-used // mmap.PAGESIZE) * mmap.PAGESIZE, mmap.PAGESIZE)
    _munmap(base + kept, RESERVE - kept)
    return np.asarray(_Mapped(base, kept, used // dtype.itemsize, dtype))


class _Mapped:
    """Mapped memory as NumPy sees it (`__array_interface__`), unmapped with
    the last array that views it."""

    def __init__(self, address: int, size: int, n: int, dtype):
        self._address, self._size = address, size
        self.__array_interface__ = {"shape": (n,), "typestr": dtype.str, "data": (address, False), "version": 3}

    def __del__(self):
        _free(self._address, self._size)
