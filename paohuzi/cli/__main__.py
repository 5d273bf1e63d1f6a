"""``python -m paohuzi.cli``: the ``paohuzi`` command line."""

from paohuzi.cli.main import main

main()
