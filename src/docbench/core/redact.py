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
