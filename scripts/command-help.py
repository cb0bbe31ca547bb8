#!/usr/bin/env python3
"""A docbench command's --help as a Markdown code block, for the docs pages' generated blocks
(so that a page's option reference is the command's own and cannot drift from it).

Usage: scripts/command-help.py run storage
"""

from __future__ import annotations

import sys

from click.testing import CliRunner

from docbench.cli import main as docbench


def main(words: list[str]) -> int:
    outcome = CliRunner().invoke(docbench, [*words, "--help"], terminal_width=100, prog_name="docbench")
    if outcome.exit_code != 0:
        print(outcome.output, file=sys.stderr)
        return 1
    print("```text\n" + outcome.output.rstrip("\n") + "\n```")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
