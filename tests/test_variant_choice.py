"""Which variants a run takes: every variant but the representations by default,
`--representations` adds them, `--variants` names them, and `--default-variants` (`make demo`)
keeps one run per system, its out-of-the-box variant."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from docbench.cli import main
from docbench.systems import REGISTERED, adapter_variants


@pytest.mark.parametrize("system", REGISTERED)
def test_default_variants_keep_one_run_per_system(system: str) -> None:
    variants = adapter_variants(system, "analytics")
    chosen = [v.name for v in variants if v.chosen(None, defaults_only=True)]
    assert chosen == [v.name for v in variants if v.role == "default"]
    assert len(chosen) == 1, f"{system} must have exactly one out-of-the-box variant"
    with_representations = [v for v in variants if v.chosen(None, True, defaults_only=True)]
    assert [v.name for v in with_representations if v.role != "representation"] == chosen
    assert {v.name for v in with_representations} - set(chosen) == {
        v.name for v in variants if v.role == "representation"
    }


@pytest.mark.parametrize("system", REGISTERED)
def test_named_variants_win_over_the_flags(system: str) -> None:
    variants = adapter_variants(system, "analytics")
    last = variants[-1].name
    assert [v.name for v in variants if v.chosen([last], defaults_only=True)] == [last]
    everything_but_representations = [v.name for v in variants if v.chosen(None)]
    assert everything_but_representations == [v.name for v in variants if v.role != "representation"]


def test_the_flag_is_in_the_help() -> None:
    outcome = CliRunner().invoke(main, ["run", "--help"], terminal_width=200)
    assert outcome.exit_code == 0 and "--default-variants" in outcome.output
