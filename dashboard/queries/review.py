"""Cached reads of stored reviews (replay.store.reviews, replay.analysis.review_rates), keyed by the
store's signature: a review stored since changes the signature, and the page reads it."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import db
from dashboard.queries.hands import hand_log
from dashboard.services import review as svc
from engine.judge import HandReview
from replay.store import open_store
from replay.store.reviews import Key


def _run(root: str, sig: str, run: str) -> Any:
    """The run as the scan of signature ``sig`` found it: its manifest without the shard
    list (the reviews' entries and the parameters are all a review read needs; a 10⁸-hand
    run's whole manifest is 23 MB to parse)."""
    return open_store(root).run_head(db.state_at(sig), run)


@st.cache_data(show_spinner=False, max_entries=64)
def stored_hand_review(
    root: str, sig: str, run: str, hand: int, seats: tuple[int, ...], key: Key
) -> tuple[HandReview | None, tuple[str, ...]]:
    """The stored review of ``seats`` of the hand, or None; and the warnings (a damaged
    review file named)."""
    warnings: list[str] = []
    r = _run(root, sig, run)
    log = hand_log(root, sig, run, hand)
    review = svc.stored_review(r.path, r.manifest, log, seats, key, warnings.append)
    return review, tuple(warnings)


@st.cache_data(show_spinner=False, max_entries=64)
def stored_keys(root: str, sig: str, run: str, hand: int) -> list[Key]:
    """The keys of the stored reviews that hold a seat of the hand, in the manifest's order
    (a played hand's review, made at ``paohuzi review``'s default budget, among them)."""
    from replay.store import reviews as S

    r = _run(root, sig, run)
    out: list[Key] = []
    for e in S.review_entries(r.manifest):
        key = S.Key(int(e["rollouts"]), str(e["rollout_policy"]), int(e["seed"]))
        if key.of(e) and hand in S.coverage_of(e) and key not in out:
            out.append(key)
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def stored_rates(root: str, sig: str, run: str) -> tuple[list[Any], tuple[str, ...]]:
    """The rates of the run's stored reviews per key (replay.analysis.review_rates.stored_rates)."""
    from replay.analysis.review_rates import stored_rates as rates

    warnings: list[str] = []
    r = _run(root, sig, run)
    return rates(r.path, r.manifest, warnings.append), tuple(warnings)


@st.cache_data(show_spinner=False, max_entries=16)
def costliest_stored(root: str, sig: str, run: str, limit: int) -> list[dict[str, Any]]:
    """The costliest decisions of the run's stored reviews (replay.analysis.review_rates)."""
    from replay.analysis.review_rates import costliest_stored as top

    r = _run(root, sig, run)
    return top(r.path, r.manifest, limit)
