"""Hands played by a person against the bots (``paohuzi play``): :mod:`replay.play.table`."""
