"""Decision review (issue 23): what each choice of a recorded hand was worth.

:mod:`replay.review.hand` values every option of every real decision of a hand by
determinized rollouts (:func:`engine.fast.search.evaluate`, or the reference's
:func:`engine.search.evaluate`) and classifies the option played by the winning chance it
gave up (docs/REVIEW.md).
"""
