// The anchors of bench/gpu/run.py: each example kernel of examples/gpu/
// written by hand in CUDA C, doing the same work with plain loops where the
// PyCoro kernel uses coroutines. Compiled with `nvcc -O3 -arch=sm_XX -ptx`.
// Indices are computed in 32 bits and widened, as the PyCoro kernels do
// (`(block_id_x() * block_dim_x() + thread_id_x()) as i64`).
#define INDEX ((long long)(blockIdx.x * blockDim.x + threadIdx.x))

// examples/gpu/squares.pc: out[i] = the sum of 0..i
extern "C" __global__ void squares(long long *out, long long n) {
    long long i = INDEX;
    if (i < n) {
        long long s = 0;
        for (long long v = 0; v < i; v++) s += v;
        out[i] = s;
    }
}

// examples/gpu/pipeline.pc: sum(take(filter(map(range(0, 4i), triple), even), i))
extern "C" __global__ void pipeline(long long *out, long long n) {
    long long i = INDEX;
    if (i < n) {
        long long s = 0, taken = 0;
        for (long long x = 0; x < 4 * i && taken < i; x++) {
            long long v = x * 3;
            if (v % 2 == 0) { s += v; taken++; }
        }
        out[i] = s;
    }
}

// examples/gpu/awaits.pc and transfers.pc: the sum of k*k for k < i, one call per k
__device__ long long square(long long k) { return k * k; }
extern "C" __global__ void sums_of_squares(long long *out, long long n) {
    long long i = INDEX;
    if (i < n) {
        long long s = 0;
        for (long long k = 0; k < i; k++) s += square(k);
        out[i] = s;
    }
}

// examples/gpu/strided.pc: a grid-stride loop, output[k] = input[k]^2
extern "C" __global__ void square_all(const double *input, double *output, long long n) {
    long long stride = (long long)(gridDim.x * blockDim.x);
    for (long long k = INDEX; k < n; k += stride) output[k] = input[k] * input[k];
    __syncthreads();
}

// examples/gpu/norms.pc: each row's Euclidean norm, clamped to [lo, hi]
extern "C" __global__ void row_norms(const double *m, double *out, long long rows, long long cols,
                                     double lo, double hi) {
    long long r = INDEX;
    if (r >= rows) return;
    double s = 0.0;
    for (long long c = 0; c < cols; c++) { double x = m[r * cols + c]; s += x * x; }
    out[r] = fmin(fmax(sqrt(s), lo), hi);
}

// examples/gpu/streams.pc: out[i] = the sum of the multiples of i+1 below 1000,
// accumulated in a copy of out[i] and written back
extern "C" __global__ void sum_multiples(long long *out, long long n) {
    long long i = INDEX;
    if (i < n) {
        out[i] = 0;
        long long acc = out[i];
        for (long long m = i + 1; m < 1000; m += i + 1) acc += m;
        out[i] = acc;
    }
}
