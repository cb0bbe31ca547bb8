"""Only what pyproject.toml cannot say: a wheel that carries docbench's native programs
(`make wheel` puts them in src/docbench/native_bin/) is tagged for this platform (py3-none-
linux_x86_64, any Python 3), not as pure Python."""

from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel

NATIVE = Path(__file__).parent / "src" / "docbench" / "native_bin"


class PlatformWheel(bdist_wheel):
    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = not any(NATIVE.glob("docbench-*"))

    def get_tag(self) -> tuple[str, str, str]:
        python, abi, platform = super().get_tag()
        return ("py3", "none", platform) if not self.root_is_pure else (python, abi, platform)


setup(cmdclass={"bdist_wheel": PlatformWheel})
