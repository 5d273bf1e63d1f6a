"""``paohuzi demo``: play one seeded hand and print it move by move."""

from __future__ import annotations

from collections.abc import Callable

import click

from engine.actions import action_str
from engine.cards import format_cards
from engine.deck import shuffle_deck
from engine.errors import PaohuziError
from engine.play import play_hand
from engine.policies import load_policies
from engine.policies.search_policy import with_preset_rollout
from engine.rules import RuleSet, find_rules
from engine.state import Game


def demo_hand(rules: RuleSet, seed: int, policies: str, echo: Callable[[str], None]) -> None:
    """Play and print one hand (a bare ``search@N`` with its preset's rollouts, as
    ``paohuzi simulate`` plays it)."""
    seats = [with_preset_rollout(p.strip(), rules) for p in policies.split(",") if p.strip()]
    game = Game(rules)
    deck = shuffle_deck(seed)
    dealer = seed % rules.players
    echo(f"deck (seed {seed}): {format_cards(deck)}")
    echo(str(game.new_initial_state(deck, dealer)))
    echo("")
    state = None
    for n, step in enumerate(
        play_hand(game, deck, dealer, load_policies(seats, rules.players), seed), 1
    ):
        state = step.state
        mark = " (forced)" if step.forced else f" (of {step.n_legal})"
        echo(f"{n:3d}. seat {step.seat}: {action_str(step.action)}{mark}")
    if state is None:
        state = game.new_initial_state(deck, dealer)
    echo("")
    echo(str(state))


@click.command(short_help="Play one seeded hand and print it move by move.")
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    default=7,
    show_default=True,
    help="deck and policy seed",
)
@click.option("--rules", "preset", default="hunan", show_default=True, help="rule preset")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="rule override")
@click.option("--policies", default="heuristic", show_default=True, help="policy per seat")
def demo(seed: int, preset: str, overrides: tuple[str, ...], policies: str) -> None:
    """Play one hand from a seeded deck with the given policies and print every action."""
    from paohuzi.cli.errors import InputError

    try:
        rules = find_rules(preset).with_overrides(overrides)
        load_policies(policies, rules.players)
    except PaohuziError as e:
        raise InputError(str(e)) from None
    demo_hand(rules, seed, policies, click.echo)
