// A generator the compiler cannot see into: created through a function
// pointer chosen at run time, so its frame is on the heap and every step is
// an indirect resume (ANCHORS.md's "generator in another compilation unit").
#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long items = 100000000;
Generator<long long> counter(long long n) { for (long long i = 0; i < n; i++) co_yield i; }
Generator<long long> countdown(long long n) { for (long long i = n; i > 0;) co_yield --i; }
int main() {
    long long n = items, start = now_ns(), s = 0;
    Generator<long long> (*make)(long long) = counter;
    if (n < 0) make = countdown;   // never, but the compiler cannot know
    for (auto g = make(n); g.next();) s += g.value();
    report(s, n, start);
}
