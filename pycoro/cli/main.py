"""The `pycoro` command's entry point.

`main` recognises the plain forms of `pycoro run` and `pycoro build` itself
(commands.plain_command) and runs them without the CLI's option parser
(typer, ~20 ms to import): a program compiled before then runs from the
cache without the compiler or LLVM either (rerun.py), as `python x.py` runs
a module from its .pyc. Every other command line goes to typer (app.py),
which parses the same declared options and runs the same actions.

Where a compile server runs (server.py), a command that would compile is
handed to it (client.py): `pycoro run` once the cache has missed, `build`,
`check` and `explain` at once.
"""
from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] != ["run"]:
        status = _delegate(argv)   # before the CLI's own modules: a served command needs none of them
        if status is not None:
            sys.exit(status)
    from . import commands
    if argv[:1] == ["run"]:
        commands.delegate = lambda: _delegate(argv)   # after the cache, in run_program
    sys.exit(run_here(argv))


def run_here(argv: list[str]) -> int:
    """Run the command line in this process (a server's worker runs it so too)."""
    from .commands import COMMANDS, plain_command
    plain = plain_command(argv)
    if plain is not None:
        command, file, params = plain
        return COMMANDS[command].action(file, **params)
    from .app import main as typer_main   # typer, and the compiler on demand
    typer_main(argv)
    return 0


def _delegate(argv: list[str]) -> int | None:
    from .client import delegate
    return delegate(argv)
