"""The differential tester's oracle for tasks and async functions (LANGUAGE.md §7).

A Python twin of an `async fn` program is written with `async def` and run by
this module's scheduler (not asyncio), which follows std/async
(stdlib/async.pc) step for step, so that it prints the same lines in the same
order and exits with the same status as the PyCoro program::

    from pycoro.difftest.async_oracle import run_main, spawn, sleep, yield_now, now, channel, print_
    async def fetch(x): await sleep(10); return x * 2
    async def main():
        a = spawn(fetch(1)); b = await fetch(2); print_(await a + b)
    run_main(main)

PyCoro ↔ Python: `await f(x)` ↔ `await f(x)`; `spawn f(x)` ↔ `spawn(f(x))`;
`await j` ↔ `await j`; dropping a Join unawaited ↔ `j.detach()` (needed only
when its result holds a generator); `await sleep(ms)`, `await yield_now()`,
`now()`, `channel<T>(n)` ↔ `channel(n, zero=<T's zero>)`, `await ch.send(v)`,
`await ch.recv()` (a `Maybe` with `.ok`, `.value`), `ch.close()`;
`panic("m")` ↔ `panic("m")`; `print(…)` ↔ `print_(…)` (defined here; a
twin that buffers its output, as oracle.py's prelude does with `_p`, passes
its flush: `run_main(main, flush=_flush)`); `defer` ↔ `try`/`finally`.
A failed recv's `value` is T's zero: `zero=` of `channel` (0 by default; a
zero `str` prints as "(null)" in pycoro today). The prelude's
`fn f(…) -> Task<T>` and `block_on(t)` ↔ `@taskfn async def f(…)` (or
`task(coro)`) and `block_on(t)`.

The rules, each where stdlib/async.pc (and the compiler's
pycoro/middle/coro/async_.py) makes it so:

1. One thread, one FIFO ready queue (`__ready`, `__push`/`__pop`); the loop
   (`__sched_next`, entered by async_.py's `pc.async.run`) takes the head
   and runs it until it waits or ends. `main` is the first task
   (async_.py `c_main`: `start_task`, then `__task_main`).
2. `await f(x)` runs f in the awaiting task, like a call: nothing else runs
   until f waits (async_.py `await_call`; inlined above -O0 with the same
   behaviour). A Python `await` of a coroutine is the same.
3. `spawn f(x)` queues the new task at the tail of the ready queue
   (`__task_start`) and the spawner goes on: the task first runs when the
   queue reaches it, not at once.
4. `await j`: if j's task has returned, its result at once, with no
   suspension (`__join_wait` false); else the awaiter waits, and when the
   task returns it is queued at the tail (`__task_finish`). A Join dropped
   unawaited detaches its task, which runs on (`__task_detach`); a result
   that holds coroutines is destroyed when the task returns, or at the drop
   if it has (`__task_detach_dropping`).
5. `yield_now()` queues the task at the tail and waits (`yield_now`): every
   task ready before it runs once first.
6. `sleep(ms)` pushes a timer at `now() + max(ms, 0)` and waits (`sleep`);
   a deadline beyond i64 is i64's largest value (not a wrap into the past).
   Timers order by (deadline, order of the `sleep` calls) (`__Timer.seq`,
   `__before`). Only when the ready queue is empty does the loop take the
   first timer, advance the clock to its deadline if that is later, and queue
   its task, then every other timer due by then, in their order
   (`__sched_next`); so tasks woken at the same time take turns, and
   `sleep(0)` waits until no task is ready, also behind tasks that become
   ready meanwhile. `now()` is that virtual clock, 0 at the start (`now`,
   `__clock`).
7. When the ready queue is empty and no timer is pending, while `main` has
   not returned: panic "deadlock: every task is waiting and no timer is
   pending" (`__sched_next`), exit status 101.
8. When `main` returns the program ends at once, exit status 0 (async_.py
   `c_main` returns 0; `__sched_next` checks `main`'s `done` before every
   step): tasks still ready or waiting never run again and their pending
   `defer`s do not run; the values left in channels are destroyed, newest
   channel first, oldest value first (`__async_end`; only generators' and
   Joins' destruction is visible).
9. A panic in any task ends the program there: stdout flushed, "panic: msg"
   on stderr, status 101, no `defer`s run (no unwinding). Here: `panic()`
   calls os._exit; any other exception escaping a task is reported the same
   way, but its `finally` blocks have run. (oracle.py's `_panic` exits at
   once too, and works inside tasks.)
10. Channels (`Channel<T>`): `channel(n)` with n < 1 panics "a channel's
    capacity must be at least 1". `send`: while full and not closed, queue
    the task on the channel's senders and wait, then look again (a woken
    task may find the room taken and waits again, at the tail); on a
    closed channel panic "send on a closed channel" (even with room); else
    append the value and queue the first waiting receiver, if any, on the
    ready queue. `recv`: while empty and not closed, wait on the receivers
    likewise; empty and closed gives `Maybe(ok=False, value=zero)`; else
    take the oldest value and queue the first waiting sender, if any.
    `close()`: mark closed, queue every waiting receiver, then every waiting
    sender, in the order they came; closing twice is allowed.
11. `Task<T>` / `block_on` (prelude.pc) are not part of the executor: a Task
    is lazy (`initial suspend`), runs when first awaited and transfers back
    to its awaiter at its end, so it behaves as a nested call made at the
    first `await`; awaiting it again gives its value without running it
    (`await_ready` is `done()`). `block_on(t)` runs t to completion on the
    spot (inside an async fn too: no other task runs meanwhile), and panics
    "block_on: the task suspended and nothing can resume it" if it suspends,
    and "resumed a finished coroutine" if t has already returned.

Limits: a Python `await` chain is recursion, so twins cannot await more than
a few hundred levels deep; `--real-time` is not modelled.
"""
from __future__ import annotations

import functools
import heapq
import os
import sys
import types
from collections import deque

__all__ = ["run_main", "run", "spawn", "sleep", "yield_now", "now", "channel", "Channel", "Join", "Maybe",
           "task", "taskfn", "block_on", "panic", "print_", "Panic"]


def print_(*args) -> None:
    """PyCoro's `print`: bools as true/false, floats as Python's repr."""
    print(" ".join("true" if a is True else "false" if a is False else str(a) if not isinstance(a, float)
                   else repr(a) for a in args))


class Panic(Exception):
    """A panic under `run` (in-process); under `run_main` a panic ends the process."""


def panic(msg: str):
    """PyCoro's `panic`: under `run_main`, ends the program at once, as a panic
    does (no `finally` runs); under `run`, raises Panic."""
    if _exit_on_panic:
        _exit_panicking(msg)
    raise Panic(msg)


def _exit_panicking(msg: str):
    _flush_output()
    sys.stdout.flush()
    sys.stderr.write(f"panic: {msg}\n")
    sys.stderr.flush()
    os._exit(101)


# ---- the executor's state (std/async's globals)

class _Task:
    __slots__ = ("coro", "done", "result", "joiner", "detached")

    def __init__(self, coro):
        self.coro = coro
        self.done = False
        self.result = None
        self.joiner = None
        self.detached = False


_ready: deque[_Task] = deque()
_timers: list = []          # heap of (wake, seq, task)
_timer_seq = 0
_clock = 0
_current: _Task | None = None
_channels: list = []        # every channel, oldest first
_live: dict[_Task, None] = {}   # every task not yet returned: Python must not collect (and close) one
_abandoned: list = []       # those left when main returned, kept alive for good
_exit_on_panic = False
_flush_output = sys.stdout.flush   # run_main's `flush`: before the process ends


class _Park:
    """`await __park()`: the task waits until something queues it again."""
    def __await__(self):
        yield


_PARK = _Park()


def now() -> int:
    return _clock


async def sleep(ms: int) -> None:
    global _timer_seq
    wake = min(_clock + max(ms, 0), 2**63 - 1)   # a deadline beyond i64 is its largest value
    heapq.heappush(_timers, (wake, _timer_seq, _current))
    _timer_seq += 1
    await _PARK


async def yield_now() -> None:
    _ready.append(_current)
    await _PARK


class Join:
    """The owning handle of a spawned task."""
    __slots__ = ("_task",)

    def __init__(self, t: _Task):
        self._task = t

    def __await__(self):
        t = self._task
        if not t.done:
            t.joiner = _current
            yield
        return t.result

    def detach(self) -> None:
        """The Join dropped without `await`: only its result's destruction shows."""
        t = self._task
        if t.done:
            _drop(t.result)
        else:
            t.detached = True


def spawn(coro) -> Join:
    t = _Task(coro)
    _live[t] = None
    _ready.append(t)
    return Join(t)


class Maybe:
    __slots__ = ("ok", "value")

    def __init__(self, ok: bool, value):
        self.ok = ok
        self.value = value

    def __repr__(self):
        return f"Maybe({self.ok}, {self.value!r})"


class Channel:
    def __init__(self, capacity: int, zero=0):
        if capacity < 1:
            panic("a channel's capacity must be at least 1")
        self.cap = capacity
        self.zero = zero
        self.values: deque = deque()
        self.closed = False
        self.receivers: deque[_Task] = deque()
        self.senders: deque[_Task] = deque()
        _channels.append(self)

    async def send(self, v) -> None:
        while len(self.values) == self.cap and not self.closed:
            self.senders.append(_current)
            await _PARK
        if self.closed:
            panic("send on a closed channel")
        self.values.append(v)
        if self.receivers:
            _ready.append(self.receivers.popleft())

    async def recv(self) -> Maybe:
        while not self.values and not self.closed:
            self.receivers.append(_current)
            await _PARK
        if not self.values:
            return Maybe(False, self.zero)
        v = self.values.popleft()
        if self.senders:
            _ready.append(self.senders.popleft())
        return Maybe(True, v)

    def close(self) -> None:
        self.closed = True
        _ready.extend(self.receivers)
        self.receivers.clear()
        _ready.extend(self.senders)
        self.senders.clear()


def channel(capacity: int, zero=0) -> Channel:
    """`channel<T>(capacity)`; `zero` is T's zero value, the `value` of a failed recv."""
    return Channel(capacity, zero)


def _drop(value) -> None:
    """Destroy a value that may hold coroutines: a generator's pending `finally`s
    run (PyCoro: its `defer`s); a Join detaches."""
    if isinstance(value, types.GeneratorType):
        value.close()
    elif isinstance(value, Join):
        value.detach()
    elif isinstance(value, Maybe):
        _drop(value.value)


# ---- running

def _step(t: _Task) -> None:
    global _current
    _current = t
    try:
        t.coro.send(None)
    except StopIteration as stop:
        t.done = True
        t.result = stop.value
        _live.pop(t, None)
        if t.detached:
            _drop(t.result)
        elif t.joiner is not None:
            _ready.append(t.joiner)
    finally:
        _current = None


def _reset() -> None:
    global _timer_seq, _clock, _current
    _ready.clear()
    _timers.clear()
    _channels.clear()
    _live.clear()
    _timer_seq = _clock = 0
    _current = None


def run(main) -> int:
    """Run `async def main()` in this process; returns the exit status (0), or
    raises Panic. Tasks left unfinished are kept in `_abandoned`, never
    resumed nor closed (until the interpreter exits, which may close them:
    `run_main` does not let it)."""
    global _clock
    _reset()
    try:
        first = _Task(main())
        _ready.append(first)
        while not first.done:
            if _ready:
                _step(_ready.popleft())
                continue
            if not _timers:
                panic("deadlock: every task is waiting and no timer is pending")
            wake, _, t = heapq.heappop(_timers)
            _clock = max(_clock, wake)
            _ready.append(t)
            while _timers and _timers[0][0] <= _clock:   # every other timer due by then
                _ready.append(heapq.heappop(_timers)[2])
        _abandoned.extend(_live)
        for ch in reversed(_channels):
            while ch.values:
                _drop(ch.values.popleft())
        return 0
    finally:
        _reset()


def run_main(main, flush=None) -> None:
    """Run `async def main()` as a PyCoro program runs: exit 0 when it returns,
    or 101 after "panic: …" on stderr. Tasks still waiting are never resumed
    nor closed (os._exit: no `finally` of theirs runs). `flush()` writes out
    what the twin's own print buffers (oracle.py's `_flush`) before either exit."""
    global _exit_on_panic, _flush_output
    _exit_on_panic = True
    if flush is not None:
        _flush_output = flush
    try:
        status = run(main)
    except Panic as p:
        _exit_panicking(str(p))
    except Exception as e:   # an exception escaping a task: a panic too
        _exit_panicking(f"{type(e).__name__}: {e}")
    _flush_output()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


# ---- the prelude's Task<T> and block_on

class task:
    """`Task<T>` (prelude.pc): lazy; `await t` runs it the first time, as a
    nested call, and gives its value every time."""
    __slots__ = ("_coro", "_done", "_value")

    def __init__(self, coro):
        self._coro = coro
        self._done = False
        self._value = None

    def __await__(self):
        if not self._done:
            self._value = yield from self._coro.__await__()
            self._done = True
        return self._value

    def done(self) -> bool:
        return self._done

    def __del__(self):
        if not self._done:
            self._coro.close()   # never started: nothing runs; no "never awaited" warning


def taskfn(f):
    """`@taskfn async def f(…)`: calling f gives a lazy `task`, as a PyCoro
    `fn f(…) -> Task<T>` does."""
    @functools.wraps(f)
    def make(*args, **kwargs):
        return task(f(*args, **kwargs))
    return make


def block_on(t: task):
    """Run `t` to completion here; no other task runs meanwhile."""
    if t.done():
        panic("resumed a finished coroutine")
    it = t.__await__()
    try:
        it.send(None)
    except StopIteration as stop:
        return stop.value
    panic("block_on: the task suspended and nothing can resume it")
