"""Passwords never reach a result, a log or the terminal: URLs are redacted before display."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

MASK = "***"
# Query parameters that carry a password (libpq's ?password=, some drivers' pwd / passwd).
_SECRET_PARAMS = {"password", "passwd", "pwd", "secret", "token"}
# A short password is replaced only where it stands alone: replacing every "ab" of a text
# would make the message unreadable, and "ab" inside a word does not tell what the password is.
_SHORT = 4


def _hide_query(query: str) -> str:
    """``a=1&password=x`` -> ``a=1&password=***`` (the order and the rest kept as written)."""
    if not query:
        return query
    pieces = []
    for piece in query.split("&"):
        name = piece.split("=", 1)[0]
        pieces.append(f"{name}={MASK}" if "=" in piece and name.lower() in _SECRET_PARAMS else piece)
    return "&".join(pieces)


def _split_scheme(url: str) -> tuple[str, str]:
    """(``scheme://``, the rest); ``""`` as the scheme of ``user:pw@host:9200`` (no scheme:
    the search engines' client accepts that form)."""
    head, sep, rest = url.partition("://")
    if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", head):
        return head + sep, rest
    return "", url


def redact_url(url: str) -> str:
    """``scheme://user:secret@host/db`` -> ``scheme://user:***@host/db``.

    The password runs from the first ``:`` after the user to the *last* ``@`` of the text, so
    a password holding ``@``, ``/``, ``?``, ``#`` or ``:`` (percent-encoded or not) is hidden
    whole; when ``@`` also appears in the path or query this hides more than the password,
    never less. ``password=`` (and the like) in the query is hidden too. Text that is not a
    URL with a password is returned unchanged.
    """
    scheme, rest = _split_scheme(url)
    if "@" in rest:
        userinfo, _, after = rest.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        if colon:
            rest = f"{user}:{MASK}@{after}"
    if "?" in rest:
        before, _, query = rest.partition("?")
        query, hash_, fragment = query.partition("#")
        rest = f"{before}?{_hide_query(query)}{hash_}{fragment}"
    return scheme + rest


def _authority_end(rest: str) -> int:
    """Where the authority (``user:password@host:port``) of a URL's part after ``scheme://``
    ends for every URL parser: at the first ``/``, ``?`` or ``#``."""
    return min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))


def at_encoded(url: str) -> str:
    """The URL with each ``@`` of its password percent-encoded: the password ends at the
    *last* ``@`` of the authority, as docbench reads and redacts it, where libpq would end it
    at the first (and connect to a host that is the rest of the password) and pymongo
    refuses it. Any other URL (or a ``key=value`` string) is returned unchanged."""
    head, sep, rest = url.partition("://")
    if not sep:
        return url
    end = _authority_end(rest)
    authority, tail = rest[:end], rest[end:]
    if authority.count("@") < 2:
        return url
    userinfo, _, hosts = authority.rpartition("@")
    return f"{head}://{userinfo.replace('@', '%40')}@{hosts}{tail}"


# What cuts a URL short when a password holds it unencoded (an "@" only where a "/", "?" or
# "#" comes before the last "@": alone it is read to the last "@", see at_encoded).
_BREAKING = {"@": "%40", "/": "%2F", "?": "%3F", "#": "%23"}
# A host with its optional port, as an authority ends ("127.0.0.1:5432", "[::1]", "h").
_HOST = re.compile(r"(?:[^:\[\]]*|\[[0-9A-Fa-f:.]*\])(?::[0-9]*)?")
# What follows the last "@" of a URL cut short by its password: the host and port that the
# password hid ("127.0.0.1:5432/db"), not a path holding an "@" ("/mail@example").
_HOST_AND_PORT = re.compile(r"(?:[^/?#@:\[\]]+|\[[0-9A-Fa-f:.]+\]):[0-9]+(?:[/?#].*)?")


def unencoded_userinfo(url: str) -> str | None:
    """Why ``url`` will not connect where it says, when a ``/``, ``?`` or ``#`` in its
    password (not percent-encoded) ends the authority early: every client then reads a piece
    of the password as the host ("failed to resolve host"). Says what to percent-encode,
    never the password itself; None for a URL without that problem.

    Ambiguous in general (``postgresql://u@h/mail@example`` is database ``mail@example``),
    so it is said only where the URL shows it: the authority before the first ``/``/``?``/``#``
    is not ``host[:port]`` (``u:pa/ss@h`` gives port ``pa``), or what follows the last ``@``
    is a host and port (``u:p@ss/w@127.0.0.1:5432/db``)."""
    _scheme, rest = _split_scheme(url)
    end, last_at = _authority_end(rest), rest.rfind("@")
    if last_at < end:
        return None  # every "@" inside the authority: the password ends at the last one
    host = rest[:end].rpartition("@")[2]
    if _HOST.fullmatch(host) and not _HOST_AND_PORT.fullmatch(rest[last_at + 1 :]):
        return None
    userinfo = rest[:last_at]
    found = [char for char in _BREAKING if char in userinfo.partition(":")[2]]
    if not found:
        return None
    chars = " or ".join(f"'{char}'" for char in found)
    codes = ", ".join(_BREAKING[char] for char in found)
    return f"the URL's password seems to contain {chars}: percent-encode it ({codes})"


def url_secrets(url: str | None) -> list[str]:
    """The password of a URL as written and as decoded (the form a driver may echo), and the
    values of its password query parameters. The password ends at the last ``@``, as in
    :func:`redact_url`."""
    if not url:
        return []
    found: list[str] = []
    _scheme, rest = _split_scheme(url)
    if "@" in rest:
        userinfo = rest.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        if colon and password:
            found.append(password)
    try:
        query = urlsplit(url).query
    except ValueError:
        query = rest.partition("?")[2]
    found += [
        value for name, value in parse_qsl(query, keep_blank_values=False) if name.lower() in _SECRET_PARAMS
    ]
    found += [unquote(secret) for secret in found]
    return sorted({s for s in found if s}, key=len, reverse=True)


def hide_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***`` (a short one only
    where it stands alone, see ``_SHORT``)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= _SHORT:
            text = text.replace(secret, MASK)
        else:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", MASK, text)
    return text


def redact_text(text: str, url: str | None, secrets: Iterable[str] = ()) -> str:
    """``text`` with the URL's password (if any) replaced, wherever a driver echoed it, as
    written or percent-decoded; ``secrets`` are hidden as well (e.g. a password that came
    from the environment or a client option file)."""
    if url:
        text = text.replace(url, redact_url(url))
    return hide_secrets(text, [*url_secrets(url), *secrets])
