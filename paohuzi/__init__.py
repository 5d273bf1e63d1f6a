"""The front doors of paohuzi, named after the distribution and its command: the command line
(:mod:`paohuzi.cli`, the ``paohuzi`` console script and ``python -m paohuzi``), the HTTP
service (:mod:`paohuzi.service`, ``paohuzi serve``) and the default dataset
(:mod:`paohuzi.demo_data`, ``make demo``). They import what they need from ``engine`` and
``replay``; nothing imports them (tests/test_layering.py)."""
