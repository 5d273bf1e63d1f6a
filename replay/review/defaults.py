"""The review's default budget (``paohuzi review``'s defaults, and the review ``paohuzi play``
gives after a hand): determinizations per decision, and who plays the rollouts. A module of
its own so that the command line reads them without importing the review."""

DEFAULT_ROLLOUTS = 256
DEFAULT_ROLLOUT_POLICY = "heuristic"
