"""The dashboard's server process: ``python -m dashboard.server run APP [streamlit
options]`` is ``streamlit run`` (what ``paohuzi dashboard`` executes), and while Streamlit
starts it checks the store and prepares the pages' catalog (:func:`dashboard.db.warm`), so
the first page does not wait for them (on a 10⁸-hand store: some 1.5 s)."""

from __future__ import annotations

import sys
import threading


def main(argv: list[str] | None = None) -> None:
    """Warm the store in a thread, then run Streamlit's command line with ``argv``."""
    from streamlit.web import cli

    from dashboard import db

    threading.Thread(target=db.warm, name="paohuzi-warm", daemon=True).start()
    sys.argv = ["streamlit", *(sys.argv[1:] if argv is None else argv)]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
