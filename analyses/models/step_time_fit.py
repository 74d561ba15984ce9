"""The fit of the step-time model (:mod:`analyses.models.performance`) on published throughput.

:func:`fit` finds the :class:`~analyses.models.performance.Coefficients` by damped Gauss-Newton
(Levenberg-Marquardt, numpy only) on the log of published throughput of declared calibration rows,
each term pulled gently toward its textbook value (:data:`analyses.models.performance.PRIOR`) so that
a term few rows inform stays where physics puts it; :func:`leave_groups_out` gives the coefficients
of the fit without each group of rows (grouped cross-validation) one Newton step from it; and
:func:`stack_efficiencies` the training stacks' efficiencies from the rows' residuals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from analyses.models.performance import NAMES, PRIOR, Coefficients, die_index, step_time


def _floats(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


# How each coefficient is transformed for the fit: shares in (0, 1) by a logit, positives by a log
SHARES = {
    "e_max_a100",
    "e_max_h100",
    "e_max_b200",
    "e_max_b300",
    "e_attn",
    "e_attn_materialized",
    "moe_gemm",
    "dp_overlap",
    "tp_exposed",
    "ep_exposed",
}


PRIOR_SD = 1.0
"""Standard deviation of each anchor in the fit's transformed space (log or logit): a weak pull,
e^1 ≈ 2.7× either way, so the data decide whenever a few rows inform a term."""

RESIDUAL_SD = 0.15
"""The scatter expected of one published row around the model, in ``ln`` (about 15%): software
stacks, clocks and unprinted settings differ. It weighs the rows against the anchors."""


def _to_theta(coef: Coefficients) -> np.ndarray:
    out = []
    for name in NAMES:
        v = getattr(coef, name)
        out.append(np.log(v / (1.0 - v)) if name in SHARES else np.log(v))
    return np.asarray(out, float)


def _from_theta(theta: np.ndarray) -> Coefficients:
    values = {}
    for name, t in zip(NAMES, theta, strict=True):
        values[name] = float(1.0 / (1.0 + np.exp(-t))) if name in SHARES else float(np.exp(t))
    return Coefficients(**values)


def log_residuals(coef: Coefficients, runs: Mapping[str, Any], tokens_per_s_per_gpu: ArrayLike) -> np.ndarray:
    """``ln(predicted / published)`` tokens per second per GPU of each run."""
    return np.log(step_time(coef, **runs).tokens_per_s_per_gpu) - np.log(_floats(tokens_per_s_per_gpu))


@dataclass(frozen=True)
class Fit:
    """A fitted model: coefficients, the rows it saw, and how well it reproduces them."""

    coefficients: Coefficients
    rows: int
    rms_log_error: float  # root mean square of ln(predicted/published) on the fitted rows
    iterations: int


def fit(
    runs: Mapping[str, Any],
    tokens_per_s_per_gpu: ArrayLike,
    *,
    prior: Coefficients = PRIOR,
    prior_sd: float = PRIOR_SD,
    residual_sd: float = RESIDUAL_SD,
    fixed: Sequence[str] = (),
    max_iter: int = 200,
    start: Coefficients | None = None,
) -> Fit:
    """The coefficients that best reproduce ``tokens_per_s_per_gpu`` of ``runs`` (least squares in log
    space, every coefficient pulled toward ``prior`` with ``prior_sd`` in its transformed space).

    ``fixed`` names coefficients held at their prior; ``start`` is where the search starts (the prior by
    default; a neighbouring fit's coefficients make a leave-one-out refit a few steps).
    Levenberg-Marquardt with a forward-difference Jacobian: a dozen coefficients on a few dozen rows
    converge in well under a second.
    """
    y = _floats(tokens_per_s_per_gpu)
    runs = dict(runs) | {"die": die_index(runs["die"])}  # look the dies up once
    free = np.array([n not in fixed for n in NAMES])
    anchor = _to_theta(prior)

    def residuals(theta: np.ndarray) -> np.ndarray:
        r = log_residuals(_from_theta(theta), runs, y) / residual_sd
        return np.concatenate([r, ((theta - anchor) / prior_sd)[free]])

    theta = anchor.copy() if start is None else np.where(free, _to_theta(start), anchor)
    r = residuals(theta)
    cost = float(r @ r)
    lam, iterations = 1e-2, 0
    while iterations < max_iter:
        iterations += 1
        jac = np.zeros((r.size, len(NAMES)))
        for j in np.flatnonzero(free):
            step = 1e-6 * max(1.0, abs(theta[j]))
            t = theta.copy()
            t[j] += step
            jac[:, j] = (residuals(t) - r) / step
        jf = jac[:, free]
        a = jf.T @ jf
        g = jf.T @ r
        improved = False
        while lam < 1e10:
            delta = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
            t = theta.copy()
            t[free] += delta
            rt = residuals(t)
            ct = float(rt @ rt)
            if np.isfinite(ct) and ct < cost:
                theta, r, improved = t, rt, True
                lam = max(lam / 3.0, 1e-9)
                break
            lam *= 4.0
        if not improved or cost - float(r @ r) < 1e-6 * max(cost, 1.0):
            cost = float(r @ r)
            break
        cost = float(r @ r)
    coef = _from_theta(theta)
    data_r = log_residuals(coef, runs, y)
    return Fit(coef, int(y.size), float(np.sqrt(np.mean(data_r**2))), iterations)


def leave_groups_out(
    coef: Coefficients,
    runs: Mapping[str, Any],
    tokens_per_s_per_gpu: ArrayLike,
    groups: ArrayLike,
    *,
    prior: Coefficients = PRIOR,
    prior_sd: float = PRIOR_SD,
    residual_sd: float = RESIDUAL_SD,
) -> dict[Any, Coefficients]:
    """The coefficients of the fit without each group of fitted rows (``groups``: one label per row), one
    Newton step from the fit with them: ``θ₋g = θ + (H − J_gᵀJ_g)⁻¹ J_gᵀ r_g`` with ``H = JᵀJ`` (rows and
    anchors) at the optimum, where the gradient ``Jᵀr`` vanishes (the approximate leave-one-out of Cook's
    distance and of nonlinear least squares, for a block of rows: grouped cross-validation, a source or
    a model family left out at a time).
    ``coef`` must be :func:`fit` on the same ``runs`` and arguments."""
    y = _floats(tokens_per_s_per_gpu)
    labels = np.asarray(groups)
    runs = dict(runs) | {"die": die_index(runs["die"])}
    theta, anchor = _to_theta(coef), _to_theta(prior)

    def residuals(th: np.ndarray) -> np.ndarray:
        r = log_residuals(_from_theta(th), runs, y) / residual_sd
        return np.concatenate([r, (th - anchor) / prior_sd])

    r = residuals(theta)
    jac = np.empty((r.size, theta.size))
    for j in range(theta.size):
        step = 1e-6 * max(1.0, abs(theta[j]))
        t = theta.copy()
        t[j] += step
        jac[:, j] = (residuals(t) - r) / step
    h = jac.T @ jac
    out = {}
    for g in dict.fromkeys(labels.tolist()):
        rows = np.flatnonzero(labels == g)
        jg = jac[rows]
        out[g] = _from_theta(theta + np.linalg.solve(h - jg.T @ jg, jg.T @ r[rows]))
    return out


STACK_PRIOR_ROWS = 3.0
"""How many rows' weight the anchor of a stack's efficiency carries (its family's, and the family's the
reference's, 1): a stack with three published rows moves half way from its family to its own mean."""


def stack_efficiencies(
    log_ratio: ArrayLike,
    stacks: Sequence[str],
    families: Mapping[str, str],
    reference: str,
    pooled: str,
    prior_rows: float = STACK_PRIOR_ROWS,
) -> dict[str, float]:
    """Each training stack's efficiency, the share of the reference stack's throughput it reaches on the
    same layout, from ``log_ratio`` = ``ln(published / reference model's tokens per second)`` of rows run
    on ``stacks``: a shrunk geometric mean, ``ln e_s = (Σ_s r + k·ln e_family) / (n_s + k)`` with
    ``ln e_family = Σ_family r / (n_family + k)`` (the family of ``families``: a stack without rows takes
    its family's, a family without rows the reference's, 1). ``reference`` is 1 by definition; ``pooled``
    (a plan that names no stack) is every row's, reference included, shrunk alike."""
    r = _floats(log_ratio)
    on = np.asarray(stacks, dtype=object)
    fam = np.array([families[s] for s in on], dtype=object)
    ref_family = families[reference]
    out: dict[str, float] = {}
    for stack, family in families.items():
        if stack == reference:
            out[stack] = 1.0
            continue
        if stack == pooled:
            out[stack] = float(np.exp(r.sum() / (r.size + prior_rows)))
            continue
        in_family = (fam == family) & (on != reference)
        ln_family = 0.0 if family == ref_family else r[in_family].sum() / (in_family.sum() + prior_rows)
        own = on == stack
        out[stack] = float(np.exp((r[own].sum() + prior_rows * ln_family) / (own.sum() + prior_rows)))
    return out
