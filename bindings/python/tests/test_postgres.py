"""The embedded engine on PostgreSQL: the server `scripts/test.sh` starts
(`EPIMEM_TEST_POSTGRES`); skipped without one unless `EPIMEM_REQUIRE_POSTGRES` is set."""

from __future__ import annotations

import os
import uuid

import pytest

import epimem


@pytest.fixture
def url() -> str:
    url = os.environ.get("EPIMEM_TEST_POSTGRES", "")
    if not url:
        if os.environ.get("EPIMEM_REQUIRE_POSTGRES"):
            pytest.fail("EPIMEM_REQUIRE_POSTGRES is set but EPIMEM_TEST_POSTGRES names no server")
        pytest.skip("no PostgreSQL (run scripts/test.sh)")
    return url


def test_memory_on_postgres_remembers_recalls_and_forgets(url: str) -> None:
    tenant = f"py-{uuid.uuid4().hex[:12]}"
    with epimem.Memory(url, tenant=tenant, background=False) as memory:
        memory.remember(conversation="a", role="user", content="The boiler pressure is 1.5 bar.",
                        user="ann")
        memory.remember(conversation="b", role="user", content="Bob's bike has a flat tyre.",
                        user="bob")
        block = memory.recall("boiler pressure", budget=200)
        assert "1.5 bar" in (block.context or ""), block
        memory.flush("a")
        memory.flush("b")
        assert [e.conversation for e in memory.episodes(user="ann").episodes] == ["a"]
        assert memory.forget(user="ann").episodes == 1
        assert memory.recall("boiler pressure", budget=200).nothing_relevant
        assert memory.stats().conversations == 1
        memory.forget(tenant=True)
        assert memory.stats().messages == 0
