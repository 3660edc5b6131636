"""The package under test is the one users install: the built wheel, in a virtual environment
of its own, not the source folder compiled in place."""

import pathlib

import epimem


def test_the_package_is_the_installed_wheel():
    where = pathlib.Path(epimem.__file__).resolve()
    assert "site-packages" in where.parts, where
    # The compiled engine came in the wheel, beside the Python code.
    assert list(where.parent.glob("_native*.so")), sorted(p.name for p in where.parent.iterdir())
    assert (where.parent / "fetch_models.py").is_file()
