"""The terminal summary of `docbench profile`."""

from __future__ import annotations

from rich.table import Table

from docbench.core.console import report_console
from docbench.queries.profile import Profile

SHOWN = 60  # paths listed (the most present first)


def print_profile(profile: Profile) -> None:
    console = report_console()
    rows = sorted(profile.rows(), key=lambda r: (-r["present"], r["path"]))
    sampled = "a sample: the first documents of each file" if profile.sampled else "every document"
    table = Table(title=f"{profile.documents:,} documents in {profile.files} file(s) ({sampled})")
    for column in ("path", "present", "types", "distinct", "depth", "array", "time"):
        table.add_column(column, justify="right" if column in ("present", "distinct", "depth") else "left")
    for row in rows[:SHOWN]:
        types = ", ".join(f"{name} {share:.0%}" for name, share in row["types"].items())
        distinct = f"≥{row['distinct']:,}" if row["distinct_at_least"] else f"{row['distinct']:,}"
        table.add_row(
            row["path"],
            f"{row['present']:.1%}",
            types,
            distinct,
            str(row["depth"]),
            "yes" if row["array"] else "",
            row["time"] or "",
        )
    console.print(table)
    if len(rows) > SHOWN:
        console.print(f"... and {len(rows) - SHOWN:,} more paths")
