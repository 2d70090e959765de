"""How much code an agent author writes: the tutorial's agent and client beside the same
programs written with the PyPI package ``agent-client-protocol``, and the line counter."""
