"""The shuffle is uniform: χ² over (face, position) and over adjacent-position pairs.

The sample is fixed (seeded), so the test is deterministic; the 99.9 % level is chosen so that
a correct shuffle passes with room to spare and a biased one fails (the power check below).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.cards import full_deck
from engine.deck import derive_seed, shuffle_deck, splitmix64
from replay.analysis.intervals import chi2_sf, chi_square_gof

SEED = 20240601
N_DECKS = 20_000
FACES, POSITIONS = 20, 80
LEVEL = 0.001  # reject at the 99.9 % level


@pytest.fixture(scope="module")
def decks() -> np.ndarray:
    """N_DECKS decks, one per hand seed, derived as the simulator derives them."""
    return np.array(
        [shuffle_deck(derive_seed(SEED, "deal", i)) for i in range(N_DECKS)], dtype=np.int8
    )


def face_position_chi2(decks: np.ndarray) -> tuple[float, int, float]:
    """(statistic, df, p) for the 20 × 80 table of face counts by deck position.

    The table's margins are fixed (each position holds one card, each face 4 copies), and one
    deck's indicator matrix has covariance (80/79)·p·(I − J/20) ⊗ (I − J/80) with p = 1/20,
    so Pearson's X² over the n-deck table is (80/79)·χ²((20−1)(80−1)) under uniform shuffles,
    not χ²(1501) itself: its mean is 1520, not 1501. The statistic is scaled back by 79/80.
    """
    n = len(decks)
    idx = decks.astype(np.int64) * POSITIONS + np.arange(POSITIONS)
    table = np.bincount(idx.ravel(), minlength=FACES * POSITIONS)
    expected = n / FACES
    x2 = float(((table - expected) ** 2).sum() / expected) * (POSITIONS - 1) / POSITIONS
    df = (FACES - 1) * (POSITIONS - 1)
    return x2, df, chi2_sf(x2, df)


def pair_chi2(decks: np.ndarray, p: int, q: int):
    """χ² of the joint (face at p, face at q) against 4·3/(80·79) same, 4·4/(80·79) different."""
    obs = np.bincount(decks[:, p].astype(np.int64) * FACES + decks[:, q], minlength=FACES**2)
    same, diff = 12 / 6320, 16 / 6320
    probs = [same if a == b else diff for a in range(FACES) for b in range(FACES)]
    return chi_square_gof(obs.tolist(), probs)


def test_face_position_uniform(decks: np.ndarray) -> None:
    x2, df, p = face_position_chi2(decks)
    assert p > LEVEL, f"shuffle not uniform over positions: X²={x2:.1f}, df={df}, p={p:.2e}"


@pytest.mark.parametrize(("p", "q"), [(0, 1), (59, 60), (60, 61), (0, 79), (40, 41)])
def test_position_pairs_uniform(decks: np.ndarray, p: int, q: int) -> None:
    # Adjacent positions across the seat boundaries, the 亮张 (60) and the top of the stock (61).
    r = pair_chi2(decks, p, q)
    assert r.p_value > LEVEL, (
        f"positions {p},{q}: X²={r.statistic:.1f}, df={r.df}, p={r.p_value:.2e}"
    )


def test_shuffle_test_has_power() -> None:
    # Sattolo's algorithm (j < i instead of j ≤ i) never leaves a card where it was: a classic
    # off-by-one. The same statistic on a smaller sample must reject it outright.
    def sattolo(seed: int) -> list[int]:
        deck, state = full_deck(), seed
        for i in range(len(deck) - 1, 0, -1):
            state, x = splitmix64(state)
            j = x % i
            deck[i], deck[j] = deck[j], deck[i]
        return deck

    biased = np.array([sattolo(derive_seed(SEED, "biased", i)) for i in range(5_000)], np.int8)
    _, _, p = face_position_chi2(biased)
    assert p < 1e-6


def test_derived_seeds_differ() -> None:
    seeds = {derive_seed(SEED, "deal", i) for i in range(10_000)}
    assert len(seeds) == 10_000
