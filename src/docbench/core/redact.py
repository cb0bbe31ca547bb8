"""Passwords never reach a result, a log or the terminal: URLs are redacted before display."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """``scheme://user:secret@host/db`` -> ``scheme://user:***@host/db``.

    The password ends at the *last* ``@`` of the authority, so a password that itself holds
    ``@`` is hidden whole. Text that is not a URL with a password is returned unchanged.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    netloc = parts.netloc
    if "@" not in netloc:
        return url
    userinfo, _, hostport = netloc.rpartition("@")
    if ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return urlunsplit((parts.scheme, f"{user}:***@{hostport}", parts.path, parts.query, parts.fragment))


def redact_text(text: str, url: str | None) -> str:
    """``text`` with the URL's password (if any) replaced, wherever a driver echoed it."""
    if not url:
        return text
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    text = text.replace(url, redact_url(url))
    return text.replace(password, "***") if password else text
