"""`pycoro server`: a command handed to the compile server behaves as the same
command run alone (output, diagnostics, exit status, files, stdin, directory,
environment), and the server's life: start, status, stop, idle exit, a
client gone (Ctrl-C), a dead server's socket, a folder others could write."""
from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import HEAVY, ROOT, imports_of_pycoro

PROGRAM = """fn main() -> i32 {
    print("hi", 41 + 1);
    return 3;
}
"""
PANIC = """fn main() {
    var a: [i64; 2];
    var i = 5;
    print(a[i]);
}
"""
BAD = "fn main() {\n    let x: i64 = true;\n}\n"
LONG = """fn main() {
    var s: i64 = 0;
    var i: i64 = 0;
    while i < 100000000000 { s += i ^ (s >> 3); i += 1; }
    print(s);
}
"""


def command(env: dict, *args, cwd=ROOT, stdin=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "pycoro", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, input=stdin, timeout=timeout)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A started server's environment (a private folder and cache); stopped after."""
    tmp = tmp_path_factory.mktemp("server")
    env = {**os.environ, "PYCORO_SERVER_DIR": str(tmp / "sockets"), "PYCORO_CACHE_DIR": str(tmp / "cache"),
           "PYCORO_SERVER": "1"}
    started = command(env, "server", "start", "--idle", "300")
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith("pycoro server: started (pid ")
    yield env
    command(env, "server", "stop")


def served(env: dict) -> int:
    status = command(env, "server", "status")
    assert status.returncode == 0, status.stdout
    return int(status.stdout.split("; ")[1].split(" commands")[0])


def alone(env: dict) -> dict:
    return {**env, "PYCORO_SERVER": "0"}


def same(env: dict, *args, cwd=ROOT, stdin=None, fresh: Path | None = None):
    """The command through the server and alone: the same output and status.
    `fresh`: a cache folder emptied before each (a `run` compiles every time)."""
    results = []
    for where, delegated in ((env, 1), (alone(env), 0)):
        if fresh is not None:
            where = {**where, "PYCORO_CACHE_DIR": str(fresh / str(delegated))}
        before = served(env)
        proc = command(where, *args, cwd=cwd, stdin=stdin)
        assert served(env) == before + delegated
        results.append((proc.returncode, proc.stdout, proc.stderr))
    assert results[0] == results[1]
    return results[0]


def test_run_compiles_in_the_server(server, tmp_path):
    program = tmp_path / "p.pc"
    program.write_text(PROGRAM)
    assert same(server, "run", program, fresh=tmp_path / "c") == (3, "hi 42\n", "")


def test_a_handed_over_command_imports_nothing_heavy(server, tmp_path):
    """The client side of a served command: the socket, the protocol, the
    socket's name; nothing of the compiler, of the CLI's commands, or pathlib."""
    (tmp_path / "p.pc").write_text(PROGRAM)
    proc, imported = imports_of_pycoro(server, "build", "p.pc", "--emit", "obj", "-o", "p.o", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert (tmp_path / "p.o").is_file()
    assert "pycoro.cli.client" in imported
    assert not (HEAVY | {"pycoro.cli.commands", "json", "socket"}) & imported


def test_a_panic_diagnostics_and_warnings(server, tmp_path):
    (tmp_path / "panic.pc").write_text(PANIC)
    (tmp_path / "bad.pc").write_text(BAD)
    status, _, err = same(server, "run", "panic.pc", cwd=tmp_path, fresh=tmp_path / "c")
    assert status == 101 and err.startswith("panic: index out of bounds: the length is 2 but the index is 5 at "
                                            "panic.pc:4:11")
    status, _, err = same(server, "check", "bad.pc", cwd=tmp_path)
    assert status == 1 and err.startswith("bad.pc:2:18: error: expected `i64`, found `bool`")
    status, _, err = same(server, "build", "--deny-warnings", "bad.pc", cwd=tmp_path)
    assert status == 1


def test_stdin_and_the_directory(server, tmp_path):
    (tmp_path / "lib.pc").write_text("fn answer() -> i64 { return 42; }\n")
    source = 'import "lib.pc";\nfn main() {\n    print(answer());\n}\n'
    assert same(server, "run", "-", cwd=tmp_path, stdin=source) == (0, "42\n", "")


def test_build_writes_where_the_client_is(server, tmp_path):
    (tmp_path / "p.pc").write_text(PROGRAM)
    for name, env in (("served", server), ("alone", alone(server))):
        before = served(server)
        assert command(env, "build", "p.pc", "-o", name, cwd=tmp_path).returncode == 0
        assert served(server) == before + (name == "served")
        proc = subprocess.run([tmp_path / name], capture_output=True, text=True)
        assert (proc.returncode, proc.stdout) == (3, "hi 42\n")
    assert same(server, "build", "p.pc", "--emit", "llvm", "-o", "-", cwd=tmp_path)[1].startswith("; ModuleID")


def test_the_environment_is_the_clients(server, tmp_path):
    (tmp_path / "panic.pc").write_text(PANIC)
    env = {**server, "PYCORO_BACKTRACE": "1", "PYCORO_CACHE_DIR": str(tmp_path / "c")}
    before = served(server)
    proc = command(env, "run", "panic.pc", cwd=tmp_path)
    assert served(server) == before + 1
    assert proc.returncode == 101
    assert proc.stderr.endswith("backtrace, most recent call first:\n   0: main at panic.pc:4:11\n"), proc.stderr


def test_ctrl_c_ends_the_command(server, tmp_path):
    (tmp_path / "long.pc").write_text(LONG)
    env = {**server, "PYCORO_CACHE_DIR": str(tmp_path / "c")}
    client = subprocess.Popen([sys.executable, "-m", "pycoro", "run", "long.pc"], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _until(lambda: _workers(tmp_path), 60)
    assert _workers(tmp_path), "no worker ran the program"
    client.send_signal(signal.SIGINT)
    assert client.wait(timeout=30) == -signal.SIGINT   # as a native program dies of Ctrl-C
    _until(lambda: not _workers(tmp_path), 30)
    assert not _workers(tmp_path), "the worker outlived its client"


def _until(condition, seconds: float, every: float = 0.05) -> None:
    """Wait until `condition()` holds, for at most `seconds` (the test's
    assertion after it says what should hold)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(every)


def _private(tmp_path: Path) -> dict:
    """The environment of a test's own server: its sockets and cache in `tmp_path`."""
    return {**os.environ, "PYCORO_SERVER_DIR": str(tmp_path / "s"), "PYCORO_CACHE_DIR": str(tmp_path / "c")}


def _server_pid(env: dict) -> int:
    return int(command(env, "server", "status").stdout.split("pid ")[1].split(",")[0])


def _workers(cwd: Path) -> list[int]:
    """Processes of the server's (this Python's) whose directory is `cwd`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if os.readlink(entry / "cwd") == str(cwd) and "pycoro.cli.server" in (entry / "cmdline").read_text():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_start_twice_status_stop_and_idle_exit(tmp_path):
    env = _private(tmp_path)
    assert command(env, "server", "status").returncode == 3
    assert command(env, "server", "start", "--idle", "2").returncode == 0
    again = command(env, "server", "start")
    assert again.returncode == 0 and "running already" in again.stdout
    assert command(env, "server", "status").returncode == 0
    _until(lambda: command(env, "server", "status").returncode != 0, 60, every=0.5)
    assert command(env, "server", "status").returncode == 3   # it went after 2 s idle
    assert list((tmp_path / "s").glob("*.sock")) == []
    assert command(env, "server", "start", "--idle", "60").returncode == 0
    assert command(env, "server", "stop").stdout == "pycoro server: stopped\n"
    assert command(env, "server", "status").returncode == 3


def test_a_dead_servers_socket(tmp_path):
    """A socket no server listens on: commands run alone; `start` replaces it."""
    env = _private(tmp_path)
    (tmp_path / "s").mkdir(mode=0o700)
    name = subprocess.run([sys.executable, "-c", "from pycoro.cli.client import socket_path; print(socket_path())"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(name)
    dead.close()
    (tmp_path / "p.pc").write_text(PROGRAM)
    proc = command(env, "run", "p.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (3, "hi 42\n")
    assert command(env, "server", "start", "--idle", "60").returncode == 0
    assert command(env, "server", "status").returncode == 0
    command(env, "server", "stop")


def test_a_folder_others_can_write_is_not_used(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    folder.chmod(0o777)
    env = {**os.environ, "PYCORO_SERVER_DIR": str(folder), "PYCORO_CACHE_DIR": str(tmp_path / "c")}
    proc = command(env, "server", "start")
    assert proc.returncode == 1
    assert proc.stderr == f"pycoro server: error: {folder} is not a private folder of this user's (others may enter it)\n"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o777 and not list(folder.iterdir())


def test_usage_errors_and_help(server, tmp_path):
    """typer's messages name the command as the client was started (`python -m pycoro`)."""
    status, _, err = same(server, "build", cwd=tmp_path)
    assert status == 2 and "Usage: python -m pycoro build [OPTIONS] FILE" in err
    status, out, _ = same(server, "check", "--help", cwd=tmp_path)
    assert status == 0 and "Usage: python -m pycoro check [OPTIONS] FILE" in out


def test_stop_ends_the_servers_of_other_versions_and_sigterm_removes_the_socket(tmp_path):
    """A server of another compiler (as after an upgrade) is stopped with this one's."""
    folder = tmp_path / "s"
    env = {**os.environ, "PYCORO_SERVER_DIR": str(folder), "PYCORO_CACHE_DIR": str(tmp_path / "c")}
    assert command(env, "server", "start", "--idle", "60").returncode == 0
    other = folder / "0123456789abcdef0123.sock"
    older = subprocess.Popen([sys.executable, "-m", "pycoro.cli.server", str(other), "60"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _until(other.exists, 60)
    stopped = command(env, "server", "stop")
    assert stopped.stdout == ("pycoro server: stopped\n"
                              "pycoro server: stopped 1 of other pycoro versions or checkouts\n")
    assert older.wait(timeout=30) == 0 and not other.exists()
    third = subprocess.Popen([sys.executable, "-m", "pycoro.cli.server", str(other), "60"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _until(other.exists, 60)
    third.terminate()
    assert third.wait(timeout=30) == 0 and not other.exists()


def test_a_warm_worker_takes_the_next_command(server, tmp_path):
    """A spare worker, warmed ahead of time, waits for the next command and
    runs it as a fresh one would; another is warmed after it."""
    _until(lambda: "a warm worker waits" in command(server, "server", "status").stdout, 60, every=0.2)
    assert "a warm worker waits" in command(server, "server", "status").stdout
    (tmp_path / "p.pc").write_text(PROGRAM)
    assert same(server, "run", "p.pc", cwd=tmp_path, fresh=tmp_path / "c") == (3, "hi 42\n", "")
    _until(lambda: "a warm worker waits" in command(server, "server", "status").stdout, 60, every=0.2)
    assert "a warm worker waits" in command(server, "server", "status").stdout


def test_one_server_for_python_and_python3_of_one_environment(tmp_path):
    """`pycoro` (a console script: `python3`) and `python -m pycoro` find the same server."""
    found = set()
    for name in ("python", "python3"):
        executable = Path(sys.executable).parent / name
        if executable.exists():
            found.add(subprocess.run([str(executable), "-c", "from pycoro.cli.client import server_name; "
                                      "print(server_name())"], capture_output=True, text=True,
                                     check=True).stdout)
    assert len(found) == 1


def test_stop_lets_a_running_command_end(tmp_path):
    """`stop` takes no new command, and the one running ends with its own status."""
    env = _private(tmp_path)
    assert command(env, "server", "start", "--idle", "60").returncode == 0
    (tmp_path / "slow.pc").write_text(
        'extern fn usleep(us: u32) -> i32;\nfn main() -> i32 {\n    usleep(1500000u32);\n    print("done");\n'
        '    return 4;\n}\n')
    running = subprocess.Popen([sys.executable, "-m", "pycoro", "run", "slow.pc"], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _until(lambda: _workers(tmp_path), 60)
    assert command(env, "server", "stop").stdout == "pycoro server: stopped\n"
    assert command(env, "server", "status").returncode == 3   # no new commands
    out, err = running.communicate(timeout=60)
    assert (running.returncode, out, err) == (4, "done\n", "")


def test_pycoro_server_auto_starts_one_for_later_commands(tmp_path):
    """`PYCORO_SERVER=auto`: a command that finds no server runs alone and
    starts one; the commands after it are handed to it."""
    env = {**_private(tmp_path), "PYCORO_SERVER": "auto"}
    (tmp_path / "p.pc").write_text(PROGRAM)
    first = command(env, "check", "p.pc", cwd=tmp_path)
    assert (first.returncode, first.stdout, first.stderr) == (0, "", "")
    _until(lambda: command(env, "server", "status").returncode == 0, 60, every=0.2)
    assert served(env) == 0
    proc = command(env, "run", "p.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (3, "hi 42\n")
    assert served(env) == 1
    assert not list((tmp_path / "s").glob("*.starting"))
    command(env, "server", "stop")


def test_sigterm_ends_the_running_commands_as_it_ends_the_server(tmp_path):
    """A server killed with commands running (a shutdown) ends them with the
    same signal, and each client ends so too, as the command alone would."""
    env = _private(tmp_path)
    assert command(env, "server", "start", "--idle", "60").returncode == 0
    pid = _server_pid(env)
    (tmp_path / "long.pc").write_text(LONG)
    client = subprocess.Popen([sys.executable, "-m", "pycoro", "run", "long.pc"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _until(lambda: _workers(tmp_path), 60)
    assert _workers(tmp_path), "no worker ran the program"
    os.kill(pid, signal.SIGTERM)
    out, err = client.communicate(timeout=30)
    assert (client.returncode, out, err) == (-signal.SIGTERM, "", ""), err
    _until(lambda: not _workers(tmp_path), 30)
    assert not _workers(tmp_path), "the worker outlived its server"
    assert command(env, "server", "status").returncode == 3


def test_a_program_killed_by_an_ignored_signal_ends_the_client_so(server, tmp_path):
    """SIGPIPE, which Python ignores: a served `pycoro run` whose program dies
    of it dies of it too, as the same command alone does (not status 141)."""
    (tmp_path / "pipe.pc").write_text("extern fn signal(sig: i32, handler: u64) -> u64;\n"
                                      "extern fn raise(sig: i32) -> i32;\n"
                                      "fn main() {\n    signal(13, 0);\n    raise(13);\n    print(\"after\");\n}\n")
    served_env = {**server, "PYCORO_CACHE_DIR": str(tmp_path / "c1")}
    before = served(server)
    proc = command(served_env, "run", "pipe.pc", cwd=tmp_path)
    assert served(server) == before + 1   # compiled and run by the server
    assert (proc.returncode, proc.stdout) == (-signal.SIGPIPE, "")
    proc = command({**alone(server), "PYCORO_CACHE_DIR": str(tmp_path / "c2")}, "run", "pipe.pc", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (-signal.SIGPIPE, "")


def test_sigterm_kills_a_program_that_ignores_it_soon_after(tmp_path):
    """A served program that ignores SIGTERM does not keep a killed server
    (and its client) waiting: it is killed a moment later."""
    env = _private(tmp_path)
    assert command(env, "server", "start", "--idle", "60").returncode == 0
    pid = _server_pid(env)
    (tmp_path / "stubborn.pc").write_text(
        "extern fn signal(sig: i32, handler: u64) -> u64;\nextern fn usleep(us: u32) -> i32;\n"
        "fn main() {\n    signal(15, 1);   // SIG_IGN\n    print(\"ignoring\");\n"
        "    loop { usleep(100000u32); }\n}\n")
    client = subprocess.Popen([sys.executable, "-m", "pycoro", "run", "stubborn.pc"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = client.stdout.readline()   # (the program has ignored SIGTERM by then)
    assert line == "ignoring\n"
    os.kill(pid, signal.SIGTERM)
    out, err = client.communicate(timeout=30)
    assert (client.returncode, out, err) == (-signal.SIGKILL, "", ""), err
    _until(lambda: not _workers(tmp_path), 30)
    assert not _workers(tmp_path)
