"""A fork server for `pycoro` command lines: a process that has imported the
compiler once (about 0.3 s of every `pycoro run`: LLVM, lark, the checker)
and runs each command line in a fork of itself, through the same entry point
as the `pycoro` command (cli.main.run_here), with the child's stdout and stderr in
files and a time limit (SIGALRM). The runner keeps one per job.

Protocol: the runner writes a JSON line {"argv", "cwd", "timeout", "out",
"err"} to the server's stdin; the server answers {"status"} (the child's
exit status; negative: killed by that signal) on its stdout.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys


class ForkServer:
    def __init__(self, env: dict):
        # -P: a directory `pycoro` where the runner was started must not shadow the package
        self.proc = subprocess.Popen([sys.executable, "-P", "-m", "pycoro.difftest.forkserver"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        self._n = 0

    def run(self, argv: list[str], cwd: str, timeout: float) -> tuple[int | None, str, str]:
        """(status or None on timeout, stdout, stderr) of `pycoro ARGV` in `cwd`."""
        self._n += 1
        out, err = os.path.join(cwd, f".fs{self._n}.out"), os.path.join(cwd, f".fs{self._n}.err")
        self.proc.stdin.write(json.dumps({"argv": argv, "cwd": cwd, "timeout": timeout, "out": out, "err": err}) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("the fork server died")
        status = json.loads(reply)["status"]
        with open(out, errors="replace") as f:
            stdout = f.read()
        with open(err, errors="replace") as f:
            stderr = f.read()
        return (None if status == -14 else status), stdout, stderr   # -SIGALRM: the time limit

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)


def _child(req) -> None:
    import signal
    from pycoro.cli.main import exit_fork, run_here

    def command() -> int:
        os.chdir(req["cwd"])
        for fd, path in ((1, req["out"]), (2, req["err"])):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        signal.alarm(max(1, math.ceil(req["timeout"])))
        sys.argv = ["pycoro", *req["argv"]]
        return run_here(req["argv"])   # (never a compile server's: this is one)
    exit_fork(command)


def serve() -> None:
    import pycoro.pipeline.driver
    import pycoro.cli.main
    import pycoro.pipeline.rerun   # noqa: F401
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
