"""Statistics of recorded runs: the queries and numbers behind ``paohuzi stats``.

No click and no printing here (``replay.cli.stats`` renders); the dashboard can reuse
:func:`run_stats`. Every query is parameterised: the run name is a ``?`` placeholder, and the
only SQL put together in Python is built from this module's own constant fragments.

Intervals are 95 % (``replay.analysis.intervals``): Wilson for rates, normal for means. Observations
are not all independent, so each statistic names its **cluster**: a hand, or with
``--duplicate`` a deal, whose rotations share the deck and the dealer. Rates then count
clusters as the independent units (Wilson on the effective size, conservative) and means use
the cluster-robust ratio estimator. The automatic 3提/5坎 天胡 depends on the deck and the
dealer alone, so it is counted over rotation 0 only, beside its exact probability
(``replay.analysis.exact``).

>>> import tempfile
>>> from replay.store import open_store
>>> run_stats(open_store(tempfile.mkdtemp()))
Traceback (most recent call last):
...
replay.store.layout.StoreError: no runs in the store ...
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.errors import CorruptLog
from engine.mingtang import LEVELS
from engine.rules import RuleSet
from engine.state import OutcomeKind
from replay.analysis import exact
from replay.analysis.intervals import ClusterSums, Moments, cluster_mean_ci, paired_diff_ci, wilson
from replay.record import schema
from replay.store.layout import StoreError
from replay.store.runs import Run, Store
from replay.store.scan import rules_label

#: Quantiles shown for the winning 胡息, 等, 番 and score: the inverse empirical distribution
#: function (DuckDB ``quantile_disc``), i.e. the ⌈n·q⌉-th smallest value, always a real value.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)

_HU, _HUANG, _AUTO, _TIAN = (
    int(OutcomeKind.HU),
    int(OutcomeKind.HUANGZHUANG),
    int(OutcomeKind.TIANHU_AUTO),
    int(OutcomeKind.TIANHU),
)


# ---------------------------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n`` with a 95 % interval ``[lo, hi]`` on k/n."""

    k: int
    n: int
    lo: float
    hi: float

    @property
    def p(self) -> float:
        return self.k / self.n if self.n else math.nan

    @classmethod
    def of(cls, k: int, n: int, clusters: int | None = None) -> Rate:
        """Wilson's interval; with ``clusters`` < n, on the effective size (clusters)."""
        k, n = int(k or 0), int(n or 0)
        d = n if clusters is None else int(clusters or 0)
        if n == 0 or d == 0:
            return cls(k, n, 0.0, 1.0)
        lo, hi = wilson(k * d / n, d) if d < n else wilson(k, n)
        return cls(k, n, lo, hi)


@dataclass(frozen=True)
class Mean:
    """A mean of ``n`` observations with its 95 % interval (NaN below two clusters)."""

    mean: float
    lo: float
    hi: float
    n: int

    @classmethod
    def of(cls, sums: ClusterSums) -> Mean:
        m, lo, hi = cluster_mean_ci(sums)
        return cls(m, lo, hi, int(sums.m))


@dataclass(frozen=True)
class Distribution:
    """Mean, quantiles (:data:`QUANTILES`), min and max of a value over winning hands."""

    mean: Mean
    quantiles: tuple[float, ...]
    min: float
    max: float


@dataclass(frozen=True)
class GroupRow:
    """Win rate and mean score of a seat, a policy, or the dealer / non-dealers."""

    key: str
    win: Rate
    score: Mean


@dataclass(frozen=True)
class PairedRow:
    """Policy ``a`` minus policy ``b`` over the same duplicate deals (``deals`` of them):
    the difference of win rates and of mean scores per seat."""

    a: str
    b: str
    deals: int
    win_diff: Mean
    score_diff: Mean


@dataclass(frozen=True)
class MingtangRow:
    """A 名堂: how many wins carried it, as a share of all wins."""

    pinyin: str
    name: str
    share: Rate


@dataclass(frozen=True)
class AutoTianhu:
    """Observed 3提/5坎 天胡 over distinct deals, beside the exact per-deal probabilities."""

    any: Rate
    dealer: Rate
    non_dealer: Rate
    exact_any: float
    exact_dealer: float
    exact_non_dealer: float
    exact_bound: float  # exact_any and exact_non_dealer are exact within this (RULES §9)


@dataclass
class RunStats:
    """Everything ``paohuzi stats`` shows for one run."""

    run: str
    status: str
    rules: str
    players: int
    policies: tuple[str, ...]
    duplicate: bool
    rotations: int
    cluster: str  # "hand" or "deal": the independent unit of the intervals
    hands: int
    deals: int
    outcomes: dict[str, Rate] = field(default_factory=dict)
    seats: list[GroupRow] = field(default_factory=list)
    dealer: list[GroupRow] = field(default_factory=list)
    policy: list[GroupRow] = field(default_factory=list)
    paired: list[PairedRow] = field(default_factory=list)
    winning: dict[str, Distribution] = field(default_factory=dict)
    zimo: Rate | None = None
    mingtang: list[MingtangRow] = field(default_factory=list)
    auto_tianhu: AutoTianhu | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: NaN becomes None, rates carry their proportion."""
        return _jsonable(self)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Rate):
        return {"k": obj.k, "n": obj.n, "p": _jsonable(obj.p), "lo": obj.lo, "hi": obj.hi}
    if hasattr(obj, "__dataclass_fields__"):
        return {k: _jsonable(getattr(obj, k)) for k in asdict(obj)}
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# ---------------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------------


def _paired_rows(rows: Sequence[Sequence[Any]]) -> list[PairedRow]:
    """Paired win-rate and score differences from ``(a, b, deals, Σdw, Σdw², Σdy, Σdy²)`` rows
    (the raw-hands and the summary paths give the same rows)."""
    out = []
    for a, b, n, dw, dww, dy, dyy in rows:
        w = paired_diff_ci(Moments(float(dw), float(dww), int(n)))
        y = paired_diff_ci(Moments(float(dy), float(dyy), int(n)))
        out.append(PairedRow(a, b, int(n), Mean(*w, int(n)), Mean(*y, int(n))))
    return out


def run_stats(
    store: Store,
    names: Sequence[str] = (),
    con: Any = None,
    on_skip: Callable[[str], None] | None = None,
    summaries: bool = True,
) -> list[RunStats]:
    """The statistics of the named runs (all runs when ``names`` is empty), in that order.

    Every run is checked first (:func:`replay.store.scan.scan_store`: sizes, rows, hand ids,
    SHA-256 of each shard). A damaged run asked for by name is refused (``CorruptLog`` naming
    the shard); without names a damaged run is left out and ``on_skip`` gets its one-line
    reason, so no number is ever computed from a damaged shard. Raises ``StoreError`` for a
    missing store or an unknown run; both are one-line ``ValueError``s.

    A run whose every shard has a summary file (``paohuzi index``) is answered from the
    summary tables (:mod:`replay.analysis.summary`), with the same numbers; ``summaries=False``
    reads the hands of every run.
    """
    if not store.root.is_dir():
        raise StoreError(f"no store at {store.root} (run 'paohuzi simulate' first)")
    runs = [store.run(n) for n in dict.fromkeys(names)] or store.runs()
    if not runs:
        raise StoreError(f"no runs in the store {store.root} (run 'paohuzi simulate' first)")
    state = store.scan()
    healthy = []
    for run in runs:
        info = state.run(run.name)
        problem = info.problem if info is not None else f"run {run.name} is unreadable"
        if problem is None:
            healthy.append(run)
        elif names:
            raise CorruptLog(f"run {run.name} is damaged and left out: {problem}")
        elif on_skip is not None:
            on_skip(f"run {run.name} is damaged and left out: {problem}")
    if not healthy:
        raise CorruptLog("every run of the store is damaged (see 'paohuzi verify')")
    import duckdb

    own = con is None
    try:
        if own:
            con = store.connect(state)
        from replay.analysis.summary import summarized

        use = {
            run.name
            for run in healthy
            if summaries and (info := state.run(run.name)) is not None and summarized(info)
        }
        return [summarize(con, run, run.name in use) for run in healthy]
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CorruptLog(f"cannot read the store {store.root}: {first}") from None
    finally:
        if own and con is not None:
            con.close()


def summarize(con: Any, run: Run, from_summary: bool = False) -> RunStats:
    """One run's statistics from the catalog views on ``con`` (the run already checked):
    from its ``hands``, or from its summary tables when ``from_summary``."""
    m = run.manifest
    params = m.get("params", {})
    rules = run.rules
    duplicate = bool(params.get("duplicate"))
    rotations = int(params.get("rotations") or 1)
    q: _Queries | _SummaryQueries
    if from_summary:
        q = _SummaryQueries(
            con, run.name, rules.players, list(params.get("policies") or ()), rotations
        )
    else:
        q = _Queries(con, run.name, rules.players, "deal_id" if duplicate else "hand_id")
    hands, deals = q.totals()
    try:
        listed = int(m.get("progress", {}).get("hands", run.n_hands))
    except (TypeError, ValueError):
        listed = run.n_hands
    if hands < listed:
        raise CorruptLog(
            f"run {run.name}: the manifest lists {listed} hands, the shards hold {hands}"
        )
    st = RunStats(
        run=run.name,
        status=run.status,
        rules=rules_label(m.get("rules", {}), m.get("rules_preset")),
        players=rules.players,
        policies=tuple(params.get("policies") or ()),
        duplicate=duplicate,
        rotations=rotations,
        cluster="deal" if duplicate else "hand",
        hands=int(hands),
        deals=int(deals),
    )
    if not hands:
        return st
    st.outcomes.update(q.outcomes())
    st.seats.extend(q.groups("'seat ' || seat", sort_sql="seat"))
    st.dealer.extend(q.groups("CASE WHEN seat = dealer THEN 'dealer' ELSE 'non-dealer' END"))
    if len(set(st.policies)) > 1:
        st.policy.extend(q.groups("policy"))
        if duplicate:
            st.paired.extend(q.paired())
    st.winning.update(q.winning())
    wins = st.outcomes["win"].k
    if wins:
        st.zimo = q.zimo()
        st.mingtang.extend(q.mingtang(_mingtang_codes(rules)))
    st.auto_tianhu = q.auto_tianhu()
    return st


def _mingtang_codes(rules: RuleSet) -> list[dict[str, Any]]:
    """The 名堂 the rules can award: Hunan up to the 花样 level, Luzhou its score mode."""
    out = []
    for c in schema.codes()["mingtang"]:
        if c["pinyin"].startswith("lz_") != rules.luzhou:
            continue
        if rules.luzhou:
            if c["level"] == rules.luzhou_di_mode:
                out.append(c)
        elif LEVELS[c["level"]] <= LEVELS[rules.huayang]:
            out.append(c)
    return out


class _Queries:
    """The SQL of one run. ``h`` is the run's hands; ``s`` one row per playing seat per hand
    (the 4-player 坐醒 sits out) with its policy, score change and whether it won."""

    def __init__(self, con: Any, run: str, players: int, cluster: str) -> None:
        self.con = con
        self.run = run
        self.cluster = cluster
        seats = " UNION ALL ".join(
            f"SELECT hand_id, deal_id, rotation, dealer, {i} AS seat, policy_{i} AS policy,"
            f" delta_{i} AS delta, coalesce(winner = {i}, false) AS won, {cluster} AS c FROM h"
            for i in range(players)
        )
        sitter = "WHERE seat <> (dealer + 2) % 4" if players == 4 else ""
        self.with_ = (
            "WITH h AS (SELECT * FROM hands WHERE run = ?),"
            f" s AS (SELECT * FROM ({seats}) {sitter})"
        )

    def all(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return self.con.execute(f"{self.with_} {sql}", [self.run, *params]).fetchall()

    def totals(self) -> tuple[int, int]:
        hands, deals = self.one("SELECT count(*), count(DISTINCT deal_id) FROM h")
        return int(hands), int(deals)

    def one(self, sql: str, *params: Any) -> tuple[Any, ...]:
        return self.all(sql, *params)[0]

    def outcomes(self) -> dict[str, Rate]:
        items = {
            "win": f"outcome <> {_HUANG}",
            "hu": f"outcome = {_HU}",
            "tianhu": f"outcome = {_TIAN}",
            "tianhu_auto": f"outcome = {_AUTO}",
            "huangzhuang": f"outcome = {_HUANG}",
        }
        cols = ", ".join(f"count(*) FILTER (WHERE {cond})" for cond in items.values())
        n, d, *ks = self.one(f"SELECT count(*), count(DISTINCT {self.cluster}), {cols} FROM h")
        return {name: Rate.of(k, n, d) for name, k in zip(items, ks)}

    def groups(self, key_sql: str, sort_sql: str = "NULL") -> list[GroupRow]:
        """Win rate and mean score per group of seat rows, sorted by ``sort_sql`` then the
        key; both are this module's constants."""
        rows = self.all(
            f"SELECT key, sum(n), sum(won), count(*), sum(y), sum(y * y), sum(y * n),"
            f" sum(n * n), min(o) FROM (SELECT {key_sql} AS key, c, count(*) AS n,"
            f" sum(won::INT) AS won, sum(delta) AS y, min({sort_sql}) AS o FROM s GROUP BY 1, 2)"
            f" GROUP BY key ORDER BY min(o), key"
        )
        out = []
        for key, n, won, d, y, yy, ym, mm, _ in rows:
            sums = ClusterSums(int(d), float(y), float(n), float(yy), float(ym), float(mm))
            out.append(GroupRow(str(key), Rate.of(won, n, d), Mean.of(sums)))
        return out

    def paired(self) -> list[PairedRow]:
        rows = self.all(
            "SELECT a.policy, b.policy, count(*), sum(a.w - b.w), sum((a.w - b.w) ** 2),"
            " sum(a.y - b.y), sum((a.y - b.y) ** 2)"
            " FROM (SELECT deal_id, policy, avg(won::INT) AS w, avg(delta) AS y FROM s"
            "       GROUP BY deal_id, policy) a"
            " JOIN (SELECT deal_id, policy, avg(won::INT) AS w, avg(delta) AS y FROM s"
            "       GROUP BY deal_id, policy) b"
            " ON a.deal_id = b.deal_id AND a.policy < b.policy"
            " GROUP BY 1, 2 ORDER BY 1, 2"
        )
        return _paired_rows(rows)

    def winning(self) -> dict[str, Distribution]:
        out = {}
        for col in ("huxi", "deng", "fan", "score"):
            row = self.one(
                f"SELECT count(*), sum(y), sum(m), sum(y * y), sum(y * m), sum(m * m)"
                f" FROM (SELECT c, sum({col}) AS y, count({col}) AS m FROM"
                f"       (SELECT {self.cluster} AS c, {col} FROM h WHERE {col} IS NOT NULL)"
                f"       GROUP BY c)"
            )
            if not row[0]:
                continue
            qs, lo, hi = self.one(
                f"SELECT quantile_disc({col}, ?::DOUBLE[]), min({col}), max({col}) FROM h"
                f" WHERE {col} IS NOT NULL",
                list(QUANTILES),
            )
            sums = ClusterSums(int(row[0]), *(float(v) for v in row[1:]))
            out[col] = Distribution(Mean.of(sums), tuple(float(v) for v in qs), lo, hi)
        return out

    def zimo(self) -> Rate:
        n, k, d = self.one(
            f"SELECT count(*), count(*) FILTER (WHERE zimo), count(DISTINCT {self.cluster})"
            f" FROM h WHERE outcome <> {_HUANG}"
        )
        return Rate.of(k, n, d)

    def mingtang(self, codes: list[dict[str, Any]]) -> list[MingtangRow]:
        bits = [int(c["bit"]) for c in codes]
        n, d = self.one(
            f"SELECT count(*), count(DISTINCT {self.cluster}) FROM h WHERE outcome <> {_HUANG}"
        )
        rows = dict(
            self.all(
                f"SELECT b, count(*) FILTER (WHERE (mingtang >> b) & 1 = 1)"
                f" FROM h, (SELECT unnest(?::INTEGER[]) AS b) WHERE outcome <> {_HUANG}"
                f" GROUP BY b",
                bits,
            )
        )
        (pinghu,) = self.one(
            f"SELECT count(*) FILTER (WHERE mingtang = 0) FROM h WHERE outcome <> {_HUANG}"
        )
        out = [
            MingtangRow(c["pinyin"], c["name"], Rate.of(rows.get(c["bit"], 0), n, d)) for c in codes
        ]
        out.append(MingtangRow("pinghu", "平胡", Rate.of(pinghu, n, d)))
        return out

    def auto_tianhu(self) -> AutoTianhu:
        # Deck and dealer decide it: one count per deal (rotation 0), no clustering needed.
        n, k, kd = self.one(
            f"SELECT count(*), count(*) FILTER (WHERE outcome = {_AUTO}),"
            f" count(*) FILTER (WHERE outcome = {_AUTO} AND winner = dealer)"
            f" FROM h WHERE rotation = 0"
        )
        o = exact.auto_tianhu_odds()
        return AutoTianhu(
            any=Rate.of(k, n),
            dealer=Rate.of(kd, n),
            non_dealer=Rate.of(k - kd, n),
            exact_any=o.per_hand,
            exact_dealer=o.dealer,
            exact_non_dealer=o.non_dealer,
            exact_bound=o.triple_bound,
        )


class _SummaryQueries:
    """The numbers of :class:`_Queries` from the run's summary tables
    (:mod:`replay.analysis.summary`): the same values, without reading the hands. Every
    statement is this class's constant text; the run, the masks and the bits are
    parameters."""

    def __init__(
        self, con: Any, run: str, players: int, policies: Sequence[str], rotations: int
    ) -> None:
        from replay.analysis import summary

        self.con = con
        self.run = run
        per = summary.seat_policies(policies, players, rotations)
        self.mask = summary.seat_mask(per, players)
        self.hmask = summary.hand_mask(per)

    def all(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, [self.run, *params]).fetchall()

    def one(self, sql: str, *params: Any) -> tuple[Any, ...]:
        return self.all(sql, *params)[0]

    def _d(self, what: str, key: str = "") -> int:
        (d,) = self.one(
            "SELECT coalesce(sum(d), 0) FROM summary_clusters WHERE run = ? AND what = ?"
            " AND key = ? AND mask = ?",
            what,
            key,
            self.hmask if what.startswith("hand") else self.mask,
        )
        return int(d)

    def totals(self) -> tuple[int, int]:
        (n,) = self.one("SELECT coalesce(sum(n), 0) FROM summary_hands WHERE run = ?")
        return int(n), self._d("hand")

    def outcomes(self) -> dict[str, Rate]:
        rows = dict(
            self.all("SELECT outcome, sum(n) FROM summary_hands WHERE run = ? GROUP BY outcome")
        )
        n, d = sum(int(v) for v in rows.values()), self._d("hand")
        ks = {
            "win": n - int(rows.get(_HUANG, 0)),
            "hu": int(rows.get(_HU, 0)),
            "tianhu": int(rows.get(_TIAN, 0)),
            "tianhu_auto": int(rows.get(_AUTO, 0)),
            "huangzhuang": int(rows.get(_HUANG, 0)),
        }
        return {name: Rate.of(k, n, d) for name, k in ks.items()}

    def groups(self, key_sql: str, sort_sql: str = "NULL") -> list[GroupRow]:
        # the three groupings of summarize(): by seat, dealer / non-dealer, policy
        what = {"'seat ' || seat": "g:seat", "policy": "g:policy"}.get(key_sql, "g:dealer")
        rows = self.all(
            "SELECT key, n, won, d, y, yy, ym, mm FROM summary_clusters WHERE run = ?"
            " AND what = ? AND mask = ? AND n > 0 ORDER BY key",
            what,
            self.mask,
        )
        out = []
        for key, n, won, d, y, yy, ym, mm in rows:
            sums = ClusterSums(int(d), float(y), float(n), float(yy), float(ym), float(mm))
            out.append(GroupRow(str(key), Rate.of(won, n, d), Mean.of(sums)))
        return out

    def paired(self) -> list[PairedRow]:
        rows = self.all(
            "SELECT a, b, d, dw, dww, dy, dyy FROM summary_paired WHERE run = ? AND mask = ?"
            " ORDER BY a, b",
            self.mask,
        )
        return _paired_rows(rows)

    def winning(self) -> dict[str, Distribution]:
        from replay.analysis.summary import quantile_disc

        out = {}
        for col in ("huxi", "deng", "fan", "score"):
            row = self.one(
                "SELECT coalesce(sum(d), 0), sum(y), sum(m), sum(yy), sum(ym), sum(mm)"
                " FROM summary_clusters WHERE run = ? AND what = ? AND mask = ?",
                f"win:{col}",
                self.mask,
            )
            if not row[0]:
                continue
            hist = self.all(
                "SELECT v, sum(n) FROM summary_values WHERE run = ? AND metric = ?"
                " GROUP BY v ORDER BY v",
                col,
            )
            values, counts = [int(v) for v, _ in hist], [int(c) for _, c in hist]
            qs = tuple(float(quantile_disc(values, counts, q) or 0) for q in QUANTILES)
            sums = ClusterSums(int(row[0]), *(float(v) for v in row[1:]))
            out[col] = Distribution(Mean.of(sums), qs, values[0], values[-1])
        return out

    def zimo(self) -> Rate:
        n, k = self.one(
            "SELECT coalesce(sum(n), 0), coalesce(sum(n) FILTER (WHERE zimo), 0)"
            f" FROM summary_hands WHERE run = ? AND outcome <> {_HUANG}"
        )
        return Rate.of(k, n, self._d("win"))

    def mingtang(self, codes: list[dict[str, Any]]) -> list[MingtangRow]:
        rows = {
            int(b): int(n)
            for b, n in self.all(
                "SELECT bit, sum(n) FROM summary_mingtang WHERE run = ? GROUP BY bit"
            )
        }
        n, d = rows.get(-2, 0), self._d("win")
        out = [
            MingtangRow(c["pinyin"], c["name"], Rate.of(rows.get(int(c["bit"]), 0), n, d))
            for c in codes
        ]
        out.append(MingtangRow("pinghu", "平胡", Rate.of(rows.get(-1, 0), n, d)))
        return out

    def auto_tianhu(self) -> AutoTianhu:
        n, k, kd = self.one(
            "SELECT coalesce(sum(n), 0),"
            f" coalesce(sum(n) FILTER (WHERE outcome = {_AUTO}), 0),"
            f" coalesce(sum(n) FILTER (WHERE outcome = {_AUTO} AND winner = dealer), 0)"
            " FROM summary_hands WHERE run = ? AND rotation = 0"
        )
        o = exact.auto_tianhu_odds()
        return AutoTianhu(
            any=Rate.of(k, n),
            dealer=Rate.of(kd, n),
            non_dealer=Rate.of(k - kd, n),
            exact_any=o.per_hand,
            exact_dealer=o.dealer,
            exact_non_dealer=o.non_dealer,
            exact_bound=o.triple_bound,
        )
