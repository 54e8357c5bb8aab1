"""Byte-level mutations for the readers' fuzz tests: every reader must turn a damaged file into
articles or an IngestError naming the file, never a crash."""

from __future__ import annotations

from hypothesis import strategies as st


def mutate(data: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    """Apply (kind, position, byte) edits: 0 flips bits, 1 deletes, 2 inserts."""
    buf = bytearray(data)
    for kind, position, value in edits:
        at = position % (len(buf) + 1)
        if kind == 0 and at < len(buf):
            buf[at] ^= value or 0xFF
        elif kind == 1 and at < len(buf):
            del buf[at:at + 1 + value % 64]
        else:
            buf[at:at] = bytes([value]) * (1 + value % 8)
    return bytes(buf)


EDITS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1 << 16), st.integers(0, 255)),
                 max_size=12)
