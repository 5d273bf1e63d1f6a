"""Scenario tests of the state machine, one or more per rule of RULES.md §5–§14.

Every scenario is a chosen deck in card notation (``builders.deck_for``, layout C2: dealer
0–19, 下家 20–39, 上家 40–59, 亮张 60, stock 61–79 drawn from 61). Seat 0 deals unless said
otherwise, so seat 1 is the dealer's 下家 and seat 2 his 上家. Filler 坎s (whose 4th copies lie
deep in the stock) keep the hands quiet, so that option sets stay small and exact.

Engine behaviours that contradict RULES.md are kept as ``test_<what>_bug`` with a strict
xfail, so that the suite stays green until the engine is fixed.
"""

from __future__ import annotations

import pytest
from builders import (
    DeckError,
    deck_for,
    drive,
    faces,
    hand,
    new_state,
    opts,
    play,
    right,
    table,
    top,
)

from engine.actions import PASS
from engine.errors import IllegalAction
from engine.hu import Source
from engine.rules import find_rules
from engine.state import CardKind, OutcomeKind, Phase

DISCARD = Phase.DISCARD

# ============================================================================ builders


def test_deck_for_rejects_a_fifth_copy():
    with pytest.raises(DeckError, match="一 ×5"):
        deck_for(
            dealer="一一一一壹贰叁肆伍陆柒捌玖拾二三四五六七",
            xia="一壹贰叁肆伍陆柒捌玖拾二三四五六七八九十",
            shang="壹贰叁肆伍陆柒捌玖拾二三四五六七八九十八",
            liang="九",
        )


def test_deck_for_layout_follows_c2():
    deck = deck_for(
        dealer="壹壹壹贰贰贰叁叁叁一一二二三三四五五八十",
        xia="九九九六六肆肆肆伍伍伍陆陆陆一二四八十柒",
        shang="捌捌捌玖玖玖七七七十柒一二三三四四五五八",
        liang="柒",
        stock="九拾",
        bottom="陆",
    )
    assert len(deck) == 80
    state = new_state(deck)
    assert hand(state, 0) == "一一二二三三四五五八十壹壹壹贰贰贰叁叁叁柒"
    assert hand(state, 1) == "一二四六六八九九九十肆肆肆伍伍伍陆陆陆柒"
    assert state.liang == deck[60]
    assert top(state) == "九"
    assert state.stock[0] == deck[79]


# ============================================================================ §5.1 提


def test_initial_ti_is_forced_and_automatic_before_liang_hu():
    # §5.1 ①, §9 step 3: dealt quads (the dealer's 亮张 counts) are 提'd before anything else.
    state = new_state(
        deck_for(
            dealer="叁叁叁一二三五六七八九十壹贰肆伍陆柒捌拾",
            xia="四四四四一二三五六七八九十壹贰肆伍陆柒捌",
            shang="玖玖玖拾拾一二三五六七八九十壹贰肆伍陆柒",
            liang="叁",
        )
    )
    assert state.phase == Phase.INIT_TI and state.is_forced()
    assert state.deciders() == (0,) and opts(state, 0) == ["提 叁"]
    play(state, "0:ti:叁")
    assert table(state, 0) == ["提叁"] and "叁" not in hand(state, 0)
    assert state.deciders() == (1,) and opts(state, 1) == ["提 四"] and state.is_forced()
    play(state, "1:ti:四")
    assert table(state, 1) == ["提四"] and "四" not in hand(state, 1)
    # Dealer: N = 21 > T(q=1) = 20, so he discards (§9 step 5); no draw happened yet.
    assert state.phase == DISCARD and state.deciders() == (0,) and not state.is_forced()
    assert state.stock_left() == 19
    assert state.meld_huxi(0) == 12 and state.meld_huxi(1) == 9


# A quiet deal for draws onto one's own 坎 / pair / 偎: seat 1 holds 坎九 and 六六.
DECK_OWN_DRAW = dict(
    dealer="壹壹壹贰贰贰叁叁叁一一二二三三四五五八十",
    xia="九九九六六肆肆肆伍伍伍陆陆陆一二四八十柒",
    shang="捌捌捌玖玖玖七七七十柒一二三三四四五五八",
    liang="柒",
)


def test_ti_from_kan_on_own_draw_is_forced_then_discard():
    # §5.1 ②, §8.2 step 3: a 坎 plus one's own draw is 提'd unrevealed; then N 21 > T 20.
    state = new_state(deck_for(**DECK_OWN_DRAW, stock="九拾拾六拾拾六"))
    play(state, "0:discard:八")  # nobody can take 八
    assert right(state, 0) == "八"
    assert state.phase == Phase.DRAW_TAKE and state.is_forced()
    assert state.card_kind == CardKind.DRAWN and state.owner == 1
    assert state.deciders() == (1,) and opts(state, 1) == ["提 九"]
    play(state, "1:ti:九")
    assert table(state, 1) == ["提九"] and hand(state, 1) == "一二四六六八十肆肆肆伍伍伍陆陆陆柒"
    assert state.phase == DISCARD and state.deciders() == (1,)
    assert opts(state, 1) == ["打 一", "打 二", "打 四", "打 六", "打 八", "打 十", "打 柒"]


def test_wei_on_own_draw_of_a_pair_is_forced_and_hidden():
    # §5.2, §8.2: pair + own draw is a forced 偎 (not revealed, so not offered to anyone).
    state = new_state(deck_for(**DECK_OWN_DRAW, stock="九拾拾六拾拾六"))
    play(state, "0:discard:八", "1:ti:九", "1:discard:柒")
    assert right(state, 2) == "拾" and right(state, 0) == "八拾"  # two quiet draws
    assert state.phase == Phase.DRAW_TAKE and state.is_forced()
    assert state.deciders() == (1,) and opts(state, 1) == ["偎 六"]
    play(state, "1:wei:六")
    assert table(state, 1) == ["提九", "偎六"]
    assert state.renpeng[1] == 0 and state.melds[1][1].kind.name == "WEI"
    # N = 22 - 1 discard earlier = 21 > T(q=1) = 20: discard again.
    assert state.phase == DISCARD and opts(state, 1) == [
        "打 一",
        "打 二",
        "打 四",
        "打 八",
        "打 十",
    ]


def test_ti_from_wei_on_own_draw_and_second_quad_is_baikuai():
    # §5.1 ③ (偎 + own draw = 提) and §7 八块: the second 跑/提 owes no discard.
    state = new_state(deck_for(**DECK_OWN_DRAW, stock="九拾拾六拾拾六"))
    play(state, "0:discard:八", "1:ti:九", "1:discard:柒", "1:wei:六", "1:discard:十")
    assert state.phase == Phase.DRAW_TAKE and opts(state, 1) == ["提 六"] and state.is_forced()
    play(state, "1:ti:六")
    assert table(state, 1) == ["提九", "提六"]
    assert state.n_cards(1) == 21 and state.target(1) == 21
    # No discard: the 下家 (seat 2) draws next; here the fill card 七 onto his 坎.
    assert state.owner == 2 and state.card_kind == CardKind.DRAWN
    assert state.deciders() == (2,) and opts(state, 2) == ["提 七"]


def test_pao_onto_wei_from_another_players_draw():
    # §5.3 ③: a 偎 is run by another player's draw of the 4th card; with q = 2 it is 八块.
    state = new_state(deck_for(**DECK_OWN_DRAW, stock="九拾拾六六拾拾"))
    play(state, "0:discard:八", "1:ti:九", "1:discard:柒", "1:wei:六", "1:discard:十")
    assert state.owner == 2 and state.card_kind == CardKind.DRAWN
    assert state.phase == Phase.CLAIM_PAO and state.is_forced()
    assert state.deciders() == (1,) and opts(state, 1) == ["跑 六"]
    play(state, "1:pao:六")
    assert table(state, 1) == ["提九", "跑六"]
    # 八块: no discard; play continues from the runner: his 下家 (seat 2) draws 拾 (nobody takes
    # it), then the dealer draws 拾, then seat 1 draws the fill card 七 onto seat 2's 坎.
    assert state.n_cards(1) == 21 and state.target(1) == 21
    assert right(state, 2) == "拾拾" and right(state, 0) == "八拾拾"
    assert state.owner == 1 and opts(state, 2) == ["跑 七"]


# ============================================================================ §5.3 跑

# Seat 1 holds 坎九 and 坎伍 (and two filler 坎s); the dealer holds the 4th 九.
DECK_PAO = dict(
    dealer="壹壹壹贰贰贰叁叁叁九一二三四五六八十柒一",
    xia="九九九伍伍伍陆陆陆肆肆肆一二三四六八十柒",
    shang="捌捌捌玖玖玖七七七一二三四五五六八十柒三",
    liang="五",
    stock="伍拾",
)


def test_example_21d_pao_from_kan_on_a_discard_then_discard():
    # §5.3 ①, Example 21(d): q = 0 and a 坎九; a discarded 九 forces 跑; N 21 > 20: discard.
    state = new_state(deck_for(**DECK_PAO))
    play(state, "0:discard:九")
    assert state.phase == Phase.CLAIM_PAO and state.is_forced()
    assert state.card_kind == CardKind.DISCARDED and state.owner == 0
    assert state.deciders() == (1,) and opts(state, 1) == ["跑 九"]
    play(state, "1:pao:九")
    assert table(state, 1) == ["跑九"] and state.n_cards(1) == 21 and state.target(1) == 20
    assert state.phase == DISCARD and state.deciders() == (1,)
    assert opts(state, 1) == [
        "打 一",
        "打 二",
        "打 三",
        "打 四",
        "打 六",
        "打 八",
        "打 十",
        "打 柒",
    ]


def test_example_21c_second_pao_from_kan_on_a_draw_is_baikuai():
    # §5.3 ① (another player's draw) and Example 21(c): with 跑九 on the table (q = 1) a second
    # 跑 gives N = 21 = T(2): 八块, no discard, and the runner's 下家 draws.
    state = new_state(deck_for(**DECK_PAO))
    play(state, "0:discard:九", "1:pao:九", "1:discard:柒")
    # Seat 2 draws 伍. Seat 2 (五五伍) and the dealer (五五伍) could eat it, but 跑 comes first.
    assert state.owner == 2 and state.card == 10 + 4 and state.card_kind == CardKind.DRAWN
    assert state.phase == Phase.CLAIM_PAO and state.deciders() == (1,)
    assert opts(state, 1) == ["跑 伍"] and state.is_forced()
    play(state, "1:pao:伍")
    assert table(state, 1) == ["跑九", "跑伍"]
    assert state.n_cards(1) == 21 and state.target(1) == 21
    # No discard by seat 1: seat 2 draws 拾, then the dealer the fill card 二 (nobody takes
    # either), then seat 1 draws 四.
    assert right(state, 2) == "拾" and right(state, 0) == "二" and right(state, 1) == "柒"
    assert state.owner == 1 and state.stock_left() == 15


# Seat 1 holds 八八 (and 九十); the dealer discards 八 first. The 4th 八 is placed per scenario.
PENG8_SEATS = dict(
    xia="肆肆肆伍伍伍陆陆陆八八九十一二五四五六柒",
    shang="捌捌捌玖玖玖七七七二三四五六九十柒二三四",
    liang="柒",
)
PENG8_DEALER = "壹壹壹贰贰贰叁叁叁八一一三二三四五六九十"  # the 4th 八 is in the stock
PENG8_DEALER_2 = "壹壹壹贰贰贰叁叁叁八一一八二三四三六九十"  # the dealer holds the 4th 八


def test_peng_is_optional_on_a_discard():
    # §5.4: a pair holder may 碰 another player's discard; here no 吃 is legal (eating 八 with
    # 九十 would leave 八八 to 比, and no cover exists), so the options are exactly 过 / 碰.
    state = new_state(deck_for(dealer=PENG8_DEALER, **PENG8_SEATS, stock="八"))
    play(state, "0:discard:八")
    assert state.phase == Phase.CLAIM_TAKE and not state.is_forced()
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "碰"]
    play(state, "1:peng")
    assert table(state, 1) == ["碰八"] and "八" not in hand(state, 1)
    assert state.phase == DISCARD and state.deciders() == (1,)  # N 21 > 20
    assert state.renpeng[1] == 0 and state.stinky[1] == 0


def test_declined_peng_is_renpeng_and_own_draw_becomes_chouwei():
    # §6.1 忍碰 and 臭牌, §5.2: declining the 碰 marks 八 stinky and 忍碰; the player's own
    # draw of 八 is still a forced 偎 (a stinky card does not prevent 偎), namely a 臭偎.
    state = new_state(deck_for(dealer=PENG8_DEALER, **PENG8_SEATS, stock="八"))
    play(state, "0:discard:八", "1:pass")
    assert faces(state.stinky[1]) == "八" and faces(state.renpeng[1]) == "八"
    assert right(state, 0) == "八"  # §8.4 E: the unclaimed discard lies to the owner's right
    # The discarder's 下家 (seat 1) draws next: his own 八 onto his pair.
    assert state.owner == 1 and state.phase == Phase.DRAW_TAKE and state.is_forced()
    assert opts(state, 1) == ["偎 八"]
    play(state, "1:wei:八")
    assert table(state, 1) == ["臭偎八"] and state.melds[1][0].kind.name == "CHOUWEI"
    assert state.phase == DISCARD and state.deciders() == (1,)


def test_pao_onto_peng_from_another_players_draw():
    # §5.3 ②: a 碰 is run when another player draws the 4th card; then N 21 > 20: discard.
    state = new_state(deck_for(dealer=PENG8_DEALER, **PENG8_SEATS, stock="八"))
    play(state, "0:discard:八", "1:peng", "1:discard:柒")
    assert state.owner == 2 and state.card_kind == CardKind.DRAWN
    assert state.phase == Phase.CLAIM_PAO and state.is_forced()
    assert state.deciders() == (1,) and opts(state, 1) == ["跑 八"]
    play(state, "1:pao:八")
    assert table(state, 1) == ["跑八"]
    assert state.phase == DISCARD and state.deciders() == (1,)
    assert state.n_cards(1) == 21 and state.target(1) == 20


def test_pao_onto_peng_from_own_draw():
    # §5.3 ②: "anyone, including the player himself, draws" the 4th card. His own draw is
    # revealed (no 坎/偎/pair of it in hand) and then run onto his 碰.
    state = new_state(deck_for(dealer=PENG8_DEALER, **PENG8_SEATS, stock="拾拾八"))
    play(state, "0:discard:八", "1:peng", "1:discard:柒")
    assert right(state, 2) == "拾" and right(state, 0) == "拾"
    assert state.owner == 1 and state.card_kind == CardKind.DRAWN
    assert state.phase == Phase.CLAIM_PAO and state.deciders() == (1,)
    assert opts(state, 1) == ["跑 八"] and state.is_forced()
    play(state, "1:pao:八")
    assert table(state, 1) == ["跑八"] and state.phase == DISCARD


def test_example_11_discarded_fourth_card_is_eaten_not_run_onto_peng_c28():
    # §5.3 ② C28, the state part of Example 11 (八 plays the role of its 贰): a *discarded* 4th
    # card cannot be run onto a 碰. It goes to the 吃 stage, and the 碰 holder may eat it, so a
    # 碰 and a 吃 of one face lie on one table.
    state = new_state(deck_for(dealer=PENG8_DEALER_2, **PENG8_SEATS, stock="拾一"))
    play(state, "0:discard:八", "1:peng", "1:discard:柒")
    assert opts(state, 0) == ["偎 一"]  # the dealer draws 一 onto his pair
    play(state, "0:wei:一", "0:discard:八")
    assert state.phase == Phase.CLAIM_TAKE and not state.is_forced()
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "吃 [八九十]"]
    play(state, "1:chi:八九十")
    assert table(state, 1) == ["碰八", "吃[八九十]"]
    assert state.phase == DISCARD and state.deciders() == (1,)


def test_discarded_fourth_card_onto_peng_passed_goes_right_c28():
    state = new_state(deck_for(dealer=PENG8_DEALER_2, **PENG8_SEATS, stock="拾一"))
    play(state, "0:discard:八", "1:peng", "1:discard:柒", "0:wei:一", "0:discard:八", "1:pass")
    assert table(state, 1) == ["碰八"] and right(state, 0) == "八"
    assert faces(state.stinky[1]) == "八"
    assert state.owner == 1 and state.card_kind == CardKind.DRAWN  # the 下家 draws


def test_pobaohu_on_peng_declined_records_chouhu_then_forced_pao():
    # §10.4 / §8.4 H→R: with 碰八 seat 1 can hu another player's 4th 八 (option F, the 坎s keep
    # their 胡息); declining records 臭胡 (八, meldHuxi 1) and then the forced 跑 follows.
    seats = dict(PENG8_SEATS, xia="肆肆肆伍伍伍陆陆陆八八九十一二三四五六柒")
    dealer = "壹壹壹贰贰贰叁叁叁八一一五二三四五六九十"
    state = new_state(deck_for(dealer=dealer, **seats, stock="八"))
    play(state, "0:discard:八", "1:peng", "1:discard:柒")
    assert state.phase == Phase.CLAIM_HU and state.owner == 2
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "胡"]
    play(state, "1:pass")
    assert state.chouhu[1] == {7: 1}
    assert state.phase == Phase.CLAIM_PAO and opts(state, 1) == ["跑 八"]
    play(state, "1:pao:八")
    assert table(state, 1) == ["跑八"] and state.phase == DISCARD


# ============================================================================ §5.5 吃 eaters

# The dealer discards 五 (seat 1 can eat it with 四六, seat 2 could with 三四, 四六 or 六七);
# then seat 1 draws 八 (seat 1 eats with 九十, seat 2 with 六七, the dealer could with 七九).
DECK_EATERS = dict(
    dealer="壹壹壹贰贰贰叁叁叁二三四五五六七七九九十",
    xia="肆肆肆伍伍伍陆陆陆四六九十一一二二拾拾十",
    shang="柒柒柒捌捌捌玖玖玖三三四六七一二一拾拾五",
    liang="十",
    stock="八",
)


def test_chi_of_a_discard_only_by_the_discarders_xiajia():
    # §5.5: a discard can be eaten only by the discarder's 下家; seat 2 is not asked.
    state = new_state(deck_for(**DECK_EATERS))
    play(state, "0:discard:五")
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "吃 [四五六]"]
    assert opts(state, 2) == []
    play(state, "1:chi:四五六")
    assert table(state, 1) == ["吃[四五六]"] and state.phase == DISCARD
    assert hand(state, 1) == "一一二二九十十肆肆肆伍伍伍陆陆陆拾拾"


def test_passing_an_untaken_discard_makes_it_stinky_and_xiajia_draws():
    # §6.1 (C29, nobody took the card) and §8.4 E.
    state = new_state(deck_for(**DECK_EATERS))
    play(state, "0:discard:五", "1:pass")
    assert faces(state.stinky[1]) == "五" and state.renpeng[1] == 0
    assert state.stinky[0] == 0 and state.stinky[2] == 0
    assert right(state, 0) == "五" and state.discards[0] == [4]
    assert state.owner == 1 and state.card_kind == CardKind.DRAWN


def test_chi_of_a_draw_by_drawer_and_his_xiajia_not_his_shangjia():
    # §5.5: a drawn card may be eaten by the drawer and the drawer's 下家 only; the dealer
    # (seat 1's 上家) holds 七九 but is not asked.
    state = new_state(deck_for(**DECK_EATERS))
    play(state, "0:discard:五", "1:pass")
    assert state.phase == Phase.CLAIM_TAKE
    assert sorted(state.deciders()) == [1, 2]
    assert opts(state, 1) == ["过", "吃 [八九十]"]
    assert opts(state, 2) == ["过", "吃 [六七八]"]
    assert opts(state, 0) == []


def test_drawer_chi_beats_xiajia_chi():
    # §8.4 C (C31): the drawer's 吃 ranks above his 下家's; the loser is not marked (§6.1).
    state = new_state(deck_for(**DECK_EATERS))
    play(state, "0:discard:五", "1:pass", "2:chi:六七八", "1:chi:八九十")
    assert table(state, 1) == ["吃[八九十]"] and table(state, 2) == []
    assert state.stinky[2] == 0 and faces(state.stinky[1]) == "五"
    assert state.phase == DISCARD and state.deciders() == (1,)


def test_drawer_passing_when_xiajia_eats_is_stinky_c29():
    # §6.1 C29: the drawer's best option (owner's 吃) ranks above the executed 下家 吃.
    state = new_state(deck_for(**DECK_EATERS))
    play(state, "0:discard:五", "1:pass", "1:pass", "2:chi:六七八")
    assert table(state, 2) == ["吃[六七八]"]
    assert faces(state.stinky[1]) == "五八" and state.stinky[2] == 0
    assert state.phase == DISCARD and state.deciders() == (2,)


def test_xiajia_passing_when_drawer_eats_is_not_stinky_c29():
    # §6.1 C29: the 下家's 吃 ranks below the executed drawer's 吃: he is not marked.
    state = new_state(deck_for(**DECK_EATERS))
    play(state, "0:discard:五", "1:pass", "2:pass", "1:chi:八九十")
    assert table(state, 1) == ["吃[八九十]"]
    assert state.stinky[2] == 0


def test_everyone_passing_a_drawn_card_marks_both_eaters():
    # §6.1 C29: nobody took the card, so every PASS-declarer with a legal option is marked;
    # the card lies to the drawer's right and the drawer's 下家 draws (§8.4 E).
    state = new_state(deck_for(**DECK_EATERS))
    play(state, "0:discard:五", "1:pass", "1:pass", "2:pass")
    assert faces(state.stinky[1]) == "五八" and faces(state.stinky[2]) == "八"
    assert state.stinky[0] == 0
    assert right(state, 1) == "八" and state.owner == 2


# Seat 2 is Example 18's A (pair 二二 and 一三贰); seat 1 draws 二 and can eat it with 七十.
DECK_PENG_VS_CHI = dict(
    dealer="贰贰贰一一一三三三肆四五六七八九十柒玖拾",
    xia="壹壹壹叁叁叁四四四七十五六八九十柒玖拾肆",
    shang="一二二三贰五六八九九伍伍陆陆捌捌玖肆柒拾",
    liang="陆",
    stock="二",
)


def _peng_vs_chi():
    state = new_state(deck_for(**DECK_PENG_VS_CHI))
    play(state, "0:discard:肆")  # nobody can take 肆
    assert state.owner == 1 and state.phase == Phase.CLAIM_TAKE
    assert sorted(state.deciders()) == [1, 2]
    assert opts(state, 1) == ["过", "吃 [二七十]"]
    assert opts(state, 2) == ["过", "碰", "吃 [一二三][二二贰]"]
    return state


def test_peng_beats_drawer_chi_and_the_loser_is_not_stinky():
    # §8.4 C: 碰 > 吃; a declared claim that loses on priority marks nobody (§6.1).
    state = _peng_vs_chi()
    play(state, "2:peng", "1:chi:二七十")
    assert table(state, 2) == ["碰二"] and table(state, 1) == []
    assert state.stinky[1] == 0 and state.stinky[2] == 0 and state.renpeng[2] == 0
    assert state.phase == DISCARD and state.deciders() == (2,)


def test_chi_passer_is_not_stinky_when_a_peng_is_executed():
    # §6.1 seed exception / C29: "想吃牌卻被另外一個玩家碰了牌，那麼不算該玩家的臭牌".
    state = _peng_vs_chi()
    play(state, "1:pass", "2:peng")
    assert table(state, 2) == ["碰二"] and state.stinky[1] == 0


def test_peng_passer_is_stinky_and_renpeng_when_a_chi_is_executed():
    # §6.1 C29: the pair holder's 碰 ranks above the executed drawer's 吃.
    state = _peng_vs_chi()
    play(state, "2:pass", "1:chi:二七十")
    assert table(state, 1) == ["吃[二七十]"]
    assert faces(state.stinky[2]) == "二" and faces(state.renpeng[2]) == "二"
    assert state.stinky[1] == 0


def test_pair_holder_declaring_chi_gets_renpeng_not_stinky_c30():
    # §6.1 C30: declaring 吃 instead of 碰 sets 忍碰, never 臭, even when the 吃 loses to the
    # drawer's 吃 on priority.
    state = _peng_vs_chi()
    play(state, "2:chi:一二三+二二贰", "1:chi:二七十")
    assert table(state, 1) == ["吃[二七十]"] and table(state, 2) == []
    assert faces(state.renpeng[2]) == "二" and state.stinky[2] == 0


def test_pair_holder_chi_executed_lays_eat_and_bi_groups_c30():
    # §5.6 + C30: his 吃 wins when the drawer passes; the 比 takes both 二 from his hand.
    state = _peng_vs_chi()
    play(state, "1:pass", "2:chi:二二贰+一二三")
    assert table(state, 2) == ["吃[一二三]", "吃[二二贰]"]
    assert "二" not in hand(state, 2) and "贰" not in hand(state, 2)
    assert faces(state.renpeng[2]) == "二" and state.stinky[2] == 0
    assert faces(state.stinky[1]) == "二"  # the drawer's 吃 ranked above the executed one
    assert state.phase == DISCARD and state.deciders() == (2,)


# ============================================================================ §5.6 比牌

DECK_EX16 = dict(
    dealer="六六六七七七壹壹壹贰贰贰三四五八十叁肆伍",
    xia="一二三四五柒捌玖壹贰叁九九陆陆肆八十拾伍",  # Example 16's A
    shang="捌捌捌玖玖玖拾拾拾一一一二二四五八九陆柒",
    liang="柒",
)


def test_example_16_bipai_exact_options():
    # §5.6, Example 16: exactly two eat actions, {一二三, 三四五} and {三三叁}; [二三四] is
    # illegal (the other 三 cannot be 比'd). The 叁 in hand never triggers a 比 of 三.
    state = new_state(deck_for(**DECK_EX16))
    play(state, "0:discard:三")
    assert state.deciders() == (1,)
    assert opts(state, 1) == ["过", "吃 [三三叁]", "吃 [一二三][三四五]"]


def test_example_16a_eat_with_bi_leaves_15_cards_and_discard():
    state = new_state(deck_for(**DECK_EX16))
    play(state, "0:discard:三", "1:chi:三四五+一二三")
    assert sorted(table(state, 1)) == ["吃[一二三]", "吃[三四五]"]
    assert state.hand_size[1] == 15 and "三" not in hand(state, 1)
    assert state.phase == DISCARD and state.deciders() == (1,)


def test_example_16b_jiao_eat_leaves_18_cards_and_discard():
    # §5.5: the two hand cards may include a copy of the eaten face (三 + 叁 eat 三 as 绞).
    state = new_state(deck_for(**DECK_EX16))
    play(state, "0:discard:三", "1:chi:三三叁")
    assert table(state, 1) == ["吃[三三叁]"] and state.hand_size[1] == 18
    assert state.phase == DISCARD and state.deciders() == (1,)


def test_example_16_order_of_groups_in_notation_is_the_same_action():
    # §5.6: eat [三四五] + 比 [一二三] and eat [一二三] + 比 [三四五] are one action.
    a = new_state(deck_for(**DECK_EX16))
    b = new_state(deck_for(**DECK_EX16))
    play(a, "0:discard:三", "1:chi:一二三+三四五")
    play(b, "0:discard:三", "1:chi:三四五+一二三")
    assert a.history == b.history and a == b


def test_example_16_variant_no_legal_eat_so_not_asked_and_not_stinky():
    # Example 16 variant / C10: with no 二 and no 叁 no eat of 三 is legal, so A is not asked
    # and 三 does not become stinky for him.
    state = new_state(
        deck_for(
            dealer="三叁叁叁贰贰贰壹壹壹二二四五六七八十肆伍",
            xia="一三四五七柒捌玖壹贰六九九陆陆肆八十拾伍",  # the variant's hand
            shang="柒柒柒玖玖玖拾拾拾一一一二三四五六七八九",
            liang="捌",
        )
    )
    play(state, "0:discard:三")
    assert right(state, 0) == "三" and state.stinky[1] == 0
    assert state.owner == 1 and state.card_kind == CardKind.DRAWN  # A draws next


DECK_EX17 = dict(
    dealer="二壹壹壹叁叁叁肆肆肆一四五六八七十柒拾玖",
    xia="一二二三三四贰贰五六八九九伍伍陆陆捌捌玖",  # Example 17's A
    shang="七七七十十十柒柒柒拾拾拾一三四五六八九玖",
    liang="一",
)


def test_example_17_bipai_exact_options():
    # §5.6, Example 17: 碰 plus exactly three eat actions (7 (eat, 比) pairs collapse to 3).
    state = new_state(deck_for(**DECK_EX17))
    play(state, "0:discard:二")
    assert state.deciders() == (1,)
    assert opts(state, 1) == [
        "过",
        "碰",
        "吃 [一二三][二二贰]",
        "吃 [二三四][二二贰]",
        "吃 [一二三][二三四][二贰贰]",
    ]


@pytest.mark.parametrize(
    "spelling",
    ["chi:二贰贰+一二三+二三四", "chi:一二三+二贰贰+二三四", "chi:二三四+二贰贰+一二三"],
)
def test_example_17_three_group_eat_lays_all_groups(spelling):
    state = new_state(deck_for(**DECK_EX17))
    play(state, "0:discard:二", "1:" + spelling)
    assert sorted(table(state, 1)) == ["吃[一二三]", "吃[二三四]", "吃[二贰贰]"]
    assert "二" not in hand(state, 1) and "贰" not in hand(state, 1)
    assert state.hand_size[1] == 12 and state.phase == DISCARD
    assert faces(state.renpeng[1]) == "二" and state.stinky[1] == 0  # C30


def test_example_17_pass_is_stinky_and_renpeng():
    # Example 17: PASS makes 二 stinky for A and sets 忍碰(二); nobody else could take it.
    state = new_state(deck_for(**DECK_EX17))
    play(state, "0:discard:二", "1:pass")
    assert faces(state.stinky[1]) == "二" and faces(state.renpeng[1]) == "二"
    assert right(state, 0) == "二"


def test_kan_cards_are_never_used_to_eat():
    # §6.3 / §5.5: seat 1 holds 坎伍 and 坎陆, so 柒 (伍陆柒) cannot be eaten; nobody is asked.
    state = new_state(deck_for(**DECK_PAO))
    play(state, "0:discard:柒")
    assert right(state, 0) == "柒" and state.stinky[1] == 0
    assert state.owner == 1


# ============================================================================ §6.1 Example 18

EX18_DEALER = "二壹贰贰贰四四四八八八五六九肆伍陆捌玖拾"
EX18_A = "一二二三贰五六八九九伍伍陆陆捌捌玖肆柒拾"  # Example 18's A (seat 1)


def _example_18(shang: str, stock: str):
    state = new_state(
        deck_for(dealer=EX18_DEALER, xia=EX18_A, shang=shang, liang="柒", stock=stock)
    )
    play(state, "0:discard:二")
    # A's options: 碰, and the one eat action {一二三, 二二贰}.
    assert state.deciders() == (1,)
    assert opts(state, 1) == ["过", "碰", "吃 [一二三][二二贰]"]
    play(state, "1:pass")
    assert faces(state.stinky[1]) == "二" and faces(state.renpeng[1]) == "二"
    return state


def test_example_18i_stinky_face_discarded_by_c_cannot_be_pengd():
    # Example 18 (i): C (seat 2) discards the 4th 二; A may not 碰 it.
    state = _example_18("叁叁叁七七七十十十二三三五六九肆伍柒玖拾", stock="壹三")
    # A draws 壹 (nobody can take it); C draws 三 onto his pair: 偎, then C discards 二.
    assert right(state, 1) == "壹" and opts(state, 2) == ["偎 三"]
    play(state, "2:wei:三", "2:discard:二")
    # Nobody was asked (A's 碰 is barred): 二 lies to C's right and the dealer drew next.
    assert right(state, 2) == "二" and right(state, 0) == "二一"


def test_example_18ii_stinky_face_drawn_by_shangjia_neither_chi_nor_peng():
    # Example 18 (ii): the 上家 (dealer) draws the 4th 二; A may neither 吃 nor 碰.
    state = _example_18("叁叁叁七七七十十十一三三五六九肆伍柒玖拾", stock="壹壹二")
    # A and C drew 壹 (nobody can take it); then the dealer drew 二: nobody was asked, so it
    # went to his right beside his discard, and A drew again (一, unclaimable too).
    assert right(state, 2) == "壹" and right(state, 0) == "二二" and right(state, 1) == "壹一"


def test_example_18iii_own_draw_of_stinky_face_is_forced_chouwei():
    # Example 18 (iii): A draws 二 himself: a forced 臭偎 (one card face-up), then he discards.
    state = _example_18("叁叁叁七七七十十十一三三五六九肆伍柒玖拾", stock="二")
    assert state.phase == Phase.DRAW_TAKE and state.is_forced()
    assert opts(state, 1) == ["偎 二"]
    play(state, "1:wei:二")
    assert table(state, 1) == ["臭偎二"]
    assert state.phase == DISCARD and state.deciders() == (1,)
    assert state.meld_huxi(1) == 3  # 臭偎 scores like 偎 (§11.1)


# ============================================================================ §6.2 / §6.3 Example 20

DECK_EX20 = dict(
    dealer="五八四四贰贰贰陆陆陆捌捌捌一三七九十柒玖",
    xia="六六六七八九五五壹壹壹叁叁叁一二十肆柒玖",  # A: 坎六, 七八九, 五五
    shang="二二二肆肆肆伍伍伍三三三一一四五七七壹贰",
    liang="伍",
    stock="拾四八",
)


def test_example_20_kan_card_not_discardable():
    # §5.7 C13 / Example 20: A holding 坎六 may not discard a 六 (nor 壹/叁 of his 坎s).
    state = new_state(deck_for(**DECK_EX20))
    play(state, "0:discard:五", "1:peng")
    assert table(state, 1) == ["碰五"] and state.phase == DISCARD
    with pytest.raises(IllegalAction, match="illegal action"):
        play(state, "1:discard:六")
    assert opts(state, 1) == [
        "打 一",
        "打 二",
        "打 七",
        "打 八",
        "打 九",
        "打 十",
        "打 肆",
        "打 柒",
        "打 玖",
    ]


def test_example_20_own_discarded_face_cannot_be_eaten():
    # §6.2 / Example 20: A discarded 八; his 上家's 八 cannot be eaten with 七九, nor his own
    # revealed draw of 八.
    state = new_state(deck_for(**DECK_EX20))
    play(state, "0:discard:五", "1:peng", "1:discard:八")
    assert faces(state.discarded[1]) == "八" and right(state, 1) == "八"
    assert right(state, 2) == "拾"  # seat 2 drew 拾, nobody could take it
    assert opts(state, 0) == ["偎 四"]  # the dealer draws 四 onto his pair
    play(state, "0:wei:四", "0:discard:八")
    # Nobody was asked: the 上家's 八 went right; A drew the 3rd 八, also unclaimable.
    assert right(state, 0) == "八" and right(state, 1) == "八八"
    assert hand(state, 1).count("七") == 1 and hand(state, 1).count("九") == 1
    assert state.owner == 2 and state.stinky[1] == 0


def test_unclaimed_own_draw_is_not_an_own_discard_c11():
    # §6.2 C11: a drawn card that nobody takes lies to the drawer's right but is not 打出.
    state = new_state(deck_for(**DECK_EX20))
    play(state, "0:discard:五", "1:peng", "1:discard:八")
    assert right(state, 2) == "拾" and state.discarded[2] == 0
    assert faces(state.discarded[0]) == "五" and faces(state.discarded[1]) == "八"


# ============================================================================ §6.4 臭胡 (Examples 7, 19)

# Seat 1 becomes Example 7's A by play: he eats 叁 (壹贰), 拾 (贰柒) and 三 (一二), discarding
# 捌, 肆 and 二, and ends with table 吃[壹贰叁] 吃[贰柒拾] 吃[一二三] (meldHuxi 15) and hand
# 四五六 陆柒捌 肆伍陆 九九.
DECK_EX7 = dict(
    dealer="七七七八八八一一一叁四四四伍伍柒柒六肆叁",
    xia="四五六陆柒捌肆伍陆九九壹贰贰柒一二捌肆二",
    shang="十十十玖玖玖壹壹壹五五五二三六肆叁陆陆捌",
    liang="十",
)
EX7_SETUP = (
    "0:discard:叁",
    "1:chi:壹贰叁",
    "1:discard:捌",  # seat 2 draws 拾; the dealer draws 拾
    "1:chi:贰柒拾",
    "1:discard:肆",  # seat 2 draws 拾; the dealer draws 三
    "1:chi:一二三",
    "1:discard:二",
)


def _example_7(stock: str):
    state = new_state(deck_for(**DECK_EX7, stock=stock))
    play(state, *EX7_SETUP)
    assert table(state, 1) == ["吃[壹贰叁]", "吃[贰柒拾]", "吃[一二三]"]
    assert hand(state, 1) == "四五六九九肆伍陆陆柒捌" and state.meld_huxi(1) == 15
    return state


def test_example_7_pair_plus_revealed_card_hu():
    # Example 7: B draws 九; A wins with {九九九} as a 碰-valued group: 胡息 16, 等 1, S 1.
    state = _example_7("拾拾拾三九九")
    assert state.owner == 2 and state.card == 8 and state.phase == Phase.CLAIM_HU
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "胡"]
    play(state, "1:hu")
    o = state.outcome
    assert o is not None and o.kind == OutcomeKind.HU and o.winner == 1
    assert o.source == Source.OTHER_DRAW and o.card == 8 and o.from_seat == 2
    assert (o.result.huxi, o.result.deng, o.result.score) == (16, 1, 1)
    assert o.deltas == (-1, 2, -1)
    assert state.is_terminal() and state.deciders() == () and state.legal_actions(1) == []


def test_example_7z_own_draw_onto_pair_is_wei_never_hu():
    # Example 7 (7z) / §10.1 D: if A draws 九 himself it is a forced 偎, never a hu chance;
    # then N 21 > 20 and he discards.
    state = _example_7("拾拾拾三拾二九")
    assert right(state, 2) == "拾拾拾" and right(state, 0) == "二"
    assert state.phase == Phase.DRAW_TAKE and state.deciders() == (1,)
    assert opts(state, 1) == ["偎 九"] and state.is_forced()
    play(state, "1:wei:九")
    assert state.outcome is None and state.phase == DISCARD and state.deciders() == (1,)
    assert table(state, 1)[-1] == "偎九"


def test_example_19_declined_hu_blocks_the_same_face_while_meldhuxi_is_unchanged():
    # Example 19 / §6.4: A declines the hu on B's 九: record (九, 15). A also declines the 碰
    # (九 becomes stinky, which alone would not stop a hu). Then C (the dealer) draws the 4th
    # 九: A's meldHuxi is still 15, so A may not hu it, and nobody is asked at all.
    state = _example_7("拾拾拾三九九")
    play(state, "1:pass")
    assert state.chouhu[1] == {8: 15}
    assert state.phase == Phase.CLAIM_TAKE and opts(state, 1) == ["过", "碰"]
    play(state, "1:pass")
    assert faces(state.stinky[1]) == "九" and faces(state.renpeng[1]) == "九"
    assert right(state, 2) == "拾拾九"
    # The dealer's 九: no hu, no 碰/吃 offered; it lies to his right. A then draws 二 (fill,
    # unclaimable) and seat 2 draws 三, which only seat 2 can eat.
    assert right(state, 0) == "九" and right(state, 1) == "捌肆二二"
    assert state.outcome is None and state.owner == 2 and state.deciders() == (2,)


def test_example_19_zero_huxi_eat_keeps_the_block():
    # Example 19, last bullet: after a 0-胡息 eat (三 with 四五, then discard 六) A still waits
    # on 九 with meldHuxi 15, so the block holds.
    state = _example_7("拾拾拾三九三拾九")
    play(state, "1:pass", "1:pass")
    assert state.owner == 0 and opts(state, 1) == ["过", "吃 [三四五]"]
    play(state, "1:chi:三四五", "1:discard:六")
    assert state.meld_huxi(1) == 15 and hand(state, 1) == "九九肆伍陆陆柒捌"
    # Seat 2 may eat the 六 as 六六陆 (六陆陆 would leave his 六 without a 比).
    assert opts(state, 2) == ["过", "吃 [六六陆]"]
    play(state, "2:pass")  # seat 2 then draws 拾; the dealer draws the 4th 九
    assert right(state, 0) == "九" and state.outcome is None and 1 not in state.deciders()


# Seat 1 waits on 九 from the deal (壹贰叁 贰柒拾 二七十 四五六 陆柒捌 二三四 九九) with no table.
DECK_CHOUHU_LIFT = dict(
    dealer="肆肆肆伍伍伍玖玖玖八八三三四壹贰叁捌拾柒",
    xia="壹贰叁贰柒拾二七十四五六陆柒捌二三四九九",
    shang="五五五六六六十十十陆陆陆七七二壹叁柒拾捌",
    liang="叁",
    stock="捌九一九",
)


def test_chouhu_block_lifts_when_meldhuxi_changes():
    # §6.4: the record is (九, 0). A then eats 一 with 二三 (一二三 = 3 胡息) and discards 四,
    # still waiting on 九; meldHuxi is now 3 ≠ 0, so the next 九 may be hu'd.
    state = new_state(deck_for(**DECK_CHOUHU_LIFT))
    play(state, "0:discard:八", "1:pass")  # A passes on 八; then A draws 捌 (unclaimable)
    assert state.owner == 2 and opts(state, 1) == ["过", "胡"]  # B's 九
    play(state, "1:pass", "1:pass")  # decline the hu, then the 碰
    assert state.chouhu[1] == {8: 0}
    assert state.owner == 0 and opts(state, 1) == ["过", "吃 [一二三]"]  # the dealer's 一
    play(state, "1:chi:一二三", "1:discard:四")
    assert state.meld_huxi(1) == 3
    # C... here B again: seat 2 draws the 4th 九 and A may hu it (a stinky face may be hu'd).
    assert state.owner == 2 and state.phase == Phase.CLAIM_HU and opts(state, 1) == ["过", "胡"]
    play(state, "1:hu")
    o = state.outcome
    assert o.winner == 1 and o.source == Source.OTHER_DRAW
    assert (o.result.huxi, o.result.deng, o.result.score) == (19, 2, 2)
    assert o.deltas == (-2, 4, -2)


# ============================================================================ §9 initial phase

EX13_DEALER = "五五五五捌捌捌捌十十十一二三壹贰叁八九玖"  # + 亮张 十 (Example 13)
EX14_B = "三三三三陆陆陆九九九壹壹壹拾拾拾二七五八"  # Example 14's B


def test_example_13_automatic_tianhu_three_ti_dealer():
    # §9 step 2, Example 13: the 亮张 completes the dealer's 3rd 提: automatic 天胡 before
    # anything else (no 提 decisions, no 亮张 hu, no discard). 胡息 39, 等 23, S 23.
    state = new_state(
        deck_for(
            dealer=EX13_DEALER,
            xia="一二三四六七八九壹贰叁肆伍陆柒玖拾四六七",
            shang="一二三四六七八九壹贰叁肆伍陆柒玖拾肆伍陆",
            liang="十",
        )
    )
    o = state.outcome
    assert state.is_terminal() and state.phase == Phase.END and state.deciders() == ()
    assert o.kind == OutcomeKind.TIANHU_AUTO and o.winner == 0 and o.card is None
    assert (o.result.huxi, o.result.deng, o.result.score) == (39, 23, 23)
    assert o.deltas == (46, -23, -23)
    assert state.history == [] and state.stock_left() == 19
    with pytest.raises(IllegalAction, match="after the end"):
        play(state, "0:discard:一")


def test_example_14_automatic_tianhu_five_kan_non_dealer():
    # Example 14: 提 + 4 坎 = 5 (a 提 counts as a 坎). 胡息 30, 等 17, S 17.
    state = new_state(
        deck_for(
            dealer="一二四五六七八十壹贰叁肆伍柒捌玖一四六十",
            xia=EX14_B,
            shang="一二四五六七八十贰叁肆伍柒捌玖拾一四六十",
            liang="贰",
        )
    )
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU_AUTO and o.winner == 1
    assert (o.result.huxi, o.result.deng, o.result.score) == (30, 17, 17)
    assert o.deltas == (-17, 34, -17)


def test_example_14_counter_case_two_ti_two_kan_is_no_tianhu_and_both_ti_placed():
    # Example 14 counter-case: 2 提 + 2 坎 = 4: no 天胡; both 提 are placed (§9 step 3).
    state = new_state(
        deck_for(
            dealer="一二四五六七八十壹贰叁肆伍柒捌玖一四六十",
            xia="三三三三陆陆陆陆九九九壹壹壹二七五八拾十",
            shang="一二四五六七八十贰叁肆伍柒捌玖拾一四二五",
            liang="贰",
        )
    )
    assert state.outcome is None and state.phase == Phase.INIT_TI
    assert state.deciders() == (1,) and opts(state, 1) == ["提 三"] and state.is_forced()
    play(state, "1:ti:三")
    assert opts(state, 1) == ["提 陆"] and state.is_forced()
    play(state, "1:ti:陆")
    assert table(state, 1) == ["提三", "提陆"]
    # §7: B has N = 20 < T = 21; the dealer (N 21 > 20) discards first.
    assert state.n_cards(1) == 20 and state.target(1) == 21
    assert state.phase == DISCARD and state.deciders() == (0,)


def test_automatic_tianhu_dealer_first_when_several_qualify():
    # §9 step 2: "多個3提5坎同時出現,莊家優先胡,其次下家,其次上家".
    state = new_state(
        deck_for(
            dealer=EX13_DEALER,
            xia="一一一二二二三三三四四四六六六七八九壹贰",  # 5 坎
            shang="四六七八九壹贰叁肆伍陆柒玖拾七八叁肆伍陆",
            liang="十",
        )
    )
    assert state.outcome.kind == OutcomeKind.TIANHU_AUTO and state.outcome.winner == 0


def test_automatic_tianhu_xiajia_before_shangjia():
    state = new_state(
        deck_for(
            dealer="二五七八九十壹贰叁肆伍陆柒捌玖拾二五七八",
            xia=EX14_B,
            shang="一一一一四四四四六六六六二五七八十贰叁肆",  # 3 提
            liang="伍",
        )
    )
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU_AUTO and o.winner == 1 and o.deltas == (-17, 34, -17)


EX15_B = "壹贰叁贰柒拾一二三二七十四五六七八九肆伍"  # Example 15's B; 亮张 陆


def _example_15():
    return new_state(
        deck_for(
            dealer="一三四五六八九十壹叁肆伍陆柒捌玖拾捌玖二",
            xia=EX15_B,
            shang="一三四五六八九十壹叁肆伍陆柒捌玖拾捌玖七",
            liang="陆",
        )
    )


def test_example_15_liang_hu_by_a_non_dealer_is_tianhu():
    # §9 step 4, Example 15: B may hu the 亮张: 天胡, counted as 自摸 (C5); 胡息 18, 等 9, S 9.
    state = _example_15()
    assert state.phase == Phase.LIANG_HU and state.card_kind == CardKind.LIANG
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "胡"] and not state.is_forced()
    play(state, "1:hu")
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU and o.winner == 1 and o.source == Source.LIANG_OTHER
    assert o.card == 10 + 5 and o.from_seat == 0
    assert (o.result.huxi, o.result.deng, o.result.score) == (18, 9, 9)
    assert o.deltas == (-9, 18, -9)


def test_example_15_declined_liang_hu_records_chouhu_then_dealer_discards():
    # Example 15 / C12: declining creates a 臭胡 record for 陆 (meldHuxi 0); the 亮张 is not
    # offered for 吃/碰 (C3) and stays in the dealer's hand; the dealer discards (§9 step 5).
    state = _example_15()
    play(state, "1:pass")
    assert state.chouhu[1] == {15: 0}
    assert state.phase == DISCARD and state.deciders() == (0,)
    assert "陆" in hand(state, 0) and state.liang_known
    assert "打 陆" in opts(state, 0)  # C32: he may discard it like any hand card
    assert state.stinky == [0, 0, 0]


def test_automatic_tianhu_preempts_the_liang_hu():
    # §9: a 3提/5坎 anywhere preempts the optional 亮张 hu (Example 15 with C holding 5 坎).
    state = new_state(
        deck_for(
            dealer="二七八九十壹贰叁肆伍陆柒捌玖拾二七八九十",
            xia=EX15_B,
            shang="一一一三三三四四四五五五六六六捌柒贰肆伍",
            liang="陆",
        )
    )
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU_AUTO and o.winner == 2
    # §11.5: 5 small 坎 = 15 胡息 (no sentence among 捌柒贰肆伍), 等 7, R = 2: S 7.
    assert (o.result.huxi, o.result.deng, o.result.score) == (15, 7, 7)
    assert o.deltas == (-7, -7, 14)


EX15D_DEALER = "一一二七十贰柒拾壹贰叁四五六七八九肆伍陆"  # + 亮张 一 (Example 15 dealer, 1st)
EX15E_DEALER = "一一一二七十贰柒拾壹贰叁四五六肆伍陆九九"  # + 亮张 一 (Example 15 dealer, 2nd)


def test_example_15d_dealer_liang_hu_pair_plus_liang_is_kan():
    # §10.3 step 0 (C4): pair + 亮张 is a 坎: 胡息 18, 等 9, S 9.
    state = new_state(
        deck_for(
            dealer=EX15D_DEALER,
            xia="二三四五六八九十壹叁肆伍陆柒捌玖拾三捌玖",
            shang="二三四五六八九十壹叁肆伍陆柒捌玖拾三捌玖",
            liang="一",
        )
    )
    assert state.phase == Phase.LIANG_HU and state.deciders() == (0,)
    assert opts(state, 0) == ["过", "胡"]
    play(state, "0:hu")
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU and o.winner == 0 and o.source == Source.LIANG_DEALER
    assert (o.result.huxi, o.result.deng, o.result.score) == (18, 9, 9)
    assert o.deltas == (18, -9, -9)


def test_example_15d_dealer_declines_then_discards():
    state = new_state(
        deck_for(
            dealer=EX15D_DEALER,
            xia="二三四五六八九十壹叁肆伍陆柒捌玖拾三捌玖",
            shang="二三四五六八九十壹叁肆伍陆柒捌玖拾三捌玖",
            liang="一",
        )
    )
    play(state, "0:pass")
    assert state.chouhu[0] == {0: 0}
    assert state.phase == DISCARD and state.deciders() == (0,) and state.n_cards(0) == 21
    # C32 / C13: pair + 亮张 is a dealt 坎, so no 一 may be discarded.
    assert "打 一" not in opts(state, 0) and "打 二" in opts(state, 0)


EX15E_OTHERS = dict(
    xia="二三四五六七八九十壹贰叁肆伍陆柒捌玖拾捌",
    shang="二三四五六七八十壹贰叁肆伍陆柒捌玖拾玖三",
)


def test_example_15e_dealer_liang_completes_ti_then_liang_hu():
    # §9 steps 3–4, Example 15 (second dealer variant): 提一 is placed first (forced), then the
    # 亮张 hu counts it as a 提: 胡息 24, 等 13, S 13.
    state = new_state(deck_for(dealer=EX15E_DEALER, **EX15E_OTHERS, liang="一"))
    assert state.phase == Phase.INIT_TI and opts(state, 0) == ["提 一"]
    play(state, "0:ti:一")
    assert table(state, 0) == ["提一"]
    assert state.phase == Phase.LIANG_HU and state.deciders() == (0,)
    play(state, "0:hu")
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU and o.winner == 0
    assert (o.result.huxi, o.result.deng, o.result.score) == (24, 13, 13)
    assert o.deltas == (26, -13, -13)


def test_example_15e_decline_records_chouhu_with_the_ti_then_discard():
    # C12: the record's meldHuxi includes the 提 placed at §9 step 3 (提一 = 9); N 21 > T 20.
    state = new_state(deck_for(dealer=EX15E_DEALER, **EX15E_OTHERS, liang="一"))
    play(state, "0:ti:一", "0:pass")
    assert state.chouhu[0] == {0: 9}
    assert state.phase == DISCARD and state.deciders() == (0,)
    assert state.n_cards(0) == 21 and state.target(0) == 20


def test_others_may_hu_the_liang_that_completes_the_dealers_ti():
    # §9 step 4: "莊家亮張的牌正好構成一提，其他玩家仍然能胡這個亮張牌"; the order is dealer,
    # 下家, 上家.
    b = "二三壹贰叁贰柒拾四五六七八九陆柒捌三四五"  # 一二三 壹贰叁 贰柒拾 … on 一: 胡息 15
    others = dict(xia=b, shang="二三四五六七八九十壹叁肆伍陆柒捌玖拾八十")
    state = new_state(deck_for(dealer=EX15E_DEALER, **others, liang="一"))
    play(state, "0:ti:一")
    assert state.phase == Phase.LIANG_HU and state.deciders() == (0, 1)
    assert opts(state, 0) == ["过", "胡"] and opts(state, 1) == ["过", "胡"]
    play(state, "1:hu", "0:pass")
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU and o.winner == 1 and o.source == Source.LIANG_OTHER
    assert o.result.huxi == 15 and o.result.score == o.result.deng == 7

    both = new_state(deck_for(dealer=EX15E_DEALER, **others, liang="一"))
    play(both, "0:ti:一", "1:hu", "0:hu")
    assert both.outcome.winner == 0  # the dealer first

    none = new_state(deck_for(dealer=EX15E_DEALER, **others, liang="一"))
    play(none, "0:ti:一", "0:pass", "1:pass")
    assert none.chouhu[0] == {0: 9} and none.chouhu[1] == {0: 0}
    assert none.phase == DISCARD and none.deciders() == (0,)


# ============================================================================ §7 Example 21


def test_example_21a_dealer_with_two_ti_does_not_discard():
    # Example 21(a): 伍×4 and 三×3 + 亮张 三: both 提 placed, N 21 = T 21, no 亮张 hu for him
    # (q = 2), no discard: his 下家 draws first.
    state = new_state(
        deck_for(
            dealer="伍伍伍伍三三三一二四五六七八九十壹贰叁肆",
            xia="一二四五六七八九十壹贰叁肆陆柒捌玖拾一二",
            shang="一二四五六七八九十壹贰叁肆陆柒捌玖拾四五",
            liang="三",
            stock="拾",
        )
    )
    assert opts(state, 0) == ["提 三"]
    play(state, "0:ti:三")
    assert opts(state, 0) == ["提 伍"]
    play(state, "0:ti:伍")
    assert state.n_cards(0) == 21 and state.target(0) == 21
    assert state.dealer_discards == 0 and state.discards[0] == []
    assert state.n_draws == 1 and state.stock_left() == 18  # seat 1 drew 拾 already
    assert state.history == [(0, 30 + 2), (0, 30 + 14)]


# Example 21(b): B (seat 1) is dealt 一×4 and 贰×4 (N 20, T 21), a 坎九 and 六六.
DECK_EX21B = dict(
    dealer="九六捌捌捌玖玖玖柒柒柒二三十十壹壹肆拾伍",
    xia="一一一一贰贰贰贰九九九六六四五七八壹叁拾",
    shang="陆陆陆四四四二三五七八十壹叁肆伍柒捌玖拾",
    liang="五",
    stock="二三肆六",
)


def test_example_21b_non_dealer_with_two_ti_first_peng_owes_no_discard():
    state = new_state(deck_for(**DECK_EX21B))
    play(state, "1:ti:一", "1:ti:贰")
    # No 亮张 hu for B (q = 2: 21 cards cannot make the 22 needed); the dealer discards.
    assert state.phase == DISCARD and state.deciders() == (0,)
    assert state.n_cards(1) == 20 and state.target(1) == 21
    play(state, "0:discard:六")
    assert opts(state, 1) == ["过", "碰"]
    play(state, "1:peng")
    # N 21 = T 21: no discard; the next player (seat 2) draws 二, then the dealer draws 三.
    assert table(state, 1) == ["提一", "提贰", "碰六"] and state.n_cards(1) == 21
    assert right(state, 2) == "二" and state.owner == 0
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "吃 [三四五]"]


def test_example_21b_pao_then_chi_owe_no_discard_third_take_does():
    # Example 21(b): first take 跑 (q 3, T 22, N 21): no discard; second take 吃 (N 22): no
    # discard; third take 碰 (N 23 > 22): discard.
    state = new_state(deck_for(**DECK_EX21B))
    play(state, "1:ti:一", "1:ti:贰", "0:discard:九", "1:pao:九")
    assert (state.n_cards(1), state.target(1)) == (21, 22)
    assert right(state, 2) == "二" and state.owner == 0  # no discard: seat 2 drew next
    play(state, "1:chi:三四五")
    assert (state.n_cards(1), state.target(1)) == (22, 22)
    assert right(state, 2) == "二肆" and state.owner == 0  # again no discard
    assert opts(state, 1) == ["过", "碰"]  # the dealer's 六
    play(state, "1:peng")
    assert (state.n_cards(1), state.target(1)) == (23, 22)
    assert state.phase == DISCARD and state.deciders() == (1,)
    assert opts(state, 1) == ["打 七", "打 八", "打 壹", "打 叁", "打 拾"]


# ============================================================================ §10 winning

# Seat 1 becomes Example 5's A by play: 碰捌 (the dealer's discard), 吃[壹贰叁] and 吃[四五六]
# (the dealer's draws), discarding 肆, 肆, 拾; hand 贰柒拾 一二三 六七八 柒玖.
DECK_EX5 = dict(
    dealer="捌九九九十十十伍伍伍一一二四六七七壹叁拾",
    xia="贰柒拾一二三六七八柒玖捌捌壹贰五六肆肆拾",
    shang="陆陆陆玖玖玖八八八一二二三三五五六七壹壹",
    liang="柒",
    stock="肆叁肆四捌",
)
EX5_SETUP = (
    "0:discard:捌",
    "1:peng",
    "1:discard:肆",
    "1:chi:壹贰叁",
    "1:discard:肆",
    "1:chi:四五六",
    "1:discard:拾",
)


def _example_5():
    state = new_state(deck_for(**DECK_EX5))
    play(state, *EX5_SETUP)
    assert table(state, 1) == ["碰捌", "吃[壹贰叁]", "吃[四五六]"]
    assert hand(state, 1) == "一二三六七八贰柒柒玖拾" and state.meld_huxi(1) == 9
    # B (seat 2) draws the 4th 捌: A's 碰 would force a 跑, but the hu comes first.
    assert state.owner == 2 and state.card == 17 and state.phase == Phase.CLAIM_HU
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "胡"]
    return state


def test_example_5_pobaohu_hu_preempts_the_forced_pao():
    # Example 5 / §10.4: option F (柒捌玖): 胡息 18, 等 2, S 2, not 自摸.
    state = _example_5()
    play(state, "1:hu")
    o = state.outcome
    assert o.kind == OutcomeKind.HU and o.winner == 1 and o.source == Source.OTHER_DRAW
    assert (o.result.huxi, o.result.deng, o.result.score) == (18, 2, 2)
    assert not o.result.zimo and o.deltas == (-2, 4, -2)
    assert table(state, 1) == ["碰捌", "吃[壹贰叁]", "吃[四五六]"]  # the 跑 never happened


def test_example_5_declined_hu_records_chouhu_then_forced_pao_and_discard():
    # Example 5: declining records 臭胡 (捌, meldHuxi 9); then the forced 跑 follows and
    # N 21 > T 20, so A discards.
    state = _example_5()
    play(state, "1:pass")
    assert state.chouhu[1] == {17: 9}
    assert state.phase == Phase.CLAIM_PAO and state.is_forced()
    assert state.deciders() == (1,) and opts(state, 1) == ["跑 捌"]
    play(state, "1:pao:捌")
    assert table(state, 1) == ["跑捌", "吃[壹贰叁]", "吃[四五六]"]
    assert (state.n_cards(1), state.target(1)) == (21, 20)
    assert state.phase == DISCARD and state.deciders() == (1,)


# B (seat 1) holds Example 15's hand (waits on 陆 and 叁) with a quiet 亮张.
DECK_NO_DISCARD_HU = dict(
    dealer="一三四五六八九十壹叁肆伍陆柒捌玖拾捌玖二",
    xia=EX15_B,
    shang="一三四五六八九十壹叁肆伍陆柒捌玖拾捌玖七",
    liang="一",
)


def test_no_hu_on_a_discard_in_hunan_but_on_a_later_draw():
    # §10.2: the dealer's discarded 陆 completes B's hand, but a discard cannot be hu'd in
    # Hunan: B is only offered the eats. Passing makes 陆 stinky, which does not prevent a hu
    # of a later revealed 陆 (§6.1 "可以胡臭牌").
    state = new_state(deck_for(**DECK_NO_DISCARD_HU, stock="九陆"))
    play(state, "0:discard:陆")
    assert state.phase == Phase.CLAIM_TAKE and state.deciders() == (1,)
    assert opts(state, 1) == ["过", "吃 [肆伍陆]", "吃 [伍陆柒]"]
    play(state, "1:pass")
    assert faces(state.stinky[1]) == "陆" and state.chouhu[1] == {}
    play(state, "2:pass")  # B drew 九, which only seat 2 could eat
    assert state.owner == 2 and state.card == 15 and state.phase == Phase.CLAIM_HU
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "胡"]
    play(state, "1:hu")
    o = state.outcome
    assert o.winner == 1 and o.source == Source.OTHER_DRAW and o.from_seat == 2
    assert (o.result.huxi, o.result.deng, o.result.score) == (18, 2, 2)


def test_hu_on_own_draw_is_zimo():
    # §10.5 / §11.2: B draws 叁 himself (叁肆伍): 自摸, +1 等: 胡息 18, 等 3, S 3.
    state = new_state(deck_for(**DECK_NO_DISCARD_HU, stock="叁"))
    play(state, "0:discard:陆", "1:pass")
    assert state.owner == 1 and state.card == 12 and state.phase == Phase.CLAIM_HU
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "胡"]
    play(state, "1:hu")
    o = state.outcome
    assert o.source == Source.OWN_DRAW and o.result.zimo and o.from_seat == 1
    assert (o.result.huxi, o.result.deng, o.result.score) == (18, 3, 3)
    assert o.deltas == (-3, 6, -3)


# B (seat 1) waits on 陆; seat 2 holds 陆陆 and draws the 3rd 陆 (偎); B draws the 4th.
DECK_WEI_CARD = dict(
    dealer="四四四肆肆肆柒柒柒九九九一二六六八壹贰叁",
    xia=EX15_B,
    shang="陆陆捌捌捌玖玖玖十十十伍伍伍一三五八壹叁",
    liang="拾",
    stock="八陆拾陆",
)


def test_nobody_can_hu_a_wei_card_and_hu_beats_a_forced_pao():
    # §5.2 / §10.1 D: seat 2's 偎 card is never revealed, so B (waiting on 陆) is not asked.
    # §10.4: when B later draws the 4th 陆, his hu comes before seat 2's forced 跑 onto the 偎.
    state = new_state(deck_for(**DECK_WEI_CARD))
    play(state, "0:discard:八", "1:pass")  # B draws 八 (stinky for him now, nobody else)
    assert state.owner == 2 and state.phase == Phase.DRAW_TAKE
    assert state.deciders() == (2,) and opts(state, 2) == ["偎 陆"]
    play(state, "2:wei:陆")
    assert state.chouhu[1] == {} and state.phase == DISCARD and state.deciders() == (2,)
    play(state, "2:discard:五", "1:pass")  # the dealer's 拾: B may eat (十拾拾) but passes
    assert state.owner == 1 and state.card == 15 and state.phase == Phase.CLAIM_HU
    assert state.deciders() == (1,) and opts(state, 1) == ["过", "胡"]
    won = state.clone()
    play(won, "1:hu")
    assert won.outcome.winner == 1 and won.outcome.source == Source.OWN_DRAW
    assert won.outcome.result.score == 3 and table(won, 2) == ["偎陆"]
    play(state, "1:pass")
    assert state.chouhu[1] == {15: 0}
    assert state.phase == Phase.CLAIM_PAO and opts(state, 2) == ["跑 陆"]
    play(state, "2:pao:陆")
    assert table(state, 2) == ["跑陆"] and state.phase == DISCARD and state.deciders() == (2,)


# ============================================================================ §8 claim order

# Seats 1 and 2 both hold Example 15's hand; the dealer holds 坎捌 坎玖 陆陆: all three wait
# on 陆 (the dealer with pair + revealed card).
DECK_THREE_WAIT = dict(
    dealer="捌捌捌玖玖玖陆陆三四五三四五八九十八九十",
    xia=EX15_B,
    shang=EX15_B,
    liang="一",
)


def _three_wait(stock: str):
    state = new_state(deck_for(**DECK_THREE_WAIT, stock=stock))
    play(state, "0:discard:一", "1:pass")
    return state


def test_hu_order_drawer_first():
    # §8.4 H / §10.4: all three may hu B's 陆; the drawer comes first.
    state = _three_wait("陆")
    assert state.owner == 1 and state.phase == Phase.CLAIM_HU
    assert state.deciders() == (1, 2, 0)
    assert all(opts(state, s) == ["过", "胡"] for s in (0, 1, 2))
    play(state, "2:hu", "0:hu", "1:hu")
    o = state.outcome
    assert o.winner == 1 and o.source == Source.OWN_DRAW and o.result.score == 3
    assert o.deltas == (-3, 6, -3)


def test_hu_order_xiajia_before_shangjia():
    state = _three_wait("陆")
    play(state, "1:pass", "0:hu", "2:hu")
    o = state.outcome
    assert o.winner == 2 and o.source == Source.OTHER_DRAW and o.result.score == 2
    assert o.deltas == (-2, -2, 4)


def test_hu_order_shangjia_last_and_dealer_pair_plus_card():
    state = _three_wait("陆")
    play(state, "1:pass", "2:pass", "0:hu")
    o = state.outcome
    # 坎捌 6 + 坎玖 6 + {陆陆陆} 3 (碰-valued, C8) + 0 = 胡息 15, 等 1.
    assert o.winner == 0 and (o.result.huxi, o.result.deng, o.result.score) == (15, 1, 1)
    assert o.deltas == (2, -1, -1)


def test_hu_order_follows_the_drawer_seat_two():
    # Seat 2 draws: order seat 2, his 下家 (the dealer), his 上家 (seat 1).
    state = _three_wait("拾陆")
    play(state, "1:pass", "2:pass")  # B's 拾 (十拾拾) passed by both eaters
    assert state.owner == 2 and state.deciders() == (2, 0, 1)
    play(state, "1:hu", "0:hu", "2:pass")
    assert state.outcome.winner == 0


def test_all_declining_hu_records_chouhu_for_each_then_claims_continue():
    # §8.4 H: every eligible player who did not declare HU gets a 臭胡 record; then §8.4 C:
    # the dealer may 碰 (pair 陆陆), B (the drawer) and seat 2 (his 下家) may eat.
    state = _three_wait("陆")
    play(state, "0:pass", "1:pass", "2:pass")
    assert state.chouhu == [{15: 0}, {15: 0}, {15: 0}]
    assert state.phase == Phase.CLAIM_TAKE
    assert sorted(state.deciders()) == [0, 1, 2]
    assert opts(state, 0) == ["过", "碰"]
    assert opts(state, 1) == ["过", "吃 [肆伍陆]", "吃 [伍陆柒]"]
    assert opts(state, 2) == ["过", "吃 [肆伍陆]", "吃 [伍陆柒]"]
    play(state, "1:chi:肆伍陆", "2:chi:肆伍陆", "0:peng")
    assert table(state, 0) == ["碰陆"] and table(state, 1) == [] and table(state, 2) == []
    assert state.phase == DISCARD and state.deciders() == (0,)


# ============================================================================ §6.5 empty hand

# Seat 1 eats 二 with three groups and 伍 with three groups, keeping only 九九 in hand.
DECK_EMPTY = dict(
    dealer="二六六六七七七八八八一一三四四十十贰叁叁",
    xia="一二二三三四贰贰叁肆肆陆伍伍五五壹壹九九",
    shang="柒柒柒捌捌捌玖玖玖拾拾拾二三四五六十肆陆",
    liang="陆",
)
EMPTY_SETUP = (
    "0:discard:二",
    "1:chi:一二三+二三四+二贰贰",
    "1:discard:壹",  # seat 2 draws 贰
    "1:chi:叁肆伍+肆伍陆+五五伍",  # the dealer's 伍
    "1:discard:壹",
)


def test_peng_illegal_when_no_card_would_remain_c14():
    # §6.5 C14: with q = 0 and only 九九 in hand, a 碰 of 九 would owe a discard from an empty
    # hand, so it is not offered; then his own 九 is a forced 偎 that empties the hand: the
    # discard is skipped and his 下家 draws.
    state = new_state(deck_for(**DECK_EMPTY, stock="贰伍九陆九"))
    play(state, *EMPTY_SETUP)
    assert hand(state, 1) == "九九" and len(state.melds[1]) == 6
    # Seat 2 drew 九: nobody was asked (A's 碰 is illegal); the dealer drew 陆 (unclaimable).
    assert right(state, 2) == "贰九" and right(state, 0) == "陆" and state.stinky[1] == 0
    assert state.phase == Phase.DRAW_TAKE and opts(state, 1) == ["偎 九"]
    play(state, "1:wei:九")
    assert hand(state, 1) == "" and (state.n_cards(1), state.target(1)) == (21, 20)
    assert state.owner == 2 and state.card_kind == CardKind.DRAWN  # no discard: 下家 draws
    assert 1 not in state.deciders()


def test_empty_hand_wei_run_by_another_draw_skips_the_discard_c14():
    # §6.5: a later forced take (his 偎 run by another player's draw) also skips the discard.
    state = new_state(deck_for(**DECK_EMPTY, stock="贰伍五陆九九"))
    play(state, *EMPTY_SETUP, "0:pass")  # seat 2's 五: the dealer may eat (三四五), passes
    assert state.phase == Phase.DRAW_TAKE and opts(state, 1) == ["偎 九"]
    play(state, "1:wei:九")
    assert state.owner == 2 and state.phase == Phase.CLAIM_PAO and opts(state, 1) == ["跑 九"]
    play(state, "1:pao:九")
    assert table(state, 1)[-1] == "跑九" and (state.n_cards(1), state.target(1)) == (22, 20)
    assert state.owner == 2 and 1 not in state.deciders()  # seat 2 draws again


# ============================================================================ §5.7 C13 all-坎 hand

# Seat 1: 坎四 坎六 坎捌 坎拾 + 一二三贰贰 玖 九九. He eats 二 ({一二三, 二贰贰}), discards 玖,
# then 碰s 九: his hand is 12 坎 cards.
DECK_ALL_KAN = dict(
    dealer="二壹壹壹叁叁叁伍伍伍一一三三肆柒柒贰贰捌",
    xia="四四四六六六捌捌捌拾拾拾一二三贰贰玖九九",
    shang="七七七八八八十十十陆陆陆五五拾肆伍柒叁壹",
    liang="一",
    stock="九四",
)


def _all_kan():
    state = new_state(deck_for(**DECK_ALL_KAN))
    play(state, "0:discard:二")
    assert opts(state, 1) == ["过", "吃 [二二贰]", "吃 [一二三][二贰贰]"]
    play(state, "1:chi:一二三+二贰贰")
    assert opts(state, 1) == ["打 九", "打 玖"]  # C13: no 坎 card while loose cards remain
    play(state, "1:discard:玖")
    # Seat 2 draws 九: seat 1 could win (pair + revealed card with four 坎s) but declines it.
    assert state.owner == 2 and opts(state, 1) == ["过", "胡"]
    play(state, "1:pass")
    assert state.chouhu[1] == {8: 3}
    assert opts(state, 1) == ["过", "碰"]
    play(state, "1:peng")
    assert hand(state, 1) == "四四四六六六捌捌捌拾拾拾"
    return state


def test_all_kan_hand_may_discard_from_a_kan_c13():
    # §5.7 C13: a 坎 card may be discarded when every hand card belongs to a 坎.
    state = _all_kan()
    assert state.phase == DISCARD and state.deciders() == (1,)
    assert opts(state, 1) == ["打 四", "打 六", "打 捌", "打 拾"]


def test_face_discarded_from_a_kan_cannot_be_pengd():
    # §6.2: after discarding 四 from his 坎 he holds 四四, yet he may never 碰 a 四 again (he
    # may still hu it, §6.2 "偎/提/跑/hu stay allowed").
    state = _all_kan()
    play(state, "1:discard:四")
    assert right(state, 1) == "玖四" and faces(state.discarded[1]) == "四玖"
    assert state.owner == 2 and state.card == 3 and opts(state, 1) == ["过", "胡"]
    play(state, "1:pass")
    # No 碰 offered: the 4th 四 goes to seat 2's right and the game moves on.
    assert right(state, 2) == "四" and hand(state, 1).count("四") == 2
    assert state.renpeng[1] == 0 and state.stinky[1] == 0


# ============================================================================ §12 end of hand

# B (seat 1) holds Example 15's hand; every other 叁 and 陆 is in the dealer's or seat 2's hand
# except the bottom card 陆 (the 19th draw). Played passively (every claim declined, first
# legal discard), nobody takes a card and B draws the 海底 card himself.
DECK_HAIDI = dict(
    dealer="陆叁叁二七贰一三四五八九十壹肆伍柒捌玖拾",
    xia=EX15_B,
    shang="陆陆叁二七贰一三四五八九十壹肆伍柒捌玖拾",
    liang="六",
    bottom="陆",
)


def _haidi(rules: str = "hunan"):
    state = new_state(deck_for(**DECK_HAIDI), rules=rules)
    drive(state, stop=lambda s: s.stock_left() == 0)
    assert all(seat == 0 or action == PASS for seat, action in state.history[1:])
    assert state.n_draws == 19 and state.card == 15 and state.owner == 1
    return state


def test_last_stock_card_is_offered_and_can_be_hu_haidi():
    # §12: the last stock card is offered normally; B's 自摸 on it is 海底 (平胡海底: 番 1, C33):
    # 胡息 18, 等 2 + 1, S 3.
    state = _haidi()
    assert state.phase == Phase.CLAIM_HU and opts(state, 1) == ["过", "胡"]
    play(state, "1:hu")
    o = state.outcome
    assert o.kind == OutcomeKind.HU and o.source == Source.OWN_DRAW
    assert (o.result.huxi, o.result.deng, o.result.fan, o.result.score) == (18, 3, 1, 3)
    assert o.deltas == (-3, 6, -3)


def test_last_stock_card_may_be_claimed_then_huangzhuang_at_the_next_draw():
    # §12 / C16: the last card can still be taken (seat 2 碰s it and discards); 荒庄 comes only
    # when the next draw is needed. No payments.
    state = _haidi()
    play(state, "1:pass")
    assert opts(state, 2) == ["过", "碰"] and opts(state, 1) == ["过", "吃 [肆伍陆]", "吃 [伍陆柒]"]
    play(state, "1:pass", "2:peng")
    assert table(state, 2) == ["碰陆"] and state.phase == DISCARD and state.outcome is None
    drive(state)
    o = state.outcome
    assert o.kind == OutcomeKind.HUANGZHUANG and o.winner is None and o.result is None
    assert o.deltas == (0, 0, 0) and state.stock_left() == 0
    assert len(state.discards[2]) == 1  # seat 2 discarded after his 碰, nobody took it


def test_huangzhuang_when_nobody_takes_the_last_card():
    state = _haidi()
    play(state, "1:pass", "1:pass", "2:pass")
    o = state.outcome
    assert o.kind == OutcomeKind.HUANGZHUANG and o.deltas == (0, 0, 0)
    assert right(state, 1).endswith("陆") and state.chouhu[1] == {15: 0}
    assert state.is_terminal() and state.deciders() == ()


# ============================================================================ §13 four players

DECK_4P = dict(
    dealer=EX15D_DEALER,  # + 一 at position 60: a complete 21-card hand
    xia=EX15_B,
    shang="捌捌捌玖玖玖二三四五六八九壹叁肆伍陆陆拾",
    liang="一",  # position 60: in 4 players the dealer's 21st card, never shown
    stock="九",
    bottom="三柒十",  # the last three stock cards, 十 at the very bottom (position 79)
)


def test_4p_sitter_gets_no_cards_and_the_ring_skips_him():
    # §13: the seat opposite the dealer sits out; deck slices go to dealer, dealer+1, dealer+3.
    state = new_state(deck_for(**DECK_HAIDI), dealer=2, rules="hunan-4p")
    assert state.sitter == 0 and state.active == (2, 3, 1)
    assert state.hands[0] == [0] * 20 and state.hand_size[0] == 0
    assert hand(state, 3) == hand(new_state(deck_for(**DECK_HAIDI)), 1)  # positions 20–39
    assert (state.xia[2], state.xia[3], state.xia[1]) == (3, 1, 2)
    assert (state.shang[2], state.shang[3], state.shang[1]) == (1, 2, 3)
    assert state.hand_size[2] == 21 and state.liang is None
    assert state.phase == DISCARD and state.deciders() == (2,)


def test_4p_bottom_card_shown_and_red_bottom_cards_move_to_the_top():
    # §13 (C21): 十 (red) moves to the top, then 柒 (red) too; 三 (black) stays as the shown
    # bottom card. The swapped cards are drawn first, 柒 before 十.
    state = new_state(deck_for(**DECK_4P), rules="hunan-4p")
    assert state.bottom == 2 and state.bottom_swaps == 2
    assert state.stock[0] == 2 and state.stock[-1] == 10 + 6 and state.stock[-2] == 9
    assert state.stock[-3] == 8  # then the stock as dealt: 九 …
    assert top(state) == "柒" and state.stock_left() == 19


def test_4p_no_liang_so_no_liang_hu_for_non_dealers():
    # §13: "莊家不示最後一張": Example 15's B is not offered the dealer's 21st card (陆).
    rules = "hunan-4p"
    state = new_state(deck_for(**{**DECK_NO_DISCARD_HU, "liang": "陆"}), rules=rules)
    assert state.liang is None and state.phase == DISCARD and state.deciders() == (0,)
    assert "陆" in hand(state, 0)


def test_4p_dealer_21_card_tianhu_and_the_sitter_pays_nothing():
    # §13 C21: the dealer may declare 天胡 with a complete 21-card hand (scored like Example 15d:
    # 胡息 18, 等 9, S 9); the sitter neither pays nor receives.
    state = new_state(deck_for(**DECK_4P), rules="hunan-4p")
    assert state.phase == Phase.LIANG_HU and state.deciders() == (0,)
    assert opts(state, 0) == ["过", "胡"]
    play(state, "0:hu")
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU and o.winner == 0 and o.source == Source.LIANG_DEALER
    assert o.card is None and o.result.score == 9
    assert o.deltas == (18, -9, 0, -9)


def test_4p_dealer_declines_21_card_tianhu_then_discards():
    state = new_state(deck_for(**DECK_4P), rules="hunan-4p")
    play(state, "0:pass")
    assert state.chouhu[0] == {}  # no card was shown, so there is no 臭胡 face
    assert state.phase == DISCARD and state.deciders() == (0,)


def test_4p_automatic_tianhu_sitter_zero():
    state = new_state(
        deck_for(
            dealer="一二四五六七八十壹贰叁肆伍柒捌玖一四六十",
            xia=EX14_B,
            shang="一二四五六七八十贰叁肆伍柒捌玖拾一四六十",
            liang="贰",
        ),
        rules="hunan-4p",
    )
    o = state.outcome
    assert o.kind == OutcomeKind.TIANHU_AUTO and o.winner == 1
    assert o.deltas == (-17, 34, 0, -17)


def test_4p_nobody_may_hu_the_bottom_card():
    # §13: B's wait 陆 is the shown bottom card (black, so not swapped): the 19th draw may not
    # be hu'd; the other claims are still offered (seat 3 may 碰, B may eat).
    state = new_state(deck_for(**DECK_HAIDI), rules="hunan-4p")
    assert state.bottom == 15 and state.bottom_swaps == 0
    drive(state, stop=lambda s: s.stock_left() == 0)
    assert state.card == 15 and state.owner == 1 and state.outcome is None
    assert state.phase == Phase.CLAIM_TAKE and state.chouhu[1] == {}
    assert opts(state, 3) == ["过", "碰"]
    assert opts(state, 1) == ["过", "吃 [肆伍陆]", "吃 [伍陆柒]"]
    play(state, "1:pass", "3:pass")
    assert state.outcome.kind == OutcomeKind.HUANGZHUANG and state.outcome.deltas == (0, 0, 0, 0)


def test_4p_ordinary_hu_sitter_zero():
    # Example 15's B wins a draw by the 上家 (seat 3); the sitter (seat 2) pays nothing.
    deck = deck_for(**DECK_NO_DISCARD_HU, stock="九陆", bottom="三")  # a black bottom card
    state = new_state(deck, rules="hunan-4p")
    play(state, "0:discard:陆", "1:pass", "3:pass")
    assert state.owner == 3 and opts(state, 1) == ["过", "胡"]
    play(state, "1:hu")
    assert state.outcome.deltas == (-2, 4, 0, -2)


# ============================================================================ §14 Luzhou


def test_luzhou_hu_on_a_discard_xiajia_first_and_dihu():
    # §14 / §10.4: in Luzhou a discard may be hu'd, the discarder's 下家 first. The 下家's win
    # on the dealer's first discard is 地胡 (×2): 24 胡, 等 15, S 30.
    state = new_state(deck_for(**DECK_THREE_WAIT), rules="luzhou")
    play(state, "0:discard:陆")
    assert state.phase == Phase.CLAIM_HU and state.deciders() == (1, 2)
    assert opts(state, 1) == ["过", "胡"] and opts(state, 2) == ["过", "胡"]
    assert opts(state, 0) == []  # never the discarder
    play(state, "2:hu", "1:hu")
    o = state.outcome
    assert o.winner == 1 and o.source == Source.DISCARD and o.from_seat == 0
    assert (o.result.huxi, o.result.deng, o.result.score) == (24, 15, 30)
    assert dict(o.result.mingtang) == {"地胡": 2}
    assert o.deltas == (-30, 60, -30)


def test_luzhou_shangjia_hu_on_the_first_discard_is_not_dihu():
    state = new_state(deck_for(**DECK_THREE_WAIT), rules="luzhou")
    play(state, "0:discard:陆", "1:pass", "2:hu")
    o = state.outcome
    assert o.winner == 2 and o.source == Source.DISCARD and o.result.score == 15
    assert o.deltas == (-15, -15, 30)


def test_luzhou_declined_discard_hu_records_chouhu_then_eats():
    state = new_state(deck_for(**DECK_THREE_WAIT), rules="luzhou")
    play(state, "0:discard:陆", "1:pass", "2:pass")
    assert state.chouhu == [{}, {15: 0}, {15: 0}]
    assert state.phase == Phase.CLAIM_TAKE and state.deciders() == (1,)
    assert opts(state, 1) == ["过", "吃 [肆伍陆]", "吃 [伍陆柒]"]


def test_luzhou_dihu_only_on_the_dealers_first_discard():
    # §14: 地胡 is the 下家's win on the dealer's *first* discard; the dealer's second discard
    # won by the 下家 scores S = 等 15 × 1.
    state = new_state(deck_for(**DECK_THREE_WAIT, stock="拾肆六"), rules="luzhou")
    play(state, "0:discard:一", "1:pass")  # seat 1 could eat 一 (一一壹)
    play(state, "1:pass", "2:pass")  # seat 1's 拾 (十拾拾)
    play(state, "2:pass", "0:pass")  # seat 2's 肆 (四肆肆 / 四四肆)
    # The dealer draws 六: he could win (自摸) but declines, then eats it.
    assert state.owner == 0 and opts(state, 0) == ["过", "胡"]
    play(state, "0:pass", "1:pass", "0:chi:四五六", "0:discard:陆")
    assert state.dealer_discards == 2 and state.deciders() == (1, 2)
    play(state, "1:hu", "2:hu")
    o = state.outcome
    assert o.winner == 1 and o.result.score == 15 and o.result.mingtang == ()
    assert o.deltas == (-15, 30, -15)


def test_luzhou_peng_is_compulsory_and_forced():
    # §14 C35: a legal 碰 is executed automatically (a forced legal set of one); no 忍碰, no 臭.
    state = new_state(deck_for(dealer=PENG8_DEALER, **PENG8_SEATS, stock="八"), rules="luzhou")
    play(state, "0:discard:八")
    assert state.phase == Phase.CLAIM_TAKE and state.is_forced()
    assert state.deciders() == (1,) and opts(state, 1) == ["碰"]
    with pytest.raises(IllegalAction):
        play(state, "1:pass")
    play(state, "1:peng")
    assert table(state, 1) == ["碰八"] and state.renpeng[1] == 0 and state.stinky[1] == 0
    assert state.phase == DISCARD and state.deciders() == (1,)


# ============================================================================ more scenarios
# §6.4 C12, §5.3 ③ (discard), §14 4 players, §11.3 地胡 (C17), §9 C3/C32, §5.1, §8, C15.


def test_declined_liang_hu_blocks_a_later_hu_on_that_face_c12():
    # §6.4 C12: declining the 亮张 陆 records (陆, 0); B's own later draw of 陆 (meldHuxi
    # still 0) is not offered as a hu, only as the ordinary 碰/吃 claims.
    state = new_state(
        deck_for(
            dealer="一三四五六八九十壹叁肆伍陆柒捌玖拾捌玖二",
            xia=EX15_B,
            shang="一三四五六八九十壹叁肆伍陆柒捌玖拾捌玖七",
            liang="陆",
            stock="陆",
        )
    )
    play(state, "1:pass", "0:discard:九")  # nobody can take 九; B draws 陆
    assert state.owner == 1 and state.card == 15 and state.outcome is None
    assert state.phase == Phase.CLAIM_TAKE  # no CLAIM_HU step at all
    assert opts(state, 1) == ["过", "吃 [肆伍陆]", "吃 [伍陆柒]"]
    assert opts(state, 0) == ["过", "碰"]  # the dealer's pair: 陆 + the 亮张


def test_pao_onto_wei_from_a_discard():
    # §5.3 ③: a 偎 is run by another player's *discard* of the 4th card (unlike a 碰, C28).
    shang = "捌捌捌玖玖玖七七七十柒一二三三四四五五六"  # seat 2 holds the 4th 六
    state = new_state(deck_for(**{**DECK_OWN_DRAW, "shang": shang}, stock="九拾拾六七"))
    play(state, "0:discard:八", "1:ti:九", "1:discard:柒", "1:wei:六", "1:discard:十")
    assert opts(state, 2) == ["提 七"]  # seat 2 draws onto his 坎七, then must discard
    play(state, "2:ti:七", "2:discard:六")
    assert state.card_kind == CardKind.DISCARDED and state.phase == Phase.CLAIM_PAO
    assert state.deciders() == (1,) and opts(state, 1) == ["跑 六"] and state.is_forced()
    play(state, "1:pao:六")
    assert table(state, 1) == ["提九", "跑六"] and state.n_cards(1) == state.target(1) == 21


def test_luzhou_4p_second_bottom_card_red_is_swapped_bug():
    # §14 "4 players: … the last two bottom cards are shown and red ones swapped" [P4]. Found
    # as a bug (the engine applied the Hunan single-card rule, §13, to every 4-player table,
    # so a red second-to-last card stayed put); fixed in the engine, the xfail is gone.
    rules = find_rules("luzhou").with_overrides(["players=4"])
    state = new_state(deck_for(**{**DECK_4P, "bottom": "三柒五"}), rules=rules)
    assert 16 not in state.stock[:2]  # 柒 must not stay among the two shown bottom cards


def test_dihu_full_level_non_dealer_on_the_first_stock_card_c17():
    # §11.3 full / C17: 地胡 is a non-dealer's win on the first card drawn from the stock, his
    # own draw (自摸 等 3 × 地胡 4 = 12) or another player's; not the dealer's, not later cards.
    state = new_state(deck_for(**DECK_NO_DISCARD_HU, stock="叁"), rules="hunan-full")
    play(state, "0:discard:陆", "1:pass", "1:hu")
    assert state.n_draws == 1 and dict(state.outcome.result.mingtang) == {"地胡": 4}
    assert state.outcome.result.score == 12

    later = new_state(deck_for(**DECK_NO_DISCARD_HU, stock="九陆"), rules="hunan-full")
    play(later, "0:discard:陆", "1:pass", "2:pass", "1:hu")
    assert later.n_draws == 2 and later.outcome.result.mingtang == ()

    other = new_state(deck_for(**DECK_THREE_WAIT, stock="陆"), rules="hunan-full")
    play(other, "0:discard:一", "1:pass", "1:pass", "0:pass", "2:hu")
    assert other.outcome.winner == 2 and dict(other.outcome.result.mingtang) == {"地胡": 4}

    dealer = new_state(deck_for(**DECK_THREE_WAIT, stock="陆"), rules="hunan-full")
    play(dealer, "0:discard:一", "1:pass", "1:pass", "2:pass", "0:hu")
    assert dealer.outcome.winner == 0 and "地胡" not in dict(dealer.outcome.result.mingtang)


def test_liang_is_never_run_when_shown_but_is_an_ordinary_discard_later_c3_c32():
    # §9 step 4 C3: the 亮张 九 completes seat 1's 坎九 but is only offered for hu (none here),
    # never run. C32: once the dealer discards it, it is an ordinary discard and is run.
    deck = deck_for(
        **{**DECK_PAO, "dealer": "壹壹壹贰贰贰叁叁叁五一二三四五六八十柒一", "liang": "九"}
    )
    state = new_state(deck)
    assert state.phase == DISCARD and state.deciders() == (0,)
    assert table(state, 1) == [] and hand(state, 1).count("九") == 3
    assert state.liang_known and "打 九" in opts(state, 0)
    play(state, "0:discard:九")
    assert not state.liang_known
    assert state.phase == Phase.CLAIM_PAO and opts(state, 1) == ["跑 九"]


def test_nobody_can_hu_a_ti_card():
    # §5.1: a 提 is never revealed as a claimable card: seat 2 draws the 4th 陆 onto his 坎 and
    # 提s it; B, who waits on 陆, is never asked.
    shang = "陆陆陆捌捌捌玖玖玖十十十一三五八壹叁伍伍"
    state = new_state(deck_for(**{**DECK_WEI_CARD, "shang": shang, "stock": "八陆"}))
    play(state, "0:discard:八", "1:pass")
    assert state.phase == Phase.DRAW_TAKE and opts(state, 2) == ["提 陆"]
    play(state, "2:ti:陆")
    assert table(state, 2) == ["提陆"] and state.chouhu[1] == {}
    assert state.phase == DISCARD and state.deciders() == (2,)


def test_play_continues_from_the_claimer_and_seats_may_be_skipped():
    # §8.4 notes: the 上家 (seat 2) 碰s the dealer's discard over the 下家's 吃 (碰 > 吃, and the
    # 吃 declarer is not marked); after seat 2's discard the dealer draws: seat 1 is skipped.
    state = new_state(deck_for(**DECK_EX5))
    play(state, "0:discard:壹")
    assert opts(state, 2) == ["过", "碰"] and opts(state, 1) == ["过", "吃 [一壹壹]"]
    play(state, "1:chi:一壹壹", "2:peng")
    assert table(state, 2) == ["碰壹"] and table(state, 1) == [] and state.stinky[1] == 0
    play(state, "2:discard:二")
    assert right(state, 2) == "二" and state.owner == 0 and state.n_draws == 1


@pytest.mark.parametrize(
    "declarations",
    [
        ("1:hu", "2:hu", "0:hu"),
        ("0:hu", "2:hu", "1:hu"),
        ("2:hu", "1:hu", "0:pass"),
        ("0:pass", "2:pass", "1:hu"),
    ],
)
def test_declaration_order_is_irrelevant_c15(declarations):
    # C15: declarations are simultaneous and hidden; the result depends only on priorities.
    state = _three_wait("陆")
    for i, step in enumerate(declarations):
        assert state.outcome is None and len(state.deciders()) == 3 - i
        play(state, step)
    assert state.outcome.winner == 1
