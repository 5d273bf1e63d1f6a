"""``python -m replay.cli``: the ``paohuzi`` command line."""

from replay.cli.main import main

main()
