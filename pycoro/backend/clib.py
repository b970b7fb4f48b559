"""Shared libraries (`pycoro build --emit shared`): the C ABI of a program's
exports and the header that declares it (docs/c-abi.md).

Every C name starts with the library's prefix — `libgen.so` → `gen_` — so
that a PyCoro function called `abs` cannot interpose on libc's. For an
exported function `fn NAME(params) -> R` the library has `R PREFIX_NAME(params)`;
for a `fn NAME(params) -> Generator<T>` it has a handle type and five calls:

    PREFIX_NAME_gen PREFIX_NAME_create(params);
    bool    PREFIX_NAME_next(PREFIX_NAME_gen *g);      a value is ready
    T       PREFIX_NAME_value(const PREFIX_NAME_gen *g);
    int64_t PREFIX_NAME_fill(PREFIX_NAME_gen *g, T *buf, int64_t cap);
    void    PREFIX_NAME_destroy(PREFIX_NAME_gen *g);   runs pending defers

They are the wrappers of frontend/exports.py under C names; everything else
in the library is internal.
"""
from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm

from ..common.diagnostics import CompileError, Diagnostic
from ..frontend.exports import GENERATOR_STEPS, Export, ExportStruct, slice_length_name
from ..frontend.types import SliceT, Type

_C_SCALARS = {**{f"i{b}": f"int{b}_t" for b in (8, 16, 32, 64)},
              **{f"u{b}": f"uint{b}_t" for b in (8, 16, 32, 64)},
              "f32": "float", "f64": "double", "bool": "bool", "void": "void"}


# What C and C++ reserve, and what the header's own includes define: a
# parameter or field of such a name takes a trailing underscore in the header
# (`int` → `int_`), as Python's keywords do in pycoro.embed.
_C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
    alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl concept
    consteval constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit
    export false friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected
    public reinterpret_cast requires static_assert static_cast template this thread_local throw true try
    typeid typename using virtual wchar_t xor xor_eq NULL EOF
""".split())
_C_DEFINED = re.compile(r"u?int(8|16|32|64|ptr|max|_least\d+|_fast\d+)_t|U?INT\w*_(MAX|MIN|C)|SIZE_MAX|"
                        r"__\w*|_[A-Z]\w*")   # <stdint.h>'s, and what C reserves for itself


def c_member(name: str, taken: set[str]) -> str:
    """`name` as a parameter or field of the header, unlike every name in `taken`."""
    while name in _C_KEYWORDS or _C_DEFINED.fullmatch(name) or name in taken:
        name += "_"
    taken.add(name)
    return name


def prefix_for(output: str) -> str:
    """The C prefix for a library written to `output`: `libgen.so` → `gen`, its
    name without `lib` and the extension (`libfoo.bar.so` → `foo_bar`); one
    that would start as C reserves (`lib3d.so`, `lib_x.so`) keeps its `lib`."""
    stem = re.sub(r"\.(so|dylib|dll)(\.\d+)*$", "", Path(output).name)
    if stem == Path(output).name:
        stem = Path(output).stem
    stem = stem[3:] if stem.startswith("lib") and len(stem) > 3 else stem
    prefix = re.sub(r"\W", "_", stem, flags=re.ASCII) or "pycoro"
    return f"lib{prefix}" if prefix[0].isdigit() or prefix[0] == "_" else prefix


def header_path(output: str, prefix: str) -> str:
    """The header is written next to the library: `out/libgen.so` → `out/gen.h`."""
    return str(Path(output).with_name(f"{prefix}.h"))


def c_names(exported: list[Export], prefix: str) -> dict[str, str]:
    """Wrapper symbol → C name, for every wrapper of every export."""
    names: dict[str, str] = {}
    for e in exported:
        wrappers = e.wrappers()
        if e.item is None:
            names[wrappers[0]] = f"{prefix}_{e.name}"
        else:
            names[wrappers[0]] = f"{prefix}_{e.name}_create"
            names.update({w: f"{prefix}_{e.name}_{step}" for w, step in zip(wrappers[1:], GENERATOR_STEPS)})
    # the header's other names: each generator's handle type, each struct's
    types = _Names(prefix)
    declared = [*names.values(), *(f"{prefix}_{e.name}_gen" for e in exported if e.item is not None),
                *(types.c(t) for t in structs(exported))]
    taken, clashes = {f"{prefix}_live_frames"}, []
    for c_name in declared:
        if c_name in taken:
            clashes.append(c_name)
        taken.add(c_name)
    if clashes:
        raise CompileError([Diagnostic(
            f"the C name `{c}` would be given to two things this library exports", None,
            hint="rename one of the functions or structs (a generator `g` also takes `g_create`, `g_next`, "
                 "`g_value`, `g_fill`, `g_destroy` and the type `g_gen`; a struct `Pair<i64, f64>` is "
                 "`Pair_i64_f64`)") for c in sorted(set(clashes))])
    return names


def structs(exported: list[Export]) -> list[ExportStruct]:
    """Each struct the exports use, inner ones first."""
    done: dict[str, ExportStruct] = {}

    def visit(t: Type) -> None:
        if not isinstance(t, ExportStruct) or t.name in done:
            return
        for _, ft in t.fields:
            visit(ft)
        done[t.name] = t
    for e in exported:
        for t in (*(t for _, t in e.params), e.result, e.item):
            visit(t)
    return list(done.values())


def expose(module: llvm.ModuleRef, names: dict[str, str]) -> None:
    """Give the named functions their C names; make everything else internal."""
    for fn in module.functions:
        if fn.is_declaration:
            continue
        if fn.name in names:
            fn.name = names[fn.name]
        else:
            fn.linkage = "internal"
    for var in module.global_variables:
        if not var.is_declaration:
            var.linkage = "internal"


class _Names:
    """C spellings of the export's types, under one library prefix."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    def c(self, t: Type) -> str:
        if isinstance(t, ExportStruct):   # `Pair<i64>` → `PREFIX_Pair_i64`
            return f"{self.prefix}_" + re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]", "_", t.name)).strip("_")
        return _C_SCALARS[str(t)]

    def params(self, e: Export, result: Type | None = None) -> str:
        """C's parameter list: a slice `xs: [T]` is `T *xs, int64_t xs_len` (`const T *`
        when the function never writes through it); a struct goes by pointer, and
        a struct `result` comes back through a first parameter (pycoro's own
        convention for aggregates, middle/irgen/module.py's `signature`)."""
        taken: set[str] = set()
        out = [f"{self.c(result)} *{c_member('result', taken)}"] if isinstance(result, ExportStruct) else []
        for name, t in e.params:
            if isinstance(t, SliceT):
                const = "" if name in e.written else "const "
                out += [f"{const}{self.c(t.elem)} *{c_member(name, taken)}",
                        f"int64_t {c_member(slice_length_name(name, e.params), taken)}"]
            elif isinstance(t, ExportStruct):
                out.append(f"const {self.c(t)} *{c_member(name, taken)}")
            else:
                out.append(f"{self.c(t)} {c_member(name, taken)}")
        return ", ".join(out) or "void"

    def typedefs(self, exported: list[Export]) -> list[str]:
        """Each struct the exports use, inner ones first."""
        out = []
        for t in structs(exported):
            taken: set[str] = set()
            fields = " ".join(f"{self.c(ft)} {c_member(n, taken)};" for n, ft in t.fields)
            out.append(f"typedef struct {{ {fields} }} {self.c(t)};   /* {t.name} */")
        return out + ([""] if out else [])


def header(exported: list[Export], prefix: str, source: str) -> str:
    guard = f"PYCORO_{prefix}_H"   # (as the prefix is spelled: libab.so and libAB.so may meet)
    out = [f"/* {prefix}.h: the C interface of lib{prefix}.so, generated by pycoro from {source}.",
           " * Do not edit. The ABI is described in pycoro's docs/c-abi.md.",
           " *",
           " * A generator NAME is driven through an owning handle, NAME_gen: create it,",
           " * call NAME_next until it returns false, reading NAME_value after each true,",
           " * then NAME_destroy it exactly once (also when stopping early: that runs its",
           " * pending defers and frees its frame). A panic in PyCoro code prints a",
           " * message and exits the process with status 101. */",
           f"#ifndef {guard}", f"#define {guard}", "",
           "#include <stdbool.h>", "#include <stdint.h>", "",
           "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    names = _Names(prefix)
    out += names.typedefs(exported)
    for e in exported:
        out.append(f"/* {e.signature} */")
        if e.item is None:
            returns = "void" if isinstance(e.result, ExportStruct) else names.c(e.result)
            out += [f"{returns} {prefix}_{e.name}({names.params(e, e.result)});", ""]
            continue
        name, item = f"{prefix}_{e.name}", names.c(e.item)
        value = f"void {name}_value({item} *result, const {name}_gen *g);" if isinstance(e.item, ExportStruct) \
            else f"{item} {name}_value(const {name}_gen *g);"
        out += [f"typedef struct {{ void *frame; }} {name}_gen;",
                f"{name}_gen {name}_create({names.params(e)});",
                f"bool {name}_next({name}_gen *g);",
                value,
                f"int64_t {name}_fill({name}_gen *g, {item} *buf, int64_t cap);",
                f"void {name}_destroy({name}_gen *g);", ""]
    out += ["/* Coroutine frames allocated and not yet freed (0 once every generator is destroyed). */",
            f"int64_t {prefix}_live_frames(void);", "",
            "#ifdef __cplusplus", "}", "#endif", f"#endif /* {guard} */", ""]
    return "\n".join(out)

