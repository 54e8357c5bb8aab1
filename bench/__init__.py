"""Benchmarks of the archive against its peers (SQLite FTS5, bm25s): see bench/README.md."""
