#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long items = 100000000;
Generator<long long> range(long long lo, long long hi) { for (long long i = lo; i < hi; i++) co_yield i; }
int main() {
    long long n = items, start = now_ns(), s = 0;
    for (auto g = range(0, n); g.next();) s += g.value();
    report(s, n, start);
}
