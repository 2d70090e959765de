"""VersionRouter serves a transport like a builder; accept and connect are typed."""

from __future__ import annotations

from typing_extensions import reveal_type

from acp_runtime import ConnectionBuilder, Routed, Transport, VersionRouter


async def use(transport: Transport, v1: ConnectionBuilder, v2: ConnectionBuilder) -> None:
    router = VersionRouter(v1=v1, v2=v2)
    routed = await router.accept(transport)
    not_optional: Routed = await router.accept(transport)  # expect-error
    if routed is not None:
        reveal_type(routed)  # expect: Routed
        reveal_type(routed.protocol_version)  # expect: int
        async with routed.connect() as cx:
            reveal_type(cx)  # expect: Connection
    async with router.connect(transport) as cx:
        reveal_type(cx)  # expect: Connection
    selected: int = router.select(3)  # expect-error
    await router.serve(transport)
    VersionRouter(v3=v2)  # expect-error
    VersionRouter(v1)  # expect-error
