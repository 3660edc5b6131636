"""epimem for LangChain (``langchain`` 1.x): a middleware for ``create_agent``.

Before each model call the model is told what memory holds that bears on the user's last
message, in its system message (nothing is added when nothing does, and nothing of the run's
own thread, which the agent's state holds already; the block is not kept in the state). When the agent's run ends, the run's exchange is remembered: the user's
message and the agent's final answer, each under its LangChain id, so a message is stored once
however often a run is replayed. Tool calls and their results are not remembered.

    agent = create_agent(model, tools, middleware=[EpimemMiddleware(memory, user="maya")])
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "t1"}})

The conversation is the run's thread (``thread_id``) unless one is given. ``user`` and
``conversation`` may each be a function of the run's ``Runtime`` (for example of its context).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain_core.messages import AnyMessage, SystemMessage
from langgraph.runtime import Runtime

from ._common import BUDGET, HEADING, AnyMemory, acall, call, exchange, told

Given = Union[str, Callable[[Runtime[Any]], Optional[str]], None]


class EpimemMiddleware(AgentMiddleware):
    """Recalls before the model is called and remembers each run's exchange."""

    def __init__(
        self,
        memory: AnyMemory,
        *,
        user: Given = None,
        conversation: Given = None,
        budget: int = BUDGET,
        heading: str = HEADING,
    ) -> None:
        super().__init__()
        self.memory = memory
        self.user = user
        self.conversation = conversation
        self.budget = budget
        self.heading = heading

    # Recalling: the system message of this one call gains the block.

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        said = _last_said(request.messages)
        if said:
            recalled = call(self.memory, "recall", said, **self._recall(request.runtime))
            request = self._telling(request, told(recalled, self.heading))
        return handler(request)

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        said = _last_said(request.messages)
        if said:
            recalled = await acall(self.memory, "recall", said, **self._recall(request.runtime))
            request = self._telling(request, told(recalled, self.heading))
        return await handler(request)

    # Remembering: the run's exchange, once it has ended.

    def after_agent(self, state: AgentState, runtime: Runtime[Any]) -> Optional[Dict[str, Any]]:
        messages = self._exchange(state, runtime)
        if messages:
            call(self.memory, "remember", messages)
        return None

    async def aafter_agent(self, state: AgentState, runtime: Runtime[Any]) -> Optional[Dict[str, Any]]:
        messages = self._exchange(state, runtime)
        if messages:
            await acall(self.memory, "remember", messages)
        return None

    def _recall(self, runtime: Runtime[Any]) -> Dict[str, Any]:
        """How a recall is asked: this user's memory, leaving out the run's thread when it is
        the conversation (its messages are in the agent's state already; a conversation given
        by name may span runs the state does not hold)."""
        asked: Dict[str, Any] = {"budget": self.budget, "user": self._user(runtime)}
        if _read(self.conversation, runtime) is None:
            asked["asked_in"] = self._conversation(runtime)
        return asked

    def _telling(self, request: ModelRequest, block: Optional[str]) -> ModelRequest:
        if block is None:
            return request
        before = request.system_message.text if request.system_message is not None else ""
        system = f"{before}\n\n{block}" if before else block
        return request.override(system_message=SystemMessage(content=system))

    def _exchange(self, state: AgentState, runtime: Runtime[Any]) -> List[Dict[str, Any]]:
        turn = _this_turn(state["messages"])
        if not turn:
            return []
        return exchange(turn, self._conversation(runtime), self._user(runtime))

    def _user(self, runtime: Optional[Runtime[Any]]) -> Optional[str]:
        return _read(self.user, runtime)

    def _conversation(self, runtime: Runtime[Any]) -> str:
        given = _read(self.conversation, runtime)
        if given:
            return given
        info = getattr(runtime, "execution_info", None)
        thread = getattr(info, "thread_id", None)
        if not thread:
            raise ValueError(
                "EpimemMiddleware needs a conversation: run the agent with a thread "
                "(config={'configurable': {'thread_id': ...}}) or give conversation=")
        return str(thread)


def _read(given: Given, runtime: Optional[Runtime[Any]]) -> Optional[str]:
    if callable(given):
        return given(runtime) if runtime is not None else None
    return given


def _last_said(messages: List[AnyMessage]) -> str:
    """The text of the user's last message."""
    for message in reversed(messages):
        if message.type == "human":
            return str(message.text).strip()
    return ""


def _this_turn(messages: List[AnyMessage]) -> List[Tuple[str, str, Optional[str]]]:
    """The user's last message and the answers after it that are text, not tool calls."""
    start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].type == "human"), None)
    if start is None:
        return []
    turn = [("user", str(messages[start].text), messages[start].id)]
    for message in messages[start + 1:]:
        if message.type == "ai" and not getattr(message, "tool_calls", None):
            turn.append(("assistant", str(message.text), message.id))
    return turn
