"""A point's typed evidence as a few plain-text lines, for the pytest plugin's failure output and
other text surfaces: what was claimed against what was found, by claim kind."""
from __future__ import annotations

from ..evidence import GdpEvidence, ProfileEvidence
from .profile_text import lines as profile_lines
from ..evidence import (DivergenceEvidence, Evidence, PredictionEvidence, PrivacyEvidence, ProbabilityEvidence,
                        SampleComplexityEvidence, SensitivityEvidence)


def evidence_lines(evidence: Evidence) -> list[str]:
    """The facts of ``evidence`` worth a reviewer's eye, one per line ("" fields left out)."""
    if isinstance(evidence, PrivacyEvidence):
        return _privacy(evidence)
    if isinstance(evidence, SensitivityEvidence):
        return _sensitivity(evidence)
    if isinstance(evidence, ProbabilityEvidence):
        return [f"P[event] {word} {side.bound}: worst {side.worst_probability} on {side.worst_dataset}, "
                f"slack {side.slack}"
                for word, side in (("<=", evidence.at_most), (">=", evidence.at_least)) if side is not None]
    if isinstance(evidence, DivergenceEvidence) and evidence.claimed is not None:
        what = "rho" if evidence.kind == "zcdp" else "D_alpha"
        return [f"claimed {what} {evidence.claimed}, achieved {'>= ' if evidence.lower_bound else ''}"
                f"{evidence.achieved} (alpha = {evidence.alpha}, pair {evidence.pair})"]
    if isinstance(evidence, ProfileEvidence):
        return profile_lines(evidence)
    if isinstance(evidence, GdpEvidence) and evidence.claimed is not None:
        out = [f"{evidence.times}-fold: claimed mu {evidence.claimed}, achieved "
               f"{'>= ' if evidence.lower_bound else ''}{evidence.achieved} (pair {evidence.pair})"]
        if evidence.witness_epsilon is not None:
            out.append(f"at eps = {evidence.witness_epsilon}: delta_T >= {evidence.witness_delta} > "
                       f"G_mu = {evidence.witness_bound}")
        return out
    if isinstance(evidence, SampleComplexityEvidence) and evidence.n_bound is not None:
        out = [f"the bound's n = {evidence.n_bound}: P[failure] = {evidence.failure_at_bound}, "
               f"beta = {evidence.beta}"]
        if evidence.failing_n is not None and evidence.failing_n != evidence.n_bound:
            out.append(f"fails at n = {evidence.failing_n} (n = {evidence.n_bound}..{evidence.failing_n - 1} hold)")
        if evidence.checked_up_to is not None:
            out.append(f"checked for n = {evidence.n_bound}..{evidence.checked_up_to}; not shown beyond")
        return out
    return []


def _privacy(e: PrivacyEvidence) -> list[str]:
    out = []
    if e.claimed_epsilon is not None:
        achieved = "" if e.achieved_epsilon is None else (
            f", achieved epsilon {'>= ' if e.achieved_is_lower_bound else ''}{e.achieved_epsilon}")
        out.append(f"claimed epsilon {e.claimed_epsilon}{achieved}")
    if e.claimed_delta not in (None, "0", "0.0") or e.achieved_delta is not None:
        out.append(f"claimed delta {e.claimed_delta}, achieved delta {e.achieved_delta}")
    if isinstance(e, PredictionEvidence) and e.claimed_gamma is not None:
        out.append(f"claimed gamma {e.claimed_gamma}, achieved gamma {e.achieved_gamma}")
    return out


def _sensitivity(e: SensitivityEvidence) -> list[str]:
    out = []
    if e.claimed is not None or e.derived is not None:
        where = f" ({e.relation}, n >= {e.n_min})" if e.relation and e.n_min is not None else ""
        out.append(f"claimed Delta {e.claimed}" + (f", derived Delta {e.derived}{where}" if e.derived else ""))
    if e.n is not None:
        out.append(f"at n = {e.n}: claimed {e.claimed_at_n}"
                   + (f", exact {e.exact}" if e.exact is not None else "")
                   + (f", a change of {e.change}" if e.change is not None else ""))
    return out


__all__ = ["evidence_lines"]
