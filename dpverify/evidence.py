"""Typed evidence: what a check found beyond its verdict, one type per family of claims.

A :class:`~dpverify.results.PointResult` carries its verdict, its message and one
``evidence`` object.  The reports and the pytest plugin render evidence by its type
(a privacy point shows claimed against achieved epsilon, a sensitivity point the
derived Delta against the claimed one, ...); nothing downstream reads string keys
that a check happened to write.  :meth:`Evidence.figures` is the JSON view of the
same object, shown under ``"figures"`` in ``report.json``.

Numbers are decimal strings with 40 significant digits (see
:mod:`dpverify.engine.decide.decimals`), or "inf"; floats appear only in plot data.
Adding a kind of claim means adding its evidence type here (or reusing one).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any, Optional


@dataclass
class Evidence:
    """No evidence beyond the verdict and its message (formula claims, errors, unknowns)."""

    def figures(self) -> dict[str, Any]:
        """The evidence as plain JSON data: every field that is set (not None), nested dataclasses
        as objects (also in lists).  Fields that the check document (``--json``) already shows at the top level of
        a point are left out."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or f.name in _TOP_LEVEL:
                continue
            if isinstance(value, list):
                value = [asdict(v) if is_dataclass(v) else v for v in value]
            out[f.name] = asdict(value) if is_dataclass(value) else value
        return out


_TOP_LEVEL = frozenset({"claimed_epsilon", "claimed_delta", "achieved_epsilon", "achieved_is_lower_bound",
                        "achieved_delta"})


@dataclass
class WitnessLaws:
    """The witness pair's two output laws side by side, over the union of their outputs (for the
    witness plot).  ``p``/``p_prime`` are decimal strings, or "[a, b]" for an interval too wide to
    print as one number."""

    outputs: list[str]
    p: list[str]
    p_prime: list[str]


@dataclass
class DensityCurves:
    """Both densities of a density witness, and their log ratio, on a grid around the witness value
    (floats, for the plot only).  ``at`` is the witness value v, ``slot`` the released value's name."""

    slot: str
    at: float
    v: list[float]
    density: list[float]
    density_prime: list[float]
    log_ratio: list[Optional[float]]  # None where a density is 0


@dataclass
class PrivacyEvidence(Evidence):
    """``private(eps[, delta])``: the claimed and achieved levels and what was enumerated."""

    claimed_epsilon: Optional[str] = None
    claimed_delta: Optional[str] = None
    achieved_epsilon: Optional[str] = None
    achieved_is_lower_bound: bool = False  # the exact supremum was not decided: a certified lower bound
    achieved_delta: Optional[str] = None
    datasets: Optional[int] = None
    distinct_laws: Optional[int] = None
    pairs: Optional[int] = None
    outputs: Optional[int] = None
    cells: Optional[int] = None  # (pair, output) cells of a density check
    loss_histogram: Optional[dict[str, Any]] = None  # {edges, counts, infinite}: floats for the plot
    witness_laws: Optional[WitnessLaws] = None
    density_curves: Optional[DensityCurves] = None
    proof_steps: Optional[list[str]] = None  # a structural proof for every dataset: its steps, in order


@dataclass
class PredictionEvidence(PrivacyEvidence):
    """``private_prediction`` and ``stability``: privacy of a prediction, per query point, or the
    stability level gamma."""

    achieved_by_point: Optional[dict[str, Optional[str]]] = None
    claimed_gamma: Optional[str] = None
    achieved_gamma: Optional[str] = None


@dataclass
class FloatEvidence(PrivacyEvidence):
    """``float_private``: the privacy levels of a floating-point sampler over its grid of uniforms
    (``achieved_epsilon`` "inf" for an unreachable output; exact for a finite image), the grid, the
    work done (evaluations, candidates) and the witness's grid index."""

    grid_points: int = 0
    value_pairs: int = 0
    evaluations: int = 0
    outputs_per_value: Optional[dict[str, int]] = None
    candidates_tried: Optional[int] = None
    unreachable_candidates: Optional[int] = None
    witness_k: Optional[int] = None
    witness_output_hex: Optional[str] = None
    epsilon_output_hex: Optional[str] = None  # finite image: the output where the exact epsilon is reached
    counts_of: Optional[list[str]] = None  # finite image: the two query values of that pair (q, q')
    output_counts: Optional[list[list[Any]]] = None  # [repr(y), count from q, count from q'], first rows by y


@dataclass
class SampledCell:
    """One test of a statistical audit: the dataset (and its neighbour, for privacy), the output,
    the counts in the samples, the Clopper-Pearson interval(s) and the spec's exact probability
    (decimal strings)."""

    dataset: str
    output: str
    count: int
    interval: list[str]
    spec_probability: str
    dataset_prime: Optional[str] = None
    count_prime: Optional[int] = None
    interval_prime: Optional[list[str]] = None
    spec_probability_prime: Optional[str] = None
    epsilon_lower_bound: Optional[str] = None  # privacy: ln(P(o|X) lower bound / P(o|X') upper bound)
    outputs: Optional[list[str]] = None  # an event or pooled cell: the outputs it gathers (the first 50)
    delta_lower_bound: Optional[str] = None  # privacy: P(S|X) lower bound - e^eps P(S|X') upper bound


@dataclass
class StatisticalEvidence(PrivacyEvidence):
    """A black box audited by sampling (``dp.black_box``): the budget (``samples`` per dataset and
    run, ``seed``), the overall ``error_probability`` split over ``tests`` (Bonferroni), the
    ``worst`` cell with its interval, the largest deviation |frequency - spec probability|
    (conformance), the lower confidence bound on the code's epsilon (privacy), and whether an
    independent re-run with fresh seeds reproduced a refutation (``confirmed``).  A statistical
    lower bound is never shown as ``achieved_epsilon`` (that column is exact or certified)."""

    samples: int = 0
    seed: int = 0
    error_probability: Optional[str] = None
    tests: int = 0
    worst: Optional[SampledCell] = None
    largest_deviation: Optional[str] = None
    epsilon_lower_bound: Optional[str] = None
    confirmed: Optional[bool] = None
    reproducible: bool = True  # False for code declared unseeded=True (a library's unseedable sampler)
    level: Optional[str] = None  # the error probability of each test (error_probability / tests)
    sampled: Optional[list[SampledCell]] = None  # the cells tested in the first run, in test order (the first 100)
    spec_epsilon: Optional[str] = None  # privacy: the spec program's largest loss over the universe (a double)
    delta_lower_bound: Optional[str] = None  # privacy: the largest lower confidence bound on P(S|X) - e^eps P(S|X')
    ks: Optional[list[CdfTest]] = None  # continuous outputs: one Kolmogorov-Smirnov test per dataset (and coordinate)


@dataclass
class CdfTest:
    """A black box's continuous outputs on one dataset (one coordinate of a vector) against the spec's
    exact CDF: the Kolmogorov-Smirnov statistic sup |F_n - F|, the DKW-Massart threshold at the
    per-test level, and a plot's worth of points (x, empirical F_n(x), exact F(x)) as decimal strings."""

    dataset: str
    coordinate: Optional[int]
    statistic: str
    threshold: str
    at: str  # where the statistic is attained
    curve: list[list[str]]


@dataclass
class FallbackEvidence(StatisticalEvidence):
    """The statistical audit's evidence for a claim about a ``dp.implementation`` whose exact audit was
    refused: ``decided_by`` ("statistical"), where the exact audit stopped (``exact_refused_at``,
    "file:line") and why (``exact_refusal``)."""

    decided_by: str = "statistical"
    exact_refused_at: Optional[str] = None
    exact_refusal: Optional[str] = None


@dataclass
class ConformanceEvidence(Evidence):
    """``conforms(spec_program, tolerance=t)`` decided exactly: the tolerance, and the largest certified
    difference |P_impl(o|X) - P_spec(o|X)| over every dataset and output (an upper end), where it is."""

    tolerance: Optional[str] = None
    largest_difference: Optional[str] = None
    largest_at: Optional[list[str]] = None  # [repr(dataset), repr(output)]
    datasets: Optional[int] = None


@dataclass
class ReplayCall:
    """One noise draw of a replayed pair, matched in order with the spec's call: its site and method, the
    value fed into it on X and on X' (loc plus what the noise is added to; exact, as decimal or
    fraction strings), its scale, the implementation's cost |fed(X) - fed(X')| / scale and the
    spec's Delta / scale for the matched call; ``note`` says what kept a cost from being computed."""

    index: int
    site: str
    method: str
    kind: str
    value: Optional[str] = None
    value_prime: Optional[str] = None
    scale: Optional[str] = None
    cost: Optional[str] = None
    spec_cost: Optional[str] = None
    violation: bool = False
    note: Optional[str] = None


@dataclass
class ReplayTrace:
    """The replay of one neighbouring pair with one seed: its noise draws, and the first call where the
    two runs' sequences of calls (method and site) differ, if any (data-dependent control flow)."""

    x: str
    x_prime: str
    seed: int
    calls: list[ReplayCall]
    divergence: Optional[dict[str, str]] = None  # {index, method, site, method_prime, site_prime}
    excess: Optional[str] = None  # the largest cost - spec cost over its draws (a decimal string)
    totals: Optional[dict[str, list[str]]] = None  # group (L1: Laplace/exponential, L2: Gaussian, squared) -> [code's, spec's largest]
    total_violation: Optional[str] = None  # the group whose total exceeds the spec's, if any


@dataclass
class ReplayEvidence(Evidence):
    """``calibrated(spec)`` decided by grey-box replay: the budget (pairs run of the universe's, seeds per
    pair), how pairs were chosen (``enumeration`` or ``hypothesis``), the spec's noise calls with their
    derived sensitivities, the trace of the failing (or worst) pair, whether an independent re-run
    recomputed the violation exactly (``confirmed``), and what kept calls from being compared."""

    search: Optional[str] = None
    pairs_run: int = 0
    pairs_in_universe: int = 0
    seeds: Optional[list[int]] = None
    spec_calls: Optional[list[dict[str, str]]] = None  # {call, kind, site, scale, delta, spec_cost}
    spec_totals: Optional[dict[str, str]] = None  # group -> the spec's largest total cost over the universe's pairs
    trace: Optional[ReplayTrace] = None
    confirmed: Optional[bool] = None
    divergences: int = 0
    first_divergence: Optional[ReplayTrace] = None  # the first replay whose two runs' calls differ
    problems: Optional[list[str]] = None  # count or kind mismatches, values not fed by a sum (the first 10)


@dataclass
class SensitivityEvidence(Evidence):
    """``sensitivity(query, equals=/at_most=)``: the derived Delta(n) with its derivation steps
    against the claim, or the exact value at the size where they differ."""

    claimed: Optional[str] = None
    derived: Optional[str] = None
    n_min: Optional[int] = None
    relation: Optional[str] = None
    steps: Optional[list[list[str]]] = None
    n: Optional[int] = None
    exact: Optional[str] = None
    claimed_at_n: Optional[str] = None
    change: Optional[str] = None
    loose: Optional[dict[str, Any]] = None  # {n, claimed, exact}: a claim that holds but is not tight
    enumerated: Optional[dict[str, str]] = None  # measured Delta per size, from the enumeration


@dataclass
class FormulaEvidence(Evidence):
    """``identity``/``inequality``: the statement as decided (sides simplified, conditions attached),
    how it was proved, or the exact counterexample with both sides' values there."""

    statement: Optional[str] = None
    conditions: Optional[str] = None
    derivation: Optional[str] = None  # what the proof rests on (a sympy derivation, z3's unsat, ...)
    counterexample: Optional[dict[str, str]] = None  # symbol -> exact value ("1/3")
    lhs: Optional[str] = None
    rhs: Optional[str] = None


@dataclass
class SideBound:
    """One side of a probability claim: the bound, the worst dataset's probability and the slack."""

    bound: str
    worst_probability: str
    worst_dataset: str
    slack: str


@dataclass
class ProbabilityEvidence(Evidence):
    """``accuracy``/``probability``: the worst dataset on each side, and the range per dataset size."""

    at_most: Optional[SideBound] = None
    at_least: Optional[SideBound] = None
    by_size: Optional[dict[str, dict[str, str]]] = None


@dataclass
class SampleComplexityEvidence(Evidence):
    """``sample_complexity``: the failure probability at the bound's n, the range of n checked (the
    claim states every n >= the bound; a verdict covers n_bound..checked_up_to) and the scanned curve."""

    n_bound: Optional[int] = None
    bound: Optional[str] = None
    failure_at_bound: Optional[str] = None
    beta: Optional[str] = None
    smallest_n: Optional[int] = None
    holds_down_to: Optional[int] = None
    curve: Optional[dict[str, str]] = None
    verified_n: Optional[list[int]] = None  # every n the verdict covers: n_bound..checked_up_to
    checked_up_to: Optional[int] = None  # a verified claim is checked for n = n_bound..checked_up_to only
    range_end: Optional[str] = None  # what ended that range: "up_to" (the claim's) or "work limit"
    failing_n: Optional[int] = None  # a refutation's n: the bound's n or a larger one of the range


__all__ = ["ConformanceEvidence", "FallbackEvidence", "ReplayCall", "ReplayEvidence", "ReplayTrace", "SampledCell", "StatisticalEvidence", "DensityCurves", "Evidence", "FloatEvidence", "FormulaEvidence", "PredictionEvidence", "PrivacyEvidence", "ProbabilityEvidence", "privacy_view",
           "SampleComplexityEvidence", "SensitivityEvidence", "SideBound", "WitnessLaws"]


def privacy_view(evidence: Evidence) -> PrivacyEvidence:
    """The privacy fields of any point's evidence: the evidence itself for privacy claims, an empty
    :class:`PrivacyEvidence` (every level None) for other kinds, errors and unknowns -- for tables
    and documents that show claimed and achieved epsilon in one column for every claim."""
    return evidence if isinstance(evidence, PrivacyEvidence) else PrivacyEvidence()


@dataclass
class PairValue:
    """One ordered neighbouring pair's Rényi divergence (decimal string, or "inf")."""

    x: str
    x_prime: str
    value: str


@dataclass
class DivergenceCurve:
    """D_alpha(X || X') of one pair against the order alpha (floats, for the plot only)."""

    x: str
    x_prime: str
    alpha: list[float]
    divergence: list[Optional[float]]  # None where it is infinite


@dataclass
class DivergenceEvidence(Evidence):
    """``renyi(alpha, eps)`` and ``zcdp(rho)``: the claimed and achieved values (D_alpha at the claim's
    order; for zCDP the largest D_alpha / alpha found, at the order ``alpha``), the pair attaining it,
    tightness (achieved / claimed), the largest pairs' values and the witness pair's curve."""

    kind: str = "renyi"
    claimed: Optional[str] = None
    achieved: Optional[str] = None
    lower_bound: bool = False  # achieved is a certified lower bound of the supremum, not the supremum
    alpha: Optional[str] = None
    pair: Optional[list[str]] = None  # [repr(X), repr(X')]
    tightness: Optional[str] = None
    pairs: Optional[int] = None  # distinct ordered pairs of laws
    per_pair: Optional[list[PairValue]] = None  # the largest first (at most 20)
    curve: Optional[DivergenceCurve] = None


__all__ += ["DivergenceCurve", "DivergenceEvidence", "PairValue"]


@dataclass
class ProfileRow:
    """One claimed point of a privacy profile: eps, the claimed delta and the achieved delta(eps) of the
    worst pair (decimal strings; ``achieved_lower``/``achieved_upper`` when only certified bounds are
    known: a discretised loss distribution)."""

    epsilon: str
    claimed: str
    achieved: Optional[str] = None
    achieved_lower: Optional[str] = None
    achieved_upper: Optional[str] = None


@dataclass
class ProfileEvidence(Evidence):
    """``profile(at, delta, times=T)``: the composition's achieved delta(eps) at each claimed eps, the
    worst ordered pair, how the loss distribution was computed (``method``: "lattice", "gaussian" or
    "discretised"), the lattice step and number of terms, and the achieved curve (floats, for the plot)."""

    times: int = 1
    method: Optional[str] = None
    rows: Optional[list[ProfileRow]] = None
    pair: Optional[list[str]] = None  # [repr(X), repr(X')] of the worst pair
    pairs: Optional[int] = None  # distinct ordered pairs of laws
    step: Optional[str] = None  # lattice: the loss unit s (losses are k s)
    terms: Optional[int] = None  # lattice: terms of the composed polynomial
    grid: Optional[int] = None  # discretised: grid points per unit of the smallest distance
    digits: Optional[float] = None  # certified significant digits of the least precise achieved delta (Mellin route)
    curve: Optional[dict[str, list[Optional[float]]]] = None  # {"epsilon": [...], "delta": [...]} (upper ends)


__all__ += ["ProfileEvidence", "ProfileRow"]


@dataclass
class GdpEvidence(Evidence):
    """``gdp(mu, times=T)``: the claimed mu against the achieved one -- exact (sqrt(T) D) for Gaussian
    releases, else a certified lower bound (``lower_bound``: the least mu whose G_mu reaches
    delta_T's lower end at a grid eps) -- the tightness achieved / claimed, the worst ordered pair, how
    delta_T was read (``method``: the route), the eps grid compared, and when refuted the witness point
    (``witness_epsilon``, delta_T there and G_mu there)."""

    times: int = 1
    claimed: Optional[str] = None
    achieved: Optional[str] = None
    lower_bound: bool = False
    tightness: Optional[str] = None
    pair: Optional[list[str]] = None  # [repr(X), repr(X')] of the worst pair
    pairs: Optional[int] = None  # distinct ordered pairs of laws
    method: Optional[str] = None
    grid_points: Optional[int] = None  # eps compared with G_mu (profile routes)
    witness_epsilon: Optional[str] = None
    witness_delta: Optional[str] = None  # delta_T(witness eps), a certified lower end
    witness_bound: Optional[str] = None  # G_mu(witness eps), a certified upper end


__all__ += ["GdpEvidence"]
