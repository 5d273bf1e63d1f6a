"""The arrays a rule set compiles to: ``(rp, hp)`` of every kernel call.

``rp`` is :func:`engine.fast.state.rule_table` followed by the policies' tables
(:func:`engine.fast.features.policy_table`), ``hp`` the hu search's parameters
(:func:`engine.fast.hu_bridge.hu_params`). One cached function, imported by the play loop, the
search and the verifier alike (a module of its own, so none of them imports another for it).
"""

from __future__ import annotations

import numpy as np

from engine.rules import RuleSet

_CACHE: dict[RuleSet, tuple[np.ndarray, np.ndarray]] = {}


def rule_arrays(rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """(rp, hp) of a rule set, cached."""
    got = _CACHE.get(rules)
    if got is None:
        from engine.fast import state as S
        from engine.fast.features import policy_table
        from engine.fast.hu_bridge import hu_params

        got = (np.concatenate([S.rule_table(rules), policy_table(rules)]), hu_params(rules))
        _CACHE[rules] = got
    return got
