"""Cards as HTML: Chinese faces (一…十 small, 壹…拾 big), the red ones (2, 7, 10) in red.

Pure string building, escaped; the page passes the result to ``st.html``.

>>> h = card_html(1)
>>> h.endswith(">二</span>"), "phz-red" in h, "color:#c62828" in h
(True, True, True)
>>> "phz-red" in card_html(0)
False
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

from engine.cards import card_char, is_red

RED = "#c62828"
_BOX = (
    "display:inline-block;min-width:1.45em;text-align:center;padding:2px 3px;margin:1px;"
    "border:1px solid #9e9e9e;border-radius:4px;background:#fffdf5;font-size:1.15em;"
    "line-height:1.3;font-family:'Noto Sans CJK SC','Noto Sans SC',sans-serif;"
)
_HIDDEN = "background:#6d4c41;color:#6d4c41;"


def card_html(kind: int) -> str:
    red = is_red(int(kind))
    cls = "phz-card phz-red" if red else "phz-card"
    style = _BOX + (f"color:{RED};font-weight:600;" if red else "color:#212121;")
    return f'<span class="{cls}" style="{html.escape(style)}">{card_char(int(kind))}</span>'


def cards_html(kinds: Iterable[int]) -> str:
    return "".join(card_html(k) for k in kinds)


def hidden_html(count: int) -> str:
    """``count`` face-down cards."""
    style = html.escape(_BOX + _HIDDEN)
    return "".join(
        f'<span class="phz-card phz-back" style="{style}">?</span>' for _ in range(count)
    )


def view_cards_html(v: Mapping[str, Any] | None) -> str:
    """A ``cards_view`` dict of :mod:`replay.replayer.views` (``{"text", "kinds", "red"}``)."""
    if not v or not v.get("kinds"):
        return '<span style="color:#9e9e9e">–</span>'
    return cards_html(v["kinds"])


def meld_html(m: Mapping[str, Any]) -> str:
    """A meld of :func:`replay.replayer.views.group_view`: its kind, cards and 胡息."""
    label = html.escape(str(m.get("label", "")))
    if m.get("hidden"):
        body = hidden_html(3)
    else:
        body = view_cards_html(m.get("cards"))
    kind = html.escape(_KIND_LABELS.get(str(m.get("kind")), str(m.get("kind"))))
    return (
        '<span class="phz-meld" style="display:inline-block;margin:2px 8px 2px 0;'
        'padding:2px 4px;border:1px dashed #bdbdbd;border-radius:6px" '
        f'title="{label}">{body}<br><small>{kind} · {int(m.get("huxi") or 0)} 胡息</small></span>'
    )


_KIND_LABELS = {
    "chi": "吃",
    "peng": "碰",
    "wei": "偎",
    "chouwei": "臭偎",
    "pao": "跑",
    "ti": "提",
    "sentence": "一句话",
    "jiao": "绞",
    "kan": "坎",
    "peng_hu": "碰胡",
    "jiang": "将",
}


def kind_label(kind: str) -> str:
    return _KIND_LABELS.get(kind, kind)
