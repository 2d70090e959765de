"""The ACP app one worker process serves: the echo agent, plus two commands that show
where a request landed.

Served as ``python -m uvicorn tests.scaleout.worker:app --fd N`` (or ``--port N``), one
process per port, as ``docs/deploying.md`` shows. Every connection gets a
:class:`WorkerAgent`; its ``initialize`` answer names the process in ``agentInfo.name``
(``worker-<pid>``), and the prompt commands

* ``whoami``: one chunk ``pid <pid>``, then ``end_turn``;
* ``spin <ms>``: keep the CPU busy that long (an agent's own work), then as ``whoami``;

answer on the session. Every other prompt is the echo agent's (``sleep <ms>`` waits, so a
test has a request in flight when it kills the worker).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

from echo_agent import EchoAgent, Turn, prompt_text  # noqa: E402

from acp_generated import v1  # noqa: E402
from acp_runtime import Responder  # noqa: E402
from acp_runtime.remote import acp_app  # noqa: E402

_SPIN = re.compile(r"spin\s+(\d+)")


def worker_name(pid: int) -> str:
    """The ``agentInfo.name`` a worker answers with: how a client tells workers apart."""
    return f"worker-{pid}"


def busy(ms: int) -> None:
    """Use ``ms`` milliseconds of CPU (not of wall time: a loaded machine takes longer)."""
    deadline = time.process_time() + ms / 1000
    while time.process_time() < deadline:
        pass


class WorkerAgent(EchoAgent):
    """The echo agent, naming its process in ``initialize`` and in ``whoami``/``spin``."""

    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(load_session=False),
            agent_info=v1.Implementation(name=worker_name(os.getpid()), version="1.0.0"),
        )

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse | None:
        text = prompt_text(params.prompt)
        spin = _SPIN.fullmatch(text)
        if text != "whoami" and spin is None:
            return await super().prompt(params, responder)
        if spin is not None:
            busy(int(spin[1]))
        Turn(params.session_id, responder).say(f"pid {os.getpid()}")
        return v1.PromptResponse(stop_reason="end_turn")


app = acp_app(WorkerAgent)
"""One app per process: connections live in the process that answered their
``initialize``, which is why a load balancer in front needs affinity for HTTP."""
