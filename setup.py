"""Build of the package: the transform's modules compiled with mypyc where that can be done,
plain Python where not (pyproject.toml holds everything else).

`pip install .` compiles the modules of `COMPILED` when mypyc (from the build requirements)
and a C compiler are there, and ETL_PURE_PYTHON is unset or empty. Anything that goes wrong
on the way (no compiler, mypyc refusing a module, a compile error) is reported and the
install goes on with the pure-Python modules: they give the same output
(docs/compiled-core.md says how that is checked). An editable install (`pip install -e .`)
is never compiled: a developer's edits must take effect without a rebuild.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
# The transform: pure functions over strings and small containers, where compiled code pays.
COMPILED = sorted(
    str(path.relative_to(HERE))
    for folder in ("etl/transform", "etl/transform/methods")
    for path in (HERE / folder).glob("*.py")
)
FORCE_PURE = "ETL_PURE_PYTHON"
# setup.py commands that build the package (not only its metadata)
BUILDS = frozenset({"bdist_wheel", "build", "build_ext", "install", "bdist"})


def say(message: str) -> None:
    """A line in the build's log (pip shows it with -v, and on failure)."""
    print(f"paper-list-etl: {message}", file=sys.stderr)


def wanted() -> bool:
    """Whether this build should try to compile."""
    if os.environ.get(FORCE_PURE):
        say(f"{FORCE_PURE} is set: pure Python")
        return False
    commands = sys.argv[1:]
    if any(command.startswith(("editable", "develop")) for command in commands):
        return False  # an editable install runs the sources as they are edited
    if not any(command in BUILDS for command in commands):
        return False  # metadata only (pip asks for it first): nothing is compiled for it
    if sys.implementation.name != "cpython":
        return False
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    if not shutil.which(shlex.split(compiler)[0]):
        say(f"no C compiler ({compiler}): pure Python")
        return False
    return True


def compiled_modules() -> list[object]:
    """mypyc's extensions for COMPILED, or none when they cannot be made."""
    if not wanted():
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        say("mypyc is not installed: pure Python")
        return []
    try:
        return list(mypycify(COMPILED, opt_level="3", debug_level="0"))
    except (Exception, SystemExit) as exc:  # mypyc exits on a type error
        say(f"mypyc could not compile the transform ({exc!r}): pure Python")
        return []


class OptionalBuildExt(build_ext):
    """build_ext that leaves the pure-Python modules when compiling fails: all the compiled
    modules or none (they share one library)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            say(f"compiling the transform failed ({exc!r}): pure Python")
            for extension in self.extensions:
                built = Path(self.get_ext_fullpath(extension.name))
                built.unlink(missing_ok=True)
            self.extensions = []


setup(ext_modules=compiled_modules(), cmdclass={"build_ext": OptionalBuildExt})
