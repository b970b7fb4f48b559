#include <cstdlib>
#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long nodes = 1048576;
// C++20 has no `yield from`: each level re-yields its children's values (O(depth) per value).
Generator<long long> walk(const long long *v, long long n, long long i) {
    if (i >= n) co_return;
    for (auto l = walk(v, n, 2 * i + 1); l.next();) co_yield l.value();
    co_yield v[i];
    for (auto r = walk(v, n, 2 * i + 2); r.next();) co_yield r.value();
}
int main() {
    long long n = nodes, *v = (long long *)malloc(n * sizeof *v);
    for (long long i = 0; i < n; i++) v[i] = i;
    long long start = now_ns(), s = 0;
    for (auto g = walk(v, n, 0); g.next();) s += g.value();
    report(s, n, start);
}
