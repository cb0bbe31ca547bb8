# A Python package of a pinned version in a venv of its own, for a system's setup.sh (sourced,
# bash: `. "$(dirname "${BASH_SOURCE[0]}")/../pyvenv.sh"`).
#
#   docbench_pip_venv NAME DIR PACKAGE MODULE VERSION [NOTE]
#
# makes DIR a venv whose Python imports MODULE at VERSION, with PACKAGE==VERSION from PyPI
# (NOTE, e.g. its size, is said while it downloads). Idempotent: a venv that imports MODULE at
# VERSION and has the mark written last is left alone; anything else at DIR is made again.
# Debian's own python3 makes venvs only with its python3-venv package (installed when missing).
#
#   DOCBENCH_PYTHON   the Python 3.11+ to make the venv with (default: python3)

docbench_pip_venv() {
    local name="$1" dir="$2" package="$3" module="$4" version="$5" note="${6:-}"
    local mark="$dir/.docbench-installed"
    local python="${DOCBENCH_PYTHON:-python3}"
    local check="import $module, sys; sys.exit($module.__version__ != '$version')"
    if [ -f "$mark" ] && "$dir/bin/python" -I -c "$check" 2>/dev/null; then
        echo "$name: $package $version already installed in $dir"
        return 0
    fi
    command -v "$python" >/dev/null || { echo "$name: $python is needed to make the venv (DOCBENCH_PYTHON)" >&2; return 1; }
    rm -rf "$dir"
    if ! "$python" -m venv "$dir" 2>/dev/null; then
        rm -rf "$dir"
        if [ "$(command -v "$python")" = /usr/bin/python3 ]; then
            . "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
            docbench_apt_install "$name" python3-venv
        fi
        "$python" -m venv "$dir" || { echo "$name: $python -m venv $dir failed" >&2; return 1; }
    fi
    echo "$name: fetching $package==$version from PyPI into $dir${note:+ ($note)}"
    if ! "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
            --no-compile "$package==$version"; then
        echo "$name: could not install $package==$version into $dir" >&2
        return 1
    fi
    "$dir/bin/python" -I -c "$check" || { echo "$name: $dir/bin/python does not import $module $version" >&2; return 1; }
    chmod -R a+rX "$dir"
    touch "$mark"
}
