"""DDL and queries live as plain .sql files in each system's folder; these read them."""

from __future__ import annotations

from pathlib import Path


def split_sql(text: str) -> list[str]:
    """Split SQL text into statements at ';' that ends a line; drop comments-only chunks."""
    statements = []
    for chunk in text.split(";\n"):
        lines = [ln for ln in chunk.strip().splitlines() if not ln.strip().startswith("--")]
        statement = "\n".join(lines).strip().rstrip(";").strip()
        if statement:
            statements.append(statement)
    return statements


def read_sql_statements(path: Path) -> list[str]:
    return split_sql(path.read_text())


# In a DDL file, what follows this line runs after the load (index builds, VACUUM, ANALYZE)
# and counts in the load time.
FINISH_MARKER = "-- @finish_load"


def read_ddl(path: Path, **names: str) -> tuple[list[str], list[str]]:
    """A DDL file's statements rendered with ``names``: (before the load, after the load)."""
    create, _, finish = render(path.read_text(), **names).partition(FINISH_MARKER)
    return split_sql(create), split_sql(finish)


def render(sql: str, **names: str) -> str:
    """Replace ``{name}`` placeholders. Plain replacement, not str.format: SQL is full of
    braces (regex quantifiers, arrays, JSON literals)."""
    for name, value in names.items():
        sql = sql.replace("{" + name + "}", value)
    return sql


def step_name(statement: str, limit: int = 80) -> str:
    """A statement as a post-load step's name: its first words, on one line."""
    text = " ".join(statement.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
