"""What pycoro gives debuggers: `gdb_printers.py`, which executables built
with `-g` carry in their `.debug_gdb_scripts` section and `pycoro gdb
PROGRAM` loads into gdb (docs/debugging.md)."""
from pathlib import Path

GDB_SCRIPT = Path(__file__).with_name("gdb_printers.py")
