"""What pycoro gives debuggers: `gdb_printers.py`, loaded into gdb by
`pycoro gdb PROGRAM` (docs/debugging.md)."""
from pathlib import Path

GDB_SCRIPT = Path(__file__).with_name("gdb_printers.py")
