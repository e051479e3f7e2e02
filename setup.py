# SPDX-License-Identifier: Apache-2.0
"""Builds blume's Python extension with the project's own CMake build (one set of flags for every way it is
built), for the interpreter running pip."""

import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        flags = "-march=x86-64-v2" if platform.machine() in ("x86_64", "AMD64") else ""
        subprocess.run(
            ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             f"-DCMAKE_CXX_FLAGS={flags}", f"-DPython_EXECUTABLE={sys.executable}", "-DBLUME_BUILD_PYTHON=ON",
             "-DBLUME_BUILD_TESTS=OFF", "-DBLUME_BUILD_CLI=OFF", "-DBLUME_BUILD_REDIS=OFF",
             "-DBLUME_BUILD_CLUSTER=OFF", "-DBLUME_BUILD_DISTRIBUTED=OFF", "-DBLUME_BUILD_BENCH=OFF"],
            check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "blume_python", "-j", jobs], check=True)
        built = next((build_dir / "python" / "blume").glob("_blume*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


version = re.search(r"project\(blume VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
setup(
    version=version,
    packages=["blume"],
    package_dir={"": "python"},
    package_data={"blume": ["py.typed", "__init__.pyi"]},
    ext_modules=[CMakeExtension("blume._blume")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
