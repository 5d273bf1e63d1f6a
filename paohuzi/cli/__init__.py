"""The ``paohuzi`` command line: one module per command (argument parsing and output only;
the work is done by the stage packages). :func:`main` is the console script."""

from paohuzi.cli.main import InputError, main

__all__ = ["InputError", "main"]
