"""The adjacent-word pairs an article's fields hold, so phrases need no article text in the
browser.

Pairs are taken over the analyzed tokens (stop words already removed, exactly as Whoosh's
phrase positions are); a pair's score is the Whoosh phrase score: the two terms' scores in
the fields holding it (``segments`` lists them per segment).
"""

from __future__ import annotations

from typing import Any

from archive import analysis


class Tokens:
    """The analyzed tokens of a text field in position order (adjacent here = adjacent to a
    Whoosh phrase).

    The archive's one fast path (``analysis.FastText``) computes them when the chain is the
    archive's and drops stop words without leaving gaps; Whoosh's generator chain costs a few
    microseconds per token. The two are compared on the first articles of every build: any
    difference and the build uses the analyzer."""

    CHECKED = 200

    def __init__(self, analyzer: Any):
        self.analyzer = analyzer
        fast = analysis.FastText.for_analyzer(analyzer)
        self.fast = fast if fast is not None and fast.renumbers else None
        self.checked = 0

    def __call__(self, text: str) -> list[str]:
        if not text:
            return []
        if self.fast is None:
            return [t.text for t in self.analyzer(text)]
        tokens = self.fast.tokens(text)
        if self.checked < self.CHECKED:
            self.checked += 1
            if tokens != [t.text for t in self.analyzer(text)]:
                self.fast = None
                return [t.text for t in self.analyzer(text)]
        return tokens
