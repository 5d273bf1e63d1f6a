"""The HTTP read API over a store (``paohuzi serve``, docs/SERVICE.md): :mod:`.app` (the
FastAPI application, ``create_app``), :mod:`.models` (response models: the OpenAPI schema),
:mod:`.limits` (every bound), :mod:`.errors` (one-line JSON errors, no server paths) and
:mod:`.deadline` (the per-request query time limit). Needs the ``service`` extra (FastAPI,
uvicorn); importing this package alone imports neither."""
