"""The types editors and type checkers read: generated, and checked against their source."""

from __future__ import annotations

import importlib.util
import pathlib

HERE = pathlib.Path(__file__).resolve().parents[1]


def test_the_clients_stub_is_what_the_operations_give() -> None:
    spec = importlib.util.spec_from_file_location("generate_stubs", HERE / "generate-stubs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (HERE / "python" / "epimem" / "client.pyi").read_text()
    assert committed == module.stub(), "run bindings/python/generate-stubs.py"
    # AsyncClient's methods are coroutines to a type checker too.
    assert "    async def recall(self, query: str" in committed
