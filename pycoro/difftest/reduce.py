"""The reducer: shrinks a failing program on its model, keeping a change
when the program still fails the same way (the same configuration and kind
of failure), until nothing more goes or the time is spent.

Changes tried, biggest first: dropping declarations; dropping runs of
statements from any block (halves, quarters, … single ones); replacing an
`if` by its branch, a loop by its body, lowering loop bounds; replacing an
expression by a literal (0, 1) or by one of its sub-expressions of the same
type; making an integer literal 0, 1 or half its size. A change that makes
the program ill-typed fails differently ("rejected" or "oracle") and is
dropped.
"""
from __future__ import annotations

import time
from dataclasses import fields, is_dataclass

from . import model as m
from .types import is_scalar


def clone(node):
    """A copy of a program model: its nodes and lists copied, types (immutable) shared."""
    if isinstance(node, list):
        return [clone(x) for x in node]
    if isinstance(node, tuple):
        return tuple(clone(x) for x in node)
    if isinstance(node, (m.Expr, m.Stmt, m.Decl, m.Program)):
        new = object.__new__(type(node))
        new.__dict__ = {k: clone(v) for k, v in node.__dict__.items()}
        return new
    return node


def _children(node):
    """(key, value) of a node's fields that hold nodes or lists."""
    if isinstance(node, list):
        return list(enumerate(node))
    if isinstance(node, tuple):
        return list(enumerate(node))
    if is_dataclass(node):
        return [(f.name, getattr(node, f.name)) for f in fields(node)]
    return []


def _walk(node, path=()):
    yield path, node
    for key, value in _children(node):
        if isinstance(value, (m.Expr, m.Stmt, m.Decl, list, tuple)):
            yield from _walk(value, path + (key,))


def _get(root, path):
    for key in path:
        root = root[key] if isinstance(root, (list, tuple)) else getattr(root, key)
    return root


def _set(root, path, value):
    parent = _get(root, path[:-1])
    key = path[-1]
    if isinstance(parent, list):
        parent[key] = value
    elif isinstance(parent, tuple):
        grand = _get(root, path[:-2])
        items = list(parent)
        items[key] = value
        _set(root, path[:-1], tuple(items)) if not isinstance(grand, list) else grand.__setitem__(path[-2], tuple(items))
    else:
        setattr(parent, key, value)


def _candidates(prog: m.Program, fine: bool):
    """Edits to try, as functions that change a copy of the program in place;
    the expression-level ones only when `fine`."""
    # declarations (never main)
    yield from _list_cuts(("decls",), len(prog.decls) - 1)
    for path, node in list(_walk(prog)):
        if isinstance(node, list) and node and all(isinstance(x, m.Stmt) for x in node) and path != ("decls",):
            yield from _list_cuts(path, len(node))
    for path, node in list(_walk(prog)):
        if isinstance(node, m.If):
            yield lambda p, path=path: _set(p, path, _get(p, path).then)
            if node.els is not None:
                yield lambda p, path=path: _set(p, path, _get(p, path).els)
                yield lambda p, path=path: setattr(_get(p, path), "els", None)
        elif isinstance(node, (m.While, m.Loop)):
            yield lambda p, path=path: _set(p, path, _get(p, path).body)
            if node.bound > 1:
                yield lambda p, path=path: setattr(_get(p, path), "bound", 1)
        elif isinstance(node, m.For):
            yield lambda p, path=path: _set(p, path, _get(p, path).body)
        elif isinstance(node, m.Block) and path and isinstance(path[-1], int):
            yield lambda p, path=path: _splice(_get(p, path[:-1]), path[-1])
        elif isinstance(node, m.Defer):
            yield lambda p, path=path: _set(p, path, _get(p, path).stmt)
        elif isinstance(node, m.Print) and len(node.args) > 1:
            for i in range(len(node.args)):
                yield lambda p, path=path, i=i: _get(p, path).args.pop(i)
    if not fine:
        return
    for path, node in list(_walk(prog)):
        if isinstance(node, m.Lit) and node.ty != "bool" and node.value not in (0, 1):
            for v in (0, 1, node.value // 2):
                yield lambda p, path=path, v=v: setattr(_get(p, path), "value", v)
        elif isinstance(node, m.Expr) and not isinstance(node, (m.Lit, m.Var)):
            if is_scalar(node.ty):
                for v in ((0, 1) if node.ty != "bool" else (False, True)):
                    yield lambda p, path=path, v=v, t=node.ty: _set(p, path, m.Lit(t, v, t != "bool"))
            for sub in _same_typed(node):
                yield lambda p, path=path, sub=sub: _set(p, path, clone(sub))


def _splice(lst, i):
    """A nested block's statements in its place (names are unique: no clash)."""
    if not isinstance(lst[i], m.Block):
        raise TypeError
    lst[i:i + 1] = lst[i].body


def _same_typed(e: m.Expr):
    return [s for s in m.sub_exprs(e) if s.ty == e.ty]


def _list_cuts(path, n):
    size = n
    while size >= 1:
        for start in range(0, n, size):
            yield lambda p, path=path, start=start, size=size: _cut(_get(p, path), start, size)
        size //= 2


def _cut(lst, start, size):
    if start >= len(lst):
        raise IndexError
    del lst[start:start + size]


def reduce(prog: m.Program, still_fails, seconds: float = 300, log=None) -> m.Program:
    """A smaller program for which `still_fails(program)` holds, as small as
    these edits make it within `seconds`."""
    deadline = time.monotonic() + seconds
    best, tries = clone(prog), 0
    size = len(best.pc())
    progress, fine = True, False
    while time.monotonic() < deadline:
        if not progress:
            if fine:
                break
            fine = True   # statements no longer go: now expressions
        progress = False
        # Edits are made from the program as the pass began; applied to the
        # current one after an accepted edit, a stale path is just another edit.
        for edit in list(_candidates(clone(best), fine)):
            if time.monotonic() > deadline:
                break
            cand = clone(best)
            try:
                edit(cand)
                text = cand.pc()
            except (IndexError, AttributeError, KeyError, TypeError):
                continue
            if len(text) >= size:
                continue
            tries += 1
            if still_fails(cand):
                best, size, progress = cand, len(text), True
                if log:
                    log(f"reduced to {len(text)} characters ({tries} tries)")
    return best
