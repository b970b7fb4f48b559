/* The C equivalent of an opaque generator: a state machine stepped through a
   function pointer chosen at run time (the compiler cannot inline it). */
#include "common.h"
volatile long long items = 100000000;
struct counter { long long i, n, value; };
static int counter_next(struct counter *c) {
    if (c->i >= c->n) return 0;
    c->value = c->i++;
    return 1;
}
static int countdown_next(struct counter *c) {
    if (c->n <= 0) return 0;
    c->value = --c->n;
    return 1;
}
int main(void) {
    long long n = items, start = now_ns(), s = 0;
    int (*next)(struct counter *) = counter_next;
    if (n < 0) next = countdown_next;   /* never, but the compiler cannot know */
    struct counter c = {0, n, 0};
    while (next(&c)) s += c.value;
    report(s, n, start);
    return 0;
}
