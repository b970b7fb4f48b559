"""typer's `pycoro` command, built from the declarations in commands.py:
every command line that main.py's plain parser leaves (help, `--x=y`,
`check`, `explain`, mistakes, which typer reports)."""
from __future__ import annotations

import inspect
import os
import sys
from enum import Enum
from typing import Optional

import typer

from . import server_commands
from .commands import ANY, COMMANDS, FLAG, OPT_LEVELS, Command, Option

app = typer.Typer(add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="pycoro: compile and run PyCoro programs.",
                  epilog="Learn the language: docs/tutorial.md (a tour, step by step) and docs/language.md "
                         "(the language, section by section), https://github.com/pycoro/pycoro/tree/main/docs")


def version_line() -> str:
    """What `pycoro --version` prints: the compiler's version, and the LLVM and
    Python it compiles with (as `rustc -vV` names its LLVM)."""
    import platform
    from importlib.metadata import version

    import llvmlite.binding as llvm

    from .. import __version__
    llvm_version = ".".join(map(str, llvm.llvm_version_info))
    return (f"pycoro {__version__} (LLVM {llvm_version}, llvmlite {version('llvmlite')}, "
            f"{platform.python_implementation()} {platform.python_version()})")


def _show_version(value: bool) -> None:
    if value:
        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", "-V", callback=_show_version, is_eager=True,
                                       help="Print the version of pycoro and of the LLVM it uses, and exit.")) -> None:
    """pycoro: compile and run PyCoro programs."""


def _file_type():
    """The file argument's click type, shown as `FILE` alone (typer shows a
    required argument as `{FILE}` in usage lines and a string's type as
    `<str>`); None where neither typer's own copy of click nor click has the
    class, and typer's rendering stays."""
    try:
        # typer 0.28 carries its own click: a click installed beside it (Flask's)
        # is not the one typer's parameters are made of
        from typer._click.types import ParamType
    except ImportError:
        try:
            from click import ParamType
        except ImportError:
            return None

    class File(ParamType):
        name = "file"

        def get_metavar(self, param, ctx=None) -> str:
            return ""

        def convert(self, value, param, ctx):
            return value
    return File()


_FILE = _file_type()


def _make_metavar(original):
    def make_metavar(self, ctx, *, usage: bool = False) -> str:
        shown = original(self, ctx, usage=usage)
        return shown[1:-1] if usage and self.type is _FILE and shown.startswith("{") else shown
    return make_metavar


if _FILE is not None:
    typer.core.TyperArgument.make_metavar = _make_metavar(typer.core.TyperArgument.make_metavar)


def _choices(option: Option) -> type[Enum]:
    return Enum(option.param.title().replace("_", ""), {v: v for v in option.values}, type=str)


def _parameter(option: Option) -> inspect.Parameter:
    """The typer parameter declaring `option`."""
    if option.many:
        annotation, default = Optional[list[str]], typer.Option(None, *option.names, help=option.help,
                                                                metavar=option.metavar)
    elif option.level:
        annotation, default = int, typer.Option(option.default, *option.names, min=int(OPT_LEVELS[0]),
                                                max=int(OPT_LEVELS[-1]), help=option.help)
    elif option.values is FLAG:
        annotation, default = bool, typer.Option(False, *option.names, help=option.help)
    elif option.values is ANY:
        annotation, default = Optional[str], typer.Option(option.default, *option.names, help=option.help,
                                                          metavar=option.metavar)
    else:
        choices = _choices(option)
        annotation = choices if option.default is not None else Optional[choices]
        default = typer.Option(None if option.default is None else choices(option.default), *option.names,
                               help=option.help)
    return inspect.Parameter(option.param, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _add(name: str, command: Command) -> None:
    def run(file: str, **params) -> None:
        values = {k: v.value if isinstance(v, Enum) else tuple(v) if isinstance(v, list) else v
                  for k, v in params.items() if v is not None}
        raise typer.Exit(command.action(file, **values))
    file = inspect.Parameter("file", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             default=typer.Argument(..., help=command.file_help, metavar="FILE",
                                                    **({"click_type": _FILE} if _FILE else {})),
                             annotation=str)
    parameters = [file, *map(_parameter, command.options)]
    run.__signature__ = inspect.Signature(parameters)
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.__doc__ = command.help
    app.command(name)(run)


for _name, _command in COMMANDS.items():
    _add(_name, _command)


@app.command("lsp")
def _lsp() -> None:
    """Run the language server (LSP on stdin and stdout) for editors (docs/editors.md)."""
    from ..lsp import serve   # pygls: imported only here
    serve()


server_app = typer.Typer(no_args_is_help=True, help="A compile server: keeps the compiler loaded, so that "
                         "each `pycoro run` (of a program not in the cache), `build`, `check` and `explain` "
                         "skips ~125 ms of start-up (docs/server.md).")
app.add_typer(server_app, name="server")


@server_app.command("start")
def _server_start(idle: int = typer.Option(server_commands.DEFAULT_IDLE, "--idle", metavar="SECONDS",
                                           help="exit after this long without a command")) -> None:
    """Start a server for this pycoro (if none runs); commands use it from then on."""
    raise typer.Exit(server_commands.start(idle))


@server_app.command("stop")
def _server_stop() -> None:
    """Stop the server, and this user's servers of other pycoro versions or checkouts."""
    raise typer.Exit(server_commands.stop())


@server_app.command("status")
def _server_status() -> None:
    """Whether a server runs (exit status 0) or not (3), and what it has done."""
    raise typer.Exit(server_commands.status())


def main(argv: list[str] | None = None) -> None:
    # `pycoro` runs `pycoro-python` (bin/pycoro): usage lines, and shell
    # completion's variable (_PYCORO_COMPLETE), name the command users type
    called = os.path.basename(sys.argv[0])
    app(args=argv, prog_name="pycoro" if called == "pycoro-python" else None)
