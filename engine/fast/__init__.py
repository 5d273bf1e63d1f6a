"""The compiled (numba) engine: byte-identical to the pure-Python reference in ``engine``.

Submodules (imported explicitly, never from here, so ``import engine.fast`` stays light)
mirror the reference's modules, and their kernels the reference's functions and methods,
name for name (STYLE §20): :mod:`~engine.fast.hu` (``engine.hu``: ``hu_eval`` =
``evaluate_hu_counts``, ``_score`` = ``engine.scoring.score_hu``), :mod:`~engine.fast.state`
(``engine.state``: ``new_state``, ``apply``, ``_draw``, ``_claim_hu`` …),
:mod:`~engine.fast.features` / :mod:`~engine.fast.policies` (``engine.policies``),
:mod:`~engine.fast.play` (``engine.play``), :mod:`~engine.fast.deck` /
:mod:`~engine.fast.pyrandom` (``engine.deck``, Python's ``random``),
:mod:`~engine.fast.verify` (the verifier's kernels), :mod:`~engine.fast.batch_score`,
:mod:`~engine.fast.search` (``engine.search``: ``determinize``).

Kernels are ``@njit(cache=True)`` functions over integer arrays: no fastmath, no recursion
(a self-recursive cached kernel runs where it was compiled but crashes a later process that
loads it from the cache; ``test_cached_kernels_reload_in_a_new_process``), and no globals but
constant tables. Every code and table that comes from the rules (enum values, 胡息 tables, the
名堂 and 等 tables) is derived once from the reference, in :mod:`engine.fast.codes`; its
digest and the files a module inlines decide when the disk cache is dropped
(:mod:`engine.fast.cache_guard`, :mod:`engine.fast.cache`).

Arrays
------
The one description of the layouts (each module defines the offsets it names here).

``params`` (int64, ``hu.PARAMS_SIZE`` = 32, :func:`engine.fast.hu.rule_params`): the rule set
for the hu kernels; indices 32.. belong to the caller (``hp`` below).

=========================  ==============================================================
``P_LUZHOU = 0``           1: ruleset luzhou
``P_ONE_FIVE_TEN = 1``     1: 1-5-10 is a 一句话
``P_VARIANT = 2``          the 胡息 table variant 2·luzhou + one_five_ten (``codes.HX_*``)
``P_MIN_HUXI = 3``         the 胡息 threshold
``P_HU_ON_DISCARDS = 4``   1: a discard may be hu'd
``P_HUAYANG = 5``          0 basic, 1 half, 2 full (``engine.mingtang.LEVELS``)
``P_TIANHU_DOUBLE = 6``    1: tianhu_formula 'double', 0: 'plain'
``P_LUZHOU_DI_B = 7``      1: luzhou_di_mode 'b', 0: 'a'
``P_PLAYERS = 8``          3 or 4 (for the state machine)
``P_CHOUHU = 9``           1: the 臭胡 block (for the state machine)
``P_PENG_COMPULSORY = 10`` 1: compulsory 碰 (for the state machine)
``P_HUANGZHUANG_ROTATE``   11 (for the play loop)
``P_MT_VARIANT = 12``      the row of ``codes.MT_ON`` (:func:`engine.fast.codes.mingtang_variant`)
``P_DENG_VARIANT = 13``    the row of ``codes.DENG`` (:func:`engine.fast.codes.deng_variant`)
``P_READING = 14``         1: keep the chosen reading (``hu.hu_reading_at``; 0 in play)
=========================  ==============================================================

``out`` (int64, ``hu.OUT_SIZE`` = 16): one hu result.

=================  ==================================================================
``O_WIN = 0``      1 win, 0 not
``O_REASON = 1``   :class:`engine.hu.NoWin` value (``codes.R_*``), 0 for a win,
                   ``R_INVALID = -1`` where the reference raises InvalidNotation
``O_OPTION = 2``   ``codes.OPT_*``: -1 none, 0 'F', 1 'K', 2 'P', 3 'W', 4 '0', 5 'A'
``O_HUXI = 3``     胡息 of the chosen reading; -1 where the reference has None
``O_DENG = 4``     等 (0 unless a win)
``O_FAN = 5``      番 (Luzhou: the multiplier; 0 unless a win)
``O_SCORE = 6``    等 × 番 (0 unless a win)
``O_MINGTANG = 7`` bitmask of the 名堂 reported (``MingTang.bit``, the logs' ``hands.mingtang``)
``O_ZIMO = 8``     0/1 (0 unless a win)
``O_TIANHU = 9``   0/1 (0 unless a win)
``O_CHOSEN = 10``   with ``P_READING``: the chosen candidate (``hu.hu_reading_at``), else 0
11..15             reserved (0)
=================  ==================================================================

``ws`` (int64, ``hu.WS_SIZE``): the hu kernels' scratch, parts at ``w + hu._W_*`` (hand copy,
pool counts, the candidates' option / 胡息 / 对对 / 耍猴 / key count, the split search's
stack, the candidates' sorted group keys); contents irrelevant on entry.

``hp`` (int64, ``hu_bridge.HP_SIZE``): ``params``, then an ``out`` at ``hu_bridge._OUT`` and a
``ws`` at ``hu_bridge._WS`` (so that a hu evaluation of the state machine allocates nothing).

``rp`` (int64, :func:`engine.fast.state.rule_table`, then ``features.policy_table`` appended
at ``FT_BASE = RP_SIZE``): the rule switches the state machine reads (``RP_PLAYERS = 0``,
``RP_LUZHOU``, ``RP_HU_ON_DISCARDS``, ``RP_ONE_FIVE_TEN``, ``RP_CHOUHU``,
``RP_PENG_COMPULSORY = 5``); ``RP_PARTNERS`` [20] ``Game.partners``; ``RP_SW_N`` [20],
``RP_SW`` / ``RP_SW_A`` / ``RP_SW_B`` [20 × 8] ``Game.shapes_with`` (shape id, the shape minus
one copy of the card); ``RP_MHX`` [6 × 40] 胡息 of a table meld by GroupKind and face / shape
id; then the ``FT_*`` tables of the policies (``engine.policies.features.Tables``, see
:mod:`engine.fast.features`).

``st`` (int32, ``state.STATE_SIZE``): one hand (the ``engine.state.State`` attribute in
brackets). Per-seat blocks are indexed ``OFF + seat`` (or ``OFF + seat * width + i``); ``-1``
means "none" in every optional scalar.

=================  ==========  ===========================================================
offset             width       meaning
=================  ==========  ===========================================================
HANDS              4 × 20      hand count vectors (``hands``)
HAND_SIZE          4           ``hand_size``
MELD_N             4           number of table melds per seat
MELD_KIND          4 × 16      ``GroupKind`` of each meld, in table order (``melds``)
MELD_ID            4 × 16      its face (same-face kinds) or its eat shape id (CHI)
TABLE_CARDS        4           ``table_cards``
QUADS              4           ``quads`` (跑 + 提)
DISCARDED          4           bitmask of faces discarded (``discarded``, §6.2)
STINKY             4           臭牌 bitmask (``stinky``, §6.1)
RENPENG            4           忍碰 bitmask (``renpeng``)
CHOUHU             4 × 20      臭胡 memory: meldHuxi at the pass, -1 if none (``chouhu``)
DISCARDS           4 × 48      every card discarded, in order; DISCARDS_N the counts
RIGHT              4 × 48      dead cards to the right (``right``); RIGHT_N the counts
STOCK              19          the stock in draw order; STOCK_POS the next card to draw
QUEUE              16          remaining dealt 提s, seat·20 + face; QUEUE_N, QUEUE_POS
PEND_SEATS         3           seats asked, in ``pending`` order; PEND_NS how many
PEND_N             4           number of legal actions of each seat
PEND_A             4 × 96      the sorted legal action codes of each seat
DECL               4           declared action, -1 if not yet (``declared``); N_DECL
HURES              4 × 8       the hu result of each eligible seat (``_hu``): win, huxi,
                               deng, fan, score, mingtang mask, zimo
BEST_RANK          4           claim rank offered (``_best_rank``); PENG_SEAT
OUT_*              …           the outcome (kind -1 while playing), OUT_DELTA 4 deltas
scalars                        N_SEATS DEALER SITTER ACTIVE[3] XIA[4] SHANG[4] N_DRAWS
                               DEALER_DISCARDS CARD CARD_KIND OWNER PHASE FORCED LIANG
                               LIANG_KNOWN BOTTOM N_SHOWN BOTTOM_SWAPS N_HIST
SCRATCH            24          work space of the 吃 search
=================  ==========  ===========================================================

The play loop's ``events`` / ``hands`` columns are the log's (:mod:`engine.fast.play`).
"""
