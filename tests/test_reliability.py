"""Bad options, unwritable results, honest exit status and --resume bound to the data (on
the quickest real engine: conftest's QUICK role)."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BY_URL_ONLY, COLUMNAR, EMBEDDED, QUICK, SQL_SERVER
from result_samples import analytics_result

from docbench import results
from docbench.cli import main
from docbench.results import files as result_files
from docbench.systems import REGISTERED, engine_class
from docbench.workloads.analytics.report import verdicts
from docbench.workloads.analytics.runner import RunRequest, run_analytics

# Each test's engines and kept results live in a fresh DOCBENCH_HOME of its own.
pytestmark = pytest.mark.usefixtures("own_home")

FORMAT1 = Path(__file__).parent / "fixtures" / "format1"


def url_scheme(system: str) -> str:
    """The scheme of a system's URLs (that of its documented example)."""
    example = engine_class(system).url_example
    assert example, system
    return example.partition("://")[0]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "--scale", "7q"], "not a count: '7q'"),
        (["run", "--scale", "0"], "at least one document"),
        (["run", "--systems", "nosuch"], "unknown system nosuch"),
        (["run", "--systems", f"{QUICK.system},nosuch,other"], "unknown systems nosuch, other"),
        (["run", "--tries", "0"], "0 is not in the range x>=1"),
        (["run", "--tries", "-1"], "-1 is not in the range x>=1"),
        (["run", "--timeout", "0"], "0.0 is not in the range x>0"),
        (["run", "--systems", QUICK.system, "--variants", "nosuch"], "no such variant nosuch"),
        (["run", "updates", "--docs", "0"], "must be at least 1"),
        (["run", "updates", "--distribution", "gaussian"], "one or more of uniform, zipfian"),
        (["run", "storage", "--entropy", "noise"], "one or more of random, repetitive, text"),
        (["run", "throughput", "--clients", "0"], "must be at least 1"),
        (["run", "throughput", "--mix", "write-only"], "one or more of read-only"),
        (["run", "throughput", "--scenario", "gpu"], "one or more of cpu, io"),
        (["run", "--workload", "nosuch"], "No such command 'nosuch'"),
        (["generate", "--docs", "1x", "--out", "x"], "not a count: '1x'"),
        (["setup", "nosuch"], "unknown system nosuch"),
    ],
)
def test_bad_options_are_refused_with_a_message(argv: list[str], says: str, tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, [*argv, "--results", str(tmp_path / "r")] if argv[0] == "run" else argv
    )
    assert outcome.exit_code != 0
    text = outcome.output + (str(outcome.exception) if outcome.exception else "")
    assert says in text, text
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit), outcome.exception
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").iterdir())


def test_unwritable_results_directory_is_refused_before_anything_runs(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(main, ["run", "--systems", QUICK.system, "--results", "/proc/forbidden"])
    assert outcome.exit_code == 1
    assert "results directory /proc/forbidden is not writable" in outcome.output
    assert isinstance(outcome.exception, SystemExit)


def test_a_result_that_cannot_be_written_is_kept_and_the_next_system_runs(
    real_small: Path, tmp_path: Path, own_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills up after the first system: its result goes to docbench's work
    directory (said in the result and on the terminal), the second system still runs, and
    the exit status says that a result is not where it was asked for."""
    results_dir = tmp_path / "results"
    real_write = result_files.write_atomically
    full = {"after": 1, "writes": 0}

    def write(path: Path, document: dict) -> None:
        if path.parent == results_dir:
            full["writes"] += 1
            if full["writes"] > full["after"]:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real_write(path, document)

    monkeypatch.setattr(result_files, "write_atomically", write)
    request = RunRequest(
        system_names=[QUICK.system, EMBEDDED.system],
        variants=[QUICK.variant, EMBEDDED.variant],
        data_dir=real_small,
        results_dir=results_dir,
        tries=1,
        quiet=True,
    )
    assert run_analytics(request) == 1
    monkeypatch.setattr(result_files, "write_atomically", real_write)
    written = [d for d in results.load_results([results_dir]) if d.get("complete")]
    kept = results.load_results([own_home / "work" / "unsaved-results"])
    assert {d["system"] for d in written} | {d["system"] for d in kept} == {QUICK.system, EMBEDDED.system}
    assert len(kept) == 1 and kept[0]["complete"] is True
    assert "kept at" in kept[0]["warnings"][-1]
    assert not [p for p in results_dir.iterdir() if p.stat().st_size == 0]


def test_exit_status_is_not_zero_when_a_named_system_cannot_run(real_small: Path, tmp_path: Path) -> None:
    request = RunRequest(
        system_names=[QUICK.system, BY_URL_ONLY.system],
        variants=[QUICK.variant],
        data_dir=real_small,
        results_dir=tmp_path / "results",
        tries=1,
        quiet=True,
    )
    assert run_analytics(request) == 1  # it needs its --<system>-url: named, so it is a failure


def test_resume_is_bound_to_the_data_not_the_directory_name(real_small: Path, tmp_path: Path) -> None:
    results_dir = tmp_path / "results"
    request = RunRequest(
        system_names=[QUICK.system],
        variants=[QUICK.variant],
        data_dir=real_small,
        results_dir=results_dir,
        tries=1,
        quiet=True,
    )
    assert run_analytics(request) == 0
    first = results.load_results([results_dir])
    assert [d["num_loaded_documents"] for d in first] == [1000]
    # Another directory with the same name and other data.
    other = tmp_path / "other" / "small"
    other.mkdir(parents=True)
    lines = (real_small / "file_0001.json").read_bytes().splitlines()[:584]
    (other / "file_0001.json").write_bytes(b"\n".join(lines) + b"\n")
    request.data_dir, request.resume = other, True
    assert run_analytics(request) == 0
    counts = sorted(d["num_loaded_documents"] for d in results.load_results([results_dir]))
    assert counts == [584, 1000]  # run again, nothing overwritten
    # The same data again: skipped.
    before = sorted(p.name for p in results_dir.iterdir())
    assert run_analytics(request) == 0
    assert sorted(p.name for p in results_dir.iterdir()) == before


def test_runs_never_overwrite_and_files_are_readable_by_all(real_small: Path, tmp_path: Path) -> None:
    results_dir = tmp_path / "results"
    request = RunRequest(
        system_names=[QUICK.system],
        variants=[QUICK.variant],
        data_dir=real_small,
        results_dir=results_dir,
        tries=1,
        quiet=True,
    )
    assert run_analytics(request) == 0
    assert run_analytics(request) == 0
    paths = sorted(results_dir.glob(f"analytics.{QUICK.system}.{QUICK.variant}.small.*.json"))
    assert len(paths) == 2
    for path in paths:
        assert path.stat().st_mode & 0o777 == 0o644
        results.validate(json.loads(path.read_text()))
    assert not list(results_dir.glob("*.refused.tsv"))  # nothing refused: no empty log
    # The report shows the latest run of the identity once.
    latest = result_files.latest_documents(results.load_results([results_dir]))
    assert [d["_path"] for d in latest] == [
        str(max(paths, key=lambda p: json.loads(p.read_text())["started_at"] + p.name))
    ]


def test_old_format_results_still_report(tmp_path: Path) -> None:
    """A results directory written before the redesign (format 1) is read as the current
    format: registry name in `system`, display name in `display_name`."""
    shutil.copytree(FORMAT1, tmp_path / "results")
    # Format 1's analytics result: the display name in `system`, the registry name in `system_name`.
    written = json.loads((FORMAT1 / "sqlite.jsonb.1m.json").read_text())
    assert written["system_name"] in REGISTERED and written["system"] == "SQLite (JSONB)"
    documents = {d["workload"]: d for d in results.load_results([tmp_path / "results"])}
    assert documents["analytics"]["system"] == written["system_name"]
    assert documents["analytics"]["display_name"] == "SQLite (JSONB)"
    assert documents["storage"]["variant_settings"] == {"type": "jsonb"}
    assert documents["updates"]["finished_at"]
    outcome = CliRunner().invoke(main, ["report", "--results", str(tmp_path / "results")], terminal_width=200)
    assert outcome.exit_code == 0, outcome.output
    assert f"{written['system_name']}/{written['variant']}" in outcome.output


def test_a_run_that_never_started_is_not_ranked() -> None:
    ran = analytics_result(
        SQL_SERVER.system,
        "lz4",
        result=[[1.0, 0.5, 0.4]] * 5,
        answers=[{"query": q + 1, "status": "ok"} for q in range(5)],
        timeout_seconds=600,
    )
    never = analytics_result(
        SQL_SERVER.system,
        SQL_SERVER.variant,
        result=[[None] * 3] * 5,
        answers=[{"query": q + 1, "status": "error"} for q in range(5)],
        error="RuntimeError: could not start",
        timeout_seconds=600,
    )
    text = "\n".join(verdicts([ran, never]))
    assert f"faster than {SQL_SERVER.system}/{SQL_SERVER.variant}" not in text
    assert "failed: RuntimeError" in text


def test_hot_time_from_fewer_tries_is_said() -> None:
    document = analytics_result(
        QUICK.system,
        QUICK.variant,
        result=[[1.0, None, 0.4]] + [[1.0, 0.5, 0.4]] * 4,
        answers=[{"query": q + 1, "status": "ok"} for q in range(5)],
    )
    assert "hot time from fewer tries: Q1 1 of 2" in "\n".join(verdicts([document]))


def test_a_password_typed_on_the_command_line_is_warned_about_and_never_stored(tmp_path: Path) -> None:
    server = SQL_SERVER.system
    url = f"{url_scheme(server)}://rel:Secret@9@127.0.0.1:1/other"
    outcome = CliRunner().invoke(
        main, ["run", "--systems", server, f"--{server}-url", url, "--results", str(tmp_path / "r")]
    )
    assert "visible to other users in `ps`" in outcome.output
    assert f"DOCBENCH_{server.upper()}_URL" in outcome.output
    assert "Secret" not in outcome.output
    from_env = CliRunner().invoke(
        main,
        ["run", "--systems", server, "--results", str(tmp_path / "r")],
        env={f"DOCBENCH_{server.upper()}_URL": url},
    )
    assert "visible to other users" not in from_env.output and "Secret" not in from_env.output
    document = {
        "error": f"OperationalError: could not connect to {url}",
        "runs": [{"traceback": "password Secret@9 refused"}],
    }
    assert "Secret" not in json.dumps(results.scrub(document, url))


def test_an_upgraded_run_replaces_the_old_format_one_in_the_report(tmp_path: Path) -> None:
    """A results directory of the old format, then a new run of the same system/variant/data
    on the same machine: the report shows the new one only."""
    old = json.loads((FORMAT1 / "sqlite.jsonb.1m.json").read_text())
    old["environment"]["hostname"] = "the-host"
    new = {
        **results.upgrade_copy(old),
        "format": 2,
        "machine_slug": "the-host",
        "dataset_fingerprint": "abc",
        "started_at": "2026-11-24T10:00:00+00:00",
    }
    found = result_files.latest_documents([results.upgrade_copy(old), new])
    assert found == [new]


def test_reserved_result_names_are_released_when_nothing_is_written(tmp_path: Path) -> None:
    path = results.new_result_path(tmp_path, "analytics", QUICK.system, QUICK.variant, "1m")
    # Reserved by a file that names its process (never an empty one), which is no result.
    assert path.exists() and path.stat().st_size > 0 and results.load_results([tmp_path]) == []
    with pytest.raises(KeyboardInterrupt), results.reserved(path):
        raise KeyboardInterrupt
    assert not path.exists()


def test_a_result_that_cannot_be_written_anywhere_goes_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(path: Path, document: dict) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(result_files, "write_atomically", full)
    assert (
        result_files.write_or_keep(tmp_path / "r.json", {"system": QUICK.system, "x": 1}, tmp_path / "keep")
        is None
    )
    assert '"x":1' in capsys.readouterr().err


def test_the_scale_is_one_dataset_whatever_its_spelling(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, ["plan", "--scale", "1000k", "--systems", QUICK.system], terminal_width=200
    )
    assert "Plan for 1m (1,000,000 documents)" in outcome.output and "bluesky-1m" in outcome.output
    outcome = CliRunner().invoke(main, ["plan", "--scale", "1m", "--systems", "nosuch"])
    assert outcome.exit_code == 2 and "unknown system nosuch" in outcome.output


def test_updates_and_storage_results_follow_their_schemas(tmp_path: Path) -> None:
    """Every workload's result file validates against its schema (analytics, throughput and
    storage are validated where their workloads are tested; here updates and storage on the
    quick engine)."""
    from docbench.workloads.storage.runner import StorageRequest, run_storage
    from docbench.workloads.updates.runner import run_updates

    results_dir = tmp_path / "results"
    assert (
        run_updates(
            [QUICK.system],
            docs=2000,
            ops=200,
            distributions=["uniform"],
            results_dir=results_dir,
            variants=[QUICK.variant],
        )
        == 0
    )
    assert (
        run_storage(
            StorageRequest(
                system_names=[QUICK.system],
                results_dir=results_dir,
                rows=50,
                sizes=[1000],
                entropies=["random"],
                variants=[QUICK.variant],
            )
        )
        == 0
    )
    documents = results.load_results([results_dir])
    assert sorted(d["workload"] for d in documents) == ["storage", "updates"]
    for document in documents:
        results.validate(document)
        assert document["system"] == QUICK.system and document["display_name"] and document["format"] == 2


def post_load_steps(
    systems: list[str], variants: list[str], data: Path, results_dir: Path
) -> dict[str, list]:
    """One try of each system on ``data``: every post-load step is timed on its own (their sum
    within the finish's time); each system's steps, by system."""
    request = RunRequest(
        system_names=systems,
        variants=variants,
        data_dir=data,
        results_dir=results_dir,
        tries=1,
        quiet=True,
    )
    assert run_analytics(request) == 0
    for document in results.load_results([results_dir]):
        steps = document["load"]["finish_steps"]
        assert steps and all(step["seconds"] >= 0 and step["step"] for step in steps), document["system"]
        assert sum(s["seconds"] for s in steps) <= document["load"]["finish_seconds"] + 0.01
    return {d["system"]: d["load"]["finish_steps"] for d in results.load_results([results_dir])}


@pytest.mark.server  # a server or a 1m dataset: not the quick loop's
def test_every_post_load_step_is_timed_on_its_own(real_small: Path, tmp_path: Path) -> None:
    """(Each system's own steps: in its tests/test_system_*.py, e.g. ClickHouse's merges.)"""
    roles = [QUICK, EMBEDDED, COLUMNAR]
    by_system = post_load_steps(
        [r.system for r in roles], [r.variant for r in roles], real_small, tmp_path / "results"
    )
    assert set(by_system) == {r.system for r in roles}
