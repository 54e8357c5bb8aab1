"""newsarchive: ingest article files, index them with Whoosh, search them from the shell or a static site.

Data flows one way: ``sources -> enrich -> store -> search -> render -> cli / site / serve``.
"""

__version__ = "0.1.0"
