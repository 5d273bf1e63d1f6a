"""Policies (bots) by name, each a :class:`~engine.policy.Policy` (``act(observation,
legal_actions, rng) -> action``; re-exported here). Built-ins: ``random``, ``greedy``, ``heuristic``, ``learned`` (:mod:`engine.policies.learned`)
and ``search@N[/POLICY]`` (determinized rollouts, :mod:`engine.policies.search_policy`);
``greedy@WEIGHTS`` / ``heuristic@WEIGHTS`` / ``learned@WEIGHTS`` play another table of their parameters (a shipped set or a JSON file,
:mod:`engine.policies.weights`); others load as ``module:Class``.

>>> load_policy("random").name
'random'
>>> load_policy("heuristic@default").name
'heuristic@default'
>>> load_policy("nope")
Traceback (most recent call last):
...
engine.errors.InvalidNotation: unknown policy 'nope' (built-in: random, greedy, heuristic, learned; or module:Class)
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence

from engine.errors import InvalidNotation, did_you_mean
from engine.policies import weights as _weights
from engine.policy import Policy

__all__ = [
    "BUILTIN",
    "BUILT_IN_SPECS",
    "Policy",
    "PluginRefused",
    "Tables",
    "check_spec",
    "is_plugin",
    "load_policies",
    "load_policy",
    "refuse_plugin",
    "table_spec",
]

BUILTIN = {
    "random": "engine.policies.random_policy:RandomPolicy",
    "greedy": "engine.policies.greedy:GreedyPolicy",
    "heuristic": "engine.policies.heuristic:HeuristicPolicy",
    "learned": "engine.policies.learned:LearnedPolicy",
}

#: The names a misspelt policy is held to (:func:`engine.errors.did_you_mean`).
NAMES = (*BUILTIN, "search")

#: Recorded tables by canonical spec (``heuristic@tuned.json`` → its table), as a run's
#: manifest holds them; a spec found here is not read from its file again.
Tables = Mapping[str, _weights.PolicyWeights]


def table_spec(spec: str) -> str | None:
    """The ``POLICY@WEIGHTS`` whose table a seat's policy ``spec`` plays: the spec itself, or
    the rollout policy of a ``search@N/POLICY@WEIGHTS`` (canonical); None for a policy that
    plays no table. Runs record the table of each (their manifest's ``params.weights``).

    >>> table_spec("heuristic@tuned-hunan"), table_spec("search@8/learned@hunan"), table_spec("search@8")
    ('heuristic@tuned-hunan', 'learned@hunan', None)
    """
    if _weights.is_weighted_spec(spec):
        return spec
    search = importlib.import_module("engine.policies.search_policy")
    return search.rollout_table_spec(spec) if search.is_search_spec(spec) else None  # type: ignore[no-any-return]


class PluginRefused(InvalidNotation):
    """A ``module:Class`` plug-in where none is accepted, refused before anything is
    imported (:func:`load_policy` with ``plugins=False``)."""


#: What a policy spec may be where no plug-in is accepted (the end of a refusal).
BUILT_IN_SPECS = "random, greedy, heuristic, learned, POLICY@WEIGHTS, search@N[/POLICY]"


def is_plugin(spec: str) -> bool:
    """Whether :func:`load_policy` would import a module to build ``spec``: a
    ``module:Class`` plug-in (neither a built-in name, nor ``search@…``, whose rollout policy
    is built-in or a table, nor ``POLICY@WEIGHTS``). Nothing is imported to tell.

    >>> [is_plugin(s) for s in ("heuristic", "search@8/learned@hunan", "x:Y", "evil:Bot@w")]
    [False, False, True, False]
    """
    t = spec.strip()
    if t.lower() == "search" or t.lower().startswith("search@") or "@" in t:
        return False
    return t.lower() not in BUILTIN and ":" in t


def refuse_plugin(spec: str, where: str = "", why: str = "") -> None:
    """:class:`PluginRefused` when ``spec`` is a ``module:Class`` plug-in (:func:`is_plugin`):
    one line, ``where`` first (``--opponents``, a file's name), before anything is imported.

    >>> refuse_plugin("x:Y", "--opponents", "play's bots are built-in")
    Traceback (most recent call last):
    ...
    engine.policies.PluginRefused: --opponents: policy 'x:Y' is a module:Class plug-in, not accepted here (play's bots are built-in); nothing was imported (built-in: random, greedy, heuristic, learned, POLICY@WEIGHTS, search@N[/POLICY])
    """
    if is_plugin(spec):
        raise PluginRefused(
            f"{f'{where}: ' if where else ''}policy {spec.strip()[:80]!r} is a module:Class"
            f" plug-in, not accepted here{f' ({why})' if why else ''}; nothing was imported"
            f" (built-in: {BUILT_IN_SPECS})"
        )


def check_spec(spec: str) -> str:
    """``spec`` (stripped) if it names a built-in policy — a name of :data:`BUILTIN`,
    ``search@N[/POLICY]``, ``POLICY@WEIGHTS`` — checked with no module of its imported and no
    weights file read (a spec read from a data file); :class:`InvalidNotation` with one line
    otherwise, :class:`PluginRefused` for a ``module:Class``.

    >>> check_spec("search@8/learned@hunan"), check_spec(" Heuristic ")
    ('search@8/learned@hunan', 'Heuristic')
    """
    refuse_plugin(spec)
    t = spec.strip()
    if t.lower() == "search" or t.lower().startswith("search@"):
        importlib.import_module("engine.policies.search_policy").parse_spec(t)
    elif "@" in t:
        _weights.parse_spec(t)
    elif t.lower() not in BUILTIN:
        raise InvalidNotation(
            f"unknown policy {t[:80]!r} (built-in: {BUILT_IN_SPECS}){did_you_mean(t, NAMES)}"
        )
    return t


def load_policy(spec: str, tables: Tables | None = None, *, plugins: bool = True) -> Policy:
    """A policy by built-in name, ``search@N[/POLICY]`` (:mod:`engine.policies.search_policy`;
    a ``POLICY@WEIGHTS`` rollout policy's table as below),
    ``greedy@WEIGHTS`` / ``heuristic@WEIGHTS`` (:mod:`engine.policies.weights`; its table
    from ``tables`` if it is there, else from its file or shipped set) or ``module:Class``
    (instantiated with no arguments). ``plugins=False``: a ``module:Class`` is refused
    (:class:`PluginRefused`) before its module is imported — wherever the spec may come
    from anything but the command line of a command that plays plug-ins."""
    if not plugins:
        refuse_plugin(spec)
    if spec.strip().lower().startswith("search@") or spec.strip().lower() == "search":
        search = importlib.import_module("engine.policies.search_policy")
        _, rollout = search.parse_spec(spec)
        return search.SearchPolicy(spec, load_policy(rollout, tables, plugins=plugins))  # type: ignore[no-any-return]
    if "@" in spec:
        key = _weights.canonical(spec)
        table = (tables or {}).get(key) or _weights.load_spec(spec)
        mod_name, _, cls_name = BUILTIN[table.policy].partition(":")
        weighted = getattr(importlib.import_module(mod_name), cls_name)
        return weighted.from_weights(table, key)  # type: ignore[no-any-return]
    target = BUILTIN.get(spec.strip().lower(), spec.strip())
    mod_name, sep, cls_name = target.partition(":")
    if not sep or not mod_name or not cls_name:
        raise InvalidNotation(
            f"unknown policy {spec!r} (built-in: {', '.join(BUILTIN)}; or module:Class)"
            f"{did_you_mean(spec.strip(), NAMES)}"
        )
    try:
        cls = getattr(importlib.import_module(mod_name), cls_name)
    except Exception as e:  # ImportError, AttributeError, or whatever the module raises
        raise InvalidNotation(f"cannot load policy {spec!r}: {type(e).__name__}: {e}") from None
    if not isinstance(cls, type):
        raise InvalidNotation(f"policy {spec!r}: {cls_name} is not a class")
    try:
        policy = cls()
    except Exception as e:
        raise InvalidNotation(f"cannot create policy {spec!r}: {type(e).__name__}: {e}") from None
    if not isinstance(policy, Policy):
        raise InvalidNotation(f"policy {spec!r} has no name/act")
    return policy


def load_policies(
    specs: str | Sequence[str], n_seats: int, tables: Tables | None = None, *, plugins: bool = True
) -> list[Policy]:
    """One policy per seat from a comma list (a single name is used for every seat);
    ``tables`` and ``plugins`` as for :func:`load_policy`."""
    names = [s for s in (specs.split(",") if isinstance(specs, str) else specs) if s.strip()]
    if len(names) == 1:
        names = names * n_seats
    if len(names) != n_seats:
        raise InvalidNotation(f"{len(names)} policies given for {n_seats} seats: {specs!r}")
    return [load_policy(n, tables, plugins=plugins) for n in names]
