"""A child process that can be interrupted: ``preexec_fn=interruptible`` for the tests that
send SIGINT to a ``simulate`` they started. A process inherits its parent's blocked and
ignored signals; a test worker that has run Ray in-process (whose threads block signals)
would otherwise start a ``simulate`` that never sees the Ctrl-C and runs to the end."""

from __future__ import annotations

import signal


def interruptible() -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGINT, signal.SIG_DFL)
