"""Type checking and monomorphisation (LANGUAGE.md §2–§4).

`check_program` resolves every type, instantiates each generic function once
per list of type arguments (checking its body for that instantiation, like
a C++ template), and records in each FnInstance's side tables what the
code generator needs. After a mistake an expression gets the type ERROR,
which absorbs further errors, so independent mistakes are all reported.
"""
from __future__ import annotations

import collections
import contextlib
import functools

from . import ast, intrinsics
from . import messages as M
from .layout import MAX_TYPE_BYTES, StructLayouts, is_aggregate
from .gpu import GPU_BUILTINS, GPU_TARGETS, coroutine_recursion
from .program import (AwaitInfo, BuiltinCall, CheckedProgram, CoroutineInfo, DirectCall, FnInstance,
                      GlobalVar, HandleCall, IndirectCall, IterProtocol, LocalVar)
from .resolve import BUILTIN_FUNCTIONS, Namespace, span_of
from .yields import once_problems
from .types import (BOOL, ERROR, F64, HANDLE, I32, I64, NULL, STR, U64, VOID, ArrayT, FloatT,
                    FnT, IntT, PRIMITIVES, PromiseT, PtrT, StructT, Type, TypeVar, abi_of, has_vars,
                    is_scalar, size, substitute, unify)
from ..diagnostics import Reporter, Span
from ..record import record

COMPOUND_OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
ARITH = ("+", "-", "*", "/", "%")
BITWISE = ("&", "|", "^")
SHIFTS = ("<<", ">>")
EQUALITY = ("==", "!=")
ORDERING = ("<", "<=", ">", ">=")
LOGICAL = ("&&", "||")


def check_program(modules: list[ast.Module], reporter: Reporter, need_main: bool = True,
                  main_file: str | None = None, target: str = "native") -> CheckedProgram:
    checker = ProgramChecker(modules, reporter, target)
    return checker.run(need_main and target not in GPU_TARGETS, main_file)


@record(frozen=True, eq=False)
class _Borrow:
    """What a coroutine made by a `mut self` method refers to: the method, the
    place as messages name it, and the local variable it is (None: a temporary)."""
    method: str
    place: str
    var: object = None   # LocalVar | None


@record(frozen=True)
class _Method:
    decl: ast.FnDecl
    subst: dict
    owner: Type


class ProgramChecker:
    def __init__(self, modules: list[ast.Module], reporter: Reporter, target: str = "native"):
        self.reporter = reporter
        self.gpu = target in GPU_TARGETS   # kernels and GPU builtins; no extern or async fns
        self.ns = Namespace.build(modules, reporter)
        self.instances: dict[tuple, FnInstance] = {}
        # Bodies to check, first asked for first (so errors of two instances come in that order).
        self.queue: collections.deque[tuple[FnInstance, dict]] = collections.deque()
        # Where each generic instance was first asked for: id(instance) → (the
        # instance whose body asked, the span there). Errors in a generic body
        # say which instance they are about and how it came to be made, as
        # C++'s "in instantiation of … requested here" notes do.
        self.requests: dict[int, tuple[FnInstance | None, Span | None]] = {}
        self.annotated: set[int] = set()   # ids of the diagnostics given those notes
        self.checking: FnInstance | None = None
        # Coroutines that refer to a `mut self` place (BodyChecker.borrowing), passed
        # as an argument: (the argument, the callee, the parameter's index, the borrow).
        # The callee must not move that parameter; known once every body is checked.
        self.lent: list[tuple[ast.Expr, FnInstance, int, _Borrow]] = []
        self.globals: dict[str, GlobalVar] = {}
        self.layouts = StructLayouts(self.struct_fields)
        self._laying_out: set[StructT] = set()
        self._impl_targets: dict[ast.ImplDecl, Type] = {}
        # Each promise's `var`s form a struct (the promise state, in the frame);
        # its hooks are methods of that struct.
        self._states: dict[ast.PromiseDecl, ast.StructDecl] = {}
        for decl in self.ns.decls.values():
            if isinstance(decl, ast.PromiseDecl):
                self._check_promise_decl(decl)
                self._states[decl] = ast.StructDecl(
                    decl.span, f"{decl.name}.promise", decl.generics,
                    tuple(ast.FieldDecl(v.span, v.name, v.type) for v in decl.fields), decl.name_span)

    # ------------------------------------------------------------------ driver

    def run(self, need_main: bool, main_file: str | None) -> CheckedProgram:
        self._check_declarations(list(self.ns.decls.values()), self.ns.impls)
        return self._finish(need_main, main_file)

    def extend(self, module: ast.Module, reporter: Reporter) -> CheckedProgram:
        """The program checked, with the declarations of one more module
        (pycoro.embed's wrappers of the exports): checked alone, the
        instances already made are kept."""
        self.reporter = reporter
        first = len(self.ns.decls)
        impls = len(self.ns.impls)
        self.ns.add_module(module, reporter)
        self._check_declarations(list(self.ns.decls.values())[first:], self.ns.impls[impls:])
        return self._finish(False, None)

    def _check_declarations(self, decls: list[ast.Decl], impls: list[ast.ImplDecl]) -> None:
        for decl in decls:
            if isinstance(decl, ast.GlobalDecl):
                self._declare_global(decl)
        for decl in decls:
            if isinstance(decl, ast.FnDecl) and not decl.generics:
                self.instantiate(decl, {}, ())
            elif isinstance(decl, ast.StructDecl) and not decl.generics:
                self.struct_fields(StructT(decl), decl.span)
            if isinstance(decl, ast.FnDecl) and decl.kind == "intrinsic":
                self._check_intrinsic_decl(decl)
        for impl in impls:
            target = self.impl_target(impl)
            if not impl.generics and target is not ERROR:
                for method in impl.methods:
                    if not method.generics:
                        self.instantiate_method(_Method(method, {}, target))
        while self.queue:
            inst, subst = self.queue.popleft()
            first = len(self.reporter.diagnostics)
            self.checking = inst
            BodyChecker(self, inst, subst).check_body()
            if inst.coro is not None and inst.coro.abi == "retcon_once":
                for span, problem in once_problems(inst.decl.body, span_of(inst.decl)):
                    self.reporter.error(M.once_yields(problem), span)
            if subst:
                self._add_instantiation_notes(inst, first)
        self.checking = None

    def _finish(self, need_main: bool, main_file: str | None) -> CheckedProgram:
        """The checks that need every body checked, and the checked program."""
        for arg, callee, index, borrow in self.lent:
            if index in callee.moved_params:
                self.reporter.error(M.borrowing_coroutine_moved(borrow.method, borrow.place), arg.span,
                                    hint=M.borrowing_coroutine_kept(callee.display))
        for inst in list(self.instances.values()):
            _mark_elide_safe(inst)
        if self.gpu:
            for call, caller, callee in coroutine_recursion(list(self.instances.values())):
                self.reporter.error(M.gpu_coroutine_recursion(callee.display, caller.display), call.span,
                                    hint=M.gpu_recursion_hint())
        main = self._find_main(need_main, main_file)
        self._lay_out_every_struct_seen()
        return CheckedProgram(list(self.instances.values()), list(self.globals.values()), main,
                              self.layouts.frozen(), self._async_runtime())

    def _lay_out_every_struct_seen(self) -> None:
        """Lay out each struct instance the checked program mentions, behind
        pointers and in function types too, so the middle's frozen layouts
        answer every question it can ask."""
        seen: set[Type] = set()

        def visit(t) -> None:
            if not isinstance(t, Type) or t in seen or has_vars(t):
                return
            seen.add(t)
            match t:
                case StructT():
                    for _, ft in self.struct_fields(t):
                        visit(ft)
                case PromiseT():
                    for arg in t.args:
                        visit(arg)
                    visit(self.promise_state(t))
                case ArrayT() | PtrT():
                    visit(t.elem)
                case FnT():
                    for pt in (*t.params, t.ret):
                        visit(pt)

        for g in self.globals.values():
            visit(g.type)
        for inst in self.instances.values():
            for _, pt in inst.params:
                visit(pt)
            visit(inst.ret)
            for t in inst.types.values():
                visit(t)
            for var in inst.locals.values():
                visit(var.type)

    def _async_runtime(self) -> dict[str, FnInstance]:
        """std/async's functions that the code generator calls (when it is imported)."""
        found = {}
        for name in ASYNC_RUNTIME:
            decl = self.ns.decls.get(name)
            inst = self.instances.get((id(decl), ())) if isinstance(decl, ast.FnDecl) else None
            if inst is not None:
                found[name] = inst
        return found

    def _find_main(self, need_main: bool, main_file: str | None) -> FnInstance | None:
        decl = self.ns.decls.get("main")
        if not isinstance(decl, ast.FnDecl):
            if need_main:
                self.reporter.error(M.no_main(), Span(main_file, 1, 1) if main_file else None)
            return None
        inst = self.instances.get((id(decl), ()))
        if inst is None:
            return None
        if decl.kind not in ("fn", "async") or inst.params or inst.ret not in (VOID, I32) \
                or (decl.kind == "async" and inst.ret != VOID):
            self.reporter.error(M.bad_main(), span_of(decl))
        return inst

    # ------------------------------------------------------------------ types

    def resolve_type(self, texpr: ast.TypeExpr, subst: dict[str, Type]) -> Type:
        match texpr:
            case ast.NamedType(name=name, args=args):
                if name in subst and not args:
                    return subst[name]
                targs = tuple(self.resolve_type(a, subst) for a in args)
                if ERROR in targs:
                    return ERROR
                if name in PRIMITIVES:
                    if targs:
                        self.reporter.error(M.not_generic(name), texpr.span)
                        return ERROR
                    return PRIMITIVES[name]
                if name == "ptr":
                    if len(targs) != 1:
                        self.reporter.error(M.type_arity("ptr", 1, len(targs)), texpr.span)
                        return ERROR
                    return PtrT(targs[0])
                decl = self.ns.decls.get(name)
                if isinstance(decl, (ast.StructDecl, ast.PromiseDecl)):
                    if len(targs) != len(decl.generics):
                        self.reporter.error(M.type_arity(name, len(decl.generics), len(targs)), texpr.span)
                        return ERROR
                    if isinstance(decl, ast.StructDecl):
                        return StructT(decl, targs)
                    return self._promise_type(PromiseT(decl, targs), texpr.span)
                self.reporter.error(M.unknown_type(name), texpr.span,
                                    hint=self.ns.suggest(name, list(PRIMITIVES) + ["ptr"]))
                return ERROR
            case ast.ArrayType(elem=elem, size=size):
                t = self.resolve_type(elem, subst)
                if t is ERROR:
                    return ERROR
                return self._sized(ArrayT(t, size), texpr.span)
            case ast.FnType(params=params, ret=ret):
                ps = tuple(self.resolve_type(p, subst) for p in params)
                r = self.resolve_type(ret, subst) if ret else VOID
                return ERROR if ERROR in ps or r is ERROR else FnT(ps, r)
        raise AssertionError(texpr)

    def _sized(self, t: Type, span: Span) -> Type:
        if not has_vars(t):
            size = self.layouts.size_align(t)[0]
            if size > MAX_TYPE_BYTES:
                self.reporter.error(M.type_too_large(t, size, MAX_TYPE_BYTES), span)
                return ERROR
        return t

    def struct_fields(self, t: StructT, use: Span | None = None) -> tuple[tuple[str, Type], ...]:
        """The fields of a struct instance, with its type arguments substituted."""
        if self.layouts.known(t):
            return self.layouts.fields(t)
        if t in self._laying_out:
            self.reporter.error(M.recursive_struct(t.decl.name), span_of(t.decl))
            return []
        self._laying_out.add(t)
        subst = dict(zip(t.decl.generics, t.args))
        fields = [(f.name, self.resolve_type(f.type, subst)) for f in t.decl.fields]
        seen: set[str] = set()
        for f, (name, ft) in zip(t.decl.fields, fields):
            if name in seen:
                self.reporter.error(M.duplicate_field(name), f.span)
            seen.add(name)
            self._contained(ft)
        self._laying_out.discard(t)
        self.layouts.record(t, fields)
        return self.layouts.fields(t)

    def _contained(self, t: Type) -> None:
        # Lay out value-contained structs now, so that a cycle is found.
        while isinstance(t, ArrayT):
            t = t.elem
        if isinstance(t, StructT) and not has_vars(t):
            self.struct_fields(t)

    # ------------------------------------------------------------------ globals

    def _declare_global(self, decl: ast.GlobalDecl) -> None:
        checker = BodyChecker(self, None, {})
        if decl.type is not None:
            t = self.resolve_type(decl.type, {})
            if decl.init is not None and t is not ERROR:
                checker.expect(decl.init, t)
        elif decl.init is not None:
            t = checker.check_expr(decl.init, None)
        else:
            self.reporter.error(M.cannot_infer_let(decl.name), decl.span)
            t = ERROR
        if decl.init is not None and not _is_constant(decl.init):
            self.reporter.error(M.global_not_const(), decl.init.span)
        if t is not ERROR and self.layouts.owns(t):
            self.reporter.error(M.owning_in_aggregate(t), span_of(decl))
            t = ERROR
        self.globals[decl.name] = GlobalVar(decl, t, f"pc.{decl.name}")

    # ------------------------------------------------------------------ functions

    def instantiate(self, decl: ast.FnDecl, subst: dict[str, Type], targs: tuple[Type, ...],
                    owner: Type | None = None, display_owner: str = "", at: Span | None = None) -> FnInstance:
        """The instance of `decl` for these type arguments, made (and its body
        queued for checking) the first time it is asked for, `at` a call."""
        key = (id(decl), targs if owner is None else (owner,) + targs)
        if key in self.instances:
            return self.instances[key]
        if any(size(t) > MAX_TYPE_SIZE for t in targs + ((owner,) if owner else ())):
            # `fn f<T>(x: T) { f(Duo { first: x, second: x }); }` would never end.
            self.reporter.error(M.instantiation_too_deep(decl.name), span_of(decl))
            targs = tuple(ERROR for _ in targs)
            subst = {g: ERROR for g in subst}
            key = (id(decl), ("<too deep>",))
            if key in self.instances:
                return self.instances[key]
            inst = FnInstance(decl, decl.name, f"pc.{decl.name}.too-deep",
                              [(p.name, ERROR) for p in decl.params], ERROR)
            self.instances[key] = inst
            return inst
        first = len(self.reporter.diagnostics)   # errors in its signature get the instance's notes
        base = f"{display_owner}.{decl.name}" if display_owner else decl.name
        display = f"{base}<{', '.join(map(str, targs))}>" if targs else base
        symbol = decl.name if decl.kind == "extern" else "pc." + display.replace(" ", "")
        params: list[tuple[str, Type]] = []
        self_mode = None
        for i, p in enumerate(decl.params):
            if p.is_self:
                if owner is None:
                    self.reporter.error(M.self_outside_impl(), p.span)
                    continue
                if i != 0:
                    self.reporter.error(M.self_not_first(), p.span)
                self_mode = "ref" if p.mut_self else "value"
                params.append(("self", PtrT(owner) if p.mut_self else owner))
            else:
                params.append((p.name, self.resolve_type(p.type, subst)))
        ret = self.resolve_type(decl.ret, subst) if decl.ret else VOID
        if decl.kind == "extern" and decl.generics:
            self.reporter.error(M.generic_extern(), span_of(decl))
        if decl.kind == "async" and self.gpu:
            self.reporter.error(M.not_on_gpu("an `async fn`"), span_of(decl))
        elif decl.kind == "kernel":
            self._check_kernel(decl, params, ret)
        elif decl.kind == "extern" and self.gpu:
            self.reporter.error(M.not_on_gpu("an `extern fn`"), span_of(decl),
                                hint="GPU code cannot call C functions")
        if decl.kind == "extern":
            for p, (_, t) in zip(decl.params, params):
                if is_aggregate(t):
                    self.reporter.error(M.extern_arg(t), p.span)
            if is_aggregate(ret):
                self.reporter.error(M.extern_arg(ret), decl.ret.span)
        inst = FnInstance(decl, display, symbol, params, ret, self_mode)
        self.instances[key] = inst
        if subst:
            self.requests[id(inst)] = (self.checking, at)
            self._add_instantiation_notes(inst, first)
        if decl.body is not None and _is_coroutine(decl) and decl.kind != "kernel":   # else refused
            inst.coro = self.coroutine_info(decl, ret)
        if decl.body is not None:
            self.queue.append((inst, subst))
        return inst

    def _check_intrinsic_decl(self, decl: ast.FnDecl) -> None:
        if decl.name in intrinsics.STDLIB_ONLY:
            return
        if decl.name not in intrinsics.ACCEPTS:
            self.reporter.error(M.unknown_intrinsic(decl.name), span_of(decl),
                                hint=M.known_intrinsics(intrinsics.ACCEPTS))
        elif not intrinsics.well_formed(decl.name, decl.generics, decl.params, decl.ret):
            self.reporter.error(M.intrinsic_shape(decl.name), span_of(decl),
                                hint=f"declare it `{intrinsics.signature(decl.name)}`")

    def _check_kernel(self, decl: ast.FnDecl, params: list[tuple[str, Type]], ret: Type) -> None:
        """A `kernel fn` is a GPU entry point: launched from the host with scalars
        and pointers, it returns nothing and is not a coroutine."""
        if not self.gpu:
            self.reporter.error(M.kernel_needs_gpu(), span_of(decl), hint=M.gpu_hint())
            return
        if decl.generics:
            self.reporter.error(M.kernel_generic(), span_of(decl))
        if ret != VOID:
            self.reporter.error(M.kernel_returns(ret), decl.ret.span)
        if decl.body is not None and _is_coroutine(decl):
            self.reporter.error(M.kernel_coroutine(), span_of(decl),
                                hint="run a generator inside the kernel instead: `for v in g(…) { … }`")
        for p, (_, t) in zip(decl.params, params):
            if is_aggregate(t):
                self.reporter.error(M.kernel_param(t), p.span)

    def instantiate_method(self, m: _Method, targs: tuple[Type, ...] = (), at: Span | None = None) -> FnInstance:
        subst = dict(m.subst)
        subst.update(zip(m.decl.generics, targs))
        return self.instantiate(m.decl, subst, targs, owner=m.owner, display_owner=str(m.owner), at=at)

    # Instances asked for by instances asked for by … : how many notes say so.
    MAX_INSTANTIATION_NOTES = 6

    def _add_instantiation_notes(self, inst: FnInstance, first: int) -> None:
        """Notes for the errors reported since the `first`th, which are about
        `inst`, but for those that an instance it asked for annotated already
        (with the whole chain)."""
        notes = self.instantiation_notes(inst)
        for diagnostic in self.reporter.diagnostics[first:]:
            if id(diagnostic) not in self.annotated:
                self.annotated.add(id(diagnostic))
                diagnostic.notes.extend(notes)

    def instantiation_notes(self, inst: FnInstance) -> list[tuple[str, Span | None]]:
        """Notes for an error in a generic instance's body: which instance, where
        it was asked for, and so on up to the first non-generic caller."""
        notes: list[tuple[str, Span | None]] = []
        while id(inst) in self.requests and len(notes) < self.MAX_INSTANTIATION_NOTES:
            requester, at = self.requests[id(inst)]
            notes.append((M.instantiated_here(inst.display), at))
            if requester is None:
                break
            inst = requester
        return notes

    def impl_target(self, impl: ast.ImplDecl) -> Type:
        if impl not in self._impl_targets:
            subst = {g: TypeVar(g) for g in impl.generics}
            self._impl_targets[impl] = self.resolve_type(impl.target, subst)
        return self._impl_targets[impl]

    # ------------------------------------------------------------------ promises

    def _check_promise_decl(self, decl: ast.PromiseDecl) -> None:
        abi = abi_of(PromiseT(decl))
        if abi not in _ABIS:
            self.reporter.error(M.unknown_abi(abi), decl.abi.span)
            return
        if abi in _RETCON_START:
            self._check_retcon_promise(decl, abi)
        elif abi == "async":
            if decl.abi.size is not None or decl.fields or decl.methods or decl.suspends:
                self.reporter.error(M.async_promise_members(), span_of(decl))
        elif decl.abi is not None and decl.abi.size is not None:
            self.reporter.error(M.switch_takes_no_size(), decl.abi.span)
        # A frame must go back to the allocator it came from.
        hooks = {m.name: m for m in decl.methods}
        for have, need in (("allocate", "deallocate"), ("deallocate", "allocate")):
            if have in hooks and need not in hooks:
                self.reporter.error(M.missing_hook(decl.name, need, f"`{have}`"), span_of(hooks[have]),
                                    hint=M.hook_hint(decl.name, need))

    def _check_retcon_promise(self, decl: ast.PromiseDecl, abi: str) -> None:
        """A returned-continuation promise only names its ABI, its buffer and how it
        starts (LANGUAGE.md §6): retcon must start suspended (LLVM's retcon ramp
        cannot end without yielding), retcon_once must run to its single yield."""
        if decl.abi.size is None:
            self.reporter.error(M.retcon_needs_size(abi), decl.abi.span)
        start = _RETCON_START[abi]
        for s in decl.suspends:
            if s.point == "final":
                self.reporter.error(M.retcon_member(abi, "a `final` suspend point"), s.span)
            elif s.mode != start:
                self.reporter.error(M.retcon_initial(abi, start), s.span)
        if start == "run" and not any(s.point == "initial" for s in decl.suspends):
            self.reporter.error(M.retcon_initial(abi, start), decl.abi.span)
        for member, what in [(f, "promise state (`var`)") for f in decl.fields] + \
                            [(m, "hooks") for m in decl.methods]:
            self.reporter.error(M.retcon_member(abi, what), span_of(member))
        if not decl.generics:
            self.reporter.error(M.retcon_generic(decl.name), decl.name_span or span_of(decl))

    def _promise_type(self, t: PromiseT, use: Span) -> Type:
        if has_vars(t) or self.promise_state(t) in self._laying_out:
            # (the second: named in its own promise state, `var child: ptr<Generator<T>>`;
            # checked where that state's layout was asked for)
            return t
        held = [name for name, ft in self.struct_fields(self.promise_state(t))
                if self.layouts.owns(ft)]
        if held:
            # Nothing destroys a promise state, and `h.promise().field` reads copy it.
            self.reporter.error(M.owning_in_promise_state(t, held[0]), use)
            return ERROR
        if abi_of(t) in _RETCON_START and t.args and self.layouts.owns(t.args[0]):
            # `value()` copies the yielded value out each time it is called, and
            # nothing destroys the one the coroutine handed over.
            self.reporter.error(M.owning_yielded_by_retcon(t), use)
            return ERROR
        return t

    def promise_state(self, t: PromiseT) -> StructT:
        return StructT(self._states[t.decl], t.args)

    def promise_hook(self, t: PromiseT, name: str) -> FnInstance | None:
        for method in t.decl.methods:
            if method.name == name:
                subst = dict(zip(t.decl.generics, t.args))
                return self.instantiate_method(_Method(method, subst, self.promise_state(t)))
        return None

    def coroutine_info(self, decl: ast.FnDecl, ret: Type) -> CoroutineInfo | None:
        if not isinstance(ret, PromiseT):
            if ret is not ERROR:
                self.reporter.error(M.coroutine_return_type(decl.name, ret),
                                    decl.ret.span if decl.ret else span_of(decl),
                                    hint=M.coroutine_return_hint())
            return None
        abi = abi_of(ret)
        if abi == "async":
            self.reporter.error(M.async_abi_coroutine(ret), decl.ret.span)
            return None
        state = self.promise_state(ret)
        modes = {s.point: s.mode for s in ret.decl.suspends}
        if abi in _RETCON_START:
            return CoroutineInfo(abi=abi, promise=ret, state=state,
                                 initial_suspend=_RETCON_START[abi] == "suspend", final_suspend=False,
                                 return_void=None, buffer=ret.decl.abi.size or 0,
                                 yields=ret.args[0] if ret.args else ERROR)
        return CoroutineInfo(
            abi=abi, promise=ret, state=state,
            initial_suspend=modes.get("initial", "suspend") == "suspend",
            final_suspend=modes.get("final", "suspend") == "suspend",
            return_void=self.promise_hook(ret, "return_void"),
            final_transfer=self.promise_hook(ret, "final_suspend"),
            allocate=self._allocator_hook(ret, "allocate", [U64], PtrT(PRIMITIVES["u8"])),
            deallocate=self._allocator_hook(ret, "deallocate", [PtrT(PRIMITIVES["u8"])], VOID))

    def _allocator_hook(self, t: PromiseT, name: str, params: list[Type], ret: Type) -> FnInstance | None:
        hook = self.promise_hook(t, name)
        if hook is None:
            return None
        if hook.self_mode is not None or [p for _, p in hook.params] != params or hook.ret != ret:
            want = f"fn {name}({', '.join(map(str, params))})" + (f" -> {ret}" if ret != VOID else "")
            self.reporter.error(M.bad_hook(name, want), span_of(hook.decl))
            return None
        return hook

    def find_method(self, recv: Type, name: str) -> _Method | None:
        for impl in self.ns.impls:
            target = self.impl_target(impl)
            subst: dict[str, Type] = {}
            if target is ERROR or not unify(target, recv, subst):
                continue
            for method in impl.methods:
                if method.name == name:
                    return _Method(method, subst, recv)
        return None

    def method_names(self, recv: Type) -> list[str]:
        names = []
        for impl in self.ns.impls:
            target = self.impl_target(impl)
            if target is not ERROR and unify(target, recv, {}):
                names += [m.name for m in impl.methods]
        return names


# Type arguments bigger than this (written out) mean a generic instantiates
# itself with ever larger types; no real program comes close.
MAX_TYPE_SIZE = 200


def _mark_elide_safe(inst: FnInstance) -> None:
    """Coroutine calls whose frame certainly dies before the caller returns, so
    LLVM may place it in the caller's frame (`coro_elide_safe`):
    - a temporary: destroyed at the end of its statement (`for v in g(…)`,
      `await f(…)`, `g(…).next()`);
    - an argument of a call that is itself safe, or of an ordinary function,
      when the callee never moves that parameter: it dies with the callee
      (`sum(take(map(range(0, n), f), k))`);
    - the initial value of a `let`/`var` that is never moved: the variable's
      scope destroys it (`let s = g(…); while s.next() { … }`)."""
    def visit(call: ast.Call, safe: bool) -> None:
        if safe and isinstance(inst.types.get(call), PromiseT):
            inst.elide_safe.add(id(call))
        target = inst.calls.get(call)
        if not isinstance(target, DirectCall) or target.fn.is_extern:
            return
        callee_safe = target.fn.coro is None or id(call) in inst.elide_safe
        offset = 1 if target.receiver is not None else 0
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Call):
                visit(arg, callee_safe and (i + offset) not in target.fn.moved_params)

    for call in inst.calls:
        if isinstance(inst.types.get(call), PromiseT) and id(call) not in inst.consumed:
            inst.elide_safe.add(id(call))
    moved = {id(ref) for name, ref in inst.refs.items() if id(name) in inst.consumed}
    for node, var in inst.locals.items():
        if isinstance(node, ast.Let) and isinstance(node.init, ast.Call) and var.owned \
                and not var.is_param and id(var) not in moved and isinstance(var.type, PromiseT):
            inst.elide_safe.add(id(node.init))
    for call in inst.calls:
        if isinstance(call, ast.Call):
            visit(call, id(call) in inst.elide_safe)


_COROUTINE_NODES = (ast.Yield, ast.YieldFrom, ast.CoReturn, ast.Await)


@functools.lru_cache(maxsize=65536)  # bounded: one process may compile many programs
def _is_coroutine(decl: ast.FnDecl) -> bool:
    """A function whose body has `yield`, `yield from`, `co_return` or (outside an
    `async fn`) `await` (LANGUAGE.md §5)."""
    def walk(node) -> bool:
        if isinstance(node, _COROUTINE_NODES):
            return True
        if isinstance(node, tuple):
            return any(map(walk, node))
        if isinstance(node, ast.Node):
            return any(walk(getattr(node, f)) for f in ast.fields(node) if f != "span")
        return False
    return decl.kind in ("fn", "kernel") and walk(decl.body)


def _is_constant(e: ast.Expr) -> bool:
    match e:
        case ast.IntLit() | ast.FloatLit() | ast.BoolLit() | ast.StrLit() | ast.NullLit():
            return True
        case ast.Unary(operand=inner) | ast.Cast(expr=inner):
            return _is_constant(inner)
        case ast.ArrayLit(elems=elems):
            return all(map(_is_constant, elems))
        case ast.StructLit(fields=fields):
            return all(_is_constant(f.value) for f in fields)
    return False


@functools.lru_cache(maxsize=65536)  # bounded: one process may compile many programs
def _is_literalish(e: ast.Expr) -> bool:
    """An expression whose type comes from its context (an unsuffixed literal)."""
    match e:
        case ast.IntLit(suffix=None) | ast.FloatLit(suffix=None):
            return True
        case ast.Unary(op="-" | "~", operand=inner):
            return _is_literalish(inner)
        case ast.Binary(op=op, left=left, right=right) if op in ARITH + BITWISE:
            return _is_literalish(left) and _is_literalish(right)
        case ast.Binary(op=op, left=left) if op in SHIFTS:
            return _is_literalish(left)
    return False


class BodyChecker:
    """Checks one function instance's body (or a global's initializer)."""

    def __init__(self, program: ProgramChecker, inst: FnInstance | None, subst: dict[str, Type]):
        self.p = program
        self.r = program.reporter
        self.inst = inst
        self.subst = subst
        self.scopes: list[dict[str, LocalVar]] = [{}]
        self.loops = 0
        self.defers = 0
        self.loop_nesting = 0
        # Owning handles moved out of their variable so far, on some path:
        # (id(var), the fields moved out of it; () for the whole) → (var, where)
        self.moved: dict[tuple[int, tuple[str, ...]], tuple[LocalVar, Span]] = {}
        # Per enclosing loop: `moved` when it was entered, and at each of its
        # `break`s (a move followed by `break` or `return` is fine, as in Rust;
        # one that reaches the next iteration is not).
        self.loop_entries: list[dict] = []
        self.loop_breaks: list[list[dict]] = []
        # The pending `defer`s that use owning variables: (the scope whose end
        # runs it, the ids of those variables, where it is). Moving one of
        # them before the `defer` runs is an error.
        self.defer_uses: list[tuple[dict, set[int], Span]] = []
        self.defer_collect: set[int] | None = None   # while checking a `defer`: what it uses
        self.field_bases: set[int] = set()   # ids of the bases of field accesses being checked
        self.inst_types: dict = {} if inst is None else inst.types
        self.awaited: ast.Call | None = None   # the call `await` / `spawn` is about to check
        # Calls of `mut self` coroutine methods whose coroutine refers to a place
        # that may die first, and the variables initialised with one: id(call or
        # var) → its _Borrow. Such a coroutine is consumed where it is
        # made (for, with, await, yield from) or kept in the variable that a
        # `let`/`var` declares with it (which dies first), or assigned to a
        # variable that dies before the place does; never moved.
        self.borrowing: dict[int, _Borrow] = {}
        # Each local's scope depth and declaration order: which of two dies first.
        self.declared_at: dict[int, tuple[int, int]] = {}
        self.binding: ast.Expr | None = None   # the initialiser of the `let` being checked
        self.lending: ast.Expr | None = None   # the argument of a direct call being checked (_lend)

    # ---- side tables
    def _set(self, e: ast.Node, t: Type) -> Type:
        self.inst_types[e] = t
        return t

    def _ref(self, e: ast.Node, target: object) -> None:
        if self.inst is not None:
            self.inst.refs[e] = target

    def _call(self, e: ast.Call, target) -> None:
        if isinstance(target, DirectCall) and _suspends_task(target.fn) and e is not self.awaited:
            self.r.error(M.async_not_awaited(target.fn.decl.name), e.span)
        if self.inst is not None:
            self.inst.calls[e] = target

    # ---- scopes
    def declare(self, node: ast.Node, name: str, t: Type, mutable: bool, is_param: bool = False,
                owned: bool = True) -> LocalVar:
        var = LocalVar(name, t, mutable, is_param, self.loop_nesting,
                       owned=owned and t is not ERROR and self.p.layouts.owns(t))
        self.scopes[-1][name] = var
        self.declared_at[id(var)] = (len(self.scopes), len(self.declared_at))
        if self.inst is not None:
            self.inst.locals[node] = var
        return var

    def lookup(self, name: str) -> LocalVar | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def local_names(self) -> list[str]:
        return [n for s in self.scopes for n in s]

    # ------------------------------------------------------------------ body

    def check_body(self) -> None:
        inst = self.inst
        for param, (name, t) in zip((p for p in inst.decl.params), inst.params):
            mutable = param.is_self and param.mut_self
            # `self` is borrowed from the caller; any other handle parameter is owned.
            var = self.declare(param, name, t.elem if param.is_self and param.mut_self else t, mutable,
                               True, owned=not param.is_self)
            var.param_index = len([v for v in inst.locals.values() if v.is_param]) - 1
        self.check_block(inst.decl.body, new_scope=False)
        if inst.ret not in (VOID, ERROR) and not _is_coroutine(inst.decl) \
                and not _always_returns(inst.decl.body):
            hint = M.make_it_a_coroutine() if isinstance(inst.ret, PromiseT) else None
            self.r.error(M.missing_return(inst.display, inst.ret), span_of(inst.decl), hint=hint)

    def check_block(self, block: ast.Block, new_scope: bool = True) -> None:
        if new_scope:
            self.scopes.append({})
        for stmt in block.stmts:
            self.check_stmt(stmt)
        if new_scope:
            self._pop_scope()

    def _pop_scope(self) -> None:
        """Leave the innermost scope; its `defer`s have run."""
        scope = self.scopes.pop()
        self.defer_uses = [entry for entry in self.defer_uses if entry[0] is not scope]

    def check_stmt(self, s: ast.Stmt) -> None:
        getattr(self, f"stmt_{type(s).__name__}")(s)

    def stmt_Block(self, s: ast.Block) -> None:
        self.check_block(s)

    def stmt_Let(self, s: ast.Let) -> None:
        self.binding = s.init
        if s.type is not None:
            t = self.p.resolve_type(s.type, self.subst)
            if s.init is not None and t is not ERROR:
                self.expect(s.init, t)
            elif s.init is not None:
                self.check_expr(s.init, None)
            elif not s.mutable:
                self.r.error(M.let_needs_init(s.name), s.span)
        elif s.init is not None:
            t = self.check_expr(s.init, None)
            self.consume(s.init, t)
            if t == NULL:
                self.r.error(M.cannot_infer_null(), s.init.span, hint=f"write `let {s.name}: ptr<T> = null;`")
                t = ERROR
        else:
            self.r.error(M.cannot_infer_let(s.name), s.span, hint=f"write `var {s.name}: T;`")
            t = ERROR
        var = self.declare(s, s.name, t, s.mutable)
        if s.init is not None and (borrow := self._borrow_of(s.init)) is not None:
            self.borrowing[id(var)] = borrow   # it may stay there, not move on
        self.binding = None

    def _dies_first(self, holder: LocalVar, borrow: _Borrow) -> bool:
        """Whether `holder` goes out of scope before the place that a borrowing
        coroutine refers to: that place is a local declared earlier in the
        same scope, or in an enclosing one (a parameter, `self`)."""
        if borrow.var is None:
            return False
        (place_depth, place_order), (depth, order) = self.declared_at[id(borrow.var)], self.declared_at[id(holder)]
        return place_depth < depth or (place_depth == depth and place_order < order)

    def stmt_Assign(self, s: ast.Assign) -> None:
        place = self._local_path(s.target) if s.op == "=" else None
        moved = self.moved
        self._refill(place)   # a moved-out variable may be written…
        target_t = self.check_place(s.target, write=True)
        self.moved = moved    # …but not read by the value: `sink(g); g = keep(g);`
        if s.op == "=":
            # `g = c.ticks()`: a variable may hold a coroutine that refers to a
            # `mut self` place, as `var g = c.ticks();` does, if it dies first.
            holder = self.lookup(s.target.name) if isinstance(s.target, ast.Name) else None
            self.binding = s.value if holder is not None else None
            if target_t is not ERROR:
                self.expect(s.value, target_t)
            else:
                self.check_expr(s.value, None)
            self.binding = None
            self._refill(place)   # given its handles again, also after `g = keep(g)` moved them
            borrow = self._borrow_of(s.value)
            if holder is not None and borrow is not None:
                if self._dies_first(holder, borrow):
                    self.borrowing[id(holder)] = borrow
                else:
                    self.r.error(M.borrowing_coroutine_outlives(borrow.method, borrow.place, holder.name),
                                 s.value.span, hint=M.borrowing_coroutine_holder_hint(borrow.place))
            return
        self.binary_types(s.op, s.target, s.value, s.span, target_t)

    def _refill(self, place: tuple[LocalVar, tuple[str, ...]] | None) -> None:
        """Assigning to a local (or a field of one) gives it its handles again."""
        if place is not None:
            var, path = place
            self.moved = {key: m for key, m in self.moved.items()
                          if key[0] != id(var) or key[1][:len(path)] != path}

    def stmt_ExprStmt(self, s: ast.ExprStmt) -> None:
        self.check_expr(s.expr, None)

    def stmt_If(self, s: ast.If) -> None:
        self.condition(s.cond)
        before = dict(self.moved)
        self.check_block(s.then)
        after_then, self.moved = self.moved, before
        if isinstance(s.else_, ast.If):
            self.stmt_If(s.else_)
        elif s.else_ is not None:
            self.check_block(s.else_)
        # Moved on a path that reaches the next statement: maybe moved. A branch
        # that returns, panics, breaks or continues takes its moves elsewhere.
        reaching = [moved for moved, branch in ((after_then, s.then), (self.moved, s.else_))
                    if not _never_falls_through(branch)]
        self.moved = {k: v for moved in reaching or (after_then, self.moved) for k, v in moved.items()}

    def stmt_While(self, s: ast.While) -> None:
        before = dict(self.moved)
        self.condition(s.cond)
        for var, path, span in self._moves_since(before):   # the condition runs before every iteration
            self.r.error(M.move_in_loop(_path_text(var, path)), span)
        self.loop_body(s.body)

    def stmt_Loop(self, s: ast.Loop) -> None:
        self.loop_body(s.body)

    def loop_body(self, body: ast.Block, before=None) -> None:
        self.loops += 1
        self.loop_nesting += 1
        saved, self.defers = self.defers, 0
        self.loop_entries.append(dict(self.moved))
        self.loop_breaks.append([])
        self.scopes.append({})
        if before:
            before()
        self.check_block(body, new_scope=False)
        if not _never_falls_through(body):
            self._check_next_iteration()
        self._pop_scope()
        self.loop_entries.pop()
        for at_break in self.loop_breaks.pop():   # after the loop: moved on any way out
            self.moved.update(at_break)
        self.loops -= 1
        self.loop_nesting -= 1
        self.defers = saved

    def _check_next_iteration(self) -> None:
        """At the end of a loop's body or a `continue`: what was moved in this
        iteration out of a variable declared outside the loop (and not given
        a value again) would be moved again in the next."""
        for var, path, span in self._moves_since(self.loop_entries[-1]):
            if var.loop_depth < self.loop_nesting:
                self.r.error(M.move_in_loop(_path_text(var, path)), span)

    def _moves_since(self, before: dict) -> list[tuple[LocalVar, tuple[str, ...], Span]]:
        """The moves made since `moved` was `before`: (variable, fields, where)."""
        return [(var, key[1], span) for key, (var, span) in self.moved.items() if before.get(key) != (var, span)]

    def stmt_For(self, s: ast.For) -> None:
        if s.end is not None:
            t = self.range_bounds(s.iter, s.end)
            self.loop_body(s.body, lambda: self.declare(s, s.var, t, False))
            return
        it = self.check_expr(s.iter, None)
        if it is ERROR:
            self.loop_body(s.body, lambda: self.declare(s, s.var, ERROR, False))
            return
        if isinstance(s.iter, ast.Call) and isinstance(it, PromiseT) and self.inst is not None:
            self.inst.elide_safe.add(id(s.iter))   # the for statement owns and destroys it
        if _handle_kind(it) == "retcon":   # built in (LANGUAGE.md §6)
            next_fn, value_fn = HandleCall("next", None), HandleCall("value", None)
            item_type = it.args[0] if it.args else ERROR
        else:
            nxt, val = self.p.find_method(it, "next"), self.p.find_method(it, "value")
            if nxt is None or val is None:
                self.r.error(M.not_iterable(it), s.iter.span)
                self.loop_body(s.body, lambda: self.declare(s, s.var, ERROR, False))
                return
            next_fn = self.p.instantiate_method(nxt, at=s.iter.span)
            value_fn = self.p.instantiate_method(val, at=s.iter.span)
            if (next_fn.ret != BOOL or len(next_fn.params) != 1 or len(value_fn.params) != 1
                    or next_fn.self_mode is None or value_fn.self_mode is None):
                self.r.error(M.not_iterable(it), s.iter.span)
            item_type = value_fn.ret
        holder = LocalVar(f"{s.var}.iter", it, True)

        def bind():
            item = self.declare(s, s.var, item_type, False)
            if self.inst is not None:
                self.inst.iters[s] = IterProtocol(next_fn, value_fn, item, holder)
        self.loop_body(s.body, bind)

    def range_bounds(self, lo: ast.Expr, hi: ast.Expr) -> Type:
        if _is_literalish(lo) and not _is_literalish(hi):
            t = self.check_expr(hi, None)
            self.expect(lo, t)
        else:
            t = self.check_expr(lo, None)
            self.expect(hi, t)
        if t is not ERROR and not t.is_int:
            self.r.error(M.range_bound(t), lo.span.to(hi.span))
            return ERROR
        return t

    def stmt_With(self, s: ast.With) -> None:
        t = self.check_expr(s.expr, None)
        item = ERROR
        if isinstance(t, PromiseT) and abi_of(t) == "retcon_once":
            item = t.args[0] if t.args else ERROR
            if isinstance(s.expr, ast.Call) and self.inst is not None:
                self.inst.elide_safe.add(id(s.expr))   # run to its end by the statement
        elif t is not ERROR:
            self.r.error(M.with_needs_once(t), s.expr.span)
        self.scopes.append({})
        self.declare(s, s.var, item, False)
        if self.inst is not None and item is not ERROR:
            self.inst.withs[s] = LocalVar(f"{s.var}.with", t, True)
        self.check_block(s.body, new_scope=False)
        self._pop_scope()

    def stmt_Break(self, s: ast.Break) -> None:
        self._jump(s, "break")

    def stmt_Continue(self, s: ast.Continue) -> None:
        self._jump(s, "continue")

    def _jump(self, s: ast.Stmt, kw: str) -> None:
        if self.defers:
            self.r.error(M.jump_out_of_defer(kw), s.span)
        elif not self.loops:
            self.r.error(M.break_outside_loop(kw), s.span)
        elif kw == "break":
            self.loop_breaks[-1].append(dict(self.moved))
        else:
            self._check_next_iteration()

    def stmt_Return(self, s: ast.Return) -> None:
        if self.defers:
            self.r.error(M.jump_out_of_defer("return"), s.span)
        if _is_coroutine(self.inst.decl):
            self.r.error(M.return_in_coroutine(), s.span, hint="use `co_return` in a coroutine")
            if s.value is not None:
                self.check_expr(s.value, None)
            return
        ret = self.inst.ret
        if s.value is None:
            if ret not in (VOID, ERROR):
                self.r.error(M.return_missing_value(ret), s.span)
        elif ret == VOID:
            t = self.check_expr(s.value, None)
            if t not in (VOID, ERROR):
                self.r.error(M.return_value_in_void(self.inst.display), s.value.span)
        else:
            self.expect(s.value, ret)

    def stmt_CoReturn(self, s: ast.CoReturn) -> None:
        if self.defers:
            self.r.error(M.jump_out_of_defer("co_return"), s.span)
        if self.inst is not None and self.inst.is_async:
            self.r.error(M.async_forbids("`co_return`"), s.span, hint="an `async fn` returns with `return`")
            return
        if self.inst is None or not _is_coroutine(self.inst.decl):
            self.r.error(M.co_return_outside(), s.span, hint="use `return` in a function that is not a coroutine")
            return
        coro = self.inst.coro
        if coro is not None and coro.returns_continuations:   # only `co_return;`
            if s.value is not None:
                self.r.error(M.retcon_forbids("`co_return` with a value", coro.abi), s.value.span)
                self.check_expr(s.value, None)
            return
        hook_name = "return_value" if s.value is not None else "return_void"
        what = "`co_return` with a value" if s.value is not None else "`co_return;`"
        self.call_hook(s, hook_name, what, s.value)

    def call_hook(self, node: ast.Node, hook_name: str, what: str, value: ast.Expr | None,
                  any_result: bool = False) -> Type:
        """Check a promise hook call that `yield` / `co_return` make; record it."""
        coro = self.inst.coro
        if coro is None:  # the coroutine's return type was already reported
            if value is not None:
                self.check_expr(value, None)
            return ERROR
        hook = self.p.promise_hook(coro.promise, hook_name)
        if hook is None:
            self.r.error(M.missing_hook(coro.promise.decl.name, hook_name, what), node.span,
                         hint=M.hook_hint(coro.promise.decl.name, hook_name))
            if value is not None:
                self.check_expr(value, None)
            return ERROR
        self.inst.hooks[node] = hook
        params = [t for _, t in hook.params[1:]]
        if value is not None:
            if len(params) == 1:
                self.expect(value, params[0])
            else:
                self.r.error(M.arity(hook_name, len(params), 1), node.span)
        if hook.ret != VOID and not any_result:
            self.r.error(M.hook_result(hook_name), node.span)
        return hook.ret if any_result else VOID

    def stmt_Defer(self, s: ast.Defer) -> None:
        if isinstance(s.stmt, (ast.Let, ast.Defer)):
            self.r.error(M.defer_declares(), s.stmt.span)
            return
        self.defers += 1
        saved, self.loops = self.loops, 0
        self.defer_collect = set()
        self.check_stmt(s.stmt)
        if self.defer_collect:
            self.defer_uses.append((self.scopes[-1], self.defer_collect, s.span))
        self.defer_collect = None
        self.loops = saved
        self.defers -= 1

    def condition(self, e: ast.Expr) -> None:
        t = self.check_expr(e, BOOL)
        if t not in (BOOL, ERROR):
            self.r.error(M.cond_not_bool(t), e.span)

    # ------------------------------------------------------------------ places

    def check_place(self, e: ast.Expr, write: bool) -> Type:
        """Type of an assignable (or addressable) expression; reports why not."""
        match e:
            case ast.Name(name=name):
                t = self.check_expr(e, None)
                var = self.lookup(name)
                if write and var is not None and not var.mutable:
                    if var.is_param and name == "self":
                        self.r.error(M.assign_self(), e.span)
                    elif var.is_param:
                        self.r.error(M.assign_param(name), e.span, hint=f"copy it into a variable: `var {name} = {name};`")
                    else:
                        self.r.error(M.assign_immutable(name), e.span, hint=f"declare it with `var {name}`")
                    return ERROR
                if var is None:
                    g = self.p.globals.get(name)
                    if g is None:
                        if t is not ERROR:
                            self.r.error(M.not_assignable() if write else M.not_addressable(), e.span)
                        return ERROR
                    if write and not g.decl.mutable:
                        self.r.error(M.assign_immutable(name), e.span, hint=f"declare it with `var {name}`")
                        return ERROR
                return t
            case ast.Field(base=base) | ast.Index(base=base):
                t = self.check_expr(e, None)
                if t is ERROR:
                    return ERROR
                if isinstance(self.inst_types.get(base), PtrT):
                    return t  # writes through a raw pointer are always allowed
                if self._place_root_ok(base, write):
                    return t
                return ERROR
        t = self.check_expr(e, None)
        if t is not ERROR:
            self.r.error(M.not_assignable() if write else M.not_addressable(), e.span)
        return ERROR

    def _place_root_ok(self, base: ast.Expr, write: bool) -> bool:
        """`a.b[i].c = v` needs `a` to be a mutable place (or a pointer)."""
        match base:
            case ast.Name():
                self.field_bases.add(id(base))   # only the field is used: `x.a = v` after `x.b` moved
                ok = self.check_place(base, write) is not ERROR
                self.field_bases.discard(id(base))
                return ok
            case ast.Field(base=inner) | ast.Index(base=inner):
                if isinstance(self.inst_types.get(inner), PtrT):
                    return True
                return self._place_root_ok(inner, write)
            case ast.Call() if self.inst is not None and isinstance(self.inst.calls.get(base), HandleCall):
                return True  # `h.promise()` is the promise itself, by reference
        if not write:
            # Reading a field of a temporary is fine; taking its address is not.
            return True
        self.r.error(M.not_assignable(), base.span)
        return False

    # ------------------------------------------------------------------ expressions

    def consume(self, e: ast.Expr, t: Type) -> None:
        """`e` moves into its context (a variable, an argument, a return): an owning
        handle leaves the variable that held it."""
        if self.inst is None or t is ERROR or not self.p.layouts.owns(t):
            return
        self.inst.consumed.add(id(e))
        borrow = self._borrow_of(e)
        if borrow is not None and e is not self.binding and e is not self.lending:
            self.r.error(M.borrowing_coroutine_moved(borrow.method, borrow.place), e.span,
                         hint=M.borrowing_coroutine_hint(borrow.method))
        if isinstance(e, (ast.Name, ast.Field)):
            place = self._local_path(e)
            if place is None:
                # a field through a pointer, or anything of `self` (the caller's):
                # a copy would be a second owner
                if isinstance(e, ast.Field) or self.lookup(e.name) is not None:
                    self.r.error(M.move_out_of_place(), e.span)
                return
            var, path = place
            for _, used, where in self.defer_uses:
                if id(var) in used:   # it runs when its scope ends: after this move
                    self.r.error(M.move_used_by_defer(_path_text(var, path)), e.span,
                                 notes=[(M.deferred_here(), where)])
                    break
            self.moved[id(var), path] = (var, e.span)   # in a loop: see _check_next_iteration
            if var.is_param:
                self.inst.moved_params.add(var.param_index)
        elif isinstance(e, ast.Index):
            self.r.error(M.move_out_of_place(), e.span)

    def _local_path(self, e: ast.Expr) -> tuple[LocalVar, tuple[str, ...]] | None:
        """`x` or `x.a.b` of a local variable that owns what it holds: x, and
        the fields (`("a", "b")`). A field can be moved out of such a
        variable alone (as in Rust); nothing can be moved out through a
        pointer or an index, out of `self`, or out of a temporary."""
        path = []
        while isinstance(e, ast.Field):
            path.append(e.name)
            e = e.base
        var = self.lookup(e.name) if isinstance(e, ast.Name) else None
        if var is None or not var.owned:
            return None
        return var, tuple(reversed(path))

    def _check_not_moved(self, e: ast.Expr) -> bool:
        """A use of `x` or `x.a.b` as a whole: nothing of it may have been moved."""
        if id(e) in self.field_bases:   # `x` of `x.a`: the access as a whole is checked
            return True
        place = self._local_path(e)
        if place is None:
            return True
        var, path = place
        for (key, moved_path), (_, where) in self.moved.items():
            if key == id(var) and path[:len(moved_path)] == moved_path[:len(path)]:
                whole = len(moved_path) <= len(path)
                message = (M.use_after_move(_path_text(var, path)) if whole
                           else M.use_after_partial_move(_path_text(var, path), _path_text(var, moved_path)))
                self.r.error(message, e.span, notes=[(M.moved_here(), where)])
                return False
        return True

    def expect(self, e: ast.Expr, t: Type) -> Type:
        return self.expect_checked(e, self.check_expr(e, t), t)

    def expect_checked(self, e: ast.Expr, got: Type, t: Type) -> Type:
        """What `expect` does after checking `e` (which gave `got`): `e` moves into
        a place of type `t`. For an expression checked already (to infer type
        arguments): checking it again would repeat its moves."""
        self.consume(e, got)
        if got is ERROR or t is ERROR:
            return t
        if got == NULL and (isinstance(t, PtrT) or t == HANDLE):
            self._set(e, t)
            return t
        if got != t:
            self.r.error(M.mismatch(t, got), e.span)
        return t

    def check_expr(self, e: ast.Expr, expected: Type | None) -> Type:
        # `void` is a unit type (LANGUAGE.md §3): a variable or field of type
        # void takes no space; operators and `print` refuse it like any other type.
        return self._set(e, getattr(self, f"expr_{type(e).__name__}")(e, expected))

    def expr_IntLit(self, e: ast.IntLit, expected: Type | None, negate: bool = False) -> Type:
        value = -e.value if negate else e.value
        if e.suffix:
            t = PRIMITIVES[e.suffix]
        elif isinstance(expected, (IntT, FloatT)):
            t = expected
        else:
            t = I64
        if isinstance(t, IntT) and not (t.min <= value <= t.max):
            if not (t == I64 and not e.suffix and expected is None and value <= U64.max):
                self.r.error(M.literal_out_of_range(value, t), e.span)
                return ERROR
            t = U64 if value > I64.max else t
        return t

    def expr_FloatLit(self, e: ast.FloatLit, expected: Type | None) -> Type:
        if e.suffix:
            return PRIMITIVES[e.suffix]
        if isinstance(expected, FloatT):
            return expected
        return F64

    def expr_StrLit(self, e, expected):
        return STR

    def expr_BoolLit(self, e, expected):
        return BOOL

    def expr_NullLit(self, e, expected):
        return expected if isinstance(expected, PtrT) else NULL


    def expr_Name(self, e: ast.Name, expected: Type | None) -> Type:
        var = self.lookup(e.name)
        if var is not None:
            self._ref(e, var)
            if self.defer_collect is not None and var.owned:
                self.defer_collect.add(id(var))
            return var.type if self._check_not_moved(e) else ERROR
        g = self.p.globals.get(e.name)
        if g is not None:
            self._ref(e, g)
            return g.type
        decl = self.p.ns.decls.get(e.name)
        if isinstance(decl, ast.FnDecl):
            if decl.kind == "async" or decl.name in intrinsics.STDLIB_ONLY:
                self.r.error(M.async_value(e.name), e.span)
                return ERROR
            if decl.generics:
                self.r.error(M.generic_fn_value(e.name), e.span)
                return ERROR
            inst = self.p.instantiate(decl, {}, ())
            self._ref(e, inst)
            if decl.varargs:
                self.r.error(M.not_a_value(e.name), e.span)
                return ERROR
            if _is_coroutine(decl):
                # A coroutine's ABI is not a plain call's (a retcon one takes a
                # buffer, returns the continuation with the value): LANGUAGE.md §2.
                self.r.error(M.coroutine_fn_value(e.name), e.span,
                             hint=M.coroutine_fn_value_hint(e.name, inst.params, inst.ret))
                return ERROR
            return FnT(tuple(t for _, t in inst.params), inst.ret)
        if decl is not None or e.name in BUILTIN_FUNCTIONS:
            self.r.error(M.not_a_value(e.name), e.span)
            return ERROR
        self.r.error(M.unknown_name(e.name), e.span, hint=self.p.ns.suggest(e.name, self.local_names()))
        return ERROR

    def expr_GenericName(self, e: ast.GenericName, expected: Type | None) -> Type:
        self.r.error(M.generic_fn_value(e.name), e.span)
        return ERROR

    def expr_Unary(self, e: ast.Unary, expected: Type | None) -> Type:
        if e.op == "-" and isinstance(e.operand, ast.IntLit):
            t = self.expr_IntLit(e.operand, expected, negate=True)
            self._set(e.operand, t)
            if t is not ERROR and isinstance(t, IntT) and not t.signed and e.operand.value != 0:
                self.r.error(M.bad_operand("-", t), e.span)
            return t
        t = self.check_expr(e.operand, expected if e.op != "!" else BOOL)
        if t is ERROR:
            return ERROR
        ok = {"-": t.is_numeric, "!": t == BOOL, "~": t.is_int}[e.op]
        if not ok:
            self.r.error(M.bad_operand(e.op, t), e.span)
            return ERROR
        return t

    def expr_AddrOf(self, e: ast.AddrOf, expected: Type | None) -> Type:
        t = self.check_place(e.operand, write=False)
        return ERROR if t is ERROR else PtrT(t)

    def expr_Binary(self, e: ast.Binary, expected: Type | None) -> Type:
        return self.binary_types(e.op, e.left, e.right, e.span, None, expected)

    def binary_types(self, op: str, left: ast.Expr, right: ast.Expr, span: Span,
                     left_known: Type | None, expected: Type | None = None) -> Type:
        if op in LOGICAL:
            lt = left_known or self.check_expr(left, BOOL)
            rt = self.check_expr(right, BOOL)
            for side, t in ((left, lt), (right, rt)):
                if t not in (BOOL, ERROR):
                    self.r.error(M.bad_operand(op, t), side.span)
                    return ERROR
            return BOOL
        hint = expected if op in ARITH + BITWISE + SHIFTS else None
        if left_known is not None:
            lt = left_known
            rt = self.check_expr(right, lt if lt is not ERROR and op not in SHIFTS else None) \
                if op not in SHIFTS else self._shift_amount(right, lt)
        elif _is_literalish(left) and not _is_literalish(right) and op not in SHIFTS:
            rt = self.check_expr(right, hint)
            lt = self.check_expr(left, rt if rt is not ERROR else None)
        else:
            lt = self.check_expr(left, hint)
            rt = self._shift_amount(right, lt) if op in SHIFTS else \
                self.check_expr(right, lt if lt is not ERROR else None)
        if lt is ERROR or rt is ERROR:
            return BOOL if op in EQUALITY + ORDERING else ERROR
        if op in SHIFTS:
            if not lt.is_int:
                self.r.error(M.bad_operand(op, lt), span)
                return ERROR
            return lt
        if op in EQUALITY and {lt, rt} <= {NULL, HANDLE} | ({lt} if isinstance(lt, PtrT) else set()) | \
                ({rt} if isinstance(rt, PtrT) else set()) and NULL in (lt, rt):
            return BOOL
        if lt != rt:
            self.r.error(M.operand_mismatch(op, lt, rt), span)
            return ERROR
        allowed = {
            "arith": lt.is_numeric,
            "bitwise": lt.is_int or lt == BOOL,
            "equality": is_scalar(lt) or isinstance(lt, (PtrT, FnT)) or lt == HANDLE,
            "ordering": lt.is_numeric,
        }[_op_class(op)]
        if not allowed:
            self.r.error(M.bad_operand(op, lt), span)
            return ERROR
        return BOOL if op in EQUALITY + ORDERING else lt

    def _shift_amount(self, right: ast.Expr, lt: Type) -> Type:
        rt = self.check_expr(right, lt if isinstance(lt, IntT) else None)
        if rt is not ERROR and not rt.is_int:
            self.r.error(M.bad_operand("<<", rt), right.span)
            return ERROR
        return rt

    def expr_Cast(self, e: ast.Cast, expected: Type | None) -> Type:
        target = self.p.resolve_type(e.type, self.subst)
        # A cast converts, it does not ask for a type: a literal operand keeps its
        # own type, so `300 as u8` is 44 (i64 300, truncated).
        src = self.check_expr(e.expr, None)
        if target is ERROR or src is ERROR:
            return ERROR
        ok = (
            (src.is_numeric and target.is_numeric)
            or (src == BOOL and target.is_int)
            or (src == target)
            or (isinstance(src, PtrT) and isinstance(target, PtrT))
            or (isinstance(src, PtrT) and target in (I64, U64))
            or (src in (I64, U64) and isinstance(target, PtrT))
            or (src == STR and target == PtrT(PRIMITIVES["u8"]))
            or (src == NULL and isinstance(target, PtrT))
        )
        if not ok:
            self.r.error(M.bad_cast(src, target), e.span)
            return ERROR
        return target

    def expr_Index(self, e: ast.Index, expected: Type | None) -> Type:
        base = self.check_expr(e.base, None)
        it = self.check_expr(e.index, I64 if _is_literalish(e.index) else None)
        if it is not ERROR and not it.is_int:
            self.r.error(M.index_not_int(it), e.index.span)
        if base is ERROR:
            return ERROR
        if isinstance(base, (ArrayT, PtrT)):
            return base.elem
        self.r.error(M.not_indexable(base), e.base.span)
        return ERROR

    def expr_Field(self, e: ast.Field, expected: Type | None) -> Type:
        self.field_bases.add(id(e.base))
        base = self.check_expr(e.base, None)
        self.field_bases.discard(id(e.base))
        if base is ERROR:
            return ERROR
        if isinstance(base, StructT):
            for name, t in self.p.struct_fields(base):
                if name == e.name:
                    return t if self._check_not_moved(e) else ERROR
        hint = M.ptr_field_hint(e.name) if isinstance(base, PtrT) and isinstance(base.elem, StructT) else None
        if self.p.find_method(base, e.name) is not None:
            hint = f"`{e.name}` is a method: call it with `(…)`"
        self.r.error(M.no_field(base, e.name), e.span, hint=hint)
        return ERROR

    def expr_StructLit(self, e: ast.StructLit, expected: Type | None) -> Type:
        decl = self.p.ns.decls.get(e.name)
        if not isinstance(decl, ast.StructDecl):
            if decl is None:
                self.r.error(M.unknown_type(e.name), e.span, hint=self.p.ns.suggest(e.name, []))
            else:
                self.r.error(M.not_a_struct(e.name), e.span)
            for f in e.fields:
                self.check_expr(f.value, None)
            return ERROR
        if e.type_args:
            args = tuple(self.p.resolve_type(a, self.subst) for a in e.type_args)
            if len(args) != len(decl.generics):
                self.r.error(M.type_arity(e.name, len(decl.generics), len(args)), e.span)
                return ERROR
            if ERROR in args:
                return ERROR
            t = StructT(decl, args)
        elif isinstance(expected, StructT) and expected.decl is decl:
            t = expected
        elif decl.generics:
            t = self._infer_struct(e, decl)
            if t is ERROR:
                return ERROR
        else:
            t = StructT(decl)
        fields = dict(self.p.struct_fields(t, e.span))
        given: set[str] = set()
        for f in e.fields:
            if f.name in given:
                self.r.error(M.duplicate_field(f.name), f.span)
            given.add(f.name)
            if f.name not in fields:
                self.r.error(M.no_field(t, f.name), f.span)
                self.check_expr(f.value, None)
                continue
            if f.value not in self.inst_types:
                self.expect(f.value, fields[f.name])
                continue
            # checked already, to infer the type arguments: moves into the struct all the same
            self.consume(f.value, self.inst_types[f.value])
            if self.inst_types[f.value] != fields[f.name] and self.inst_types[f.value] is not ERROR:
                self.r.error(M.mismatch(fields[f.name], self.inst_types[f.value]), f.value.span)
        missing = [n for n in fields if n not in given]
        if missing:
            self.r.error(M.missing_fields(missing), e.span)
        return t

    def _infer_struct(self, e: ast.StructLit, decl: ast.StructDecl) -> Type:
        pattern = {f.name: self.p.resolve_type(f.type, {g: TypeVar(g) for g in decl.generics})
                   for f in decl.fields}
        subst: dict[str, Type] = {}
        deferred = []
        for f in e.fields:
            if f.name not in pattern:
                continue
            if _is_literalish(f.value):
                deferred.append(f)
                continue
            t = self.check_expr(f.value, None)
            if t is not ERROR and not unify(pattern[f.name], t, subst):
                self.r.error(M.mismatch(substitute(pattern[f.name], subst), t), f.value.span)
                return ERROR
        for f in deferred:
            want = substitute(pattern[f.name], subst)
            t = self.check_expr(f.value, None if has_vars(want) else want)
            unify(pattern[f.name], t, subst)
        if any(g not in subst for g in decl.generics):
            self.r.error(M.cannot_infer_type_args(decl.name), e.span)
            return ERROR
        return StructT(decl, tuple(subst[g] for g in decl.generics))

    def expr_ArrayLit(self, e: ast.ArrayLit, expected: Type | None) -> Type:
        if isinstance(expected, ArrayT):
            elem = expected.elem
        elif not e.elems:
            self.r.error(M.cannot_infer_array(), e.span)
            return ERROR
        else:
            first = next((x for x in e.elems if not _is_literalish(x)), e.elems[0])
            elem = self.check_expr(first, None)
        for x in e.elems:
            if x in self.inst_types:   # checked already, to infer the element type
                self.consume(x, self.inst_types[x])
                if self.inst_types[x] not in (elem, ERROR):
                    self.r.error(M.mismatch(elem, self.inst_types[x]), x.span)
            else:
                self.expect(x, elem)
        if elem is ERROR:
            return ERROR
        if isinstance(expected, ArrayT) and expected.size != len(e.elems):
            self.r.error(M.mismatch(expected, ArrayT(elem, len(e.elems))), e.span)
            return ERROR
        return ArrayT(elem, len(e.elems))

    def expr_Yield(self, e: ast.Yield, expected: Type | None) -> Type:
        if self.inst is not None and self.inst.is_async:
            return self._async_forbids(e, "`yield`", e.value)
        if self.defers:
            self.r.error(M.jump_out_of_defer("yield"), e.span)
        if e.value is None:
            self.r.error(M.arity("yield_value", 1, 0), e.span)
            return ERROR
        coro = self.inst.coro if self.inst else None
        if coro is not None and coro.returns_continuations:   # the value goes with the continuation
            self.expect(e.value, coro.yields)
            return VOID
        result = self.call_hook(e, "yield_value", "`yield`", e.value, any_result=True)
        if result in (VOID, HANDLE, ERROR):
            return VOID if result == HANDLE else result
        # yield_value returned an awaiter: `yield v` is `await` of it (Python's send)
        return self._await_of(e, result, e.value.span)

    def expr_YieldFrom(self, e: ast.YieldFrom, expected: Type | None) -> Type:
        """`yield from g` calls the promise's `yield_from(mut self, inner: ptr<G>) -> W`
        and awaits W, which links g into the generator tree (so the consumer resumes
        the innermost generator directly) and evaluates to g's `co_return` value."""
        if self.inst is not None and self.inst.is_async:
            return self._async_forbids(e, "`yield from`", e.value)
        inner, coro = self._suspending_operand(e, "yield from", e.value)
        if inner is ERROR:
            return ERROR
        hook = self.p.promise_hook(coro.promise, "yield_from")
        if hook is None:
            self.r.error(M.missing_hook(coro.promise.decl.name, "yield_from", "`yield from`"), e.span,
                         hint=M.hook_hint(coro.promise.decl.name, "yield_from"))
            return ERROR
        if len(hook.params) != 2 or hook.params[1][1] != PtrT(inner):
            want = hook.params[1][1].elem if len(hook.params) == 2 and isinstance(hook.params[1][1], PtrT) else "?"
            self.r.error(M.mismatch(want, inner), e.value.span)
            return ERROR
        self.inst.hooks[e] = hook
        return self._await_of(e, hook.ret, e.span)

    def _suspending_operand(self, e: ast.Expr, what: str, operand: ast.Expr) -> tuple[Type, CoroutineInfo]:
        """Check the operand of `await` / `yield from`; ERROR when there is nothing
        more to check (a mistake already reported, or no valid coroutine around it)."""
        if self.defers:
            self.r.error(M.jump_out_of_defer(what), e.span)
        t = self.check_expr(operand, None)
        coro = self.inst.coro if self.inst else None
        if coro is not None and coro.returns_continuations:
            self.r.error(M.retcon_forbids(f"`{what}`", coro.abi), e.span,
                         hint="a returned-continuation coroutine can only `yield`; "
                              "`for v in g { yield v; }` passes on another generator's values"
                         if what == "yield from" else None)
            return ERROR, coro
        return (ERROR if coro is None else t), coro

    def _await_of(self, e: ast.Expr, awaiter: Type, span: Span, transform=None) -> Type:
        """`e` awaits a value of type `awaiter`: record its protocol; `e`'s type is
        what its await_resume returns."""
        info = self.awaiter_protocol(awaiter, span, transform)
        if info is None:
            return ERROR
        self.inst.awaits[e] = info
        return info.resume.ret

    def _async_forbids(self, e: ast.Expr, what: str, operand: ast.Expr | None) -> Type:
        self.r.error(M.async_forbids(what), e.span)
        if operand is not None:
            self.check_expr(operand, None)
        return ERROR

    @contextlib.contextmanager
    def _awaiting(self, operand: ast.Expr):
        """While the operand of `await` / `spawn` is checked, its call may be an async fn's."""
        outer, self.awaited = self.awaited, operand if isinstance(operand, ast.Call) else None
        try:
            yield
        finally:
            self.awaited = outer

    def _awaited_operand(self, operand: ast.Expr) -> Type:
        with self._awaiting(operand):
            return self.check_expr(operand, None)

    def _async_call(self, operand: ast.Expr) -> FnInstance | None:
        target = self.inst.calls.get(operand) if isinstance(operand, ast.Call) else None
        return target.fn if isinstance(target, DirectCall) and _suspends_task(target.fn) else None

    def await_async(self, e: ast.Await) -> Type:
        """`await` in an `async fn` (LANGUAGE.md §7): of a call of an async fn, or of
        a `Join<T>` (which it consumes)."""
        if self.defers:
            self.r.error(M.jump_out_of_defer("await"), e.span)
        t = self._awaited_operand(e.operand)
        if t is ERROR:
            return ERROR
        if self._async_call(e.operand) is not None:
            self.inst.async_awaits[e] = "call"
            return t
        if isinstance(t, PromiseT) and abi_of(t) == "async":
            self.consume(e.operand, t)
            self.inst.async_awaits[e] = "join"
            return t.args[0] if t.args else ERROR
        self.r.error(M.async_await_operand(t), e.operand.span)
        return ERROR

    def expr_Spawn(self, e: ast.Spawn, expected: Type | None) -> Type:
        """`spawn f(…)`: a new task runs the call; its type is `Join<R>`."""
        if self.inst is None or not self.inst.is_async:
            self.r.error(M.spawn_outside(), e.span)
            self._awaited_operand(e.operand)
            return ERROR
        t = self._awaited_operand(e.operand)
        callee = self._async_call(e.operand)
        if t is ERROR:
            return ERROR
        join = self.p.ns.decls.get("Join")
        if callee is None or callee.decl.kind != "async" or not isinstance(join, ast.PromiseDecl):
            self.r.error(M.spawn_operand(), e.operand.span)
            return ERROR
        if (borrow := self._borrow_of(e.operand)) is not None:
            self.r.error(M.borrowing_task(borrow.method, borrow.place), e.operand.span,
                         hint=M.borrowing_task_hint(borrow.method))
        return PromiseT(join, (t,))

    def expr_Await(self, e: ast.Await, expected: Type | None) -> Type:
        if self.inst is not None and self.inst.is_async:
            return self.await_async(e)
        with self._awaiting(e.operand):
            operand, coro = self._suspending_operand(e, "await", e.operand)
        callee = self._async_call(e.operand) if self.inst is not None else None
        if callee is not None:
            self.r.error(M.async_await_outside(self.inst.display), e.span)
            return ERROR
        if operand is ERROR:
            return ERROR
        if isinstance(e.operand, ast.Call) and isinstance(operand, PromiseT):
            self.inst.elide_safe.add(id(e.operand))   # awaited to completion, then destroyed
        transform = self.p.promise_hook(coro.promise, "await_transform")
        awaiter = operand
        if transform is not None:
            if len(transform.params) != 2 or transform.params[1][1] != operand:
                self.r.error(M.mismatch(transform.params[1][1] if len(transform.params) == 2 else "?",
                                        operand), e.operand.span)
                return ERROR
            awaiter = transform.ret
        return self._await_of(e, awaiter, e.operand.span, transform)

    def awaiter_protocol(self, awaiter: Type, span: Span, transform=None) -> AwaitInfo | None:
        methods = {name: self.p.find_method(awaiter, name)
                   for name in ("await_ready", "await_suspend", "await_resume")}
        if None in methods.values():
            missing = [n for n, m in methods.items() if m is None]
            self.r.error(M.not_awaitable(awaiter), span, hint=M.awaiter_needs(missing))
            return None
        ready, suspend, resume = (self.p.instantiate_method(methods[n], at=span)
                                  for n in ("await_ready", "await_suspend", "await_resume"))
        kind = {VOID: "void", BOOL: "bool", HANDLE: "handle"}.get(suspend.ret)
        if ready.ret != BOOL or kind is None or len(suspend.params) != 2 \
                or suspend.params[1][1] != HANDLE:
            self.r.error(M.bad_awaiter(awaiter), span, hint=M.awaiter_needs([]))
            return None
        return AwaitInfo(transform, awaiter, ready, suspend, resume, kind)

    # ------------------------------------------------------------------ calls

    def expr_Call(self, e: ast.Call, expected: Type | None) -> Type:
        callee = e.callee
        if isinstance(callee, ast.Name) and self.lookup(callee.name) is None \
                and callee.name not in self.p.globals:
            if callee.name in BUILTIN_FUNCTIONS:
                return self.builtin_call(e, callee.name)
            decl = self.p.ns.decls.get(callee.name)
            if isinstance(decl, ast.FnDecl):
                return self.call_decl(e, decl, (), expected)
            if isinstance(decl, (ast.StructDecl, ast.PromiseDecl)):
                self.r.error(M.not_callable(callee.name), callee.span,
                             hint=f"build a struct with `{callee.name} {{ field: value, … }}`")
                self._args_unchecked(e)
                return ERROR
        if isinstance(callee, ast.GenericName):
            decl = self.p.ns.decls.get(callee.name)
            if not isinstance(decl, ast.FnDecl):
                self.r.error(M.unknown_name(callee.name), callee.span)
                self._args_unchecked(e)
                return ERROR
            targs = tuple(self.p.resolve_type(a, self.subst) for a in callee.type_args)
            if ERROR in targs:
                self._args_unchecked(e)
                return ERROR
            if len(targs) != len(decl.generics):
                self.r.error(M.type_arity(callee.name, len(decl.generics), len(targs)), callee.span)
                self._args_unchecked(e)
                return ERROR
            return self.call_decl(e, decl, targs, expected)
        if isinstance(callee, ast.Field):
            return self.method_call(e, callee, expected)
        t = self.check_expr(callee, None)
        return self.indirect_call(e, t)

    def _args_unchecked(self, e: ast.Call) -> None:
        for a in e.args:
            self.check_expr(a, None)

    def indirect_call(self, e: ast.Call, t: Type) -> Type:
        if t is ERROR:
            self._args_unchecked(e)
            return ERROR
        if not isinstance(t, FnT):
            self.r.error(M.not_callable(t), e.callee.span)
            self._args_unchecked(e)
            return ERROR
        self._check_args(e, "function", list(t.params), e.args)
        self._call(e, IndirectCall())
        return t.ret

    def _check_args(self, e: ast.Call, name: str, params: list[Type], args,
                    varargs: bool = False, extern: bool = False,
                    callee: FnInstance | None = None, offset: int = 0,
                    checked: list[Type] | None = None) -> None:
        """`checked`: the arguments' types when `_infer_call` has checked them
        already; they are not checked again (that would repeat their moves and
        every other effect of checking them, and double the work at each level
        of nested generic calls)."""
        if len(args) != len(params) and not (varargs and len(args) >= len(params)):
            msg = M.arity_at_least if varargs else M.arity
            self.r.error(msg(name, len(params), len(args)), e.span)
        outer = self.lending
        for i, (a, pt) in enumerate(zip(args, params)):
            self.lending = a if callee is not None else None
            if checked is not None:
                self.expect_checked(a, checked[i], pt)
            else:
                self._check_arg(a, pt, extern)
            if callee is not None and (borrow := self._borrow_of(a)) is not None:
                self._lend(e, a, callee, i + offset, borrow)
        self.lending = outer
        for a in args[len(params):]:
            t = self.check_expr(a, None)
            if t is not ERROR and not (is_scalar(t) or isinstance(t, PtrT) or t == STR):
                self.r.error(M.extern_arg(t), a.span)

    def _check_arg(self, a: ast.Expr, pt: Type, extern: bool) -> None:
        if pt is ERROR:
            self.check_expr(a, None)
        elif extern and pt == PtrT(PRIMITIVES["u8"]):
            # A `str` is passable to C as `ptr<u8>` (LANGUAGE.md §2).
            t = self.check_expr(a, pt)
            if t not in (STR, pt, ERROR):
                self.r.error(M.mismatch(pt, t), a.span)
        else:
            self.expect(a, pt)

    def _borrow_of(self, e: ast.Expr) -> _Borrow | None:
        """The borrow of a coroutine that refers to a `mut self` place: made by the
        call `e`, or held by the variable `e`."""
        if isinstance(e, ast.Name):
            var = self.lookup(e.name)
            return None if var is None else self.borrowing.get(id(var))
        return self.borrowing.get(id(e))

    def _lend(self, call: ast.Call, arg: ast.Expr, callee: FnInstance, index: int, borrow: _Borrow) -> None:
        """A coroutine that refers to a `mut self` place is passed to `callee`: fine
        while the callee does not move it on (checked when every body is), and
        the call's own coroutine, if it makes one, may hold it: it borrows too."""
        self.p.lent.append((arg, callee, index, borrow))
        if callee.is_coroutine:
            self.borrowing[id(call)] = borrow

    def call_decl(self, e: ast.Call, decl: ast.FnDecl, targs: tuple[Type, ...],
                  expected: Type | None) -> Type:
        checked = None
        if decl.generics and not targs:
            inferred = self._infer_call(e, decl, expected)
            if inferred is None:
                return ERROR
            targs, checked = inferred
        if decl.kind == "kernel":
            self.r.error(M.kernel_called(decl.name), e.span)
            return ERROR
        subst = dict(zip(decl.generics, targs))
        inst = self.p.instantiate(decl, subst, targs, at=e.span)
        self._check_args(e, decl.name, [t for _, t in inst.params], e.args, decl.varargs,
                         extern=decl.kind == "extern", callee=None if decl.kind == "extern" else inst,
                         checked=checked)
        if decl.kind == "intrinsic" and inst.ret is not ERROR \
                and intrinsics.kind_of(inst.ret) not in intrinsics.ACCEPTS.get(decl.name, ()):
            if decl.name in intrinsics.ACCEPTS and \
                    intrinsics.well_formed(decl.name, decl.generics, decl.params, decl.ret):   # else its declaration is reported
                self.r.error(M.intrinsic_type(decl.name, intrinsics.accepted(decl.name), inst.ret), e.span)
        self._call(e, DirectCall(inst))
        return inst.ret

    def _infer_call(self, e: ast.Call, decl: ast.FnDecl, expected: Type | None) \
            -> tuple[tuple[Type, ...], list[Type]] | None:
        """The type arguments of a generic call, from its arguments (and the type
        its context expects), and the arguments' types: each argument is checked
        here, once; `_check_args` then only matches it to its parameter."""
        tv = {g: TypeVar(g) for g in decl.generics}
        ptypes = [self.p.resolve_type(p.type, tv) for p in decl.params if not p.is_self]
        if len(ptypes) != len(e.args):
            self.r.error(M.arity(decl.name, len(ptypes), len(e.args)), e.span)
            self._args_unchecked(e)
            return None
        subst: dict[str, Type] = {}
        deferred = []
        types: dict[ast.Expr, Type] = {}
        for a, pt in zip(e.args, ptypes):
            if _is_literalish(a) or isinstance(a, ast.NullLit):
                deferred.append((a, pt))
                continue
            t = types[a] = self.check_expr(a, None if has_vars(pt) else pt)
            if t is ERROR:
                return None
            if not unify(pt, t, subst):
                self.r.error(M.mismatch(substitute(pt, subst), t), a.span)
                return None
        for a, pt in deferred:
            want = substitute(pt, subst)
            t = types[a] = self.check_expr(a, None if has_vars(want) else want)
            if t is not ERROR:
                unify(pt, t, subst)
        if expected is not None and decl.ret is not None:
            unify(self.p.resolve_type(decl.ret, tv), expected, subst)
        if any(g not in subst for g in decl.generics):
            self.r.error(M.cannot_infer_type_args(decl.name), e.span,
                         hint=f"give them explicitly: `{decl.name}<{', '.join(decl.generics)}>(…)`")
            return None
        return tuple(subst[g] for g in decl.generics), [types[a] for a in e.args]

    def method_call(self, e: ast.Call, callee: ast.Field, expected: Type | None) -> Type:
        recv = self.check_expr(callee.base, None)
        if recv is ERROR:
            self._args_unchecked(e)
            return ERROR
        ops = _HANDLE_OPS.get(_handle_kind(recv))
        if ops and callee.name in ops:
            return self.handle_call(e, callee, recv, ops[callee.name])
        if _handle_kind(recv) == "retcon" and callee.name in _RETCON_OPS:
            result = recv.args[0] if callee.name == "value" and recv.args else _RETCON_OPS[callee.name]
            return self.handle_call(e, callee, recv, result)
        if isinstance(recv, StructT):
            for name, t in self.p.struct_fields(recv):
                if name == callee.name:
                    self._set(callee, t)
                    return self.indirect_call(e, t)
        m = self.p.find_method(recv, callee.name)
        if m is None:
            self.r.error(M.no_method(recv, callee.name), callee.span,
                         hint=self._method_hint(recv, callee.name))
            self._args_unchecked(e)
            return ERROR
        targs: tuple = ()
        checked = None
        if m.decl.generics:
            inferred = self._infer_call(e, m.decl, expected)
            if inferred is None:
                return ERROR
            targs, checked = inferred
        inst = self.p.instantiate_method(m, targs, at=e.span)
        if inst.self_mode is None:
            self.r.error(M.no_method(recv, callee.name), callee.span,
                         hint=f"`{callee.name}` has no `self` parameter")
            self._args_unchecked(e)
            return ERROR
        if inst.self_mode == "ref":
            self._check_mut_receiver(callee.base, callee.name)
            if inst.is_coroutine and (place := self._borrowed_place(callee.base)):
                root = self._receiver_root(callee.base)
                var = self.lookup(root.name) if isinstance(root, ast.Name) else None
                self.borrowing[id(e)] = _Borrow(callee.name, place, var)
        self._check_args(e, callee.name, [t for _, t in inst.params[1:]], e.args, callee=inst, offset=1,
                         checked=checked)
        self._call(e, DirectCall(inst, callee.base))
        return inst.ret

    def handle_call(self, e: ast.Call, callee: ast.Field, recv: Type, result: Type | None) -> Type:
        if e.args:
            self.r.error(M.arity(callee.name, 0, len(e.args)), e.span)
            self._args_unchecked(e)
        align = 8
        if result is None:  # promise(): the promise state, by reference
            result = self.p.promise_state(recv)
            align = self.p.layouts.size_align(result)[1]
        self._call(e, HandleCall(callee.name, callee.base, max(align, 1), isinstance(recv, PromiseT)))
        return result

    def _method_hint(self, recv: Type, name: str) -> str | None:
        import difflib
        close = difflib.get_close_matches(name, self.p.method_names(recv), n=1)
        return M.did_you_mean(close[0]) if close else None

    def _receiver_root(self, base: ast.Expr) -> ast.Expr | None:
        """The variable or temporary whose value a `mut self` method on `base`
        changes; None when `base` is reached through a pointer."""
        root = base
        while isinstance(root, (ast.Field, ast.Index)):
            if isinstance(self.inst_types.get(root.base), PtrT):
                return None
            root = root.base
        return root

    def _borrowed_place(self, base: ast.Expr) -> str | None:
        """What a coroutine started by a `mut self` method on `base` refers to, when
        that may die before the coroutine does: a local variable (or the caller's
        place, for `self`) or a temporary. None for a global, or a place reached
        through a pointer (raw pointers are the program's own business)."""
        root = self._receiver_root(base)
        if root is None:
            return None
        if not isinstance(root, ast.Name):
            return "a temporary"
        return M.q(root.name) if self.lookup(root.name) is not None else None

    def _check_mut_receiver(self, base: ast.Expr, method: str) -> None:
        root = self._receiver_root(base)
        if isinstance(root, ast.Name):
            var = self.lookup(root.name)
            if var is not None and not var.mutable:
                self.r.error(M.mut_method_on_immutable(method, root.name), base.span,
                             hint=f"declare it with `var {root.name}`")
            elif var is None and root.name in self.p.globals and not self.p.globals[root.name].decl.mutable:
                self.r.error(M.mut_method_on_immutable(method, root.name), base.span)

    def builtin_call(self, e: ast.Call, name: str) -> Type:
        if name in GPU_BUILTINS:
            if e.args:
                self.r.error(M.arity(name, 0, len(e.args)), e.span)
                self._args_unchecked(e)
            if not self.p.gpu:
                if self.inst is None or self.inst.decl.kind != "kernel":   # else the kernel is reported
                    self.r.error(M.gpu_builtin(name), e.span, hint=M.gpu_hint())
                return ERROR
            self._call(e, BuiltinCall(name))
            return GPU_BUILTINS[name]
        if name == "noop_handle":
            if e.args:
                self.r.error(M.arity("noop_handle", 0, len(e.args)), e.span)
            self._call(e, HandleCall("noop", None))
            return HANDLE
        self._call(e, BuiltinCall(name))
        if name == "print":
            for a in e.args:
                t = self.check_expr(a, None)
                if t is not ERROR and not (is_scalar(t) or t == STR or isinstance(t, PtrT)):
                    self.r.error(M.not_printable(t), a.span)
            return VOID
        if name == "assert":
            if len(e.args) not in (1, 2):
                self.r.error(M.arity("assert", 1, len(e.args)), e.span)
                self._args_unchecked(e)
                return VOID
            self.condition(e.args[0])
            if len(e.args) == 2:
                self.expect(e.args[1], STR)
            return VOID
        # panic
        if len(e.args) != 1:
            self.r.error(M.arity("panic", 1, len(e.args)), e.span)
            self._args_unchecked(e)
            return VOID
        self.expect(e.args[0], STR)
        return VOID


# Operations every coroutine handle has (LANGUAGE.md §5.1): name → result type
# (None: the promise state, by reference).
_ABIS = ("switch", "retcon", "retcon_once", "async")

# std/async's functions the code generator calls (middle/coro/async_.py)
ASYNC_RUNTIME = ("__task_new", "__task_alloc", "__task_free", "__task_start", "__task_main", "__task_finish",
                 "__task_park", "__join_wait", "__task_root", "__join_release", "__task_detach",
                 "__task_detach_dropping", "__sched_next", "__async_end")


def _suspends_task(fn: FnInstance) -> bool:
    """Calls of it must be awaited: an `async fn`, or std/async's `__park`."""
    return fn.decl.kind == "async" or fn.decl.name in intrinsics.SUSPENDING
# how each returned-continuation ABI must start (`initial …;`)
_RETCON_START = {"retcon": "suspend", "retcon_once": "run"}

_HANDLE_OPS: dict[str, dict[str, Type | None]] = {
    "promise": {"resume": VOID, "done": BOOL, "handle": HANDLE, "promise": None},
    "handle": {"resume": VOID, "done": BOOL, "destroy": VOID},
}
# a returned-continuation handle's built-in operations (`value` yields its first type
# argument): iteration, and `resume`/`done` as every owning handle has them (LANGUAGE.md
# §5.1; no `handle()` or `promise()`: there is no switched-resume frame or promise state);
# `__destroy` is for the compiler's export wrappers, which hold a handle through a pointer
_RETCON_OPS: dict[str, Type] = {"next": BOOL, "value": ERROR, "resume": VOID, "done": BOOL, "__destroy": VOID}


def _handle_kind(t: Type) -> str:
    if isinstance(t, PromiseT):
        abi = abi_of(t)
        return "retcon" if abi in _RETCON_START else "task" if abi == "async" else "promise"
    return "handle" if t == HANDLE else ""


def _op_class(op: str) -> str:
    if op in ARITH:
        return "arith"
    if op in BITWISE:
        return "bitwise"
    if op in EQUALITY:
        return "equality"
    return "ordering"


def _always_returns(s: ast.Stmt | None) -> bool:
    """Whether control can never fall off the end of `s`."""
    match s:
        case ast.Return() | ast.CoReturn():
            return True
        case ast.Block(stmts=stmts):
            return any(_always_returns(x) for x in stmts)
        case ast.If(then=then, else_=else_):
            return else_ is not None and _always_returns(then) and _always_returns(else_)
        case ast.Loop(body=body):
            return not _breaks(body)
        case ast.While(cond=ast.BoolLit(value=True), body=body):
            return not _breaks(body)
        case ast.ExprStmt(expr=ast.Call(callee=ast.Name(name="panic"))):
            return True
    return False


def _path_text(var: LocalVar, path: tuple[str, ...]) -> str:
    return ".".join((var.name, *path))


def _never_falls_through(s: ast.Stmt | None) -> bool:
    """Whether control never goes on to the statement after `s`: every path
    through it returns, panics, or leaves by `break`/`continue`."""
    match s:
        case ast.Break() | ast.Continue():
            return True
        case ast.Block(stmts=stmts):
            return any(map(_never_falls_through, stmts))
        case ast.If(then=then, else_=else_):
            return _never_falls_through(then) and _never_falls_through(else_)
    return _always_returns(s)


def _breaks(s: ast.Stmt) -> bool:
    """Whether `s` contains a `break` that leaves the loop whose body it is."""
    match s:
        case ast.Break():
            return True
        case ast.Block(stmts=stmts):
            return any(map(_breaks, stmts))
        case ast.If(then=then, else_=else_):
            return _breaks(then) or (else_ is not None and _breaks(else_))
        case ast.Defer(stmt=inner):
            return _breaks(inner)
    return False  # nested loops own their breaks
