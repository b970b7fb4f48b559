"""The `pycoro` command's entry point.

`main` recognises the plain forms of `pycoro run` and `pycoro build` itself
(commands.plain_command) and runs them without the CLI's option parser
(typer, ~20 ms to import): a program compiled before then runs from the
cache without the compiler or LLVM either (rerun.py), as `python x.py` runs
a module from its .pyc. Every other command line goes to typer (app.py),
which parses the same declared options and runs the same actions.
"""
from __future__ import annotations

import sys

from .commands import COMMANDS, plain_command


def main() -> None:
    plain = plain_command(sys.argv[1:])
    if plain is not None:
        command, file, params = plain
        sys.exit(COMMANDS[command].action(file, **params))
    from .app import main as typer_main   # typer, and the compiler on demand
    typer_main()
