/* bench/workloads/permutations.pc as a recursive C function (Heap's algorithm). */
#include "common.h"
volatile long long size = 10;
static long long a[16], n, s;
static void permutations(long long k) {
    if (k == 1) { s += a[0] * 16 + a[n - 1]; return; }
    permutations(k - 1);
    for (long long i = 0; i < k - 1; i++) {
        long long j = k % 2 == 0 ? i : 0, t = a[j];
        a[j] = a[k - 1]; a[k - 1] = t;
        permutations(k - 1);
    }
}
int main(void) {
    n = size;
    for (long long i = 0; i < n; i++) a[i] = i;
    long long count = 1;
    for (long long i = 1; i <= n; i++) count *= i;
    long long start = now_ns();
    permutations(n);
    report(s, count, start);
    return 0;
}
