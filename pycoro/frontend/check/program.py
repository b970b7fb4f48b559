"""Declarations and the instantiation queue (LANGUAGE.md §2–§4).

`ProgramChecker` resolves every type, lays out structs, declares globals and
instantiates each generic function once per list of type arguments (checking
its body, body.py, like a C++ template), then runs the checks that need every
body checked. Its promise rules are promises.py's.
"""
from __future__ import annotations

import collections

from ...common.diagnostics import Reporter, Span
from .. import ast, intrinsics
from .. import messages as M
from ..gpu import GPU_TARGETS, coroutine_recursion
from ..layout import MAX_TYPE_BYTES, StructLayouts, is_aggregate
from ..program import CheckedProgram, FnInstance, GlobalVar
from ..resolve import Namespace, span_of, stdlib_internal
from ..types import (ERROR, I32, PRIMITIVES, VOID, ArrayT, FnT, PromiseT, PtrT, SliceT, StructT, Type, TypeVar, has_vars,
                     overlap, size, unify)
from .body import BodyChecker
from .common import Method
from .expressions import is_constant
from .borrows import Lent, Passed
from .ownership import OwnershipPass, mark_elide_safe
from .views import check_passed, settle_params
from .promises import PromiseDecls, once_problems
from .suspension import is_coroutine


def check_program(modules: list[ast.Module], reporter: Reporter, need_main: bool = True,
                  main_file: str | None = None, target: str = "native") -> CheckedProgram:
    checker = ProgramChecker(modules, reporter, target)
    return checker.run(need_main and target not in GPU_TARGETS, main_file)


# Type arguments bigger than this (written out) mean a generic instantiates
# itself with ever larger types; no real program comes close.
MAX_TYPE_SIZE = 200


# std/async's functions the code generator calls (middle/coro/async_.py)
ASYNC_RUNTIME = ("__task_new", "__task_alloc", "__task_free", "__task_start", "__task_main", "__task_finish",
                 "__task_park", "__join_wait", "__task_root", "__join_release", "__task_detach",
                 "__task_detach_dropping", "__sched_next", "__async_end", "__task_site")


class ProgramChecker(PromiseDecls):

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
        # Coroutines that refer to a `mut self` place, passed as an argument
        # (ownership.py): the callee must not move that parameter on, known once
        # every body is checked.
        self.lent: list[Lent] = []
        # Slices of `let` or local arrays passed to functions, to check against what
        # those do with them (views.py), once every body is checked.
        self.passed: list[Passed] = []
        self.globals: dict[str, GlobalVar] = {}
        self.layouts = StructLayouts(self.struct_fields)
        self._laying_out: set[StructT] = set()
        self._promise_types_pending: list = []   # (promises.py) handle types named while laying out
        self._slices_pending: list = []   # (slice_type) slices of structs being laid out, checked after
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
        self._check_methods_once(decls, impls)
        for impl in impls:
            target = self.impl_target(impl)
            if not impl.generics and target is not ERROR:
                for method in impl.methods:
                    if not method.generics:
                        self.instantiate_method(Method(method, {}, target))
        while self.queue:
            inst, subst = self.queue.popleft()
            first = len(self.reporter.diagnostics)
            self.checking = inst
            BodyChecker(self, inst, subst).check_body()
            moves = OwnershipPass(inst, self.layouts, self.reporter).run()
            self.lent += moves.lent
            self.passed += moves.passed
            if inst.coro is not None and inst.coro.abi == "retcon_once":
                for span, problem in once_problems(inst.decl.body, span_of(inst.decl)):
                    self.reporter.error(M.once_yields(problem), span)
            if subst:
                self._add_instantiation_notes(inst, first)
        self.checking = None

    def _finish(self, need_main: bool, main_file: str | None) -> CheckedProgram:
        """The checks that need every body checked, and the checked program."""
        for lent in self.lent:
            if lent.index in lent.callee.moved_params:
                self.reporter.error(M.borrowing_coroutine_moved(lent.borrow.via, lent.borrow.place), lent.arg.span,
                                    hint=M.borrowing_coroutine_kept(lent.callee.display))
        settle_params(list(self.instances.values()))
        check_passed(self.passed, self.reporter)
        for inst in list(self.instances.values()):
            mark_elide_safe(inst)
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
        answer every question it can ask. Their mistakes are not the
        program's: a struct used only behind a pointer may contain itself (it is
        never laid out), so this runs with a reporter nobody reads."""
        reporter, self.reporter = self.reporter, Reporter()
        try:
            self._visit_types()
        finally:
            self.reporter = reporter

    def _visit_types(self) -> None:
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
                case ArrayT() | PtrT() | SliceT():
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
        if decl.generics:   # (never instantiated: C's `main` could not call it)
            self.reporter.error(M.bad_main(), span_of(decl))
            return None
        inst = self.instances.get((id(decl), ()))
        if inst is None:
            return None
        if decl.kind not in ("fn", "async") or inst.params or inst.ret not in (VOID, I32) \
                or (decl.kind == "async" and inst.ret != VOID):
            self.reporter.error(M.bad_main(), span_of(decl))
        return inst

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
                    if stdlib_internal(name, span_of(decl).file, texpr.span.file):
                        self.reporter.error(M.stdlib_internal(name), texpr.span)
                        return ERROR
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
            case ast.SliceType(elem=elem):
                t = self.resolve_type(elem, subst)
                return ERROR if t is ERROR else self.slice_type(t, texpr.span)
            case ast.FnType(params=params, ret=ret):
                ps = tuple(self.resolve_type(p, subst) for p in params)
                r = self.resolve_type(ret, subst) if ret else VOID
                return ERROR if ERROR in ps or r is ERROR else FnT(ps, r)
        raise AssertionError(texpr)

    def slice_type(self, elem: Type, span: Span) -> Type:
        """`[elem]`, when a slice can view such elements."""
        if has_vars(elem):
            return SliceT(elem)
        inner = elem
        while isinstance(inner, ArrayT):
            inner = inner.elem
        if inner in self._laying_out:   # `struct Node { kids: [Node] }`: a slice is a pointer and a length
            self._slices_pending.append((elem, span))
        elif self.layouts.owns(elem):
            self.reporter.error(M.slice_of_owning(elem), span)
            return ERROR
        return SliceT(elem)

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
        while not self._laying_out and self._slices_pending:
            elem, span = self._slices_pending.pop(0)
            if self.layouts.owns(elem):
                self.reporter.error(M.slice_of_owning(elem), span)
        while not self._laying_out and self._promise_types_pending:
            self._checked_promise_type(*self._promise_types_pending.pop(0))
        return self.layouts.fields(t)

    def _contained(self, t: Type) -> None:
        # Lay out value-contained structs now, so that a cycle is found.
        while isinstance(t, ArrayT):
            t = t.elem
        if isinstance(t, StructT) and not has_vars(t):
            self.struct_fields(t)

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
        if decl.init is not None and not is_constant(decl.init):
            self.reporter.error(M.global_not_const(), decl.init.span)
        if t is not ERROR and self.layouts.owns(t):
            self.reporter.error(M.owning_in_aggregate(t), span_of(decl))
            t = ERROR
        self.globals[decl.name] = GlobalVar(decl, t, f"pc.{decl.name}")

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
                    params.append(("self", ERROR))   # (a parameter still: the body's names line up)
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
                                hint=M.gpu_extern_hint())
        if decl.kind == "extern":
            # C takes no structs or arrays by value here, and has no coroutine
            # handle to give or to take over (a `ptr` to one is fine)
            for p, (_, t) in zip(decl.params, params):
                if is_aggregate(t) or self.layouts.owns(t):
                    self.reporter.error(M.extern_arg(t), p.span)
            if is_aggregate(ret) or self.layouts.owns(ret):
                self.reporter.error(M.extern_result(ret), decl.ret.span)
        inst = FnInstance(decl, display, symbol, params, ret, self_mode)
        self.instances[key] = inst
        if subst:
            self.requests[id(inst)] = (self.checking, at)
            self._add_instantiation_notes(inst, first)
        if decl.body is not None and is_coroutine(decl) and decl.kind != "kernel":   # else refused
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
                                hint=M.intrinsic_signature_hint(intrinsics.signature(decl.name)))

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
        if decl.body is not None and is_coroutine(decl):
            self.reporter.error(M.kernel_coroutine(), span_of(decl),
                                hint=M.kernel_generator_hint())
        for p, (_, t) in zip(decl.params, params):
            if is_aggregate(t):
                self.reporter.error(M.kernel_param(t), p.span)

    def instantiate_method(self, m: Method, targs: tuple[Type, ...] = (), at: Span | None = None) -> FnInstance:
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
            if not notes or notes[-1][1] != at:   # a recursion: one note for the call it repeats
                notes.append((M.instantiated_here(inst.display), at))
            if requester is None:
                break
            inst = requester
        return notes

    def _check_methods_once(self, decls: list[ast.Decl], impls: list[ast.ImplDecl]) -> None:
        """A method is defined once for a type, as in Rust (E0592): a call would
        take whichever impl comes first. Impls overlap where their targets
        can be one type (`impl<T> Box<T>` and `impl Box<i64>`); a promise's hooks too."""
        def once(methods: list[ast.FnDecl], earlier: list[ast.FnDecl]) -> None:
            for i, m in enumerate(methods):
                first = next((f for f in earlier + methods[:i] if f.name == m.name), None)
                if first is not None:
                    self.reporter.error(M.duplicate(m.name), span_of(m),
                                        notes=[(M.first_defined_here(), span_of(first))])
        for decl in decls:
            if isinstance(decl, ast.PromiseDecl):
                once(list(decl.methods), [])
        for impl in impls:
            target = self.impl_target(impl)
            if target is ERROR:
                continue
            before = self.ns.impls[:self.ns.impls.index(impl)]
            overlapping = [m for other in before if (t := self.impl_target(other)) is not ERROR
                           and overlap(t, target, other.generics, impl.generics) for m in other.methods]
            once(list(impl.methods), overlapping)

    def impl_target(self, impl: ast.ImplDecl) -> Type:
        if impl not in self._impl_targets:
            subst = {g: TypeVar(g) for g in impl.generics}
            self._impl_targets[impl] = self.resolve_type(impl.target, subst)
        return self._impl_targets[impl]

    def find_method(self, recv: Type, name: str) -> Method | None:
        for impl in self.ns.impls:
            target = self.impl_target(impl)
            subst: dict[str, Type] = {}
            if target is ERROR or not unify(target, recv, subst):
                continue
            for method in impl.methods:
                if method.name == name:
                    return Method(method, subst, recv)
        return None

    def method_names(self, recv: Type) -> list[str]:
        names = []
        for impl in self.ns.impls:
            target = self.impl_target(impl)
            if target is not ERROR and unify(target, recv, {}):
                names += [m.name for m in impl.methods]
        return names

