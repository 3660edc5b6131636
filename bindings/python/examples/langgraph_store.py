"""LangGraph's long-term memory kept in epimem: what is put under a person's namespace is
found again by meaning.

    python langgraph_store.py memory.db
"""

import sys

import epimem
from epimem.adapters.langgraph import EpimemStore

with epimem.Memory(sys.argv[1]) as memory:
    store = EpimemStore(memory, user=lambda namespace: namespace[-1])
    store.put(("memories", "maya"), "home", {"text": "Maya lives in Porto."})
    store.put(("memories", "maya"), "food", {"text": "Maya is vegetarian."})
    for item in store.search(("memories", "maya"), query="Where does Maya live?", limit=1):
        print(item.key, item.value["text"])
