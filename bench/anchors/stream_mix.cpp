// bench/workloads/stream_mix.pc with a C++20 generator.
#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long items = 100000000;
Generator<long long> mixed(long long n) {
    long long made = 0;
    for (long long i = 0; made < n; i++) {
        co_yield i; made++;
        if (made < n && i % 3 == 0) { co_yield i * 5; made++; }
        if (made < n && i % 5 == 0) { co_yield -i; made++; }
    }
}
int main() {
    long long n = items, start = now_ns(), s = 0;
    for (auto g = mixed(n); g.next();) { long long v = g.value(); s += v ^ (v >> 7); }
    report(s, n, start);
}
