"""Benchmarks that print numbers (retrieval quality and latency)."""
