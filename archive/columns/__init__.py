"""The columnar query core: numpy sidecars beside Whoosh's segments, and the engine that
answers the common query forms from them.

Whoosh stays the index of record (segments, stored fields, parser, analysis, highlighting,
spelling); its pure-Python matchers walking postings one at a time are what made searching a
large archive slow. Each segment is immutable, so beside it the archive keeps its postings and
per-document columns as memory-mapped numpy arrays (``sidecar``), kept in step with the
index's segments (``sync``); ``engine`` evaluates a parsed query on them with the archive's own
weighting, and falls back to Whoosh for the forms it does not take (``FALLBACK_FORMS``).

- ``sidecar``: one segment's sidecar, written from the segment and opened mapped.
- ``sync``: make the sidecars match the index's segments; report missing or stale ones.
- ``engine``: a parsed Whoosh query -> matching documents and exact scores, ranked.
"""

from archive.columns.engine import FALLBACK_FORMS, ColumnIndex, Ranked, Unsupported
from archive.columns.sidecar import (COLUMNS_DIR, PostingsTap, Sidecar, new_sidecar,
                                     place_sidecar, write_sidecar)
from archive.columns.sync import column_status, enabled, sync_columns

__all__ = ["COLUMNS_DIR", "ColumnIndex", "FALLBACK_FORMS", "PostingsTap", "Ranked",
           "Sidecar", "Unsupported", "column_status", "enabled", "new_sidecar", "place_sidecar",
           "sync_columns", "write_sidecar"]
