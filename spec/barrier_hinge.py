"""The barrier hinge loss, catalogue entry 10.

For b > 1 and r > 0 the barrier hinge loss of a margin x is

    f(x) = max(-b (r + x) + r, max(b (x - r), r - x)).

It is the hinge r - x inside [-r, r], bent upwards with slope -b below -r
(where -b(r + x) + r takes over) and with slope b above r (where b(x - r)
does).  Source: Charoenphakdee, Lee and Sugiyama, "On symmetric losses for
learning from corrupted labels" (ICML 2019), the loss used with the
exponential mechanism in the project's notes on label-private learning.

Claims (formula claims: they quantify over every real x, y, t and every
b > 1, r > 0, and are proved, not sampled):

* symmetry on the barrier: f(x) + f(-x) = 2r for every x in [-r, r] -- a
  symmetric loss there, which is what makes it robust to symmetric label noise;
* f(x) >= 0 for every x;
* convexity: f(t x + (1 - t) y) <= t f(x) + (1 - t) f(y) for every x, y and
  t in [0, 1] (f is a maximum of affine functions);
* the sum f(x) + f(-x) is *not* constant on the whole line: the same identity
  without the restriction to [-r, r] is false (at x = 2, b = 2, r = 1 the sum
  is 2 + 3 = 5, not 2), so it is declared ``expect="refuted"`` and must come
  out refuted with a concrete counterexample.
"""
import sympy

import dpverify as dp

x = dp.symbol("x")
y = dp.symbol("y")
t = dp.symbol("t")
b = dp.symbol("b", positive=True)
r = dp.symbol("r", positive=True)


def f(margin):
    """The barrier hinge loss at a margin (a sympy expression in b and r)."""
    return sympy.Max(-b * (r + margin) + r, sympy.Max(b * (margin - r), r - margin))


PARAMETERS = [b > 1]

barrier_hinge = dp.spec(
    name="barrier_hinge",
    doc=__doc__,
    claims=[
        dp.identity(f(x) + f(-x), 2 * r, where=[*PARAMETERS, x >= -r, x <= r], id="symmetric_on_barrier"),
        dp.inequality(0, f(x), where=PARAMETERS, id="nonnegative"),
        dp.inequality(f(t * x + (1 - t) * y), t * f(x) + (1 - t) * f(y),
                      where=[*PARAMETERS, t >= 0, t <= 1], id="convex"),
        dp.identity(f(x) + f(-x), 2 * r, where=PARAMETERS, id="symmetric_everywhere", expect="refuted"),
    ],
)
