"""`docbench bench generate --faithfulness`: the generated stream counted through pipes gives
exactly what the oracle finds in the same dataset written to disk."""

from __future__ import annotations

from docbench.dataset import faithfulness_scale, oracle
from docbench.dataset.generate import DOCS_PER_FILE_ENV, generate_dataset
from docbench.dataset.reader import dataset_files


def test_piped_stream_counts_what_the_oracle_finds_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv(DOCS_PER_FILE_ENV, "4000")
    monkeypatch.setenv("DOCBENCH_HOME", str(tmp_path / "home"))
    docs = 10_000  # three files, the last one shorter
    part, t_min, t_max, seconds = faithfulness_scale.generated_stream(docs, jobs=2)
    generate_dataset(docs, tmp_path / "d", jobs=2, quiet=True, answers=False)
    on_disk = oracle.compute_answers(dataset_files(tmp_path / "d"))
    piped = oracle.finalize(part, [])
    for key in ("documents", "q1", "q2", "q3", "q4", "q5"):
        assert piped[key] == on_disk[key], key
    assert part.documents == docs and seconds > 0
    assert 0 < t_max - t_min < 3600 * 10**6  # 10,000 events: minutes, not hours
    figures, profile = faithfulness_scale.figures(docs, part, t_min, t_max)
    assert abs(sum(profile) - 1.0) < 1e-9
    names = [f.name for f in figures]
    assert "time span (hours)" in names and any("distinct users" in n for n in names)


def test_published_figures_are_consistent():
    """The tables hold what issue #15 publishes: creates never exceed events, users never
    exceed creates, and the spans grow with the scale."""
    for scale, colls in faithfulness_scale.PUBLISHED_CREATES.items():
        for coll, (creates, users) in colls.items():
            assert users <= creates
            events = faithfulness_scale.PUBLISHED_EVENTS.get(scale, {}).get(coll)
            assert events is None or creates <= events
    spans = [
        faithfulness_scale.PUBLISHED_SPAN_HOURS[s] for s in sorted(faithfulness_scale.PUBLISHED_SPAN_HOURS)
    ]
    assert spans == sorted(spans)
    # (99,999,968: the Q1 groups of the first 100m events, as published)
    assert 0 <= 100_000_000 - sum(faithfulness_scale.PUBLISHED_EVENTS[100_000_000].values()) < 100
