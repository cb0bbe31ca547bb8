"""Lines of a data file by number, without reading the file into memory.

Engines that skip refused documents themselves name them by line number only (chDB's
``input_format_record_errors_file_path`` has no reason, DuckDB's rejects table a truncated
one); to log the engine's own reason, docbench offers those few lines again one by one, and
this is how it finds them: one streaming pass that counts newlines at C speed and only splits
the blocks that hold a wanted line.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from docbench.dataset.reader import iter_decompressed


def read_numbered_lines(path: Path, numbers: Iterable[int]) -> dict[int, bytes]:
    """{line number (1-based): line without its newline} for the wanted lines that exist."""
    wanted = sorted(set(numbers))
    found: dict[int, bytes] = {}
    if not wanted:
        return found
    next_number, carry, index = 1, b"", 0
    for chunk in iter_decompressed(path, 16 << 20):
        newlines = chunk.count(b"\n")
        if wanted[index] >= next_number + newlines:  # no wanted line ends in this chunk
            carry = carry + chunk if newlines == 0 else chunk[chunk.rfind(b"\n") + 1 :]
            next_number += newlines
            continue
        lines = (carry + chunk).split(b"\n")
        carry = lines.pop()
        for offset, line in enumerate(lines):
            if next_number + offset == wanted[index]:
                found[wanted[index]] = line
                index += 1
                if index == len(wanted):
                    return found
        next_number += len(lines)
    if carry and wanted[index] == next_number:  # a last line without a newline
        found[next_number] = carry
    return found
