"""Realistic ``paohuzi score --batch`` lines, generated from a seed, in any of the spellings a
JSON writer produces: the input of the calculator's tests and of its benchmark
(``bench/calculator.py``).

>>> generate_batch_lines(1, 5, "ascii")[0][:31]
'{"hand": "s10 b8 b2 b3 s6 b1 b9'
>>> print(generate_batch_lines(1, 5, "escaped")[0][:22])
{"hand": "\\u5341\\u634c
"""

from __future__ import annotations

import json
import random
from typing import Any

from engine.cards import CARD_CHARS, COPIES, NUM_KINDS, format_cards, parse_cards
from engine.groups import EAT_SHAPES, is_one_five_ten

__all__ = ["SPELLINGS", "generate_batch_lines"]

#: How a line is written: ``utf8`` as ``json.dumps(…, ensure_ascii=False)``; ``escaped`` as
#: ``json.dumps(…)`` (every card a ``\u`` escape); ``ascii`` the cards in ``s1``…``b10``.
SPELLINGS = ("utf8", "escaped", "ascii")

_SENTENCE_SHAPES = tuple(s for s in EAT_SHAPES if not is_one_five_ten(s))


def _random_request(rng: random.Random) -> dict[str, Any] | None:
    """One plausible hu chance: 7 门子 built from the deck, then sometimes spoilt by one card."""
    avail = [COPIES] * NUM_KINDS
    melds: list[str] = []
    hand: list[int] = []
    q = rng.choice((0, 0, 0, 1, 1, 2))
    for _ in range(q):
        face = rng.choice([f for f in range(NUM_KINDS) if avail[f] == COPIES])
        melds.append(f"{rng.choice(('pao', 'ti'))}:{CARD_CHARS[face]}")
        avail[face] = 0
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.6:
            fits = [s for s in _SENTENCE_SHAPES if all(avail[k] >= s.count(k) for k in s)]
            shape = rng.choice(fits)
            for k in shape:
                avail[k] -= 1
            melds.append("chi:" + ",".join(CARD_CHARS[k] for k in shape))
        else:
            face = rng.choice([f for f in range(NUM_KINDS) if avail[f] == COPIES])
            melds.append(f"{rng.choice(('peng', 'peng', 'wei'))}:{CARD_CHARS[face]}")
            avail[face] = 0  # the 4th copy is elsewhere: an own 碰/偎 face is never in hand
    left = 7 - len(melds)
    if q:
        face = rng.choice([f for f in range(NUM_KINDS) if avail[f] >= 2])
        hand += [face, face]
        avail[face] = 0
        left -= 1
    for _ in range(left):
        if rng.random() < 0.12:
            faces = [f for f in range(NUM_KINDS) if avail[f] >= 3 and f not in hand]
            if faces:
                face = rng.choice(faces)
                hand += [face] * 3
                avail[face] = 0
                continue
        fits = [s for s in _SENTENCE_SHAPES if all(avail[k] >= s.count(k) for k in s)]
        if not fits:
            return None
        shape = rng.choice(fits)
        for k in shape:
            avail[k] -= 1
        hand += shape
    if rng.random() < 0.35:  # spoil: swap one card for another face still in the deck
        i = rng.randrange(len(hand))
        avail[hand[i]] += 1
        hand[i] = rng.choice([f for f in range(NUM_KINDS) if avail[f] > 0 and f != hand[i]])
        avail[hand[i]] -= 1
    rng.shuffle(hand)
    req: dict[str, Any] = {"melds": melds}
    if rng.random() < 0.8:
        card = hand.pop()
        req["card"] = CARD_CHARS[card]
        req["source"] = rng.choices(("other", "own", "liang"), (70, 25, 5))[0]
    req = {"hand": "".join(CARD_CHARS[k] for k in hand), **req}
    if any(hand.count(k) >= COPIES for k in hand):
        return None  # a dealt 4-of-a-kind is a 提 on the table, never a hand
    return req


def _ascii(req: dict[str, Any]) -> dict[str, Any]:
    """The request with its cards in ASCII notation (``s1 s2 s3``, ``chi:s1,s2,s3``)."""
    out = dict(req, hand=format_cards(parse_cards(req["hand"]), ascii=True))
    out["melds"] = [
        f"{name}:{','.join(format_cards([k], ascii=True) for k in parse_cards(body))}"
        for name, _, body in (m.partition(":") for m in req["melds"])
    ]
    if "card" in req:
        out["card"] = format_cards(parse_cards(req["card"]), ascii=True)
    return out


def generate_batch_lines(n: int, seed: int = 0, spelling: str = "utf8") -> list[str]:
    """``n`` realistic ``--batch`` input lines, deterministic in ``seed``; the same requests in
    every spelling (:data:`SPELLINGS`).

    About 1 in 3 is spoilt by one card; the rest are 7-门子 hands whose 胡息 decides the win.
    """
    if spelling not in SPELLINGS:
        raise ValueError(f"unknown spelling {spelling!r} (known: {', '.join(SPELLINGS)})")
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        req = _random_request(rng)
        if req is None:
            continue
        if spelling == "utf8":
            out.append(json.dumps(req, ensure_ascii=False))
        else:
            out.append(json.dumps(_ascii(req) if spelling == "ascii" else req))
    return out
