"""Test-only code: reference readers the tests (and the benchmarks) compare the product with.

Kept out of the package so the wheel ships no test code."""
