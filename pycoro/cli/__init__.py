"""The `pycoro` command: main.py (the entry point and its fast path),
commands.py (each subcommand's options, declared once, and its action),
app.py (typer's parser, built from those declarations), explain.py (the
report of `pycoro explain`)."""
