"""Measurements: one benchmark per module, each with its make target.

One benchmark per module, each with its make target (``make bench-<name>``, see the
Makefile); each prints a table against its baseline in the same run.
"""
