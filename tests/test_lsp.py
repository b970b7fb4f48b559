"""`pycoro lsp`, driven as an editor drives it: JSON-RPC over its stdin and
stdout (the Language Server Protocol's base protocol)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = """fn double(x: i64) -> i64 { return x * 2; }
fn count(n: i64) -> Generator<i64> { for i in 0..n { yield i; } }
struct Point { x: i64, y: i64 }
fn main() {
    let total = double(21);
    let p = Point { x: 1, y: 2 };
    let wrong: bool = total;
    print(total, p.x);
    for v in count(3) { print(v); }
}
"""


class Client:
    """A minimal LSP client over a child process's pipes."""

    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "pycoro", "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.next_id = 0
        self.notifications: list[dict] = []

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self) -> dict:
        length = None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed its output"
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message
                return message.get("result")
            self.notifications.append(message)

    def notification(self, method: str) -> dict:
        for i, message in enumerate(self.notifications):
            if message.get("method") == method:
                return self.notifications.pop(i)["params"]
        while True:
            message = self.receive()
            if message.get("method") == method:
                return message["params"]
            self.notifications.append(message)

    def close(self) -> None:
        self.request("shutdown", None)
        self.send({"method": "exit"})
        self.proc.wait(timeout=30)


@pytest.fixture
def client(tmp_path):
    c = Client(tmp_path)
    result = c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}})
    capabilities = result["capabilities"]
    assert capabilities["hoverProvider"] and capabilities["definitionProvider"]
    assert capabilities["documentSymbolProvider"]
    c.send({"method": "initialized", "params": {}})
    yield c
    c.close()


def _open(client: Client, path: Path, text: str) -> dict:
    path.write_text(text)
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": path.as_uri(), "languageId": "pycoro", "version": 1, "text": text}}})
    return client.notification("textDocument/publishDiagnostics")


def _at(client, method: str, path: Path, line: int, character: int):
    return client.request(method, {"textDocument": {"uri": path.as_uri()},
                                   "position": {"line": line, "character": character}})


def test_a_type_error_is_a_diagnostic_at_its_range(client, tmp_path):
    path = tmp_path / "prog.pc"
    published = _open(client, path, SOURCE)
    assert published["uri"] == path.as_uri()
    [error] = published["diagnostics"]
    assert error["severity"] == 1 and error["source"] == "pycoro"
    assert error["message"].startswith("expected `bool`, found `i64`")
    # `total` on line 7 (0-based 6), columns 22-27
    assert error["range"] == {"start": {"line": 6, "character": 22}, "end": {"line": 6, "character": 27}}


def test_hover_in_a_document_with_a_type_error(client, tmp_path):
    path = tmp_path / "prog.pc"
    assert len(_open(client, path, SOURCE)["diagnostics"]) == 1
    result = _at(client, "textDocument/hover", path, 4, 9)   # `total`, declared above the error
    assert result["contents"]["value"] == "```pycoro\nlet total: i64\n```"
    result = _at(client, "textDocument/hover", path, 6, 8)   # `wrong`, whose value is the error
    assert result["contents"]["value"] == "```pycoro\nlet wrong: bool\n```"


def test_warnings_are_diagnostics_and_a_fix_clears_them(client, tmp_path):
    path = tmp_path / "prog.pc"
    text = SOURCE.replace("    let wrong: bool = total;\n", "    let unused = 1;\n")
    [warning] = _open(client, path, text)["diagnostics"]
    assert warning["severity"] == 2 and warning["message"].startswith("unused variable: `unused`")
    assert warning["range"] == {"start": {"line": 6, "character": 8}, "end": {"line": 6, "character": 14}}
    fixed = text.replace("let unused", "let _unused")
    client.send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": path.as_uri(), "version": 2}, "contentChanges": [{"text": fixed}]}})
    assert client.notification("textDocument/publishDiagnostics")["diagnostics"] == []


def test_hover_gives_types_and_signatures(client, tmp_path):
    path = tmp_path / "prog.pc"
    text = SOURCE.replace("    let wrong: bool = total;\n", "")
    assert _open(client, path, text)["diagnostics"] == []

    def hover(line, character):
        result = _at(client, "textDocument/hover", path, line, character)
        return result and result["contents"]["value"]
    assert hover(4, 9) == "```pycoro\nlet total: i64\n```"            # a variable where it is declared
    assert hover(6, 11) == "```pycoro\nlet total: i64\n```"           # and where it is used
    assert hover(5, 8) == "```pycoro\nlet p: Point\n```"
    assert "fn double(x: i64) -> i64" in hover(4, 17)                  # a call's function
    generator = hover(1, 4)                                             # a declaration's name
    assert "fn count(n: i64) -> Generator<i64>" in generator and "switch ABI, frame " in generator
    assert " bytes (align 8) at -O2" in generator
    assert hover(0, 34) == "```pycoro\nlet x: i64\n```"                # a parameter in an expression
    assert hover(3, 0) is None                                          # nothing there


def test_definition_and_symbols(client, tmp_path):
    path = tmp_path / "prog.pc"
    text = SOURCE.replace("    let wrong: bool = total;\n", "")
    _open(client, path, text)
    where = _at(client, "textDocument/definition", path, 6, 11)        # `total` in print(total, …)
    assert where == {"uri": path.as_uri(), "range": {"start": {"line": 4, "character": 8},
                                                     "end": {"line": 4, "character": 13}}}
    where = _at(client, "textDocument/definition", path, 4, 17)        # double(21)
    assert where["range"]["start"] == {"line": 0, "character": 3}
    symbols = client.request("textDocument/documentSymbol", {"textDocument": {"uri": path.as_uri()}})
    assert [(s["name"], s["kind"]) for s in symbols] == [("double", 12), ("count", 12), ("Point", 23),
                                                          ("main", 12)]


def test_a_syntax_error_is_a_diagnostic_and_symbols_still_come(client, tmp_path):
    path = tmp_path / "broken.pc"
    [error] = _open(client, path, "fn main() {\n    let x = ;\n}\n")["diagnostics"]
    assert error["severity"] == 1 and error["range"]["start"]["line"] == 1
    symbols = client.request("textDocument/documentSymbol", {"textDocument": {"uri": path.as_uri()}})
    assert symbols == []   # the syntax is broken: nothing to list
