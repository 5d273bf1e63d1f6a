"""``python -m paohuzi``: the ``paohuzi`` command line."""

from paohuzi.cli.main import main

main()
