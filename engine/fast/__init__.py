"""The compiled (numba) engine: byte-identical to the pure-Python reference in ``engine``.

Submodules (imported explicitly, never from here, so ``import engine.fast`` stays light):

* :mod:`engine.fast.hu`: hu evaluation and scoring kernels (``hu_eval``, ``hu_auto_tianhu``).
"""
