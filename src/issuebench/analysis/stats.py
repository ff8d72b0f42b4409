"""The statistics behind every number the analysis prints.

Each function is small, pure and pinned by a unit test on a value worked out by hand, because a
report is only as honest as its interval. Formulas are written out in docs/analysis.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sp


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial rate; well behaved at small n and near 0 or 1.

    With n == 0 nothing is known, so the interval is the whole of [0, 1].
    """
    if n <= 0:
        return Interval(0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n], got {successes} of {n}")
    z = float(sp.norm.ppf(1 - (1 - confidence) / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Clamp only the rounding noise: the exact bounds are inside [0, 1] already.
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def paired_bootstrap_diff(a: Sequence[int | bool], b: Sequence[int | bool], *, n_boot: int = 10_000,
                          seed: int = 0, confidence: float = 0.95) -> Interval:
    """Percentile bootstrap interval of mean(a) - mean(b), resampling tasks (pairs kept together).

    Seeded, so the same inputs always give the same interval.
    """
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        return Interval(-1.0, 1.0)
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    means = diffs[idx].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(float(low), float(high))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test on the discordant pairs at p = 1/2."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    k = min(only_a, only_b)
    return float(min(1.0, 2 * sp.binom.cdf(k, discordant, 0.5)))


def paired_sample_size(p_only_a: float, p_only_b: float, *, alpha: float = 0.05,
                       power: float = 0.8) -> int | None:
    """Tasks needed for McNemar's test to detect the observed paired difference.

    Connor (1987): n = (z_{1-a/2} sqrt(psi) + z_{1-b} sqrt(psi - delta^2))^2 / delta^2, where
    psi = p10 + p01 is the share of discordant tasks and delta = p10 - p01 the difference in rates.
    None when the difference is zero: no number of tasks tells two equal systems apart.
    """
    delta = p_only_a - p_only_b
    psi = p_only_a + p_only_b
    if delta == 0 or psi <= 0:
        return None
    z_alpha = float(sp.norm.ppf(1 - alpha / 2))
    z_beta = float(sp.norm.ppf(power))
    n = (z_alpha * math.sqrt(psi) + z_beta * math.sqrt(max(psi - delta * delta, 0.0))) ** 2 / (delta * delta)
    return math.ceil(n)


@dataclass(frozen=True)
class Correlation:
    rho: float | None
    p_value: float | None
    n: int


def spearman(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Spearman's rank correlation with its two-sided p-value (scipy); None when undefined.

    Undefined means fewer than three points or a constant column (every task alike).
    """
    n = len(x)
    if n != len(y):
        raise ValueError("spearman needs two sequences of the same length")
    if n < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return Correlation(None, None, n)
    result = sp.spearmanr(x, y)
    return Correlation(float(result.statistic), float(result.pvalue), n)


@dataclass(frozen=True)
class SplitTest:
    z: float | None
    p_normal: float | None      # one-sided, normal approximation (the SetupAgent paper's test)
    p_exact: float | None       # one-sided Fisher exact test


def rate_lower_after(k_before: int, n_before: int, k_after: int, n_after: int) -> SplitTest:
    """One-sided test of H0 'the rate after is not lower than before' against 'lower after'."""
    if n_before == 0 or n_after == 0:
        return SplitTest(None, None, None)
    pooled = (k_before + k_after) / (n_before + n_after)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n_before + 1 / n_after))
    diff = k_before / n_before - k_after / n_after
    if se == 0:
        z, p_normal = None, None
    else:
        z = diff / se
        p_normal = float(sp.norm.sf(z))
    table = [[k_before, n_before - k_before], [k_after, n_after - k_after]]
    p_exact = float(sp.fisher_exact(table, alternative="greater").pvalue)
    return SplitTest(z, p_normal, p_exact)


def pareto_frontier(points: Sequence[tuple[float, float]]) -> list[bool]:
    """Which (cost, rate) points are not dominated: no other point costs at most as much and
    resolves at least as many, with one of the two strictly better."""
    flags = []
    for i, (cost, rate) in enumerate(points):
        dominated = any(
            (c <= cost and r >= rate) and (c < cost or r > rate)
            for j, (c, r) in enumerate(points) if j != i
        )
        flags.append(not dominated)
    return flags
