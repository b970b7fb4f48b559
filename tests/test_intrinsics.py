"""Every intrinsic pycoro may emit is declared, verified and lowered by LLVM 22."""
import llvmlite.binding as llvm
from llvmlite import ir

from pycoro.backend.targets import native_machine
from pycoro.middle import intrinsics
from pycoro.middle.passes import run_pipeline


def test_every_intrinsic_declares_verifies_and_lowers():
    module = ir.Module("smoke")
    # Coroutine intrinsics only make sense inside a coroutine: test_coroutines.py
    # emits and lowers every one of them through a real generator. A debug
    # declare takes metadata, not values: test_debugging.py builds with it.
    for name in (n for n in intrinsics.SIGNATURES if not n.startswith(("llvm.coro.", "llvm.dbg."))):
        fn = intrinsics.declare(module, name)
        # Call each one so the pipeline has to lower it.
        wrapper = ir.Function(module, fn.function_type, f"use.{name}")
        b = ir.IRBuilder(wrapper.append_basic_block())
        args = list(wrapper.args)
        for pos in intrinsics.immediate_operands(name):
            args[pos] = ir.Constant(args[pos].type, 0)
        result = b.call(fn, args)
        b.ret_void() if isinstance(fn.function_type.return_type, ir.VoidType) else b.ret(result)
    text = str(module)
    assert intrinsics.validate(text) == []
    parsed = llvm.parse_assembly(text)
    parsed.verify()
    run_pipeline(parsed, native_machine(2), 2)


def test_unknown_intrinsics_are_refused():
    module = ir.Module("bad")
    try:
        intrinsics.declare(module, "llvm.coro.end.i1")
    except intrinsics.UnknownIntrinsic:
        pass
    else:
        raise AssertionError("declare accepted an unknown intrinsic")
    assert intrinsics.validate('declare i1 @"llvm.made.up"(ptr)\n') == ["unknown intrinsic llvm.made.up"]
