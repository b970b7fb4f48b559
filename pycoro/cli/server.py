"""The compile server (docs/server.md; started, stopped and asked by
server_commands.py: `pycoro server start|stop|status`).

A process that has imported the compiler, LLVM and the CLI once and keeps
them, so that a command line does not pay for that again (~125 ms of every
`pycoro` process: bench/README.md). For each command line a client
(client.py) hands it, it forks a worker, which becomes the client's process
in all that a command reads: its argv, directory, environment, umask, and
its stdin, stdout and stderr (file descriptors passed over the socket). It
then runs the command as main.py would, the program of a `pycoro run`
included. The worker is usually a spare, forked and warmed while the
server was idle (_Spare). The worker tells the client its exit status
itself, its output flushed, before its process ends: the end of a process
that has loaded LLVM, and the server's noticing it, took ~5 ms the client
no longer waits for. The server tells the client how a worker ended that
could not say so (the signal that killed it: SIGCHLD wakes its loop), and
kills the worker if the client goes away first (Ctrl-C). (A supervisor
process per command cost a second fork, 7 ms.)

Forking keeps every command apart: nothing one command changes survives it,
and the server itself never runs one. The server exits after `--idle`
seconds without a command, or on `pycoro server stop` (which takes no new
command and lets the running ones end first).
"""
from __future__ import annotations

import contextlib
import gc
import io
import os
import select
import signal
import socket
import sys
import time
from pathlib import Path

from . import client

# What a warm-up compiles: generators, `yield from`, a std/iter adapter given
# a function, a float print, so that most of the compiler's code runs.
_WARM_UP = """import "std/iter";
fn upto(n: i64) -> Generator<i64> {
    var i: i64 = 0;
    while i < n { yield i; i += 1; }
}
fn nested(n: i64) -> Generator<i64> {
    yield from upto(n);
    yield n;
}
fn twice(x: i64) -> i64 { return x * 2; }
fn main() {
    var s: i64 = 0;
    for v in map(nested(3), twice) { s += v; }
    print(s, 1.5);
}
"""


def _compile_warm_up() -> None:
    import tempfile
    from ..pipeline.driver import Compilation
    from ..pipeline.options import Options
    with tempfile.TemporaryDirectory() as tmp:
        Compilation(_WARM_UP, "<warm-up>", Path(tmp), Options()).build("obj", os.path.join(tmp, "warm.o"))


def _warm() -> None:
    """Load what every command needs, once: the CLI, the compiler, LLVM and
    the parser; compile a small program so that each stage has run once;
    parse the stdlib and the runtime (driver.preload)."""
    from . import app  # noqa: F401 - typer and the commands
    from ..pipeline.driver import preload
    _compile_warm_up()
    preload()   # after the warm-up, which would take the runtime it parses
    # What a fork finds must stay shared: a collection in a worker walks every
    # object the server holds, and each page it writes is copied first. A
    # server whose first warm-up built the parser and the stdlib's trees (an
    # empty cache) left its collector so close to a full collection that
    # every worker ran one: the parse stage took 35-53 ms instead of 5
    # (gen_sum's build through it 115 ms instead of 90). Frozen, the server's
    # objects are never walked again (CPython's advice for forking servers).
    gc.collect()
    gc.freeze()


def serve(path: str, idle: int) -> None:
    _warm()
    if os.path.exists(path):
        other = client.connect(path)
        if other is not None:   # one started at the same time: it serves
            other.close()
            return
        os.unlink(path)   # a server that died without removing its socket
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)   # this user's only, whatever the folder (client.server_dir)
    listener.listen(64)
    identity = os.stat(path).st_ino
    with contextlib.suppress(FileNotFoundError):
        os.unlink(client.beside(path, ".starting"))   # (client._spawn_once's mark)
    # A worker's end wakes the loop: SIGCHLD writes to this pipe.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # `kill`: leave the loop and remove the socket on the way out. Not by
    # raising from the handler: raised inside os.fork's hooks (logging takes
    # its lock before a fork and releases it after), it left that lock taken,
    # and the exit then waited for it for ever (logging.shutdown).
    terminated: list[int] = []
    signal.signal(signal.SIGTERM, lambda number, _: terminated.append(number))
    workers: dict[int, socket.socket | None] = {}   # pid → its client's connection (None: the client left)
    spare = _Spare()
    started = last = time.monotonic()
    served = 0

    def fork(prepare) -> int:
        """A child that closes what is the server's, then runs `prepare()`."""
        pid = os.fork()
        if pid == 0:
            for other in [listener, *(c for c in workers.values() if c is not None), *spare.sockets()]:
                other.close()
            os.close(wake_read)
            os.close(wake_write)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            prepare()   # never returns
        return pid

    stopping = False   # `stop`: no new commands; the running ones end first
    try:
        spare.start(fork)
        while True:
            if terminated or (stopping and not workers):
                return
            waiting = [wake_read, *(c for c in workers.values() if c is not None), *spare.waiting()]
            if not stopping:
                waiting.append(listener)
            timeout = None if workers else max(0.0, last + idle - time.monotonic())
            ready, _, _ = select.select(waiting, [], [], timeout)
            if wake_read in ready:
                while len(os.read(wake_read, 512)) == 512:
                    pass
                _reap(workers)
                spare.reap(fork)
            spare.check(ready)
            for pid, connection in list(workers.items()):
                if connection is not None and connection in ready and _gone(connection):
                    os.kill(pid, signal.SIGKILL)   # the client went away (Ctrl-C): so does its command
                    connection.close()
                    workers[pid] = None
            if listener not in ready:
                if not workers and time.monotonic() - last >= idle:
                    return
                continue
            connection, _ = listener.accept()
            now = time.monotonic()
            connection.settimeout(10)   # a client that connects and says nothing does not hold the server
            try:
                request, fds = client.receive(connection, max_fds=3)
            except (OSError, ValueError, EOFError, TypeError):   # (marshal's errors)
                connection.close()
                continue
            op = request.get("op") if isinstance(request, dict) else None
            if op == "status":
                _answer(connection, {"pid": os.getpid(), "served": served, "running": len(workers),
                                     "spare": spare.ready,
                                     "uptime": now - started, "idle": now - last, "idle_limit": idle})
            elif op == "stop":
                _answer(connection, {"stopped": True, "running": len(workers)})
                stopping = True
                listener.close()
                _remove(path, identity)
                spare.stop()
            elif op == "run" and len(fds) == 3:
                served, last = served + 1, now
                pid = spare.take(request, fds, connection)
                if pid is None:   # none ready: a worker forked now
                    pid = fork(lambda: _work(fds, request, connection))
                connection.settimeout(None)
                workers[pid] = connection
                _reap(workers)   # (one that ended before it was listed)
            else:
                connection.close()
            for fd in fds:
                os.close(fd)
    finally:
        spare.stop()
        _remove(path, identity)
        _end_workers(workers)


def _remove(path: str, identity: int) -> None:
    """Remove the server's socket, unless a newer server's is there now."""
    try:
        if os.stat(path).st_ino == identity:
            os.unlink(path)
    except OSError:
        pass


class _Spare:
    """A worker forked ahead of time (at the start, and whenever a command
    has ended), which has compiled the warm-up program before any command
    comes. A fresh fork's first compilation ran ~40 ms
    slower than its second (gen_sum: 114 → 71 ms): each page it writes is
    copied from the server's first. The spare pays that while the server is
    idle, then takes the next command (its descriptors and request over a
    socket pair). A command that finds none ready gets a fresh fork. The
    next spare is forked when a command has ended, not as soon as the last
    one is taken: warming beside a running command on a 2-core machine, it
    slowed that command's compilation by as much as a fresh fork costs
    (gen_sum's stages 60-70 -> 96-107 ms)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.channel: socket.socket | None = None   # the server's end
        self.ready = False
        self.failed = False   # one ended before it was ready: fresh forks from then on

    def start(self, fork) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.channel = ours
        self.pid = fork(lambda: _stand_by(theirs))
        theirs.close()

    def sockets(self) -> list[socket.socket]:
        return [self.channel] if self.channel is not None else []

    def waiting(self) -> list[socket.socket]:
        """What to watch: the spare saying it is ready."""
        return self.sockets() if not self.ready else []

    def check(self, ready: list) -> None:
        if self.channel is not None and not self.ready and self.channel in ready:
            self.ready = _gone(self.channel) is False   # its one byte: ready (nothing: it failed)

    def take(self, request: dict, fds: list[int], connection: socket.socket) -> int | None:
        """The spare's pid, the command handed to it (and the client's
        connection, to answer on); None when none is ready."""
        if not self.ready:
            return None
        pid, channel = self.pid, self.channel
        self.pid, self.channel, self.ready = None, None, False
        try:
            client.send(channel, request, [*fds, connection.fileno()])
        except OSError:   # it has gone: a fresh fork takes the command
            _end(pid)
            return None
        finally:
            channel.close()
        return pid

    def reap(self, fork) -> None:
        """After a child ended: a new spare where none is (and the old one's
        end, if it was the spare that ended)."""
        if self.pid is not None:
            ended, _ = os.waitpid(self.pid, os.WNOHANG)
            if ended == 0:
                return
            self.channel.close()
            self.pid, self.channel, self.ready, self.failed = None, None, False, True
        if not self.failed:
            self.start(fork)

    def stop(self) -> None:
        """End the spare, and start none after it."""
        self.failed = True
        if self.pid is not None:
            _end(self.pid)
        if self.channel is not None:
            self.channel.close()
        self.pid, self.channel, self.ready = None, None, False


_GRACE = 2.0   # seconds a worker sent SIGTERM has to end before SIGKILL


def _end_workers(workers: dict) -> None:
    """The server is leaving with commands still running (SIGTERM: `stop`
    lets them end first): end them as that signal would have ended each
    command run alone, and tell their clients, which then end so too. Left
    running, a worker went on writing to the client's terminal after the
    client had exited (status 70, "the compile server stopped"). One whose
    program ignores SIGTERM is killed `_GRACE` seconds later, so that the
    server's own end does not wait for it."""
    _signal_all(workers, signal.SIGTERM)
    deadline = time.monotonic() + _GRACE
    _reap(workers)
    while workers:
        time.sleep(0.01)
        if deadline is not None and time.monotonic() >= deadline:
            deadline = None
            _signal_all(workers, signal.SIGKILL)
        _reap(workers)


def _signal_all(workers: dict, number: int) -> None:
    for pid in workers:
        with contextlib.suppress(ProcessLookupError):   # (ended, not yet reaped)
            os.kill(pid, number)


def _outcome(how: int) -> dict:
    """How a worker ended (its wait status), as a client is told."""
    return {"signal": os.WTERMSIG(how)} if os.WIFSIGNALED(how) else {"status": os.waitstatus_to_exitcode(how)}


def _end(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _stand_by(channel: socket.socket) -> None:
    """The spare: warm, say so, then wait for a command (or the server's end)."""
    try:
        _compile_warm_up()
        # The warm-up took the runtime the server had parsed: parse it again
        # now, while idle, not in the command (3-4 ms of its `link runtime`).
        from ..pipeline.driver import preload_runtime
        preload_runtime()
        channel.sendall(b"!")
        request, fds = client.receive(channel, max_fds=4)
    except BaseException:  # noqa: BLE001 - a spare that cannot serve just ends
        os._exit(0)
    if request is None or len(fds) != 4:
        os._exit(0)
    channel.close()
    os.set_inheritable(fds[3], False)   # (as accept's: not for what the command starts)
    _work(fds[:3], request, socket.socket(fileno=fds[3]))


def _reap(workers: dict) -> None:
    """Tell each client whose worker has ended how it ended: its exit status,
    or the signal that killed it."""
    for pid, connection in list(workers.items()):
        ended, how = os.waitpid(pid, os.WNOHANG)
        if ended == 0:
            continue
        del workers[pid]
        if connection is not None:
            _answer(connection, _outcome(how))


def _gone(connection: socket.socket) -> bool:
    """Whether a client that has sent its command has closed its end."""
    try:
        return not connection.recv(1, socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        return True


def _answer(connection, message: dict) -> None:
    try:
        client.send(connection, message)
    except OSError:
        pass
    connection.close()


def _work(fds: list[int], request: dict, connection: socket.socket) -> None:
    """The worker: the client's process in all that a command reads, then
    the command; its exit status goes to the client on `connection`."""
    from .main import exit_fork, run_here   # (first: this module is `__main__` here, whose package changes below)

    def command() -> int:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(request["umask"])
        signal.signal(signal.SIGINT, signal.default_int_handler)   # (the fork reset the server's own)
        unbuffered = bool(request["env"].get("PYTHONUNBUFFERED"))
        sys.stdin, sys.stdout, sys.stderr = (_stdio(fd, encoding, errors, unbuffered) for fd, encoding, errors
                                             in zip((0, 1, 2), request["encodings"], request["errors"]))
        sys.argv = [request["argv0"], *request["argv"]]
        sys.modules["__main__"].__package__ = request["main_package"]   # this fork's, for help's usage line
        return run_here(request["argv"])
    exit_fork(command, tell=lambda status: _answer(connection, {"status": status}))


def _stdio(fd: int, encoding: str | None, errors: str | None, unbuffered: bool) -> io.TextIOWrapper:
    """A standard stream over the client's file, as the client's Python made
    its own: its encoding and error handler; stderr and terminals buffered by
    line, other outputs in blocks; PYTHONUNBUFFERED, written through."""
    raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
    buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding=encoding or "utf-8",
                            errors=errors or ("backslashreplace" if fd == 2 else "strict"),
                            line_buffering=fd == 2 or (fd == 1 and os.isatty(fd)),
                            write_through=unbuffered and fd > 0)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
