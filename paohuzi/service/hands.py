"""The hands of a run: a filtered page (``paohuzi hands --json``), a streamed export
(newline-delimited JSON), one hand's replay file (``paohuzi export``) and its state at any
step (``paohuzi replay --format json``)."""

# No ``from __future__ import annotations``: FastAPI reads the endpoints' annotations (their
# bounds are the limits, so they are built per app).

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query
from fastapi.responses import JSONResponse, Response, StreamingResponse

from paohuzi.service import models
from paohuzi.service.caching import NO_STORE
from paohuzi.service.context import (
    DIGITS,
    ERRORS,
    MAX_HAND_ID,
    SIGNED,
    Context,
    HandId,
    RunName,
    line,
    one_of,
)
from paohuzi.service.limits import STREAM_BATCH


def add(app: FastAPI, ctx: Context) -> None:
    """The hands routes on ``app``, their filters' values from the store's codes."""
    outcomes, mingtang_names = ctx.choices["outcome"], ctx.choices["mingtang"]
    Winner = Annotated[int | None, Query(ge=0, le=3, description="Won by this seat."), DIGITS]
    Outcome = Annotated[
        str | None,
        Query(
            pattern=one_of(outcomes),
            json_schema_extra={"enum": outcomes},
            description="With this outcome.",
        ),
    ]
    HuxiMin = Annotated[int | None, Query(ge=-32768, le=32767, description="胡息 ≥ this."), SIGNED]
    HuxiMax = Annotated[int | None, Query(ge=-32768, le=32767, description="胡息 ≤ this."), SIGNED]
    Mingtang = Annotated[
        str | None,
        Query(
            pattern=one_of(mingtang_names),
            json_schema_extra={"enum": mingtang_names},
            description="With this 名堂: pinyin id or name (honghu, 红胡).",
        ),
    ]

    filters = (Winner, Outcome, HuxiMin, HuxiMax, Mingtang)
    _page(app, ctx, *filters)
    _stream(app, ctx, *filters)
    _file(app, ctx)
    _state(app, ctx)


def _page(app: FastAPI, ctx: Context, Winner: Any, Outcome: Any, HuxiMin: Any, HuxiMax: Any,
          Mingtang: Any) -> None:  # fmt: skip
    lim = ctx.lim

    @app.get("/runs/{run}/hands", response_model=models.HandsPage, responses=ERRORS, tags=["hands"])
    def hands(
        run: RunName,
        winner: Winner = None,
        outcome: Outcome = None,
        huxi_min: HuxiMin = None,
        huxi_max: HuxiMax = None,
        mingtang: Mingtang = None,
        limit: Annotated[
            int, Query(ge=1, le=lim.page_max, description="Hands in the page."), DIGITS
        ] = lim.page_default,
        offset: Annotated[
            int,
            Query(ge=0, le=MAX_HAND_ID, description="Matching hands skipped first."),
            DIGITS,
        ] = 0,
        cursor: Annotated[
            int | None,
            Query(ge=0, le=MAX_HAND_ID, description="Only hands with an id ≥ this (next_cursor)."),
            DIGITS,
        ] = None,
    ) -> dict[str, Any]:
        """The hands of the run that match every filter, in hand order (``paohuzi hands
        --json``), one page: ``limit`` hands after skipping ``offset`` matching ones, from
        hand ``cursor`` on. ``next_cursor`` starts the next page."""
        from replay.store import manage

        flt = manage.hand_filter(
            winner=winner,
            outcome=outcome,
            huxi_min=huxi_min,
            huxi_max=huxi_max,
            mingtang=mingtang,
            since=cursor,
        )
        st = ctx.store()
        ctx.known(st, run)
        rows, more = ctx.timed(
            st, lambda state, con: manage.query_hands(st, run, flt, limit, offset, con, state)
        )
        rows = [manage.named_hand(r) for r in rows]
        return {
            "run": run,
            "hands": rows,
            "more": more,
            "next_cursor": rows[-1]["hand_id"] + 1 if more and rows else None,
            "limit": limit,
            "offset": offset,
        }


def _stream(app: FastAPI, ctx: Context, Winner: Any, Outcome: Any, HuxiMin: Any, HuxiMax: Any,
            Mingtang: Any) -> None:  # fmt: skip
    lim = ctx.lim

    @app.get(
        "/runs/{run}/hands.ndjson",
        responses={
            200: {
                "description": "One hand (a row of paohuzi hands --json) per line.",
                "content": {
                    "application/x-ndjson": {
                        "schema": {"$ref": "#/components/schemas/HandRow"},
                    }
                },
            },
            **ERRORS,
        },
        response_class=StreamingResponse,
        tags=["hands"],
    )
    def hands_ndjson(
        run: RunName,
        winner: Winner = None,
        outcome: Outcome = None,
        huxi_min: HuxiMin = None,
        huxi_max: HuxiMax = None,
        mingtang: Mingtang = None,
        since: Annotated[
            int | None, Query(ge=0, le=MAX_HAND_ID, description="Only hand ids ≥ this."), DIGITS
        ] = None,
        until: Annotated[
            int | None, Query(ge=0, le=MAX_HAND_ID, description="Only hand ids ≤ this."), DIGITS
        ] = None,
        max: Annotated[
            int,
            Query(ge=1, le=lim.stream_max, description="At most this many lines."),
            DIGITS,
        ] = lim.stream_default,
    ) -> StreamingResponse:
        """The matching hands as newline-delimited JSON, streamed in hand order: at most
        ``max`` lines; fewer means the end, exactly ``max``: ask again from ``since`` = the
        last hand id + 1. An error after the first line ends the stream with one
        ``{"error": …}`` line. No ETag (``Cache-Control: no-store``): a stream may be
        cut."""
        from replay.store import manage

        flt = manage.hand_filter(
            winner=winner,
            outcome=outcome,
            huxi_min=huxi_min,
            huxi_max=huxi_max,
            mingtang=mingtang,
            since=since,
            until=until,
        )
        st = ctx.store()
        ctx.known(st, run)
        batches, con, budget = ctx.timed_open(
            st, lambda state, con: manage.stream_hands(st, run, flt, max, con, STREAM_BATCH, state)
        )

        def lines() -> Iterator[bytes]:
            try:
                while True:
                    try:
                        with budget.running():
                            batch = next(batches, None)
                    except Exception as e:
                        text = budget.message if budget.spent else ctx.say(e)
                        yield line({"error": text})
                        return
                    if batch is None:
                        return
                    yield b"".join(line(manage.named_hand(r)) for r in batch)
            finally:
                con.close()

        # no validator: the headers leave before the body, which an error may cut
        return StreamingResponse(
            lines(), media_type="application/x-ndjson", headers={"Cache-Control": NO_STORE}
        )


def _file(app: FastAPI, ctx: Context) -> None:
    @app.get(
        "/runs/{run}/hands/{hand}",
        response_model=models.ReplayFile,
        responses={
            200: {
                "description": "The replay file (JSON, or the text spelling with format=text).",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            },
            **ERRORS,
        },
        tags=["hands"],
    )
    def hand_file(
        run: RunName,
        hand: HandId,
        format: Annotated[
            Literal["json", "text"], Query(description="json, or the text spelling (.phz).")
        ] = "json",
    ) -> Response:
        """The hand as a replay file (docs/REPLAY_FILE.md): the bytes ``paohuzi export RUN
        HAND --format json`` (or ``text``) writes."""
        from replay.replayer import replay_file

        st = ctx.store()
        ctx.known(st, run)
        text, _ = replay_file.export_hand(st, run, hand, format)
        media = "application/json" if format == "json" else "text/plain; charset=utf-8"
        return Response(text.encode("utf-8"), media_type=media)


def _state(app: FastAPI, ctx: Context) -> None:
    @app.get(
        "/runs/{run}/hands/{hand}/state",
        response_model=models.StateView,
        responses=ERRORS,
        tags=["hands"],
    )
    def hand_state(
        run: RunName,
        hand: HandId,
        step: Annotated[
            int | None,
            Query(
                ge=-100_000,
                le=100_000,
                description="Decisions applied (0: after the deal; negative: from the end;"
                " default: the end).",
            ),
            SIGNED,
        ] = None,
        seat: Annotated[
            int | None, Query(ge=0, le=3, description="Only what this seat sees."), DIGITS
        ] = None,
    ) -> Response:
        """The table at ``step`` from ``seat``'s view: ``paohuzi replay RUN HAND --step K
        --seat S --format json``."""
        from replay.replayer.hand import load_hand, replayer_at
        from replay.replayer.views import state_view

        st = ctx.store()
        ctx.known(st, run)
        log = load_hand(st, run, hand)
        rp = replayer_at(log, step, seat)
        return JSONResponse(state_view(rp.state, seat, log=log))
