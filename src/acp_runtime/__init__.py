"""ACP runtime: JSON-RPC connection, dispatch, settlement and cancellation on anyio.

Knows nothing of any schema version; typed bindings from ``acp_generated`` plug in
through :mod:`acp_runtime.methods`.
"""
