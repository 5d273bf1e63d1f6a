"""The tuned parameters as a vector for CMA-ES.

A parameter ``p`` with start value ``v₀`` is searched as ``x = v / s`` with the scale
``s = max(|v₀|, |p.default|, 1e-3)``: every coordinate starts near ±1 and one step size
``sigma0`` is the same relative change for all of them. The bounds are the table's ranges
(``p.low / s … p.high / s``); a vector becomes a table by clipping to them and rounding the
``int`` parameters (:meth:`Space.table`). Flags (0 or 1) are not searched: they keep their
start value.

>>> from engine.policies import weights as W
>>> sp = Space.of("heuristic", W.DEFAULT_HEURISTIC, ("margin", "danger_w"))
>>> sp.x0
[-1.0, 1.0]
>>> t = sp.table([-2.0, 0.5])
>>> t["margin"], t["danger_w"], t["hx"] == W.DEFAULT_HEURISTIC["hx"]
(-50.0, 2.0, True)
>>> Space.of("heuristic", W.DEFAULT_HEURISTIC, ("discard_term",))
Traceback (most recent call last):
...
engine.errors.InvalidNotation: --params: 'discard_term' is a flag (0 or 1); flags are not tuned
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.errors import InvalidNotation
from engine.policies import weights as W

#: Parameters left out of the default search: ``ready_max_hand`` buys strength with speed
#: (the wait search grows with it), and a tuned fast policy must stay fast.
NOT_BY_DEFAULT = ("ready_max_hand",)


def default_params(policy: str) -> tuple[str, ...]:
    """What ``tune`` searches unless ``--params`` says: every non-flag parameter of
    ``policy`` but :data:`NOT_BY_DEFAULT`."""
    return tuple(
        p.name for p in W.policy_params(policy) if p.kind != "flag" and p.name not in NOT_BY_DEFAULT
    )


def parse_params(text: str | None, policy: str) -> tuple[str, ...]:
    """``--params``: names separated by commas, or ``all`` (every non-flag parameter), or None
    for :func:`default_params`; in table order, each once."""
    if text is None:
        return default_params(policy)
    own = {p.name: p for p in W.policy_params(policy)}
    if text.strip().lower() == "all":
        return tuple(n for n, p in own.items() if p.kind != "flag")
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise InvalidNotation("--params: name at least one parameter (or 'all')")
    for n in names:
        if n not in own:
            extra = " (a heuristic parameter)" if n in W.BY_NAME else ""
            raise InvalidNotation(f"--params: unknown parameter {n!r} for {policy}{extra}")
    chosen = set(names)
    return tuple(n for n in own if n in chosen)


@dataclass(frozen=True)
class Space:
    """The searched parameters of ``start`` (a full table of ``policy``)."""

    policy: str
    start: W.PolicyWeights
    names: tuple[str, ...]
    scales: tuple[float, ...]

    @classmethod
    def of(cls, policy: str, start: W.PolicyWeights, names: Sequence[str]) -> Space:
        if start.policy != policy:
            raise InvalidNotation(f"the start table is {start.policy}'s, not {policy}'s")
        own = {p.name for p in W.policy_params(policy)}
        if not names:
            raise InvalidNotation("--params: name at least one parameter (or 'all')")
        scales = []
        for n in names:
            if n not in own:
                raise InvalidNotation(f"--params: unknown parameter {n!r} for {policy}")
            p = W.BY_NAME[n]
            if p.kind == "flag":
                raise InvalidNotation(f"--params: {n!r} is a flag (0 or 1); flags are not tuned")
            scales.append(max(abs(start[n]), abs(p.default), 1e-3))
        return cls(policy, start, tuple(names), tuple(scales))

    @property
    def dim(self) -> int:
        return len(self.names)

    @property
    def x0(self) -> list[float]:
        return [self.start[n] / s for n, s in zip(self.names, self.scales)]

    @property
    def bounds(self) -> tuple[list[float], list[float]]:
        """Lower and upper bounds of every coordinate (CMA-ES's ``bounds`` option)."""
        lo = [W.BY_NAME[n].low / s for n, s in zip(self.names, self.scales)]
        hi = [W.BY_NAME[n].high / s for n, s in zip(self.names, self.scales)]
        return lo, hi

    def table(self, x: Sequence[float]) -> W.PolicyWeights:
        """The full table of vector ``x``: the searched parameters from it (clipped to their
        range, ``int`` ones rounded, half away from zero), the others from the start."""
        if len(x) != self.dim:
            raise ValueError(f"a vector of {len(x)} for {self.dim} parameters")
        values = list(self.start.values)
        for n, s, xi in zip(self.names, self.scales, x):
            p = W.BY_NAME[n]
            v = min(max(float(xi) * s, p.low), p.high)
            if p.kind == "int":
                v = float(int(v + 0.5) if v >= 0 else -int(-v + 0.5))
            values[W.INDEX[n]] = round(v, 6) + 0.0  # 6 decimals: a table that reads well
        return W.PolicyWeights(self.policy, tuple(values))
