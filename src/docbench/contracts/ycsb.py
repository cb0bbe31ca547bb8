"""Deterministic YCSB-shaped documents and YCSB's key choosers.

A document is ``{"ycsb_key": "user" + 20 digits, "field1": ..., "field10": ...}`` with ten
fields of 160 random characters (``[A-Za-z0-9]`` plus ``-`` and ``_``), as YCSB's
CoreWorkload with fieldlength 160. Document ``i`` depends only on ``(seed, i)``, so any
document can be regenerated to check what a system returns without keeping them all.

Keys: ``i -> (i * KEY_MULTIPLIER + offset(seed)) mod 10**20``, zero-padded to 20 digits. The
multiplier is odd and not a multiple of 5, so the map is a bijection modulo 10**20: keys are
unique and look scattered (like YCSB's hashed keys), not in load order.

Key choosers (what a point operation picks): ``uniform`` and ``zipfian``. The zipfian one is
YCSB's *scrambled* zipfian: Gray et al.'s zipfian generator (YCSB's ZipfianGenerator) with
theta 0.99 over the n loaded items draws a rank, and the rank is hashed with 64-bit FNV-1a
modulo n, so that the popular items are spread over the key space instead of being the first
loaded ones. (YCSB's ScrambledZipfianGenerator draws over a fixed 10 billion items before the
hash; here zeta is computed for n itself, the same shape for the hot set.)
"""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator

import orjson

FIELD_COUNT = 10
FIELD_LENGTH = 160
KEY_DIGITS = 20
KEY_MODULUS = 10**KEY_DIGITS
KEY_MULTIPLIER = 6_364_136_223_846_793_007 % KEY_MODULUS  # odd, not a multiple of 5
ZIPFIAN_THETA = 0.99
# The bulk update adds this field with this 32-character value to every document.
NEW_FIELD = "field11"
NEW_FIELD_VALUE = "updated-by-docbench-bulk-0000011"
assert len(NEW_FIELD_VALUE) == 32
_TRANSLATE = bytes.maketrans(b"+/", b"-_")

FIELDS = [f"field{n}" for n in range(1, FIELD_COUNT + 1)]


def key_of(i: int, seed: int = 1) -> str:
    offset = (seed * 1_442_695_040_888_963_407) % KEY_MODULUS
    return "user" + str((i * KEY_MULTIPLIER + offset) % KEY_MODULUS).zfill(KEY_DIGITS)


def random_text(rng: random.Random, length: int) -> str:
    raw = rng.randbytes((length * 3 + 3) // 4)
    return base64.b64encode(raw).translate(_TRANSLATE)[:length].decode("ascii")


def document(i: int, seed: int = 1) -> dict[str, str]:
    rng = random.Random(seed * 1_000_003 + i)
    text = random_text(rng, FIELD_COUNT * FIELD_LENGTH)
    doc = {"ycsb_key": key_of(i, seed)}
    for n, name in enumerate(FIELDS):
        doc[name] = text[n * FIELD_LENGTH : (n + 1) * FIELD_LENGTH]
    return doc


def document_line(i: int, seed: int = 1) -> bytes:
    return orjson.dumps(document(i, seed))


def document_lines(count: int, seed: int = 1) -> list[bytes]:
    return [document_line(i, seed) for i in range(count)]


def iter_documents(count: int, seed: int = 1) -> Iterator[dict[str, str]]:
    for i in range(count):
        yield document(i, seed)


# ----- key choosers ------------------------------------------------------------------------


class UniformChooser:
    def __init__(self, items: int, seed: int = 1) -> None:
        self.items = items
        self.rng = random.Random(seed)

    def next_index(self) -> int:
        # (random() scaled: a fifth of randrange's cost, on the throughput driver's hot path)
        return int(self.rng.random() * self.items)


def fnv1a_64(value: int) -> int:
    """YCSB's Utils.fnvhash64: FNV-1a over the 8 little-endian bytes of the value."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= value & 0xFF
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        value >>= 8
    return h


class ZipfianChooser:
    """YCSB's ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic
    databases"), theta 0.99, ranks 0..n-1 (0 the most popular); ``scrambled`` hashes the rank
    (YCSB's ScrambledZipfianGenerator)."""

    def __init__(
        self, items: int, seed: int = 1, theta: float = ZIPFIAN_THETA, scrambled: bool = True
    ) -> None:
        self.items = items
        self.theta = theta
        self.scrambled = scrambled
        self.rng = random.Random(seed)
        self.zetan = sum(1.0 / (i**theta) for i in range(1, items + 1))
        self.zeta2 = 1.0 + 1.0 / (2**theta)
        self.alpha = 1.0 / (1.0 - theta)
        self.eta = (1 - (2.0 / items) ** (1 - theta)) / (1 - self.zeta2 / self.zetan)

    def next_rank(self) -> int:
        u = self.rng.random()
        uz = u * self.zetan
        if uz < 1.0:
            return 0
        if uz < 1.0 + 0.5**self.theta:
            return 1
        rank = int(self.items * (self.eta * u - self.eta + 1) ** self.alpha)
        return min(rank, self.items - 1)

    def next_index(self) -> int:
        rank = self.next_rank()
        return fnv1a_64(rank) % self.items if self.scrambled else rank


def chooser(distribution: str, items: int, seed: int = 1) -> UniformChooser | ZipfianChooser:
    if distribution == "uniform":
        return UniformChooser(items, seed)
    if distribution == "zipfian":
        return ZipfianChooser(items, seed)
    raise ValueError(f"unknown distribution {distribution!r} (uniform, zipfian)")


def top_share(distribution: str, items: int, draws: int = 10_000, top: int = 10, seed: int = 7) -> float:
    """Share of draws that hit the `top` most drawn items (to describe the skew)."""
    from collections import Counter

    pick = chooser(distribution, items, seed)
    counts = Counter(pick.next_index() for _ in range(draws))
    return sum(c for _, c in counts.most_common(top)) / draws


__all__ = [
    "FIELDS",
    "NEW_FIELD",
    "NEW_FIELD_VALUE",
    "chooser",
    "document",
    "document_line",
    "document_lines",
    "key_of",
]
