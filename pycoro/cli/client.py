"""Hands a command line to the compile server (server.py), when one runs.

A `pycoro` process spends ~125 ms importing Python's and the compiler's
modules and LLVM before it compiles anything (bench/README.md). The server
has them loaded: it forks a worker per command line, which runs the command
as this process would, in this process's directory and environment, writing
to its stdin, stdout and stderr (passed over the socket), and this process
exits with the worker's status. `PYCORO_SERVER=0` keeps every command here;
`PYCORO_SERVER=auto` starts a server where a command finds none.

Light: the socket and the protocol only; nothing of the compiler. Messages
are `marshal`led and the socket is `_socket`'s: `json` and `socket` (its
enums) cost 5 ms of the ~45 that a handed-over command spends here. Paths
are strings: `pathlib` would import fnmatch, urllib.parse and ipaddress (3
ms). File descriptors are packed by `struct`: `array` imports
collections.abc and collections (2.3 ms).
"""
from __future__ import annotations

import _socket as socket
import marshal
import os
import _signal as signal   # `signal` wraps it in enums: 1-2 ms of a light start
import struct
import sys
import time

DEFAULT_IDLE = 1800   # seconds without a command before a server exits
_SPAWNING = 30.0      # seconds a server being started is waited for, before another is

# Command lines a worker runs (`run` only once the cache has missed:
# commands.run_program). `lsp`, `gdb` and `server` stay in this process.
DELEGATED = ("run", "build", "check", "explain")
_HEADER = struct.Struct("!I")   # a message's length, before it
_FD = struct.calcsize("i")      # a file descriptor in SCM_RIGHTS' payload (a C int)
# Unix sockets that pass file descriptors, and fork: not on Windows
SUPPORTED = hasattr(socket, "AF_UNIX") and hasattr(socket, "SCM_RIGHTS") and hasattr(os, "fork")


def server_dir(create: bool = False) -> str | None:
    """Where servers' sockets are: $PYCORO_SERVER_DIR, else
    $XDG_RUNTIME_DIR/pycoro, else /tmp/pycoro-UID (tmux's rule). Only a
    folder of this user's that no one else may enter: another user who
    could reach the socket could have the server run commands as this one,
    or put their own server there. None where there is none (fit to use)."""
    path = chosen_dir()
    if create:
        os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if stat.st_uid != os.getuid() or stat.st_mode & 0o077:
        return None
    return path


def chosen_dir() -> str:
    chosen = os.environ.get("PYCORO_SERVER_DIR")
    if not chosen:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        chosen = os.path.join(runtime, "pycoro") if runtime else f"/tmp/pycoro-{os.getuid()}"
    return os.path.abspath(chosen)   # (the server runs in `/`)


def server_name() -> str:
    """The server this compiler may use: one of exactly these sources (the
    cache's fingerprint of them) run by this Python in this environment
    (`python` and `python3` of one venv alike: the console script's is one,
    `python -m pycoro` may be the other)."""
    from ..common.cache import compiler_fingerprint, digest
    return digest(f"{compiler_fingerprint()} {sys.prefix} {os.path.realpath(sys.executable)}")[:20]


def socket_path(create: bool = False) -> str | None:
    folder = server_dir(create)
    return None if folder is None else os.path.join(folder, f"{server_name()}.sock")


def beside(socket_file: str, suffix: str) -> str:
    """The file next to a server's socket with this suffix (its `.log`, its `.starting` mark)."""
    return os.path.splitext(socket_file)[0] + suffix


def connect(path: str) -> socket.socket | None:
    """A connection to the server at `path`; None when none answers there."""
    if not SUPPORTED:
        return None
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(path)
    except OSError:
        client.close()
        return None
    return client


def send(connection: socket.socket, message: dict, fds: list[int] = ()) -> None:
    data = marshal.dumps(message)
    data = _HEADER.pack(len(data)) + data
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))] if fds else []
    sent = connection.sendmsg([data], ancillary)
    if sent < len(data):   # a large environment: the rest, without the descriptors again
        connection.sendall(data[sent:])


def receive(connection: socket.socket, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One message (None: the peer closed the connection) and the file
    descriptors that came with it. Peers are this user's processes only (the
    socket is in a folder no one else may enter: server_dir)."""
    fds: list[int] = []
    data, ancillary, _, _ = connection.recvmsg(_HEADER.size, socket.CMSG_SPACE(max_fds * _FD))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += struct.unpack(f"{len(payload) // _FD}i", payload[:len(payload) - len(payload) % _FD])
    while data and len(data) < _HEADER.size:
        more = connection.recv(_HEADER.size - len(data))
        if not more:
            break
        data += more
    if len(data) < _HEADER.size:
        return None, fds
    (length,) = _HEADER.unpack(data)
    body = b""
    while len(body) < length:
        more = connection.recv(length - len(body))
        if not more:
            return None, fds
        body += more
    return marshal.loads(body), fds


def ask(message: dict, path: str | None = None) -> dict | None:
    """A control request's answer (`status`, `stop`) from this compiler's
    server, or the one at `path`; None: no server answers."""
    path = path or socket_path()
    connection = connect(path) if path is not None else None
    if connection is None:
        return None
    try:
        send(connection, message)
        return receive(connection)[0]
    finally:
        connection.close()


def spawn(path: str, idle: int = DEFAULT_IDLE):
    """Start a server process at `path`, detached (its messages go to a .log
    beside the socket); the process, or None where its socket's path is too
    long (sockaddr_un holds 108 bytes)."""
    if len(os.fsencode(path)) > 100:
        return None
    import subprocess
    with open(beside(path, ".log"), "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "pycoro.cli.server", path, str(idle)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, cwd="/")


def _spawn_once(path: str) -> None:
    """`PYCORO_SERVER=auto` and no server: start one for the commands after
    this one, unless one was started in the last seconds (it is warming up:
    a `.starting` mark beside the socket, which the server removes)."""
    mark = beside(path, ".starting")
    try:
        if time.time() - os.stat(mark).st_mtime < _SPAWNING:
            return
    except OSError:
        pass
    try:
        open(mark, "a").close()
        os.utime(mark)
        spawn(path)
    except OSError:
        pass


def delegate(argv: list[str]) -> int | None:
    """Run `pycoro ARGV` in the server's worker: its exit status, or None
    when no server takes it (this process then does the work). With
    `PYCORO_SERVER=auto`, a command that finds none starts one for later."""
    mode = os.environ.get("PYCORO_SERVER", "")
    if mode == "0" or not argv or argv[0] not in DELEGATED or not SUPPORTED:
        return None
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)   # a closed stdin/stdout/stderr cannot be passed: run here
        cwd = os.getcwd()   # (a directory since removed: run here, and fail as alone)
    except OSError:
        return None
    path = socket_path(create=mode == "auto")
    connection = connect(path) if path is not None and os.path.exists(path) else None
    if connection is None:
        if mode == "auto" and path is not None:
            _spawn_once(path)
        return None
    try:
        try:
            streams = (sys.stdin, sys.stdout, sys.stderr)
            send(connection, {"op": "run", "argv": argv, "argv0": sys.argv[0], "cwd": cwd,
                              "env": dict(os.environ), "umask": _umask(),
                              # how Python was started (`python -m pycoro`: help says so) and its text streams
                              "main_package": getattr(sys.modules["__main__"], "__package__", None),
                              "encodings": [getattr(s, "encoding", None) for s in streams],
                              "errors": [getattr(s, "errors", None) for s in streams]},
                 [0, 1, 2])
        except OSError:
            return None   # it went away before it took the command: run here
        # Ctrl-C ends this process as it ends a native program; the server
        # then ends the worker (it sees the connection close).
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        except ValueError:
            pass   # not the main thread (run_program's, which has done so)
        try:
            answer, _ = receive(connection)
        except OSError:
            answer = None
    finally:
        connection.close()
    if answer is None:
        print("pycoro: error: the compile server stopped during the command "
              "(`PYCORO_SERVER=0` runs commands without it)", file=sys.stderr)
        return 70
    if "signal" in answer:   # the worker was killed by a signal: so is this process
        try:
            end_by(answer["signal"])
        except ValueError:   # not the main thread (run_program's): main._leave ends by it
            pending_signal.append(answer["signal"])
        return 128 + answer["signal"]
    return answer["status"]


def tell_launcher(launch_command: str) -> None:
    """A command this compiler's server ran for bin/pycoro's Python command:
    its launcher hands it the next ones itself (pipeline/launch.py's serve
    index), without starting Python."""
    chosen = os.environ.get("PYCORO_SERVER_DIR") or os.environ.get("XDG_RUNTIME_DIR")
    if chosen and not os.path.isabs(chosen):
        return   # (the launcher compares the variable, not the folder it names from here)
    from ..pipeline.launch import write_serve_index
    write_serve_index(launch_command, socket_path())


# A signal this process must end by, told on a thread that cannot set its
# handler (Python ignores SIGPIPE and SIGXFSZ: sent while ignored, it would
# end nothing, and the status would be 128 + N instead).
pending_signal: list[int] = []


def end_by(number: int) -> None:
    """End this process by signal `number` (on the main thread: ValueError
    elsewhere, unless it is SIGKILL, which no handler stands in the way of
    and none may be set for)."""
    sys.stdout.flush()
    if number != signal.SIGKILL:
        signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
