#!/bin/sh
# Everything docs/gpu.md records about a real GPU, in one go, on a machine
# with a CUDA device, nvcc, ptxas and compute-sanitizer (pycoro importable):
#     sh bench/gpu/check.sh OUT_DIR
# 1. the launch tests, every example kernel on the GPU against the CPU;
# 2. the kernels against hand-written CUDA C (bench/gpu/run.py);
# 3. compute-sanitizer's memcheck over the GPU launch tests.
out=${1:?usage: check.sh OUT_DIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nvcc --version | tail -2;
  python3 -c 'import sys, llvmlite; print(sys.version.split()[0], "llvmlite", llvmlite.__version__)';
  date -u; } >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
echo "== 1. pytest tests/test_gpu_launch.py"
timeout 150 python3 -m pytest tests/test_gpu_launch.py -v -n 0 -p no:cacheprovider >"$out/pytest.txt" 2>&1
echo "status $?" >>"$out/pytest.txt"; tail -25 "$out/pytest.txt"
echo "== 2. bench/gpu/run.py"
timeout 170 python3 bench/gpu/run.py --out "$out" >"$out/bench.txt" 2>&1
echo "status $?" >>"$out/bench.txt"; cat "$out/bench.txt"
echo "== 3. compute-sanitizer --tool memcheck"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 \
    python3 -m pytest tests/test_gpu_launch.py -k on_the_gpu -q -n 0 -p no:cacheprovider >"$out/memcheck.txt" 2>&1
echo "status $?" >>"$out/memcheck.txt"; tail -25 "$out/memcheck.txt"
