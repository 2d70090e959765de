"""The conformance check for any ACP agent: ``python -m acp_runtime.check -- <command>``.

``checks`` drives the agent over stdio (through ``wire``, raw JSON-RPC), ``report``
prints the table or JSON; see ``docs/testing.md``.
"""
