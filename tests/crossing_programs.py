"""Programs whose exports carry slices and structs, shared by the tests of the
Python embedding and of shared libraries."""

SLICES = """
fn mean(xs: [f64]) -> f64 {
    var s = 0.0;
    for v in xs { s += v; }
    return s / (xs.len() as f64);
}
fn scale(xs: [f64], by: f64) { for i in 0..xs.len() { xs[i] *= by; } }
fn windows(xs: [i32], k: i64) -> Generator<i32> {
    for i in 0..xs.len() - k + 1 { var s: i32 = 0; for v in xs[i..i + k] { s += v; } yield s; }
}
"""

STRUCTS = """
struct Point { x: f64, y: f64 }
struct Seg { a: Point, b: Point, closed: bool }
fn norm2(p: Point) -> f64 { return p.x * p.x + p.y * p.y; }
fn flip(s: Seg) -> Seg { return Seg { a: s.b, b: s.a, closed: !s.closed }; }
fn walk(start: Point, n: i64) -> Generator<Point> {
    var p = start;
    for _i in 0..n { yield p; p.x += 1.0; }
}
fn loud(n: i64) -> Generator<Seg> {
    for i in 0..n { print("loud", i); yield Seg { a: Point { x: 0.0, y: 0.0 }, b: Point { x: 1.0, y: 1.0 }, closed: i == 1 }; }
}
"""
