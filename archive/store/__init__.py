"""The on-disk Whoosh index: one module per job, and this face that the rest of the archive
imports (``from archive import store``; ``store.open_index(...)``).

- ``schema``: the schema, and the mapping between an Article and its Whoosh document.
- ``manifest``: ``manifest.json``, the record of which input files the last commit holds.
- ``errors``: missing, damaged, outdated or busy index; a failed writer process.
- ``lock``: the writer lock an indexing run holds from start to end.
- ``durable``: commits that survive a power cut, opening the newest whole generation,
  creating an index; importing it makes Whoosh read mapped segments without copying them.
- ``fastwriter``: the writer's fast path, and every use of Whoosh's private names.
- ``writers``: which writer a run opens (one process or two), and ending one that fails.
- ``statistics``: the snapshot of collection statistics that related-article lists are
  weighed by, taken by ``archive index`` (imported on its own).
- ``check``: ``archive check``, imported on its own (``archive.store.check``).
- ``pages``: the mapped pages a long pass over the index has read, handed back as it goes.
"""

from archive.store.durable import (DEFAULT_INDEX, TOC_TEMP_RE, DurableStorage, create_index,
                                   exists, index_bytes, missing_segment_files, open_index,
                                   resolve_index, toc_generations)
from archive.store.errors import (IndexBusy, IndexDamaged, IndexMissing, IndexOutdated,
                                  WriterProcessFailed)
from archive.store.fastwriter import (ArchiveWriter, field_length_bytes, field_postings,
                                      field_postings_values, key_postings, length_table,
                                      position_arrays, segments_reader)
from archive.store.lock import WRITE_LOCK, IndexLock
from archive.store.manifest import MANIFEST, FileState, read_manifest, write_manifest
from archive.store.pages import MappedPages, file_pages_mb, release, release_mappings
from archive.store.schema import (INDEX_NAME, TEXT_FIELDS, add_articles, build_schema,
                                  from_stored, indexed_paths, iter_articles, repeated_ids,
                                  split_list, to_document)
from archive.store.writers import (SPLIT_MIN_DOCS, SplitWriter, abandon_writer, default_procs,
                                   discard_writer, open_writer)

__all__ = [
    "ArchiveWriter", "DEFAULT_INDEX", "DurableStorage", "FileState", "INDEX_NAME", "IndexBusy",
    "IndexDamaged", "IndexLock", "IndexMissing", "IndexOutdated", "MANIFEST", "MappedPages",
    "SPLIT_MIN_DOCS",
    "SplitWriter", "TEXT_FIELDS", "TOC_TEMP_RE", "WRITE_LOCK", "WriterProcessFailed",
    "abandon_writer", "add_articles", "build_schema", "create_index", "default_procs",
    "discard_writer", "exists", "field_length_bytes", "field_postings", "field_postings_values",
    "file_pages_mb", "from_stored", "index_bytes", "indexed_paths", "iter_articles", "key_postings", "length_table",
    "missing_segment_files", "open_index", "open_writer", "position_arrays", "read_manifest",
    "release", "release_mappings", "repeated_ids", "resolve_index",
    "segments_reader", "split_list", "to_document", "toc_generations", "write_manifest"
]
