"""What docbench creates on a server is marked as docbench's; what is not marked is not touched.

On a server given by URL docbench works in a database (MongoDB: a database; Elasticsearch /
OpenSearch: indexes) of its own. It creates that database itself and marks it -- PostgreSQL and
MariaDB: the database's comment; MongoDB: a marker document; search engines: ``_meta`` in the
index mapping -- and before it drops or changes anything there it checks the mark. A database
or index of that name without the mark belongs to someone else: docbench stops with
:class:`ForeignDatabase` and changes nothing. docbench's own managed servers mark their database
the same way (and an unmarked one from an older docbench in them is marked: the whole server
is docbench's).

The same holds on disk: a work directory docbench makes carries a mark file
(:data:`DIRECTORY_MARK`), and docbench removes a directory only when it or one above it has
the mark and it holds none of the directories the run protects (its ``--data`` and
``--results``, wherever they are). An existing directory with contents and no mark is not
used as a work directory (:class:`ForeignDirectory`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

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


# ----- directories ----------------------------------------------------------------------------
# A work directory docbench makes (an engine's database, a server's cluster) carries this file;
# docbench empties or removes a directory only when it, or a directory above it, has the mark,
# and never when the data or the results of the run are inside it.
DIRECTORY_MARK = ".docbench-owned"

# Directories whose contents docbench never removes, wherever they are (--data, --results).
_protected: set[Path] = set()


class ForeignDirectory(RuntimeError):
    """A directory docbench was to use as its own exists with contents it did not create."""


def protect_directory(path: Path) -> None:
    """Nothing inside `path` is ever removed by docbench's cleanup, for the rest of the process."""
    _protected.add(path.resolve())


def claim_directory(path: Path) -> None:
    """Make `path` a directory of docbench's own: created and marked when it does not exist
    (or is empty); one that has the mark already is docbench's. An existing directory with
    contents and no mark is someone else's: :class:`ForeignDirectory`, nothing is changed."""
    path.mkdir(parents=True, exist_ok=True)
    mark = path / DIRECTORY_MARK
    if mark.is_file():
        return
    if any(path.iterdir()):
        raise ForeignDirectory(
            f"{path} exists and was not created by docbench (it has no {DIRECTORY_MARK} file), so "
            f"docbench neither works in it nor deletes it: move what you need out of it and remove "
            f"it, or set DOCBENCH_HOME elsewhere; if it is the work directory of a docbench from "
            f"before the mark, mark it: touch {mark}"
        )
    mark.write_text(f"{MARKER}; docbench empties and removes this directory and all in it\n")


def removal_refusal(path: Path) -> str | None:
    """Why docbench must not remove `path` (None: it may): it has no mark, nor does any
    directory above it, or it holds a protected directory (the run's data or results)."""
    path = path.resolve()
    if not any((folder / DIRECTORY_MARK).is_file() for folder in (path, *path.parents)):
        return f"it has no {DIRECTORY_MARK} mark (docbench did not create it)"
    inside = sorted(str(kept) for kept in _protected if kept == path or path in kept.parents)
    if inside:
        return f"it holds {', '.join(inside)} (the data or results of this run)"
    return None


def remove_owned_tree(path: Path) -> str | None:
    """Remove `path` and all in it if docbench may (see :func:`removal_refusal`); otherwise
    leave it as it is and return why (the caller says it, or raises)."""
    if not path.exists():
        return None
    refusal = removal_refusal(path)
    if refusal is None:
        shutil.rmtree(path, ignore_errors=True)
    return refusal


def remove_owned_directory(path: Path) -> None:
    """Remove a directory docbench made inside a work directory of its own (a half-made data
    directory, a copied configuration) before making it again; :class:`ForeignDirectory`
    when docbench may not (it is not docbench's, or it holds the run's data or results)."""
    refusal = remove_owned_tree(path)
    if refusal is not None:
        raise ForeignDirectory(f"docbench does not remove {path}: {refusal}")
