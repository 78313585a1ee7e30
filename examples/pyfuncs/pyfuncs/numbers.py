"""Numbers."""

import math
import random

LIMIT = 3999


def clamp(x: int, lo: int, hi: int) -> int:
    """Limit x to the closed interval [lo, hi]; lo greater than hi is a ValueError."""
    if lo > hi:
        raise ValueError("empty interval")
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def to_roman(n: int) -> str:
    """Roman numeral of n, for 1 <= n <= 3999."""
    if not 0 < n <= LIMIT:
        raise ValueError("out of range")
    out = []
    for value, digits in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out.append(digits)
            n -= value
    return "".join(out)


def triangle_kind(a: float, b: float, c: float) -> str:
    """Classify a triangle by its side lengths: equilateral, isosceles, scalene or invalid."""
    sides = sorted((a, b, c))
    if sides[0] <= 0 or sides[0] + sides[1] <= sides[2]:
        return "invalid"
    if a == b == c:
        return "equilateral"
    if a == b or b == c or a == c:
        return "isosceles"
    return "scalene"


def mean_gap(values: list[float]) -> float:
    """Mean absolute difference of consecutive values (0.0 for fewer than two)."""
    if len(values) < 2:
        return 0.0
    total = 0.0
    for left, right in zip(values, values[1:]):
        total += math.fabs(right - left)
    return total / (len(values) - 1)


def jitter(x: float) -> float:
    """x plus noise."""
    if x > 0:
        return x + random.random()
    return x


def double(x: int) -> int:
    """Twice x (too simple: complexity 1)."""
    return 2 * x


def undocumented(x: int) -> int:
    if x > 0:
        return x
    return -x


def uses_helper(x: int) -> int:
    """Clamp to a byte, through another function of the project."""
    if x > 255:
        return clamp(x, 0, 255)
    return x


def spin(n: int) -> int:
    """Count down to zero (never ends for a nonzero n: the reference hangs)."""
    while n != 0:
        n = n + 0
    return n


def descend(n: int) -> int:
    """Recursion without end for any n below 100."""
    if n >= 100:
        return n
    return descend(n) + 1


class Counter:
    """A counter."""

    def bump(self, by: int) -> int:
        """Add by, return the total."""
        if by < 0:
            raise ValueError("negative")
        self.total = getattr(self, "total", 0) + by
        return self.total
