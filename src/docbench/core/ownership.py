"""What docbench creates on a server is marked as docbench's; what is not marked is not touched.

On a server given by URL docbench works in a database (MongoDB: a database; Elasticsearch /
OpenSearch: indexes) of its own. It creates that database itself and marks it -- PostgreSQL and
MariaDB: the database's comment; MongoDB: a marker document; search engines: ``_meta`` in the
index mapping -- and before it drops or changes anything there it checks the mark. A database
or index of that name without the mark belongs to someone else: docbench stops with
:class:`ForeignDatabase` and changes nothing. docbench's own managed servers mark their database
the same way (and an unmarked one from an older docbench in them is marked: the whole server
is docbench's).
"""

from __future__ import annotations

MARKER = "created by docbench"
# The full text stored as the mark (comment, _meta value): what it means for a person reading it.
MARKER_TEXT = f"{MARKER}; docbench drops and recreates its own tables here"


def is_marked(text: object) -> bool:
    """Whether a comment / _meta value is docbench's mark."""
    return isinstance(text, str) and text.startswith(MARKER)


class ForeignDatabase(RuntimeError):
    """A database (or index) named as docbench's exists on the server and is not docbench's."""


def foreign_message(what: str, where: str, remedy: str, mark: str) -> str:
    """The message of :class:`ForeignDatabase`.

    ``what``: "PostgreSQL database 'docbench'"; ``where``: "127.0.0.1:5432";
    ``remedy``: how to drop it; ``mark``: how to mark it as docbench's, if it is a leftover of
    a docbench that did not mark yet.
    """
    return (
        f"{what} on {where} exists and was not created by docbench (it has no "
        f"'{MARKER}' mark), so docbench leaves it alone and stops here. Either point docbench "
        f"at another server, or, if nothing in it is needed, drop it yourself ({remedy}) and "
        f"run again. If it is docbench's own from a version before the mark, mark it: {mark}."
    )
