"""Datasets of other shapes than Bluesky events (`docbench-gen shapes`, native/docbench-gen/src/shapes.rs).

A shape is a set of knobs: distinct paths, paths per document, depth, the share of array and
of varying-type paths, the popularity exponent of the paths, the length of strings. Presets
(logs, catalogue, telemetry, deep) name typical ones; any knob can be set on top of a preset.
The generator writes the documents and, in the same pass, the answers of the shape queries
(``summary["answers"]``): a point lookup of the most common path, an aggregate over a rare
integer path, a filter on a path whose type varies, a count of the documents having a path.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from docbench.core.jsontypes import JsonObject, as_object
from docbench.dataset.generate import GeneratorError, ensure_binary

SUMMARY_NAME = "shapes.json"
DATA_NAME = "file_0001.json"


@dataclass(frozen=True)
class Shape:
    """Knobs of ``docbench-gen shapes``; None keeps the preset's value."""

    preset: str = "logs"
    paths: int | None = None
    per_doc: int | None = None
    depth: int | None = None
    array_share: float | None = None
    varying_share: float | None = None
    zipf: float | None = None
    string_len: int | None = None

    def arguments(self) -> list[str]:
        args = ["--preset", self.preset]
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name != "preset" and value is not None:
                args += [
                    f"--{field.name.replace('_', '-')}",
                    repr(value) if isinstance(value, float) else str(value),
                ]
        return args

    def label(self) -> str:
        """A name for the dataset directory: the preset and the knobs set on top of it."""
        changed = [
            f"{f.name}={getattr(self, f.name)}"
            for f in fields(self)
            if f.name != "preset" and getattr(self, f.name) is not None
        ]
        return "-".join([self.preset, *changed]).replace("_", "")


def generate_shapes(
    shape: Shape, docs: int, out: Path, seed: int = 1, binary: Path | None = None
) -> JsonObject:
    """Write ``docs`` documents of this shape to ``out/file_0001.json`` and the generator's
    summary (knobs, sha256, the shape queries' answers) to ``out/shapes.json``; reuses both when
    they are already there for the same request."""
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / SUMMARY_NAME
    request: JsonObject = {"shape": asdict(shape), "docs": docs, "seed": seed}
    if summary_path.is_file() and (out / DATA_NAME).is_file():
        known = as_object(json.loads(summary_path.read_text()), str(summary_path))
        if known.get("request") == request:
            return known
    binary = binary or ensure_binary(quiet=True)
    temporary = out / f".{DATA_NAME}.partial"
    command = [str(binary), "shapes", *shape.arguments(), "--docs", str(docs), "--seed", str(seed)]
    proc = subprocess.run([*command, "--out", str(temporary)], capture_output=True, text=True)
    if proc.returncode != 0:
        temporary.unlink(missing_ok=True)
        raise GeneratorError(f"docbench-gen shapes failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    summary = as_object(json.loads(proc.stdout.strip().splitlines()[-1]), "docbench-gen shapes' summary")
    summary["request"] = request
    temporary.replace(out / DATA_NAME)
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def preset_knobs(name: str, binary: Path | None = None) -> dict[str, float]:
    """A preset's knobs as the generator defines them (``docbench-gen shapes --presets``)."""
    binary = binary or ensure_binary(quiet=True)
    proc = subprocess.run([str(binary), "shapes", "--presets"], capture_output=True, text=True, check=True)
    for line in proc.stdout.splitlines():
        preset, _, rest = line.partition("\t")
        if preset == name:
            return {key: float(value) for key, value in re.findall(r"(\w+): ([0-9.]+)", rest)}
    raise GeneratorError(f"docbench-gen has no shape preset {name!r}")


def presets(binary: Path | None = None) -> list[str]:
    """The generator's preset names."""
    binary = binary or ensure_binary(quiet=True)
    proc = subprocess.run([str(binary), "shapes", "--presets"], capture_output=True, text=True, check=True)
    return [line.split("\t")[0] for line in proc.stdout.splitlines() if line.strip()]
