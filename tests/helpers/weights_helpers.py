"""Weight tables other than the defaults, and weights files of them, for the tests of
``POLICY@WEIGHTS`` in both engines (engine.policies.weights)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.policies import weights as W

#: Every heuristic parameter moved off its default (flags on), so every term plays differently.
ODD_HEURISTIC: dict[str, float] = {
    "margin": -12.0, "table": 1.3, "hx": 5.5, "discard_term": 1, "full": 9.0, "pair": 7.0,
    "part": 2.5, "out": 0.6, "spill": 0.2, "big": 0.5, "self": 0.2, "kan": 14.0,
    "pair_dead": 0.25, "part_hx": 0.6, "big_extra": 1.0, "seen_w": 0.4, "danger_w": 9.0,
    "hu_risk": 0.8, "threat_floor": 0.01, "threat_hand": 24.0, "p_in_max": 0.8, "stinky_w": 2.0,
    "path_w": 3.0, "path_slack": 5, "ready_max_hand": 17, "ready_w": 25.0, "ready_hx": 0.2,
    "ready_takes": 1,
}  # fmt: skip
#: The heuristic defaults with both flags off (no owed-discard term, no waits of takes).
FLAGS_OFF: dict[str, float] = {
    **W.DEFAULT_HEURISTIC.as_dict(),
    "discard_term": 0,
    "ready_takes": 0,
    "danger_w": 20.0,
}
#: Greedy moved off its defaults.
ODD_GREEDY: dict[str, float] = {
    **W.DEFAULT_GREEDY.as_dict(),
    "margin": -5.0,
    "hx": 9.0,
    "full": 11.0,
    "out": 0.3,
    "spill": 0.05,
    "kan": 9.0,
    "pair_dead": 0.7,
}


#: A learned table with the odd heuristic's feature parameters and every coefficient moved
#: off its default (the new ones nonzero), so every feature counts.
ODD_LEARNED: dict[str, float] = {
    **{k: v for k, v in ODD_HEURISTIC.items() if k not in W.LEARNED_SKIPS},
    **{p.name: p.default for p in W.PARAMS if p.policy == "learned"},
    "d_unseen": -0.6, "d_big": -1.5, "d_danger": -7.0, "d_ready": 22.0, "d_value_stock": 0.4,
    "d_unseen_stock": -0.3, "d_pair": -2.0, "d_loose": 1.5, "d_dead": 0.7, "d_banned": 0.9,
    "d_feed": -3.0, "d_reach_loss": -0.7, "d_path": -2.0, "c_pass": -18.0,
    "c_stinky": -2.2, "c_pass_ready": 30.0, "c_groups": 26.0, "c_hx": 6.0, "c_structure": 1.2,
    "c_owed": -0.8, "c_path": -2.5, "c_take_ready": 35.0, "c_pass_stock": 6.0,
    "c_hx_stock": 2.0, "c_peng": -1.0, "c_structure_stock": -0.3,
    "d_wu": 9.0, "d_dian": 7.0, "d_dian_near": 2.0, "d_hong_near": 1.5, "d_hong": 5.0,
    "d_hongwu": 3.0, "d_duidui": 4.0, "c_wu": 8.0, "c_dian": 6.0, "c_dian_near": -1.0,
    "c_hong_near": 2.5, "c_hong": 4.0, "c_hongwu": 2.0, "c_duidui": 3.5,
}  # fmt: skip


def document(policy: str, values: dict[str, Any], about: str = "a test table") -> dict[str, Any]:
    """A weights file's JSON document."""
    return {"policy": policy, "about": about, "weights": dict(values)}


def write_weights(path: Path, policy: str, values: dict[str, Any]) -> Path:
    """``path`` holding a weights file of ``values`` for ``policy``."""
    path.write_text(json.dumps(document(policy, values)), encoding="utf-8")
    return path
