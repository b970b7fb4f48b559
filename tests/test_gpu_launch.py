"""pycoro.gpu: a program's kernels launched from Python, on the CPU (always) and
on a CUDA GPU (skipped where there is none), with the same results."""
from __future__ import annotations

import array
import math
import re
from pathlib import Path

import pytest

import pycoro.gpu

GPU = Path(__file__).parent.parent / "examples" / "gpu"
BENCH = Path(__file__).parent.parent / "bench" / "gpu"   # transfers.pc: awaits through the resume loop
N = 40


def _i64(n: int) -> array.array:
    return array.array("q", [0] * n)


def _f64(values) -> array.array:
    return array.array("d", values)


# example → (kernel, arguments for n threads, what the kernel writes, as Python computes it)
def _squares():
    out = _i64(N)
    return "squares", (out, N), out, [sum(range(i)) for i in range(N)]


def _pipeline():
    out = _i64(N)
    expected = [sum([v for v in (x * 3 for x in range(4 * i)) if v % 2 == 0][:i]) for i in range(N)]
    return "pipeline", (out, N), out, expected


def _awaits():
    out = _i64(N)
    return "sums_of_squares", (out, N), out, [sum(k * k for k in range(i)) for i in range(N)]


def _strided():
    out = _f64([0.0] * N)
    return "square_all", (_f64(range(N)), out, N), out, [float(i * i) for i in range(N)]


def _norms():
    cols = 3
    m = _f64([(r * cols + c) % 7 - 3 for r in range(N) for c in range(cols)])
    out = _f64([0.0] * N)
    expected = [min(max(math.sqrt(sum(m[r * cols + c] ** 2 for c in range(cols))), 1.0), 4.0)
                for r in range(N)]
    return "row_norms", (m, out, N, cols, 1.0, 4.0), out, expected


def _streams():
    out = _i64(N)
    return "sum_multiples", (out, N), out, [sum(range(i + 1, 1000, i + 1)) for i in range(N)]


CASES = {"squares": _squares, "pipeline": _pipeline, "awaits": _awaits, "transfers": _awaits, "strided": _strided,
         "norms": _norms, "streams": _streams}


def _source(example: str) -> Path:
    return BENCH / "transfers.pc" if example == "transfers" else GPU / f"{example}.pc"


@pytest.mark.parametrize("example", sorted(CASES))
def test_kernels_run_on_the_cpu(example):
    kernels = pycoro.gpu.compile_file(_source(example), device="cpu")
    name, args, out, expected = CASES[example]()
    block = 1 if kernels.uses_barrier else 8
    getattr(kernels, name)[(N + block - 1) // block, block](*args)
    assert list(out) == expected
    assert getattr(kernels, name).elapsed > 0


def test_a_grid_in_three_dimensions_numbers_threads_as_cuda_does():
    source = """
    kernel fn ids(out: ptr<i64>) {
        let b = (block_id_z() * grid_dim_y() + block_id_y()) * grid_dim_x() + block_id_x();
        let t = (thread_id_z() * block_dim_y() + thread_id_y()) * block_dim_x() + thread_id_x();
        let per_block = block_dim_x() * block_dim_y() * block_dim_z();
        out[(b * per_block + t) as i64] = (b * 1000 + t) as i64;
    }
    """
    kernels = pycoro.gpu.compile(source, device="cpu")
    out = _i64(2 * 3 * 2 * 4 * 1 * 2)
    kernels.ids[(2, 3, 2), (4, 1, 2)](out)
    assert list(out) == [b * 1000 + t for b in range(12) for t in range(8)]


def test_arguments_are_checked_against_the_kernel_signature():
    kernels = pycoro.gpu.compile_file(GPU / "strided.pc", device="cpu")
    k = kernels.square_all[1, 1]
    sig = "kernel fn square_all(input: ptr<f64>, output: ptr<f64>, n: i64)"
    out = _f64([0.0] * 4)
    with pytest.raises(TypeError, match=re.escape(f"{sig} takes 3 arguments, 2 given")):
        k(out, out)
    with pytest.raises(TypeError, match=r"argument 3 \(`n: i64`\) of .* must be i64, not str"):
        k(out, out, "4")
    with pytest.raises(TypeError, match=r"argument 1 .* buffer of f64 \(8-byte items\), not format 'f'"):
        k(array.array("f", [0.0] * 4), out, 4)
    with pytest.raises(TypeError, match=r"argument 2 .* must be a buffer"):
        k(out, [0.0] * 4, 4)
    with pytest.raises(TypeError, match=r"argument 3 .*: 1180591620717411303424 does not fit in i64"):
        k(out, out, 2 ** 70)
    with pytest.raises(AttributeError, match="no kernel `nope` .kernels: square_all."):
        kernels.nope
    with pytest.raises(ValueError, match="grid must be a positive int"):
        kernels.square_all[0, 1]


def test_a_barrier_needs_one_thread_per_block_on_the_cpu():
    kernels = pycoro.gpu.compile_file(GPU / "strided.pc", device="cpu")
    out = _f64([0.0] * 4)
    with pytest.raises(ValueError, match=r"sync_threads\(\).*one thread per block.*not \(4, 1, 1\)"):
        kernels.square_all[1, 4](_f64(range(4)), out, 4)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYCORO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_kernels_compiled_before_come_from_the_module_cache(cache_dir, monkeypatch):
    from pycoro.pipeline.driver import Compilation
    first = pycoro.gpu.compile_file(GPU / "pipeline.pc", device="cpu")
    assert not first.from_cache
    # the PTX a CUDA device would load, through the same cache (no device needed)
    nvptx = Compilation.from_file(str(GPU / "pipeline.pc"), pycoro.gpu.Options(target="nvptx")).for_arch("sm_90")
    ptx, hit = nvptx.ptx()
    assert not hit and ".entry pipeline" in ptx

    def refuse(*_, **__):
        raise AssertionError("compiled although the cache has it")
    monkeypatch.setattr(Compilation, "lowered", refuse)
    second = pycoro.gpu.compile_file(GPU / "pipeline.pc", device="cpu")
    assert second.from_cache
    name, args, out, expected = CASES["pipeline"]()
    second.pipeline[N, 1](*args)
    assert list(out) == expected
    assert nvptx.for_arch("sm_90").ptx() == (ptx, True)
    with pytest.raises(AssertionError, match="compiled although"):
        pycoro.gpu.compile_file(GPU / "pipeline.pc", device="cpu", cache=False)


def test_compile_errors_are_compile_errors():
    with pytest.raises(pycoro.CompileError):
        pycoro.gpu.compile("kernel fn k() { async_nope(); }", device="cpu")


needs_gpu = pytest.mark.skipif(not pycoro.gpu.available(), reason="no CUDA device on this machine")


@needs_gpu
@pytest.mark.parametrize("example", sorted(CASES))
def test_kernels_on_the_gpu_match_the_cpu(example):
    gpu = pycoro.gpu.compile_file(_source(example))
    cpu = pycoro.gpu.compile_file(_source(example), device="cpu")
    name, gpu_args, gpu_out, expected = CASES[example]()
    _, cpu_args, cpu_out, _ = CASES[example]()
    getattr(gpu, name)[(N + 31) // 32, 32](*gpu_args)
    getattr(cpu, name)[N, 1](*cpu_args)
    assert list(gpu_out) == list(cpu_out) == expected
