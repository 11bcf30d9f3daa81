"""A false formula claim whose z3 query has a step the resource count does not see (issue 21, finding 5).

A sum of squares of quadratics in three variables plus its shifted copy, against a tiny cubic: z3's
nonlinear solver runs about 10 s between two ticks of its count.  Under a wall-clock safety net this
claim ended ``unknown`` on a busy machine and was decided on an idle one; the net now counts CPU seconds
and the formula budget binds long before it.  ``python bench/bench_load_determinism.py
bench/specs/z3_slow_step.py`` shows the same verdict idle and busy.
"""
import sympy

import dpverify as dp

x, y, z = dp.symbol("x"), dp.symbol("y"), dp.symbol("z")
ROWS = [((1, -2, 3, -1), (2, 1, -1, 1), (-1, 1, 2, 3)), ((3, 1, -2, 2), (1, -3, 1, -1), (2, 2, -1, 1)),
        ((-2, 1, 1, 1), (1, 2, -3, 2), (1, -1, 1, -2))]


def _lin(c, u, v, w):
    return c[0] * u + c[1] * v + c[2] * w + c[3]


def _p(u, v, w):
    return sum((_lin(a, u, v, w) * _lin(b, u, v, w) + _lin(c, u, v, w)) ** 2 for a, b, c in ROWS)


LHS = sympy.Rational(1, 10 ** 6) * x * y * z
RHS = _p(x, y, z) + _p(x - sympy.Rational(1, 3), y + sympy.Rational(2, 7), z)

slow_step = dp.spec(name="slow_step", claims=[dp.inequality(LHS, RHS, id="sos_plus_shift")])
