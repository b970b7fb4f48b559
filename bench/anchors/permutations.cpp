// bench/workloads/permutations.pc with C++20 generators. C++20 has no `yield
// from`: each level re-yields the next one's values (O(depth) per value).
#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long size = 10;
static long long a[16], n;
Generator<long long> permutations(long long k) {
    if (k == 1) { co_yield a[0] * 16 + a[n - 1]; co_return; }
    for (auto g = permutations(k - 1); g.next();) co_yield g.value();
    for (long long i = 0; i < k - 1; i++) {
        long long j = k % 2 == 0 ? i : 0, t = a[j];
        a[j] = a[k - 1]; a[k - 1] = t;
        for (auto g = permutations(k - 1); g.next();) co_yield g.value();
    }
}
int main() {
    n = size;
    for (long long i = 0; i < n; i++) a[i] = i;
    long long count = 1;
    for (long long i = 1; i <= n; i++) count *= i;
    long long start = now_ns(), s = 0;
    for (auto g = permutations(n); g.next();) s += g.value();
    report(s, count, start);
}
