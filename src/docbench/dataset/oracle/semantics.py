"""What the five queries count (methodology §2), for fields that are missing or odd.

A line of a data file is one of:

- an **empty line** (nothing but JSON whitespace): counted in ``empty_lines``; not a
  document;
- an **invalid line** (refused by both parsers of :mod:`.parse`: not JSON, invalid UTF-8, a
  UTF-8 BOM, trailing garbage) or a JSON value that is not an object (array, string,
  number, ...): counted in ``invalid_lines``; not a document;
- a **document**: every other line, counted in ``documents``.

For a document:

- The collection is ``commit.collection`` when ``commit`` is an object and the value is a
  string; missing / ``null`` / ``commit`` not an object → ``null`` (its own group in Q1 and
  Q2). Any other JSON value (number, bool, object) is grouped under its compact JSON text, as
  PostgreSQL's ``->>`` would. ``did`` is read the same way.
- "creates" = ``kind == "commit"`` and ``commit.operation == "create"`` (exact strings).
- ``time_us`` counts only when it is a JSON integer within the signed 64-bit range; otherwise
  the document has no time: Q3 counts it under hour ``null`` (sorted after 23), Q4/Q5 ignore
  it.
- Q2's distinct count is exact and, like SQL's ``COUNT(DISTINCT did)``, does not count a
  missing did. Q4/Q5 group by did like SQL ``GROUP BY``: a missing did forms its own group
  (``null``).
"""

from __future__ import annotations

Collection = str | None  # a collection's name (or its JSON text); None: no collection

POST = "app.bsky.feed.post"
REPOST = "app.bsky.feed.repost"
LIKE = "app.bsky.feed.like"
Q3_COLLECTIONS = frozenset({POST, REPOST, LIKE})
HOUR_US = 3_600_000_000
HOURS = 24
NO_HOUR = HOURS  # index of the "no time" bucket in the per-collection hour counts
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
