"""Inline expectations in test programs (as in craftinginterpreters' tests).

    // expect: text            a line the program prints, in order
    // expect-status: N        its exit status (default 0; 1 when errors are expected)
    // expect-stderr: text     a line its stderr must contain (e.g. a panic)
    // expect-error: L:C: msg  a diagnostic at line L, column C
    // expect-warning: L:C: msg  a warning at line L, column C (the compiler's; the program still runs)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Expectations:
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    status: int = 0


_PATTERN = re.compile(r"//\s*expect(-status|-stderr|-error|-warning)?:\s?(.*)$")


def read(path: Path) -> Expectations:
    exp = Expectations()
    explicit_status = None
    for line in path.read_text().splitlines():
        m = _PATTERN.search(line)
        if not m:
            continue
        kind, text = m.group(1), m.group(2).rstrip()
        if kind is None:
            exp.stdout.append(text)
        elif kind == "-status":
            explicit_status = int(text)
        elif kind == "-stderr":
            exp.stderr.append(text)
        else:
            where, message = text.split(": ", 1)
            severity = kind[1:]
            (exp.errors if severity == "error" else exp.warnings).append(f"{path.name}:{where}: {severity}: {message}")
    if explicit_status is not None:
        exp.status = explicit_status
    elif exp.errors:
        exp.status = 1
    return exp


def diagnostics(stderr: str, severity: str = "error") -> list[str]:
    """The `file:line:col: error: message` lines of a compiler's stderr (or
    its warnings'), file names shortened."""
    out = []
    for line in stderr.splitlines():
        m = re.match(rf"(?:.*/)?([^/:]+\.pc:\d+:\d+: {severity}: .*)$", line)
        if m:
            out.append(m.group(1))
    return out
