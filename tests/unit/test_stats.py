"""The statistics pinned on values worked out by hand (see docs/analysis.md for the formulas)."""

from __future__ import annotations

import math

import pytest

from issuebench.analysis.stats import (
    mcnemar_exact,
    paired_bootstrap_diff,
    paired_sample_size,
    pareto_frontier,
    rate_lower_after,
    spearman,
    wilson,
)


def test_wilson_five_of_ten_is_symmetric_around_half():
    ci = wilson(5, 10)
    assert ci.low == pytest.approx(0.2366, abs=1e-4)
    assert ci.high == pytest.approx(0.7634, abs=1e-4)


def test_wilson_matches_the_course_notes_fourteen_of_twenty():
    # "14 resolved is 70% with a 95% interval of about 48% to 85%"
    ci = wilson(14, 20)
    assert ci.low == pytest.approx(0.4810, abs=1e-4)
    assert ci.high == pytest.approx(0.8545, abs=1e-4)


def test_wilson_edges_stay_inside_unit_interval():
    assert wilson(0, 20).low == 0.0
    assert wilson(0, 20).high == pytest.approx(0.1611, abs=1e-4)
    assert wilson(20, 20).high == 1.0
    assert wilson(0, 0).low == 0.0 and wilson(0, 0).high == 1.0
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_mcnemar_exact_is_a_binomial_test_on_discordant_pairs():
    # 2 * P(X <= 2), X ~ Binomial(12, 1/2) = 2 * (1 + 12 + 66) / 4096
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert mcnemar_exact(2, 10) == pytest.approx(158 / 4096)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    # 6 vs 0: 2 * (1/2)^6
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)


def test_bootstrap_is_seeded_and_pinned():
    a = [1, 1, 0, 1, 0, 1, 1, 0, 1, 1]
    b = [0, 1, 0, 0, 0, 1, 0, 0, 1, 0]
    first = paired_bootstrap_diff(a, b, n_boot=2000, seed=7)
    again = paired_bootstrap_diff(a, b, n_boot=2000, seed=7)
    assert first == again
    assert first.low == pytest.approx(0.1, abs=1e-9)
    assert first.high == pytest.approx(0.7, abs=1e-9)
    # The observed difference (0.4) sits inside; no discordance gives a zero-width interval.
    assert first.low < 0.4 < first.high
    same = paired_bootstrap_diff(a, a, n_boot=500, seed=1)
    assert (same.low, same.high) == (0.0, 0.0)


def test_bootstrap_rejects_unpaired_input():
    with pytest.raises(ValueError):
        paired_bootstrap_diff([1, 0], [1])


def test_paired_sample_size_connor_formula():
    # p10 = 0.2, p01 = 0.1: psi = 0.3, delta = 0.1
    z_a, z_b = 1.959964, 0.841621
    expected = math.ceil((z_a * math.sqrt(0.3) + z_b * math.sqrt(0.3 - 0.01)) ** 2 / 0.01)
    assert expected == 234
    assert paired_sample_size(0.2, 0.1) == 234
    assert paired_sample_size(0.1, 0.1) is None
    # A larger difference needs fewer tasks.
    assert paired_sample_size(0.3, 0.0) < paired_sample_size(0.2, 0.1)


def test_spearman_matches_hand_computed_ranks_with_ties():
    # ranks x: 1..5; ranks y: 1, 2, 3.5, 5, 3.5  -> rho = 8 / sqrt(10 * 9.5)
    c = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    assert c.rho == pytest.approx(8 / math.sqrt(95))
    assert 0 < c.p_value < 1
    assert spearman([1, 2, 3], [3, 2, 1]).rho == pytest.approx(-1.0)
    assert spearman([1, 1, 1, 1], [0, 1, 0, 1]).rho is None


def test_rate_lower_after_one_sided():
    t = rate_lower_after(27, 27, 14, 33)
    assert t.z == pytest.approx(4.770, abs=1e-3)
    assert t.p_normal < 1e-5 and t.p_exact < 1e-4
    # Higher after: no evidence of a drop.
    up = rate_lower_after(3, 10, 8, 10)
    assert up.p_normal > 0.9 and up.p_exact > 0.9


def test_pareto_frontier_matches_the_lab_leaderboard():
    # (cost per task, rate) of the lab's agents: oracle, full, memorizer, repro-std, naive, null
    pts = [(0.1650, 0.70), (0.2643, 0.70), (0.0271, 0.55), (0.0417, 0.50), (0.0009, 0.25), (0.0002, 0.0)]
    assert pareto_frontier(pts) == [True, False, True, False, True, True]
