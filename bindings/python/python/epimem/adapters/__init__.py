"""epimem inside the agent frameworks, each adapter a thin layer over ``Memory``, ``Client``
or ``AsyncClient`` written to its framework's own seam for memory:

- ``epimem.adapters.langchain``: a middleware for LangChain's ``create_agent``
  (``pip install "epimem[langchain]"``);
- ``epimem.adapters.langgraph``: a ``BaseStore`` for LangGraph's long-term memory
  (``epimem[langchain]``);
- ``epimem.adapters.autogen``: AutoGen's ``Memory`` protocol (``epimem[autogen]``);
- ``epimem.adapters.llama_index``: a memory block for LlamaIndex's ``Memory``
  (``epimem[llama-index]``);
- ``epimem.adapters.openai_agents``: a ``Session`` for the OpenAI Agents SDK, and a filter
  that tells its model what memory holds (``epimem[openai-agents]``).

Each recalls with what the user just said, adds nothing when nothing bears on it, and
remembers the exchange in its conversation, by its user.
"""
