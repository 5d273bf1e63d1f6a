"""Every worked example of RULES.md §15 about hu evaluation and scoring, one test each.

Builders read like the rule book: table groups as in §15 (``吃[一二三] 碰伍 跑五 偎肆 提三``),
hands and cards in card notation. "Card X by B" is Source.OTHER_DRAW, "by A" Source.OWN_DRAW.
"""

from __future__ import annotations

import re

import pytest

from engine.cards import parse_card, parse_cards, to_counts
from engine.groups import Group, GroupKind
from engine.hu import HuContext, HuResult, NoWin, Source, evaluate_auto_tianhu, evaluate_hu
from engine.melds import parse_meld
from engine.rules import RuleSet, find_rules
from engine.scoring import luzhou_deng, settle

HUNAN = find_rules("hunan")
BASIC = find_rules("hunan-basic")
FULL = find_rules("hunan-full")
LUZHOU = find_rules("luzhou")
LUZHOU_A = LUZHOU.with_overrides(["luzhou_di_mode=a"])

OTHER, OWN, LIANG, DEALER, DISCARD = (
    Source.OTHER_DRAW,
    Source.OWN_DRAW,
    Source.LIANG_OTHER,
    Source.LIANG_DEALER,
    Source.DISCARD,
)

_TABLE_RE = re.compile(r"(吃)\[([^\]]+)\]|(碰|偎|臭偎|跑|提)(.)")


def table(text: str) -> list[Group]:
    """Table groups in §15 notation: ``吃[一二三] 碰伍 偎玖 跑五 提三``."""
    out = []
    for m in _TABLE_RE.finditer(text):
        if m.group(1):
            out.append(parse_meld("chi:" + ",".join(m.group(2))))
        else:
            out.append(parse_meld(f"{m.group(3)}:{m.group(4)}"))
    return out


def hu(
    tab: str,
    hand: str,
    card: str | None,
    source: Source = OTHER,
    rules: RuleSet = HUNAN,
    **flags: bool,
) -> HuResult:
    return evaluate_hu(
        rules,
        table(tab),
        parse_cards(hand),
        None if card is None else parse_card(card),
        HuContext(source, **flags),
    )


def groups_text(r: HuResult) -> list[str]:
    return sorted(str(g) for g in r.groups)


def assert_win(
    r: HuResult,
    huxi: int,
    deng: int,
    score: int,
    mingtang: tuple[tuple[str, int], ...] = (),
    fan: int = 1,
) -> None:
    assert r.win, r
    assert r.reason is None
    assert (r.huxi, r.deng, r.mingtang, r.fan, r.score) == (huxi, deng, mingtang, fan, score)
    assert len(r.groups) == 7
    assert sum(r.group_huxi) == r.huxi


# --- Example 1: 平胡 and 自摸 (§15 Ex. 1, §11.2, §11.4) -------------------------------------

EX1 = ("吃[一二三] 碰伍", "壹贰叁 四五六 七八九 陆柒捌 贰柒", "拾")


def test_example_01_pinghu() -> None:
    r = hu(*EX1)
    assert_win(r, 18, 2, 2)
    assert r.option == "F" and not r.zimo
    assert groups_text(r) == sorted(
        ["吃[一二三]", "碰伍", "壹贰叁", "贰柒拾", "四五六", "七八九", "陆柒捌"]
    )
    assert dict(zip(map(str, r.groups), r.group_huxi)) == {
        "吃[一二三]": 3,
        "碰伍": 3,
        "壹贰叁": 6,
        "贰柒拾": 6,
        "四五六": 0,
        "七八九": 0,
        "陆柒捌": 0,
    }
    assert settle(r.score, 0, (0, 1, 2), 3) == (4, -2, -2)


def test_example_01z_zimo() -> None:
    r = hu(*EX1, source=OWN)
    assert_win(r, 18, 3, 3)
    assert r.zimo
    assert settle(r.score, 0, (0, 1, 2), 3) == (6, -3, -3)


def test_example_01_four_player_sitter_pays_nothing() -> None:
    # §15 Ex. 1, §13: the same numbers on the 4-player table; the sitter (seat 2) pays 0.
    r = hu(*EX1, rules=find_rules("hunan-4p"))
    assert_win(r, 18, 2, 2)
    assert settle(r.score, 0, (0, 1, 3), 4) == (4, -2, 0, -2)


# --- Example 2: below the threshold (§10.1 B) -------------------------------------------------


def test_example_02_below_threshold() -> None:
    r = hu("吃[一二三] 碰伍", "四五六 四五六 七八九 陆柒捌 贰柒", "拾")
    assert not r.win
    assert r.reason == NoWin.BELOW_MIN
    assert r.huxi == 12  # 3 + 3 + 6


# --- Example 3: 跑 needs a 将 (§10.1 C) ------------------------------------------------------


def test_example_03_pao_needs_jiang() -> None:
    r = hu("吃[一二三] 跑伍", "壹贰叁 四五六 七八九 贰柒 捌捌", "拾")
    assert_win(r, 24, 4, 4)
    assert "将捌捌" in groups_text(r)
    assert "跑伍" in groups_text(r)


# --- Example 4: a 坎 cannot be split (§6.3, §10.3 step 3) -------------------------------------


def test_example_04_kan_cannot_be_split() -> None:
    r = hu("吃[一二三] 跑伍", "壹贰叁 四五六 七八九 贰柒 六六", "拾")
    assert not r.win
    assert r.reason == NoWin.NO_SPLIT
    assert r.huxi is None


def test_example_04a_popaohu_keeps_kan() -> None:
    # 破跑胡 with a 坎: option K has no partition, option F keeps 坎肆 and uses the drawn 肆.
    r = hu("", "三四五六七八 壹贰贰叁 肆肆肆 伍陆柒柒捌玖拾", "肆")
    assert_win(r, 18, 2, 2)
    assert r.option == "F"
    assert groups_text(r) == sorted(
        ["坎肆", "三四五", "六七八", "壹贰叁", "贰柒拾", "肆伍陆", "柒捌玖"]
    )


def test_example_04b_no_hu_either_option() -> None:
    # Option F gives 6, option K gives 9: below 15; splitting the 坎 would wrongly give 15.
    r = hu("", "一二三三五六七七 壹壹贰贰叁叁叁伍伍陆陆柒", "叁")
    assert not r.win
    assert r.reason == NoWin.BELOW_MIN
    assert r.huxi == 9
    assert r.option == "K"


# --- Example 5: 破跑胡 preempting one's own forced 跑 (§10.3 option P declined) ---------------

EX5_TABLE = "碰捌 吃[壹贰叁] 吃[四五六]"


def test_example_05_popaohu() -> None:
    r = hu(EX5_TABLE, "贰柒拾 一二三 六七八 柒玖", "捌")
    assert_win(r, 18, 2, 2)
    assert r.option == "F" and not r.zimo
    assert "柒捌玖" in groups_text(r) and "碰捌" in groups_text(r)


# --- Example 6: 跑胡 (§10.3 option P) ---------------------------------------------------------


def test_example_06_paohu() -> None:
    r = hu(EX5_TABLE, "贰柒拾 六七八 一二三 九九", "捌")
    assert_win(r, 24, 4, 4)
    assert r.option == "P"
    assert "跑捌" in groups_text(r) and "将九九" in groups_text(r)


def test_example_06z_paohu_zimo() -> None:
    r = hu(EX5_TABLE, "贰柒拾 六七八 一二三 九九", "捌", source=OWN)
    assert_win(r, 24, 5, 5)
    assert r.option == "P" and r.zimo


# --- Example 7: pair + revealed card (C8) and the own-draw trap (§10.3 step 1) ----------------

EX7 = ("吃[壹贰叁] 吃[贰柒拾] 吃[一二三]", "四五六 陆柒捌 肆伍陆 九九", "九")


def test_example_07_pair_plus_revealed_card_is_peng() -> None:
    r = hu(*EX7)
    assert_win(r, 16, 1, 1)
    assert Group(GroupKind.PENG_HU, (8, 8, 8)) in r.groups


def test_example_07z_own_draw_onto_pair_is_wei() -> None:
    r = hu(*EX7, source=OWN)
    assert not r.win
    assert r.reason == NoWin.OWN_PAIR


# --- Example 8: 红胡 and 海底 (§11.3) ---------------------------------------------------------

EX8 = ("吃[贰柒拾] 吃[二七十] 碰拾", "壹贰叁 一二三 七八九 四五", "六")


def test_example_08_red_hu() -> None:
    r = hu(*EX8)
    assert_win(r, 21, 3, 6, (("红胡", 2),), 2)


def test_example_08h_red_hu_haidi_half() -> None:
    r = hu(*EX8, haidi=True)
    assert_win(r, 21, 3, 12, (("红胡", 2), ("海底", 2)), 4)


def test_example_08hb_red_hu_haidi_basic() -> None:
    # 基本花样 has no 海底.
    r = hu(*EX8, rules=BASIC, haidi=True)
    assert_win(r, 21, 3, 6, (("红胡", 2),), 2)


def test_example_01h_pinghu_haidi() -> None:
    # 平胡海底: 海底 alone is not a 名堂 (§11.3), 番 1.
    r = hu(*EX1, haidi=True)
    assert_win(r, 18, 2, 2)


def test_example_01hz_pinghu_haidi_zimo() -> None:
    # C33: 自摸 is no 名堂, so a 自摸 海底 hu with nothing else is still 平胡海底 (番 1).
    r = hu(*EX1, source=OWN, haidi=True)
    assert_win(r, 18, 3, 3)


# --- Example 9: 点胡 ---------------------------------------------------------------------------


def test_example_09_dian_hu() -> None:
    r = hu("偎玖 碰叁 吃[一二三]", "八八八 四五六 肆伍陆 三四", "五")
    assert_win(r, 15, 1, 3, (("点胡", 3),), 3)
    assert groups_text(r) == sorted(
        ["偎玖", "碰叁", "吃[一二三]", "坎八", "三四五", "四五六", "肆伍陆"]
    )


# --- Example 10: 乌胡 + 对对胡 (C20) ----------------------------------------------------------

EX10 = ("跑五 偎肆 碰叁 碰八", "玖玖玖 九九 六六", "六")


def test_example_10_wu_hu_duidui_half() -> None:
    r = hu(*EX10)
    # The pair is worth 10 (C20); the extra 番 is booked on 对对胡 so the items add up.
    assert_win(r, 23, 3, 30, (("乌胡", 5), ("对对胡", 5)), 10)
    assert groups_text(r) == sorted(["跑五", "偎肆", "碰叁", "碰八", "坎玖", "碰胡六", "将九九"])
    assert settle(r.score, 0, (0, 1, 2), 3) == (60, -30, -30)


def test_example_10_wu_hu_duidui_full() -> None:
    r = hu(*EX10, rules=FULL)
    assert_win(r, 23, 3, 30, (("乌胡", 5), ("对对胡", 5)), 10)


def test_example_10b_wu_hu_basic() -> None:
    r = hu(*EX10, rules=BASIC)
    assert_win(r, 23, 3, 15, (("乌胡", 5),), 5)


# --- Example 11: 红乌 --------------------------------------------------------------------------


def test_example_11_hong_wu() -> None:
    r = hu("跑柒 碰贰 吃[壹贰叁]", "拾拾拾 十十 七八九 四四", "十")
    assert_win(r, 25, 4, 16, (("红乌", 4),), 4)
    assert groups_text(r) == sorted(
        ["跑柒", "碰贰", "吃[壹贰叁]", "坎拾", "碰胡十", "七八九", "将四四"]
    )


# --- Example 12: 红胡 + 对对胡 ----------------------------------------------------------------

EX12 = ("碰贰 偎拾 跑七", "五五五 捌捌捌 陆陆 一一", "一")


def test_example_12_red_hu_duidui_half() -> None:
    r = hu(*EX12)
    assert_win(r, 25, 4, 24, (("红胡", 2), ("对对胡", 4)), 6)
    assert groups_text(r) == sorted(["碰贰", "偎拾", "跑七", "坎五", "坎捌", "碰胡一", "将陆陆"])


def test_example_12b_red_hu_basic() -> None:
    r = hu(*EX12, rules=BASIC)
    assert_win(r, 25, 4, 8, (("红胡", 2),), 2)


# --- Example 13: automatic 天胡, three 提 (§9 step 2, §11.5, C6, C7) ---------------------------


def test_example_13_auto_tianhu_three_ti() -> None:
    cards = parse_cards("五五五五 捌捌捌捌 十十十 十 一二三 壹贰叁 八 九 玖")
    assert len(cards) == 21
    r = evaluate_auto_tianhu(HUNAN, cards)
    assert r is not None and r.win and r.tianhu and r.zimo
    assert (r.huxi, r.deng, r.mingtang, r.fan, r.score) == (39, 23, (), 1, 23)
    assert sorted(map(str, r.groups)) == sorted(["提五", "提捌", "提十", "一二三", "壹贰叁"])
    assert settle(r.score, 0, (0, 1, 2), 3) == (46, -23, -23)
    for rules in (BASIC, FULL):  # "any" level: no 名堂 applies
        rr = evaluate_auto_tianhu(rules, cards)
        assert rr is not None and rr.score == 23


# --- Example 14: automatic 天胡, five 坎 (a 提 counted as 坎) ---------------------------------


def test_example_14_auto_tianhu_five_kan() -> None:
    cards = parse_cards("三三三三 陆陆陆 九九九 壹壹壹 拾拾拾 二七五八")
    r = evaluate_auto_tianhu(HUNAN, cards)
    assert r is not None and r.win
    assert (r.huxi, r.deng, r.mingtang, r.fan, r.score) == (30, 17, (), 1, 17)


def test_example_14_counter_two_ti_two_kan_is_no_tianhu() -> None:
    cards = parse_cards("三三三三 陆陆陆陆 九九九 壹壹壹 一二四五七八")
    assert evaluate_auto_tianhu(HUNAN, cards) is None


# --- Example 15: optional hu on the 亮张 (§9 step 4, C4, C5) ---------------------------------


def test_example_15_liang_hu_non_dealer() -> None:
    r = hu("", "壹贰叁 贰柒拾 一二三 二七十 四五六 七八九 肆伍", "陆", source=LIANG)
    assert_win(r, 18, 9, 9)
    assert r.tianhu and r.zimo


def test_example_15d_liang_hu_dealer_pair_plus_liang_is_kan() -> None:
    hand = "一一 二七十 贰柒拾 壹贰叁 四五六 七八九 肆伍陆"
    r = hu("", hand, "一", source=DEALER)
    assert_win(r, 18, 9, 9)
    assert r.option == "0" and r.tianhu and r.zimo
    assert "坎一" in groups_text(r)
    # The same 21 cards as a dealt hand without a separate hu card (card None).
    r2 = hu("", hand + "一", None, source=DEALER)
    assert (r2.win, r2.huxi, r2.score, r2.groups) == (True, 18, 9, r.groups)


def test_example_15e_liang_hu_dealer_ti_counts() -> None:
    r = hu("提一", "二七十 贰柒拾 壹贰叁 四五六 肆伍陆 九九", "一", source=DEALER)
    assert_win(r, 24, 13, 13)
    assert "提一" in groups_text(r) and "将九九" in groups_text(r)
    # Passing the dealt quad in hand instead: it is the §9-step-3 提 all the same.
    r2 = hu("", "一一一 二七十 贰柒拾 壹贰叁 四五六 肆伍陆 九九", "一", source=DEALER)
    assert (r2.win, r2.huxi, r2.deng, r2.score) == (True, 24, 13, 13)


# --- Example 21(b): no partition with q = 2 and 21 cards (§7, §10.3) --------------------------


def test_example_21b_two_dealt_ti_cannot_hu_before_first_take() -> None:
    melds = table("提一 提贰")
    hand = parse_cards("三四五 六七八 叁肆伍 陆柒捌")
    counts = to_counts(hand + [0] * 4 + [11] * 4)
    for source in (OTHER, LIANG):
        for card in range(20):
            if counts[card] < 4:
                r = evaluate_hu(HUNAN, melds, hand, card, HuContext(source))
                assert not r.win and r.reason == NoWin.CARD_COUNT, (source, card)


def test_example_21a_dealer_with_two_ti_has_no_liang_hu() -> None:
    # §9 step 4 / §10.3 step 0: 21 cards with q = 2 cannot make 7 门子.
    r = hu("提伍", "三三三 四五六 七八九 壹贰叁 陆柒捌 一", "三", source=DEALER)
    assert not r.win and r.reason == NoWin.CARD_COUNT


# --- Example 22: 大字胡 (全花样) --------------------------------------------------------------

EX22 = ("吃[壹贰叁] 碰肆 偎陆", "柒捌玖 贰柒拾 伍伍伍 八九", "七")


def test_example_22_dazi_hu_full() -> None:
    r = hu(*EX22, rules=FULL)
    assert_win(r, 27, 5, 30, (("大字胡", 6),), 6)


def test_example_22h_dazi_hu_half_has_none() -> None:
    r = hu(*EX22)
    assert_win(r, 27, 5, 5)


# --- Example 23: 小字胡 (全花样) --------------------------------------------------------------

EX23 = ("吃[二七十] 偎五 偎八", "一一一 九九九 二三四 六六", "六")


def test_example_23_xiaozi_hu_full() -> None:
    r = hu(*EX23, rules=FULL)
    assert_win(r, 16, 1, 13, (("小字胡", 13),), 13)
    assert groups_text(r) == sorted(
        ["吃[二七十]", "偎五", "偎八", "坎一", "坎九", "二三四", "碰胡六"]
    )


def test_example_23_xiaozi_hu_half_has_none() -> None:
    r = hu(*EX23)
    assert_win(r, 16, 1, 1)


# --- Example 24: 耍猴 (全花样) ----------------------------------------------------------------

EX24 = ("跑伍 提三 碰捌 吃[壹贰叁] 吃[贰柒拾] 吃[四五六]", "九", "九")


def test_example_24_shuahou_full() -> None:
    r = hu(*EX24, rules=FULL)
    assert_win(r, 33, 7, 42, (("耍猴", 6),), 6)


def test_example_24z_shuahou_zimo() -> None:
    r = hu(*EX24, source=OWN, rules=FULL)
    assert_win(r, 33, 8, 48, (("耍猴", 6),), 6)


def test_example_24_shuahou_half_has_none() -> None:
    r = hu(*EX24)
    assert_win(r, 33, 7, 7)


# --- Example 25: Luzhou versus Hunan on the same cards (§14, C23, C34, C36) -------------------

EX25 = ("碰七 吃[二七十]", "四五六 肆伍陆 陆柒捌 三四五 八九", "十")


@pytest.mark.parametrize("source", [OTHER, DISCARD])
def test_example_25_luzhou(source: Source) -> None:
    r = hu(*EX25, source=source, rules=LUZHOU)
    assert_win(r, 12, 3, 3)
    assert r.option == "F"


def test_example_25_luzhou_mode_a() -> None:
    r = hu(*EX25, rules=LUZHOU_A)
    assert_win(r, 12, 3, 3)


def test_example_25_luzhou_c23_alternative() -> None:
    assert luzhou_deng(12, formula="thirds") == 1


def test_example_25_hunan_illegal() -> None:
    r = hu(*EX25)
    assert not r.win and r.reason == NoWin.BELOW_MIN and r.huxi == 4
    r = hu(*EX25, source=DISCARD)
    assert not r.win and r.reason == NoWin.DISCARD


@pytest.mark.parametrize("source", [OTHER, DISCARD])
def test_example_25b_luzhou_red_hu(source: Source) -> None:
    r = hu(*EX8, source=source, rules=LUZHOU)
    assert_win(r, 33, 24, 48, (("红胡", 2),), 2)


def test_example_25b_luzhou_mode_a() -> None:
    r = hu(*EX8, rules=LUZHOU_A)
    assert_win(r, 33, 24, 24)


def test_example_25b_luzhou_c23_alternative() -> None:
    r = hu(*EX8, rules=LUZHOU)
    assert luzhou_deng(r.huxi, formula="thirds") * r.fan == 16


def test_example_25b_luzhou_zimo() -> None:
    r = hu(*EX8, source=OWN, rules=LUZHOU)
    assert_win(r, 33, 25, 50, (("红胡", 2),), 2)


# --- §10.3 rule cases beyond the worked examples ----------------------------------------------


def test_rule_option_w_runs_wei_on_other_draw() -> None:
    # §10.3 option W (C26): another player's card runs A's 偎 into a 跑; the 将 then exists.
    tab, hand = "偎九 吃[壹贰叁] 吃[一二三]", "贰柒拾 二七十 四五六 伍伍"
    r = hu(tab, hand, "九")
    assert_win(r, 24, 4, 4)
    assert r.option == "W" and "跑九" in groups_text(r)
    # Own draw onto one's own 偎 is a 提, never a hu (§10.3 step 1).
    assert hu(tab, hand, "九", source=OWN).reason == NoWin.OWN_PAIR


def test_rule_discard_never_runs_peng_c34() -> None:
    # C28/C34: a Luzhou discard may not run a 碰 (no option P); a draw may.
    tab, hand = "碰捌 吃[壹贰叁] 吃[四五六]", "贰柒拾 六七八 一二三 九九"
    r = hu(tab, hand, "捌", rules=LUZHOU)
    assert r.win and r.option == "P"
    r = hu(tab, hand, "捌", source=DISCARD, rules=LUZHOU)
    assert not r.win and r.reason == NoWin.NO_SPLIT


def test_rule_liang_other_kan_runs_c26() -> None:
    # C26: a non-dealer's 坎 + the 亮张 may form a 跑 (option K); 天胡 等, 自摸 (C5).
    r = hu("", "陆陆陆 壹贰叁 贰柒拾 一二三 二七十 四五六 九九", "陆", source=LIANG)
    assert_win(r, 27, 15, 15)
    assert r.option == "K" and r.tianhu and r.zimo
    assert "跑陆" in groups_text(r)


def test_rule_liang_other_pair_is_peng_c8() -> None:
    # C8/C26: pair + 亮张 for a non-dealer is the 碰-valued triple (陆: 3), not a 坎 (6).
    r = hu("", "壹贰叁 贰柒拾 一二三 二七十 四五六 七八九 陆陆", "陆", source=LIANG)
    assert_win(r, 21, 11, 11)
    assert "碰胡陆" in groups_text(r)


def test_rule_c9_smallest_canonical_list_on_equal_huxi() -> None:
    # 叁叁肆肆伍伍陆陆 + 将 splits as 将叁叁 + 肆伍陆×2 or 叁肆伍×2 + 将陆陆, both 0 胡息;
    # C9 takes the smaller sorted card-tuple list: (12, 12) < (12, 13, 14).
    r = hu("提拾 碰贰 吃[一二三]", "叁叁肆肆伍伍陆陆 四五", "六")
    assert_win(r, 18, 2, 2)
    assert "将叁叁" in groups_text(r)
    assert groups_text(r).count("肆伍陆") == 2


def test_rule_groups_in_canonical_order() -> None:
    r = hu(*EX1)
    keys = [g.cards for g in r.groups]
    assert keys == sorted(keys)


def test_rule_card_count_fails_fast() -> None:
    # §7: N + 1 must be T + 1 = 21 + max(0, q − 1) for some option.
    r = hu("吃[一二三] 碰伍", "壹贰叁 四五六 七八九 陆柒捌", "拾")
    assert not r.win and r.reason == NoWin.CARD_COUNT


def test_rule_calculator_without_hu_card() -> None:
    # card None: the hand holds every card and is read as dealt (§10.3 step 0).
    r = hu("吃[一二三] 碰伍", "壹贰叁 四五六 七八九 陆柒捌 贰柒拾", None)
    assert_win(r, 18, 2, 2)
    assert r.option == "0" and not r.zimo


def test_rule_five_copies_is_malformed() -> None:
    from engine.errors import InvalidNotation

    with pytest.raises(InvalidNotation):
        hu("", "一一一一 二三四五六七八九十壹贰叁肆伍陆柒", "一")


def test_rule_luzhou_dealer_tianhu() -> None:
    # §14, C36: the Luzhou dealer's 七列 天胡 by §10.3 step 0, 等 = 胡 − 9 + 1 (自摸), ×2.
    # Example 15d's cards on the Luzhou table: 坎一 6 + 二七十 6 + 贰柒拾 9 + 壹贰叁 6 = 27.
    hand = "一一 二七十 贰柒拾 壹贰叁 四五六 七八九 肆伍陆"
    r = hu("", hand, "一", source=DEALER, rules=LUZHOU)
    assert_win(r, 27, 19, 38, (("天胡", 2),), 2)


def test_rule_luzhou_auto_tianhu() -> None:
    # §9 step 2 with the Luzhou table (C23, C36): Example 13's cards.
    # 提五 12 + 提捌 15 + 提十 15 + 一二三 3 + 壹贰叁 6 = 51; 等 51 − 9 + 1; ×2 天胡.
    cards = parse_cards("五五五五 捌捌捌捌 十十十十 一二三 壹贰叁 八 九 玖")
    r = evaluate_auto_tianhu(LUZHOU, cards)
    assert r is not None
    assert (r.huxi, r.deng, r.mingtang, r.fan, r.score) == (51, 43, (("天胡", 2),), 2, 86)


def test_rule_tianhu_plain_formula() -> None:
    # Appendix B tianhu_formula=plain: ordinary 等 + 1 (the 自摸), Example 15's cards.
    rules = HUNAN.with_overrides(["tianhu_formula=plain"])
    r = hu("", "壹贰叁 贰柒拾 一二三 二七十 四五六 七八九 肆伍", "陆", source=LIANG, rules=rules)
    assert_win(r, 18, 3, 3)


def test_rule_dihu_full_only() -> None:
    # C17: 地胡 (全花样, 4 番) on the first stock card; unknown at half.
    r = hu(*EX1, rules=FULL, dihu=True)
    assert_win(r, 18, 2, 8, (("地胡", 4),), 4)
    assert_win(hu(*EX1, dihu=True), 18, 2, 2)
