"""RAPPOR and one-time RAPPOR as DP-Sniper runs them (Erlingsson, Pihur and Korolova, CCS 2014).

Local differential privacy: the input is one client's value v, and any two
values are neighbours.  DP-Sniper (``dpsniper/mechanisms/rappor.py``,
``Rappor`` and ``OneTimeRappor``) encodes v into a Bloom filter of h = 20
bits with 4 hash functions, bit ``mmh3.hash(str(v), seed=i) mod 20`` for
seeds i = 0..3 (signed 32-bit MurmurHash3, Python's non-negative mod), and
randomises every bit independently:

* permanent randomised response (PRR): the bit becomes 1 w.p. f/2, 0 w.p. f/2,
  and stays w.p. 1 - f;
* ``one_time_rappor`` -- the PRR bits are the output, f = 0.95:
  P(1 | bit 1) = 1 - f/2 = 21/40, P(1 | bit 0) = f/2 = 19/40;
* ``rappor`` -- then instantaneous randomised response, report 1 w.p. q if
  the PRR bit is 1 and w.p. p if it is 0 (f = 0.75, p = 0.45, q = 0.55; the
  PRR is redrawn for every report, so this is one report):
  P(1 | bit 1) = f(p + q)/2 + (1 - f) q = 41/80, P(1 | bit 0) = 39/80.

Privacy: the output bits are independent given the filter, so the privacy
loss between v and v' is K * ln(P(1|1)/P(1|0)), K = the number of positions
where their filters differ.  The RAPPOR paper's bound takes K <= 2 * 4
(``paper_bound``: 8 ln(21/19) for one-time RAPPOR, Erlingsson et al.'s
eps_inf = 2h ln((1 - f/2)/(f/2)); 8 ln(41/39) for one report).  On the
instance the hashes give

    v = 0: bits {0, 11, 18};  v = 1: bits {3, 10, 13};  v = 2: bits {7, 10, 11, 19}

(computed here with a pure-Python MurmurHash3, cross-checked against the
``mmh3`` package), so K = 6 for the pair (0, 1) and the true level is
6 ln(21/19) = 0.6005 and 6 ln(41/39) = 0.3001 (``true_level``, attained
exactly; DP-Sniper's lower bounds are 0.598 and 0.293 for the pair (1, 0)).
No eps is claimed in the artifact (its wrapper passes eps = 0).

Instance: values {0, 1, 2} (DP-Sniper's pairs (1, 0) and (1, 2)).  Only the
8 positions where the three filters are not all equal are released: on the
other 12 every input gives the same independent bit law, so dropping them
changes no likelihood ratio (and keeps 2^8 instead of 2^20 outputs).
"""
from fractions import Fraction

import dpverify as dp

VALUES = (0, 1, 2)
BLOOM_BITS, HASHES = 20, 4


def murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3 x86_32 as a signed 32-bit int (what ``mmh3.hash`` returns)."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & mask
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & mask  # noqa: E731
    tail_start = len(data) - len(data) % 4
    for i in range(0, tail_start, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = rotl((k * c1) & mask, 15) * c2 & mask
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & mask
    k = int.from_bytes(data[tail_start:], "little")
    if k or len(data) % 4:
        h ^= rotl((k * c1) & mask, 15) * c2 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def bloom(v):
    """The set bits of v's Bloom filter: mmh3.hash(str(v), seed=i) mod 20, i = 0..3."""
    return frozenset(murmur3_32(str(v).encode(), i) % BLOOM_BITS for i in range(HASHES))


FILTERS = {v: bloom(v) for v in VALUES}
RELEASED = tuple(sorted(set().union(*FILTERS.values()) - frozenset.intersection(*FILTERS.values())))
K = max(len(FILTERS[a] ^ FILTERS[b]) for a in VALUES for b in VALUES)


def any_two(x, x_prime):
    """Local DP: any two inputs are neighbours."""
    return True


UNIVERSE = dp.answers(VALUES, 1, neighbours=any_two)


def one_time_rappor(q):
    """Permanent randomised response with f = 0.95 on every released bit of q[0]'s Bloom filter."""
    bits = FILTERS[q[0]]
    return tuple(dp.bernoulli(Fraction(21, 40) if j in bits else Fraction(19, 40)) for j in RELEASED)


def rappor(q):
    """PRR (f = 0.75) then instantaneous RR (p = 0.45, q = 0.55): P(1 | bit) = 41/80 or 39/80."""
    bits = FILTERS[q[0]]
    return tuple(dp.bernoulli(Fraction(41, 80) if j in bits else Fraction(39, 80)) for j in RELEASED)


one_time = dp.spec(
    one_time_rappor,
    universe=UNIVERSE,
    claims=[dp.private(2 * HASHES * dp.log(Fraction(21, 19)), id="paper_bound"),
            dp.private(K * dp.log(Fraction(21, 19)), id="true_level"),
            dp.private((K - 1) * dp.log(Fraction(21, 19)), id="below_true_level", expect="refuted")],
    doc="DP-Sniper OneTimeRappor (f = 0.95, 20 bits, 4 hashes): 8 ln(21/19) by the paper, "
        "6 ln(21/19) exactly on {0, 1, 2}.",
)

instantaneous = dp.spec(
    rappor,
    universe=UNIVERSE,
    claims=[dp.private(2 * HASHES * dp.log(Fraction(41, 39)), id="paper_bound"),
            dp.private(K * dp.log(Fraction(41, 39)), id="true_level"),
            dp.private((K - 1) * dp.log(Fraction(41, 39)), id="below_true_level", expect="refuted")],
    doc="DP-Sniper Rappor (f = 0.75, p = 0.45, q = 0.55, one report): 8 ln(41/39) by the paper, "
        "6 ln(41/39) exactly on {0, 1, 2}.",
)
