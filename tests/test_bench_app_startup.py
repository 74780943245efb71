"""bench/app_startup.py runs from a project venv (issue 23): the venv it keeps for tooli
sees what the environment running the bench has, not the base interpreter's packages.

The environment here is a real venv holding a module the base interpreter does not have,
as a project venv holds its `pip install -e .` of atipkit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"

_MAKE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import app_startup
print(app_startup.sharing_venv(Path(sys.argv[2]), pip=False))
"""


def _purelib(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def test_the_tooli_venv_sees_the_project_venvs_packages(tmp_path):
    project = tmp_path / "project"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project)], check=True)
    python = project / "bin" / "python"
    site = _purelib(python)
    (site / "only_in_the_project.py").write_text("WHERE = 'project'\n")
    # an editable install is a .pth naming the source: it must be followed too
    source = tmp_path / "src"
    source.mkdir()
    (source / "edited_in_place.py").write_text("WHERE = 'source'\n")
    (site / "__editable__.pth").write_text(f"{source}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}

    made = subprocess.run(
        [str(python), "-c", _MAKE, str(BENCH), str(tmp_path / "tooli")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    child = Path(made.stdout.strip())
    seen = subprocess.run(
        [str(child), "-c", "import only_in_the_project, edited_in_place; print('ok')"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert seen.stdout == "ok\n", seen.stderr
    assert child.parent.parent == tmp_path / "tooli"  # its own venv, not the project's
    # what the bench did before: --system-site-packages gives the base interpreter's
    old = tmp_path / "old"
    made_old = [str(python), "-m", "venv", "--without-pip", "--system-site-packages", str(old)]
    subprocess.run(made_old, check=True, env=env)
    missed = subprocess.run(
        [str(old / "bin" / "python"), "-c", "import only_in_the_project"],
        capture_output=True,
        env=env,
    )
    assert missed.returncode != 0
