"""Type checking and monomorphisation (LANGUAGE.md §2–§7), split the way
mypy splits its checker:

- program.py: declarations, struct layouts, globals, the instantiation queue;
- promises.py: promise declarations and the coroutine each makes;
- body.py: one function body's scopes and side tables, made of
- statements.py, expressions.py, calls.py and suspension.py (`yield`,
  `yield from`, `await`, `spawn`, `co_return`): the type rules;
- ownership.py: a pass of its own over each typed body (moves, borrows,
  defers; the facts the code generator reads), as rustc's borrow checker
  runs after its type check;
- flow.py: what a statement's control flow certainly does;
- common.py: operator classes and small shared records.

`check_program` resolves every type, instantiates each generic function once
per list of type arguments and records in each FnInstance's side tables what
the code generator needs. After a mistake an expression gets the type ERROR,
which absorbs further errors, so independent mistakes are all reported.
Every message and hint is a function of ../messages.py.
"""
from .program import ASYNC_RUNTIME, ProgramChecker, check_program

__all__ = ["ASYNC_RUNTIME", "ProgramChecker", "check_program"]
