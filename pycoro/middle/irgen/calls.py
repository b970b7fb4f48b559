"""Calls: of functions (through their ABI), through function values, of
handle operations, intrinsics and the builtins `print`, `assert`, `panic`."""
from __future__ import annotations

from llvmlite import ir

from ...frontend import ast
from ...frontend.intrinsics import FACTS, LINKED
from ...frontend.intrinsics import RUNTIME as RUNTIME_INTRINSICS
from ...frontend.intrinsics import kind_of as math_kind
from ...frontend.layout import is_aggregate
from ...frontend.program import BuiltinCall, DirectCall, FnInstance, HandleCall, IndirectCall, SliceCall
from ...frontend.types import BOOL, HANDLE, STR, VOID, FloatT, FnT, IntT, Type
from .. import gpu, intrinsics
from ..coro import async_
from ..gpu import GPU_INTRINSICS
from ..llvmcompat import I1, I32, I64, PTR, TypedCallee
from .suspends import suspends_after


class CallEmission:
    """FnGen's calls (a mixin: `self` is the FnGen)."""

    # ---- calls
    def expr_Call(self, e: ast.Call) -> ir.Value | None:
        target = self.inst.calls[e]
        if isinstance(target, BuiltinCall):
            if target.name == "sync_threads" and self.mg.gpu_emulation:
                return self.check(gpu.emulated_barrier_holds(self.b), lambda: self.panic(
                    b"sync_threads() cannot be emulated on the CPU with more than one thread per block",
                    e.span), "sync_threads")
            if target.name in GPU_INTRINSICS and self.mg.gpu_emulation:
                return gpu.emulated_builtin(self.b, target.name)
            if target.name in GPU_INTRINSICS:
                return self.b.call(intrinsics.declare(self.mg.module, GPU_INTRINSICS[target.name]), [])
            return getattr(self, f"builtin_{target.name}")(e)
        if isinstance(target, SliceCall):   # `s.len()`
            return self.b.extract_value(self.expr(target.receiver), 1)
        if isinstance(target, HandleCall):
            handle, t = None, HANDLE   # noop_handle() makes a switched-resume handle
            if target.receiver is not None:
                handle, t = self.expr(target.receiver), self.types[target.receiver]
            return self.handle_op(t, target.name, handle, target.promise_align, target.owning)
        if isinstance(target, IndirectCall):
            fnt: FnT = self.type_of(e.callee)
            callee = self.expr(e.callee)
            if not isinstance(callee, ir.Function):   # (a specialised copy's known parameter is one)
                self.mg.function_value_calls += 1
                # a `fn` variable declared without a value is null: a panic, as a
                # null `ptr` is (the jump to 0 faulted, and its report came doubled)
                not_null = self.b.icmp_unsigned("!=", callee, ir.Constant(PTR, None))
                self.check(not_null, lambda: self.panic(b"call of a null function value", e.span), "null")
            args = self.arguments(e.args, list(fnt.params))
            fnty = self.mg.signature(list(fnt.params), fnt.ret)
            return self.call_with(TypedCallee(callee, fnty), args, fnt.ret)
        fn = target.fn
        if fn.decl.kind == "intrinsic" and fn.decl.name in RUNTIME_INTRINSICS:   # std/async
            return async_.intrinsic(self, fn, self.arguments(e.args, [t for _, t in fn.params]))
        if fn.decl.kind == "intrinsic" and fn.decl.name in FACTS:   # the prelude's
            return I1(int(self.mg.fact(fn)))
        if fn.decl.kind == "intrinsic" and fn.decl.name in LINKED:   # the runtime's
            return self.mg.linked_data(fn.decl.name)
        if fn.decl.kind == "intrinsic":   # std/math
            kind = math_kind(fn.params[0][1])
            args = self.arguments(e.args, [t for _, t in fn.params])
            return intrinsics.math_call(self.b, fn.decl.name, kind, args)
        args = self.call_arguments(e, target)
        callee = self.mg.specialised(fn, self.known_functions(e, target))
        return self.call(fn, args, e.span, elide_safe=id(e) in self.inst.elide_safe, callee=callee)

    def known_functions(self, e: ast.Call, target: DirectCall) -> tuple[tuple[int, FnInstance], ...]:
        """The function-typed arguments of a call of a generator (or another
        switched-resume or returned-continuation coroutine) that name a
        function, or a parameter that this copy knows (module.specialised):
        (parameter position, function) for each."""
        fn = target.fn
        if fn.coro is None or fn.decl.body is None or self.mg.explain:   # explain reads each coroutine once
            return ()
        first = 1 if target.receiver is not None else 0
        known = []
        for position, a in enumerate(e.args, first):
            if position < len(fn.params) and isinstance(fn.params[position][1], FnT) and isinstance(a, ast.Name):
                ref = self.inst.refs.get(a)
                function = ref if isinstance(ref, FnInstance) else self.known_params.get(id(ref))
                if function is not None:
                    known.append((position, function))
        return tuple(known)

    def call_arguments(self, e: ast.Call, target: DirectCall) -> list[ir.Value]:
        """A direct call's arguments, the receiver first (by address for `mut self`)."""
        fn = target.fn
        args = []
        params = fn.params
        if target.receiver is not None:
            # (a receiver taken by value is copied, never moved: nothing to hold)
            recv = target.receiver
            args.append(self.place(recv) if fn.self_mode == "ref" else self.expr(recv))
            params = params[1:]
        if target.site is not None:   # the callee's last parameter: where this call is
            params = params[:-1]
        args += self.arguments(e.args, [t for _, t in params])
        for a in e.args[len(params):]:
            args.append(self.c_vararg(a))
        if target.site is not None:
            args.append(self.mg.caller_site(target.site, fn.params[-1][1].elem))
        return args

    def arguments(self, exprs, types: list[Type]) -> list[ir.Value]:
        """Evaluate every argument in order; a `void` one is evaluated but takes no slot."""
        values, held = [], []
        exprs = list(exprs)
        for a, t, later in zip(exprs, types, suspends_after(exprs)):
            v = self.expr(a)
            if t != VOID:
                values.append(v)
                held.append(self.hold(v, t, later, in_memory=False))
        self.landed(held)
        return values

    def call(self, fn: FnInstance, args: list[ir.Value], span=None, elide_safe: bool = False,
             callee: ir.Function | None = None) -> ir.Value | None:
        abi = self.mg.abis.of_function(fn)
        site = []
        if self.mg.explain and abi.counts_sites:
            site = [I32(len(self.mg.sites))]
            self.mg.sites.append((self.inline_chain[0], span or self.current_span, fn))   # where the frame lives
        return abi.call(self, fn, callee or self.mg.declare(fn), args + site, elide_safe, site)

    def handle_op(self, t: Type, name: str, handle: ir.Value | None, promise_align: int = 8,
                  owning: bool = False) -> ir.Value | None:
        """An operation on a handle of type `t` (its ABI's), from any function;
        `destroy` destroys what an owning handle holds."""
        return self.mg.abis.of_handle(t).handle_op(self, t, name, handle, promise_align, owning)

    def call_with(self, callee, args: list[ir.Value], ret: Type) -> ir.Value | None:
        """Call with pycoro's convention: an aggregate result comes back in a temporary."""
        if is_aggregate(ret):
            result = self.alloca(ret, "result")
            self.b.call(callee, [result] + args)
            return result
        value = self.b.call(callee, args)
        return None if ret == VOID else value

    def c_vararg(self, a: ast.Expr) -> ir.Value:
        """C's default argument promotions."""
        t, v = self.type_of(a), self.expr(a)
        if t == BOOL:
            return self.b.zext(v, I32)
        if isinstance(t, IntT) and t.bits < 32:
            return self.b.sext(v, I32) if t.signed else self.b.zext(v, I32)
        if t == FloatT(32):
            return self.b.fpext(v, ir.DoubleType())
        return v

    def builtin_print(self, e: ast.Call) -> None:
        # Every argument is evaluated before anything is written, as in Python
        # and C: in `print("a", f())`, what f prints comes first.
        values = [(self.type_of(a), self.expr(a)) for a in e.args]
        for i, (t, v) in enumerate(values):
            if i:
                self.b.call(self.mg.runtime("print_sep"), [])
            if isinstance(t, IntT):
                if t.bits < 64:
                    v = self.b.sext(v, I64) if t.signed else self.b.zext(v, I64)
                self.b.call(self.mg.runtime("print_i64" if t.signed else "print_u64"), [v])
            elif isinstance(t, FloatT):
                self.b.call(self.mg.runtime(f"print_f{t.bits}"), [v])
            elif t == BOOL:
                self.b.call(self.mg.runtime("print_bool"), [v])
            elif t == STR:
                self.b.call(self.mg.runtime("print_str"), [v])
            else:
                self.b.call(self.mg.runtime("print_ptr"), [v])
        self.b.call(self.mg.runtime("print_end"), [])

    def builtin_slice(self, e: ast.Call) -> ir.Value:
        """`slice(p, n)`: unchecked as `p` is, but a negative length would make
        every index pass the bounds check."""
        start = self.expr(e.args[0])
        length = self.index_value(e.args[1])
        ok = self.b.icmp_signed(">=", length, I64(0))
        self.check(ok, lambda: self.panic(b"slice of a negative length", e.span), "slice.len")
        return self.slice_value(start, length)

    def builtin_assert(self, e: ast.Call) -> None:
        ok = self.expr(e.args[0])
        if len(e.args) == 2:
            msg = self.expr(e.args[1])
            fail = lambda: (self.b.call(self.mg.runtime("panic"), [msg] + self.panic_site(e.span)),
                            self.b.unreachable())
        else:
            fail = lambda: self.panic(b"assertion failed", e.span)
        self.check(ok, fail, "assert")

    def builtin_panic(self, e: ast.Call) -> None:
        msg = self.expr(e.args[0])
        self.b.call(self.mg.runtime("panic"), [msg] + self.panic_site(e.span))
        self.b.unreachable()

