"""``docbench compare BASELINE CONTENDER``: two sets of results, figure by figure.

- :mod:`.sets` reads a side: directories and files of docbench results, JSONBench result files,
  or JSONBench's published results shipped in ``report/published/jsonbench.json``
  (``--against jsonbench``; ``scripts/update-jsonbench-published.py`` regenerates it);
- :mod:`.pairs` matches results by identity (workload, system, variant, scale, cluster shape)
  and says where the two of a pair differ in what they measured;
- :mod:`.noise` is the noise model (Welch's t-test on log samples with a run-to-run floor),
  :mod:`.aa` the A/A false-positive rate over pairs of runs (``scripts/aa-noise.py``);
- :mod:`.ratios` compares one figure (``workloads/measures.py``'s ``Measure``, which each
  workload lists for its results): ratio contender / baseline, noise of the tries, threshold,
  flag, regression;
- :mod:`.jsonform` is ``--json`` (schema ``compare.schema.json``, docs/compare.md),
  :mod:`.terminal` the tables; the HTML view is the dashboard's Compare tab (``report/html.py``).
"""

from __future__ import annotations

from docbench.report.compare.jsonform import SCHEMA, to_json
from docbench.report.compare.noise import NoiseModel
from docbench.report.compare.pairs import Comparison, Pair, compare
from docbench.report.compare.ratios import MetricComparison
from docbench.report.compare.sets import NoResults, ResultSet, load_set, published_jsonbench
from docbench.report.compare.terminal import print_comparison

__all__ = [
    "SCHEMA",
    "Comparison",
    "MetricComparison",
    "NoResults",
    "NoiseModel",
    "Pair",
    "ResultSet",
    "compare",
    "load_set",
    "print_comparison",
    "published_jsonbench",
    "to_json",
]
