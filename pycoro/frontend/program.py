"""The checked program: what the frontend hands to the middle.

Every function the program can run is one FnInstance (a generic function
appears once per instantiation) with side tables keyed by AST node that
settle every question the code generator would otherwise have to ask:
the type of each expression, what each name refers to, what each call
calls.
"""
from __future__ import annotations

from ..common.diagnostics import Span
from ..common.paths import in_stdlib
from ..common.record import field, record
from . import ast
from .layout import StructLayouts
from .types import Type


@record(eq=False)
class LocalVar:
    name: str
    type: Type
    mutable: bool
    is_param: bool = False
    param_index: int = -1    # for a parameter: its position
    owned: bool = False      # holds an owning coroutine handle it must destroy


@record(eq=False)
class CoroutineInfo:
    """What the middle needs to place a coroutine (clang's Sema pre-builds the same)."""
    abi: str                       # "switch" | "retcon" | "retcon_once" (async fns have none: FnInstance.is_async)
    promise: Type                  # the owning handle type `P<…>`
    state: Type                    # the promise state struct (its `var`s), lives in the frame
    initial_suspend: bool
    final_suspend: bool
    return_void: "FnInstance | None"   # called when the body falls off its end
    final_transfer: "FnInstance | None" = None  # `final_suspend(mut self) -> Handle`: transfer at the end
    allocate: "FnInstance | None" = None        # `allocate(size: u64) -> ptr<u8>`: the frame's memory
    deallocate: "FnInstance | None" = None      # `deallocate(p: ptr<u8>)`
    buffer: int = 0                # retcon: bytes of the caller's inline buffer (`abi retcon(N)`)
    yields: "Type | None" = None   # retcon: the type of the values it yields (the promise's first type argument)

    @property
    def returns_continuations(self) -> bool:
        """retcon / retcon_once: no promise, each suspension returns the next continuation."""
        return self.abi in ("retcon", "retcon_once")


@record(frozen=True)
class AwaitInfo:
    """`await x`: the awaiter's protocol, settled by the checker."""
    transform: "FnInstance | None"   # the promise's await_transform, if it has one
    awaiter: Type
    ready: "FnInstance"
    suspend: "FnInstance"            # returns void, bool or Handle: `kind`
    resume: "FnInstance"
    kind: str                        # "void" | "bool" | "handle"


@record(eq=False)
class GlobalVar:
    decl: ast.GlobalDecl
    type: Type
    symbol: str

    @property
    def name(self) -> str:
        return self.decl.name


@record(eq=False)
class FnInstance:
    decl: ast.FnDecl
    display: str                       # `swap<i64, f64>`, `Point.norm2`
    symbol: str                        # the LLVM symbol
    params: list[tuple[str, Type]]     # `self` first for methods
    ret: Type
    self_mode: str | None = None       # None | "value" | "ref"
    types: dict[ast.Node, Type] = field(default_factory=dict)
    refs: dict[ast.Node, object] = field(default_factory=dict)   # Name → LocalVar | GlobalVar | FnInstance
    calls: dict[ast.Call, "CallTarget"] = field(default_factory=dict)
    locals: dict[ast.Node, LocalVar] = field(default_factory=dict)  # Let/For/Param → LocalVar
    iters: dict[ast.For, "IterProtocol"] = field(default_factory=dict)
    generator_delegations: dict[ast.YieldFrom, "GeneratorDelegation"] = field(default_factory=dict)
    coro: CoroutineInfo | None = None
    hooks: dict[ast.Node, "FnInstance"] = field(default_factory=dict)   # yield/co_return → promise hook
    consumed: set[int] = field(default_factory=set)   # ids of owning expressions moved into their context
    awaits: dict[ast.Node, AwaitInfo] = field(default_factory=dict)
    # ids of coroutine calls whose frame certainly ends within the caller
    # (`await f(…)` of a temporary task, `for v in g(…)` of a temporary generator)
    elide_safe: set[int] = field(default_factory=set)
    moved_params: set[int] = field(default_factory=set)   # parameters the body moves elsewhere
    # slice parameters (by index) the body writes through / keeps beyond the call
    # (check/views.py), and the parameters it passes on: (its, callee, callee's)
    written_params: set[int] = field(default_factory=set)
    escaping_params: set[int] = field(default_factory=set)
    pointed_params: set[int] = field(default_factory=set)   # `&xs[i]` taken into them: Python lends no read-only buffer
    param_flows: list[tuple[int, "FnInstance", int]] = field(default_factory=list)
    withs: dict[ast.With, LocalVar] = field(default_factory=dict)   # `with` → its hidden handle variable
    async_awaits: dict[ast.Await, str] = field(default_factory=dict)   # in an async fn: "call" | "join"

    @property
    def is_extern(self) -> bool:
        return self.decl.kind == "extern"

    @property
    def is_async(self) -> bool:
        return self.decl.kind == "async"

    @property
    def is_coroutine(self) -> bool:
        """Of any ABI: switched-resume, returned-continuation or async."""
        return self.coro is not None or self.is_async


# ---- what a call calls ----

@record(frozen=True)
class DirectCall:
    fn: FnInstance
    receiver: ast.Expr | None = None   # the `x` of `x.m(…)`; passed by address when fn.self_mode == "ref"
    site: Span | None = None           # where the call is, for a callee that takes its caller (resolve.takes_caller)


@record(frozen=True)
class IndirectCall:
    """Call through a value of type `fn(…) -> R`."""


@record(frozen=True)
class BuiltinCall:
    name: str            # "print" | "assert" | "panic"


@record(frozen=True)
class HandleCall:
    """`h.resume()`, `h.done()`, `h.handle()`, `h.promise()` on a coroutine handle, `Handle.destroy()`."""
    name: str
    receiver: ast.Expr | None        # None for `noop_handle()`
    promise_align: int = 8           # alignment of the promise state, for llvm.coro.promise
    owning: bool = False             # resuming a finished coroutine through an owning handle panics


@record(frozen=True)
class SliceCall:
    """`s.len()` on a slice."""
    name: str
    receiver: ast.Expr


CallTarget = DirectCall | IndirectCall | BuiltinCall | HandleCall | SliceCall


@record(frozen=True)
class IterProtocol:
    """`for v in e` over a value with `next(mut self) -> bool` / `value(self) -> T`
    (a returned-continuation handle's are built in: HandleCall)."""
    next: "FnInstance | HandleCall"
    value: "FnInstance | HandleCall"
    item: LocalVar       # `v`
    holder: LocalVar     # the iterated value, when `e` is not already a variable


@record(frozen=True)
class GeneratorDelegation:
    """What a `yield from g` between the prelude's Generators needs besides
    its hook: the loop `while g.next() { yield g.value(); }` it may run as
    (ModuleGen.reyields), and, linked into the tree, the prelude's
    `Delegation.unlink` for a delegating generator destroyed while linked."""
    next: "FnInstance"
    value: "FnInstance"
    yield_value: "FnInstance"   # the delegating generator's hook
    unlink: "FnInstance"


@record
class CheckedProgram:
    functions: list[FnInstance]
    globals: list[GlobalVar]
    main: FnInstance | None
    layouts: StructLayouts   # every struct instance's fields, sizes and ownership (frozen)
    async_runtime: dict[str, FnInstance] = field(default_factory=dict)   # std/async's, by name

    def own_bodies(self):
        """Each function body of the program's own code (not the stdlib's)
        once, however many instances a generic one has: what warnings look at."""
        seen: set[int] = set()
        for inst in self.functions:
            body = inst.decl.body
            if body is not None and not in_stdlib(inst.decl.span.file) and id(body) not in seen:
                seen.add(id(body))
                yield body

    def own_code(self):
        """own_bodies, and the initializers of the program's own globals."""
        yield from self.own_bodies()
        yield from (g.decl.init for g in self.globals if g.decl.init is not None and not in_stdlib(g.decl.span.file))
