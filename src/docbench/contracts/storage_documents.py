"""Deterministic documents for the storage workload: a key and one large string field.

Three kinds of payload ("entropy"):

* ``random``     -- printable ASCII drawn uniformly (``!``..``~`` without ``"`` and ``\\``, so
  the JSON text needs no escaping and the payload's size in the document is exactly ``size``);
  about 6.5 bits of information per byte: no general-purpose compressor can shrink it much;
* ``repetitive`` -- one character repeated (``"x" * size``): the best case of any compressor;
* ``text``       -- prose-like text: words of a fixed pseudo-English vocabulary drawn with a
  Zipf law (a few words very frequent, a long tail), capitalised sentences with commas and
  full stops. Compresses like natural language (~2.5-3.5x with zstd), and every row is drawn
  afresh, so rows do not repeat one another (no cross-row redundancy a columnar codec could
  exploit unrealistically).

Everything is a function of (seed, entropy, size, row number): the same call gives the same
bytes on every machine (numpy's PCG64 generator).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import numpy as np

ENTROPIES = ("random", "repetitive", "text")
DEFAULT_SIZES = (1000, 3000, 7000, 15000, 31000)
DEFAULT_SEED = 42

# Printable ASCII without space, '"' and '\\' (92 characters).
RANDOM_ALPHABET = bytes(c for c in range(0x21, 0x7F) if c not in (0x22, 0x5C))
REPEATED_CHARACTER = "x"

_VOCABULARY_SIZE = 4096
_SYLLABLES = [
    "ba",
    "be",
    "bi",
    "bo",
    "ca",
    "ce",
    "co",
    "da",
    "de",
    "di",
    "do",
    "en",
    "er",
    "fa",
    "fe",
    "ga",
    "ge",
    "ha",
    "he",
    "hi",
    "in",
    "is",
    "la",
    "le",
    "li",
    "lo",
    "ma",
    "me",
    "mi",
    "mo",
    "na",
    "ne",
    "ni",
    "no",
    "on",
    "or",
    "pa",
    "pe",
    "po",
    "ra",
    "re",
    "ri",
    "ro",
    "sa",
    "se",
    "si",
    "so",
    "st",
    "ta",
    "te",
    "th",
    "ti",
    "to",
    "tr",
    "un",
    "va",
    "ve",
    "wa",
    "we",
    "wi",
]
_COMMON = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "it",
    "was",
    "for",
    "on",
    "as",
    "with",
    "his",
    "they",
    "at",
    "be",
    "this",
    "from",
    "have",
    "or",
    "by",
    "one",
    "had",
    "not",
    "but",
    "what",
    "all",
    "were",
    "when",
    "we",
    "there",
    "can",
    "an",
    "your",
    "which",
    "their",
    "said",
    "if",
    "do",
    "will",
    "each",
    "about",
    "how",
    "up",
    "out",
    "them",
    "then",
    "she",
    "many",
    "some",
    "so",
    "these",
    "would",
    "other",
    "into",
]


def key_of(row: int) -> str:
    return f"k{row:09d}"


@cache
def _vocabulary(seed: int) -> tuple[list[bytes], np.ndarray]:
    """Every spelling of every word (index = word * 6 + capitalised * 3 + mark, where mark 0
    is none, 1 a full stop, 2 a comma) and the words' cumulative Zipf probabilities (exponent
    1.1). Words: common English words first, then pseudo-words of 1-4 syllables."""
    rng = np.random.default_rng([seed, 7])
    words = [w.encode() for w in _COMMON]
    seen = set(words)
    while len(words) < _VOCABULARY_SIZE:
        count = int(rng.integers(1, 5))
        word = "".join(_SYLLABLES[int(i)] for i in rng.integers(0, len(_SYLLABLES), count)).encode()
        if word not in seen:
            seen.add(word)
            words.append(word)
    spellings = []
    for word in words:
        for capital in (word, word[:1].upper() + word[1:]):
            spellings.extend([capital, capital + b".", capital + b","])
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    weights = 1.0 / ranks**1.1
    cumulative = np.cumsum(weights / weights.sum())
    cumulative[-1] = 1.0
    # A 65536-entry table from a uniform 16-bit number to a word index (the Zipf law
    # quantised to 1/65536): one table lookup per word instead of a binary search.
    table = np.searchsorted(cumulative, (np.arange(65536) + 0.5) / 65536).astype(np.int64)
    return spellings, table


def _text(rng: np.random.Generator, size: int, seed: int) -> str:
    spellings, table = _vocabulary(seed)
    out = b""
    capital_first = True
    while len(out) < size:
        count = max(16, size // 5)
        picks = table[rng.integers(0, 65536, count, dtype=np.uint16)]
        # Sentence ends (~1 in 14 words) and commas (~1 in 9); a word after a full stop is
        # capitalised.
        marks = rng.integers(0, 100, count, dtype=np.uint8)
        mark = np.where(marks < 7, 1, np.where(marks < 18, 2, 0))
        capital = np.empty(count, dtype=np.int64)
        capital[0] = 1 if capital_first else 0
        capital[1:] = mark[:-1] == 1
        capital_first = bool(mark[-1] == 1)
        index = picks * 6 + capital * 3 + mark
        out += b" ".join(map(spellings.__getitem__, index.tolist())) + b" "
    return out[:size].decode("ascii")


def payload(entropy: str, size: int, rng: np.random.Generator, seed: int = DEFAULT_SEED) -> str:
    if entropy == "random":
        indexes = rng.integers(0, len(RANDOM_ALPHABET), size, dtype=np.uint8)
        return np.frombuffer(RANDOM_ALPHABET, dtype=np.uint8)[indexes].tobytes().decode("ascii")
    if entropy == "repetitive":
        return REPEATED_CHARACTER * size
    if entropy == "text":
        return _text(rng, size, seed)
    raise ValueError(f"unknown entropy {entropy!r} (known: {', '.join(ENTROPIES)})")


def rows(
    entropy: str, size: int, count: int, seed: int = DEFAULT_SEED, start: int = 0
) -> Iterator[tuple[str, str]]:
    """(key, payload) for rows start..start+count-1; deterministic in (seed, entropy, size)."""
    if entropy not in ENTROPIES:
        raise ValueError(f"unknown entropy {entropy!r} (known: {', '.join(ENTROPIES)})")
    for row in range(start, start + count):
        rng = np.random.default_rng([seed, ENTROPIES.index(entropy), size, row])
        yield key_of(row), payload(entropy, size, rng, seed)


def batches(
    entropy: str, size: int, count: int, batch_rows: int, seed: int = DEFAULT_SEED
) -> Iterator[list[tuple[str, str]]]:
    for start in range(0, count, batch_rows):
        yield list(rows(entropy, size, min(batch_rows, count - start), seed, start))


def document_json(key: str, payload_text: str) -> str:
    """The document as compact JSON text. Keys and payloads never need escaping (see above)."""
    return f'{{"key":"{key}","payload":"{payload_text}"}}'


def document_bytes(key: str, payload_text: str) -> int:
    return len(key) + len(payload_text) + len('{"key":"","payload":""}')
