#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long items = 50000000;
Generator<long long> range(long long lo, long long hi) { for (long long i = lo; i < hi; i++) co_yield i; }
Generator<long long> map3(Generator<long long> g) { while (g.next()) co_yield g.value() * 3; }
Generator<long long> evens(Generator<long long> g) { while (g.next()) if (g.value() % 2 == 0) co_yield g.value(); }
Generator<long long> take(Generator<long long> g, long long n) { for (long long k = 0; k < n && g.next(); k++) co_yield g.value(); }
int main() {
    long long n = items, start = now_ns(), s = 0;
    for (auto g = take(evens(map3(range(0, n))), n / 4); g.next();) s += g.value();
    report(s, n / 4, start);
}
