"""`pycoro server start|stop|status`: the compile server's commands (the
server itself is server.py, started as its own process by `start`)."""
from __future__ import annotations

import os
import sys
import time

from . import client

DEFAULT_IDLE = client.DEFAULT_IDLE
_START_WAIT = 30.0    # seconds `start` waits for a new server to answer


def start(idle: int = DEFAULT_IDLE) -> int:
    """Start a server for this compiler, unless one runs; exit status."""
    if not client.SUPPORTED:
        print("pycoro server: error: a compile server needs Unix sockets and fork (Linux, macOS)", file=sys.stderr)
        return 1
    path = client.socket_path(create=True)
    if path is None:
        print(f"pycoro server: error: {client.chosen_dir()} is not a private folder of this user's "
              "(others may enter it)",
              file=sys.stderr)
        return 1
    running = client.ask({"op": "status"})
    if running is not None:
        print(f"pycoro server: running already (pid {running['pid']}, {path})")
        return 0
    process = client.spawn(path, idle)
    if process is None:
        print(f"pycoro server: error: the socket's path is too long: {path} (set PYCORO_SERVER_DIR)",
              file=sys.stderr)
        return 1
    log = client.beside(path, ".log")
    deadline = time.monotonic() + _START_WAIT
    while time.monotonic() < deadline:
        answer = client.ask({"op": "status"})   # first: a server started at the same time may answer
        if answer is not None:
            print(f"pycoro server: started (pid {answer['pid']}, {path}; it exits after {idle} s without a command)")
            return 0
        if process.poll() is not None:
            print(f"pycoro server: error: the server exited at once (status {process.returncode}; see {log})",
                  file=sys.stderr)
            return 1
        time.sleep(0.02)
    print(f"pycoro server: error: the server did not answer within {_START_WAIT:.0f} s (see {log})", file=sys.stderr)
    return 1


def stop() -> int:
    """Stop this compiler's server and every other of this user's in the
    folder: those of other versions or checkouts, which commands no longer
    reach, would otherwise wait out their idle time."""
    folder = client.server_dir()
    mine = client.socket_path()
    try:
        names = sorted(os.listdir(folder)) if folder is not None else []
    except OSError:   # gone, or unreadable, since server_dir looked
        names = []
    others = [os.path.join(folder, name) for name in names
              if name.endswith(".sock") and os.path.join(folder, name) != mine]
    answer = client.ask({"op": "stop"})
    stopped_others = sum(client.ask({"op": "stop"}, other) is not None for other in others)
    print("pycoro server: stopped" if answer is not None else "pycoro server: none runs")
    if stopped_others:
        print(f"pycoro server: stopped {stopped_others} of other pycoro versions or checkouts")
    return 0


def status() -> int:
    """Exit status 0 when a server runs, 3 when none does (as `systemctl status`)."""
    answer = client.ask({"op": "status"})
    if answer is None:
        print("pycoro server: none runs")
        return 3
    print(f"pycoro server: running (pid {answer['pid']}, {client.socket_path()}); "
          f"{answer['served']} commands served ({answer['running']} running), up {answer['uptime']:.0f} s, "
          f"idle for {answer['idle']:.0f} s of {answer['idle_limit']} s; "
          + ("a warm worker waits" if answer["spare"] else "no warm worker waits"))
    return 0
