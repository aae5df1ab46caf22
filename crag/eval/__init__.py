"""Evaluation: SQuAD-format datasets, official scoring, and the ``crag eval`` harness."""
