"""Calibration: what sets shipped numbers, run on the calibration split only.

What sets shipped numbers: the mixed dataset (``mixed_dataset``), every input of CRAG's
decisions per calibration question (``evidence_probe``), the replay that chooses the thresholds
(``decisions``) and the answer confidence's fit (``confidence``, which writes
nodes/shared/confidence.json). Run on the calibration split only.
"""
