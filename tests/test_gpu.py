"""`--target nvptx` (LANGUAGE.md §8): PTX that NVIDIA's ptxas accepts, frames never
from the device heap, and a diagnostic for what cannot run on a GPU."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pycoro.backend import ptxas

GPU_EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "gpu").glob("*.pc"))
SQUARES = next(p for p in GPU_EXAMPLES if p.stem == "squares")


@pytest.fixture(scope="module")
def assembler() -> Path:
    found = ptxas.find()
    assert found is not None, "ptxas not found: install the test extra (nvidia-cuda-nvcc)"
    return found


def _build(pycoro, src: Path, out: Path, *flags):
    return pycoro("build", "--target", "nvptx", src, "-o", out, *flags)


@pytest.mark.parametrize("path", GPU_EXAMPLES, ids=lambda p: p.stem)
def test_example_kernel_assembles_without_device_heap(pycoro, tmp_path, assembler, path):
    out = tmp_path / f"{path.stem}.ptx"
    proc = _build(pycoro, path, out)
    assert proc.returncode == 0, proc.stderr
    ptx = out.read_text()
    assert ".target sm_80" in ptx and ".visible .entry" in ptx
    assert "malloc" not in ptx and "free" not in ptx   # every frame in local memory
    assembled = subprocess.run([str(assembler), "-arch=sm_80", str(out), "-o", str(tmp_path / "k.cubin")],
                               capture_output=True, text=True)
    assert assembled.returncode == 0, assembled.stderr


def test_kernel_entry_takes_global_pointers(pycoro, tmp_path):
    out = tmp_path / "k.ll"
    proc = _build(pycoro, SQUARES, out, "--emit", "lowered")
    assert proc.returncode == 0, proc.stderr
    assert "define ptx_kernel void @squares(ptr addrspace(1)" in out.read_text()


def test_arch_option(pycoro, tmp_path):
    out = tmp_path / "k.ptx"
    assert _build(pycoro, SQUARES, out, "--arch", "sm_90").returncode == 0
    assert ".target sm_90" in out.read_text()
    proc = _build(pycoro, SQUARES, out, "--arch", "sm_99")
    assert proc.returncode == 1
    assert "error: unknown GPU architecture `sm_99`" in proc.stderr


ESCAPING = """
fn count(n: i64) -> Generator<i64> { var i: i64 = 0; while i < n { yield i; i += 1; } }
kernel fn k(slots: ptr<Generator<i64>>) {
    slots[0] = count(3);   // the frame outlives the kernel's thread
}
"""


def test_a_frame_left_on_the_device_heap_is_an_error_naming_the_site(pycoro, tmp_path):
    src = tmp_path / "k.pc"
    src.write_text(ESCAPING)
    proc = _build(pycoro, src, tmp_path / "k.ptx")
    assert proc.returncode == 1
    assert (f"{src}:4:16: error: the frame of coroutine `count` (called in `k`) would come from the "
            "device heap: it could not be placed in the thread's local memory") in proc.stderr
    assert "hint:" in proc.stderr and "--allow-device-heap" in proc.stderr
    allowed = _build(pycoro, src, tmp_path / "k.ptx", "--allow-device-heap")
    assert allowed.returncode == 0, allowed.stderr
    assert "malloc" in (tmp_path / "k.ptx").read_text()


def test_explain_for_nvptx_shows_the_device_heap(pycoro, tmp_path):
    src = tmp_path / "k.pc"
    src.write_text(ESCAPING)
    proc = pycoro("explain", "--target", "nvptx", src)
    assert proc.returncode == 0, proc.stderr
    assert "device heap: refused unless --allow-device-heap" in proc.stdout


@pytest.mark.parametrize("source, flags, message", [
    ("async fn f() -> i64 { return 1; }\nkernel fn k() {}", ["--target", "nvptx"],
     "1:10: error: an `async fn` cannot run on a GPU"),
    ("extern fn puts(s: ptr<u8>) -> i32;\nkernel fn k() {}", ["--target", "nvptx"],
     "1:11: error: an `extern fn` cannot run on a GPU"),
    ("kernel fn k() -> i64 { return 1; }", ["--target", "nvptx"],
     "1:18: error: a `kernel fn` returns nothing, not `i64`"),
    ("kernel fn k() { yield 1; }", ["--target", "nvptx"],
     "1:11: error: a `kernel fn` cannot be a coroutine"),
    ("kernel fn k() {}\nkernel fn j() { k(); }", ["--target", "nvptx"],
     "2:17: error: `kernel fn` `k` is launched from the host and cannot be called"),
    ("kernel fn k() {}\nfn main() {}", [], "1:11: error: a `kernel fn` is GPU code"),
    ("fn main() { print(thread_id_x()); }", [], "1:19: error: `thread_id_x()` exists only in GPU code"),
])
def test_what_cannot_run_where_it_is_compiled(pycoro, tmp_path, source, flags, message):
    src = tmp_path / "bad.pc"
    src.write_text(source)
    proc = pycoro("check", src, *flags)
    assert proc.returncode == 1
    assert f"{src}:{message}" in proc.stderr
