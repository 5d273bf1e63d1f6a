"""The service's response models: the OpenAPI schema (``/openapi.json``) of every answer.

They describe what the library already produces (``paohuzi runs --json``, ``paohuzi hands
--json``, ``paohuzi stats --json``, ``paohuzi export --format json``, ``paohuzi replay
--format json``); the values are never rebuilt from them. Every model forbids fields it
does not list, so the schema says exactly what an answer holds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorBody(Strict):
    error: str = Field(description="What went wrong, in one line.")


class Health(Strict):
    status: Literal["ok"]
    store: bool = Field(description="Whether the data directory exists.")


class Version(Strict):
    paohuzi: str = Field(description="The installed paohuzi version.")
    api: int = Field(description="The version of this API (1).")
    view_version: int = Field(description="Version of the state view (replay --format json).")
    replay_format: str
    replay_version: int
    schema_version: int = Field(description="The store's table schema version written now.")


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


class RunRow(Strict):
    """A row of ``paohuzi runs --json``, and whether the run's shards pass the checks."""

    run: str
    bytes: int = Field(description="Bytes on disk of the run folder.")
    status: str = Field(description="The manifest's status (unreadable if it cannot be read).")
    state: str = Field(description="complete, being written, stopped, interrupted, failed …")
    rules: str | None
    policies: str | None
    hands: int | None
    created: str | None
    imported: bool | None
    error: str | None = Field(None, description="Why the manifest cannot be read.")
    damaged: bool = Field(description="Left out of the catalog, statistics and hand lists.")
    problem: str | None = Field(description="Why the run is damaged (the first bad shard).")


class RunDetail(Strict):
    """One run's manifest facts (as the integrity scan reads them)."""

    run: str
    status: str
    state: str
    damaged: bool
    problem: str | None
    summary_problem: str | None = Field(
        description="Why its summary tables are not used (figures then come from its hands)."
    )
    hands: int
    hands_target: int
    events: int
    hand_ranges: list[list[int]] = Field(description="Merged [first, last] hand ids.")
    rules: str
    rules_preset: str | None
    rules_fingerprint: str | None
    rule_set: dict[str, Any] = Field(description="Every switch of the run's rule set.")
    players: int
    level: str
    min_huxi: int
    policies: list[str] = Field(description="Per seat, rotation 0.")
    duplicate: bool
    rotations: int
    seed: int | None
    session_length: int | None
    created: str
    updated: str
    schema_version: int | None
    code_version: str | None
    bytes: int = Field(description="Bytes of the listed shard files.")


# ---------------------------------------------------------------------------------------------
# Hands
# ---------------------------------------------------------------------------------------------


class HandRow(Strict):
    """A row of ``paohuzi hands --json``."""

    hand_id: int
    session: int
    dealer: int
    outcome: Literal["hu", "huangzhuang", "tianhu_auto", "tianhu"]
    winner: int | None
    source: str | None
    huxi: int | None
    fan: int | None
    score: int | None
    mingtang: list[str] = Field(description="名堂 pinyin ids (docs/LOG_FORMAT.md §5.5).")
    n_events: int


class HandsPage(Strict):
    """``paohuzi hands --json`` (run, hands, more) and where the next page starts."""

    run: str
    hands: list[HandRow]
    more: bool = Field(description="More hands match after this page.")
    next_cursor: int | None = Field(
        description="Pass as cursor= for the next page (the hand id after the last row)."
    )
    limit: int
    offset: int


# ---------------------------------------------------------------------------------------------
# Replay file (docs/REPLAY_FILE.md, the JSON spelling)
# ---------------------------------------------------------------------------------------------


class ReplaySource(Strict):
    run: str
    hand_id: int


class ReplayRules(Strict):
    preset: str
    set: list[str]
    full: dict[str, Any]


class ReplayEvent(Strict):
    seq: int
    seat: int
    action: str
    code: int
    forced: bool
    options: list[str]


class ReplayFile(Strict):
    """A hand as ``paohuzi export --format json`` writes it."""

    format: Literal["paohuzi-replay"]
    version: int
    title: str
    source: ReplaySource | None
    rules: ReplayRules
    dealer: int
    deck: str
    record: dict[str, int] | None
    policies: list[str | None] | None
    events: list[ReplayEvent]
    outcome: dict[str, str] | None


# ---------------------------------------------------------------------------------------------
# State view (replay.replayer.views.state_view)
# ---------------------------------------------------------------------------------------------


class Cards(Strict):
    text: str
    kinds: list[int]
    red: int


class Meld(Strict):
    kind: str
    label: str
    hidden: bool
    cards: Cards | None
    huxi: int


class SeatHand(Strict):
    hidden: bool
    count: int
    text: str | None = None
    kinds: list[int] | None = None
    red: int | None = None


class SeatView(Strict):
    seat: int
    dealer: bool
    sits_out: bool
    xia: int | None
    hand: SeatHand
    melds: list[Meld]
    huxi: int
    quads: int
    right: Cards
    discards: Cards
    deciding: bool


class CardOnOffer(Strict):
    card: Cards | None
    hidden: bool
    source: str | None
    owner: int | None


class ActionView(Strict):
    code: int
    text: str


class DeciderOptions(Strict):
    seat: int
    n_legal: int
    options: list[ActionView] | None


class Chosen(Strict):
    seat: int | None  # null: a choice in a claim, private to another seat
    code: int | None
    text: str | None
    hidden: bool | None = None


class DecisionView(Strict):
    phase: str
    deciders: list[int]
    declared: list[int]
    forced: bool
    options: list[DeciderOptions]
    chosen: Chosen | None


class LastAction(Strict):
    seat: int | None  # null: another seat's pass or pending claim, not shown in a seat's view
    step: int
    code: int | None
    text: str | None  # "偎 (face down)": another seat's 偎
    hidden: bool | None = None


class MingtangFan(Strict):
    name: str
    fan: int


class Settlement(Strict):
    seat: int
    delta: int


class OutcomeView(Strict):
    kind: str
    winner: int | None
    source: str | None
    card: Cards | None
    from_seat: int | None
    deltas: list[int]
    settlement: list[Settlement]
    stock_left: int
    decomposition: list[Meld] | None = None
    option: Any = None
    huxi: int | None = None
    deng: int | None = None
    mingtang: list[MingtangFan] | None = None
    fan: int | None = None
    score: int | None = None
    zimo: bool | None = None
    tianhu: bool | None = None


class StateView(Strict):
    """The table at a step, as ``paohuzi replay RUN HAND --step K --seat S --format json``."""

    view_version: int
    viewer: int | None
    run: str | None
    hand_id: int | None
    step: int
    n_steps: int | None
    rules: str
    players: int
    dealer: int
    sitter: int | None
    stock_left: int
    liang: Cards | None
    liang_in_hand: bool
    bottom: Cards | None
    card: CardOnOffer | None
    seats: list[SeatView]
    decision: DecisionView | None
    last: LastAction | None
    outcome: OutcomeView | None
    stock: Cards | None = Field(None, description="Only in the view of every hand (no seat).")


# ---------------------------------------------------------------------------------------------
# Statistics (replay.analysis.stats.RunStats.to_dict)
# ---------------------------------------------------------------------------------------------


class Rate(Strict):
    k: int
    n: int
    p: float | None
    lo: float | None
    hi: float | None


class Mean(Strict):
    mean: float | None
    lo: float | None
    hi: float | None
    n: int


class GroupRow(Strict):
    key: str
    win: Rate
    score: Mean


class PairedRow(Strict):
    a: str
    b: str
    deals: int
    win_diff: Mean
    score_diff: Mean


class Winning(Strict):
    mean: Mean
    quantiles: list[float | None]
    min: float | None
    max: float | None


class MingtangRow(Strict):
    pinyin: str
    name: str
    share: Rate


class AutoTianhu(Strict):
    any: Rate
    dealer: Rate
    non_dealer: Rate
    exact_any: float
    exact_dealer: float
    exact_non_dealer: float
    exact_bound: float


class ReviewRateRow(Strict):
    """One (policy, kind) row of the stored reviews' rates (replay.analysis.review_rates.RateRow)."""

    policy: str
    kind: str
    decisions: int
    hands: int
    blunder: Rate
    mistake: Rate
    inaccuracy: Rate
    best: Rate
    score_loss: Mean
    win_loss: Mean


class StoredReviewRates(Strict):
    """The rates of a run's stored reviews under one key (replay.analysis.review_rates.StoredRates)."""

    rollouts: int
    rollout_policy: str
    seed: int
    hands: int
    decisions: int
    rates: list[ReviewRateRow]


class RunStats(Strict):
    """One run of ``paohuzi stats --json``."""

    run: str
    status: str
    rules: str
    players: int
    policies: list[str]
    duplicate: bool
    rotations: int
    cluster: Literal["hand", "deal"]
    hands: int
    deals: int
    outcomes: dict[str, Rate]
    seats: list[GroupRow]
    dealer: list[GroupRow]
    policy: list[GroupRow]
    paired: list[PairedRow]
    winning: dict[str, Winning]
    zimo: Rate | None
    mingtang: list[MingtangRow]
    auto_tianhu: AutoTianhu | None
    reviews: list[StoredReviewRates] = Field(
        description="The rates of the run's stored reviews, per review key (docs/REVIEW.md)."
    )


class Stats(Strict):
    """``paohuzi stats --json`` (``runs``) and the warnings it prints on stderr."""

    runs: list[RunStats]
    warnings: list[str] = Field(
        description="Runs left out as damaged, summary tables not used: one line each."
    )


# ---------------------------------------------------------------------------------------------
# Import (replay.record.importing.import_hands)
# ---------------------------------------------------------------------------------------------

# IngestHand and IngestAnswer: the names these models have in the OpenAPI document (its
# components), from the time importing was called ingest; kept, since a client generated
# from the document names its types after them.


class IngestHand(Strict):
    """What became of one replay file of the request, in input order."""

    index: int = Field(description="Its position in the request, from 0.")
    line: int | None = Field(description="Its line in a JSON-lines batch (null: one file).")
    status: Literal["accepted", "refused"]
    hand_id: int | None = Field(description="Its hand id in the run, when accepted.")
    reason: (
        Literal[
            "malformed",
            "too_long",
            "unknown_rules",
            "other_rules",
            "illegal",
            "outcome_differs",
            "duplicate",
            "unverifiable",
        ]
        | None
    ) = Field(description="Why it was refused (docs/SERVICE.md).")
    event: int | None = Field(description="The event at fault (illegal), from 0.")
    error: str | None = Field(description="Why it was refused, in one line.")


class IngestAnswer(Strict):
    """The verdict on every replay file of the request; the accepted ones are one new shard
    of the run (``paohuzi import --jsonl --json`` prints the same object)."""

    run: str
    accepted: int
    refused: int
    shard: int | None = Field(description="The shard written (null: no hand accepted).")
    hands: list[IngestHand]
    catalog_problem: str | None = Field(
        description="Why the catalog was not refreshed (the hands are stored all the same)."
    )
