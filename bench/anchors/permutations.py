"""bench/workloads/permutations.pc as a CPython generator with `yield from`."""
import time

SIZE = 10


def main() -> None:
    a = list(range(SIZE))
    n = SIZE

    def permutations(k):
        if k == 1:
            yield a[0] * 16 + a[n - 1]
            return
        yield from permutations(k - 1)
        for i in range(k - 1):
            j = i if k % 2 == 0 else 0
            a[j], a[k - 1] = a[k - 1], a[j]
            yield from permutations(k - 1)

    count = 1
    for i in range(1, n + 1):
        count *= i
    start = time.perf_counter_ns()
    s = 0
    for v in permutations(n):
        s += v
    elapsed = time.perf_counter_ns() - start
    print("checksum", s)
    print("ns_per_item", elapsed / count)


if __name__ == "__main__":
    main()
