"""VersionRouter serves a transport like a builder; accept and connect are typed."""

from __future__ import annotations

from typing_extensions import reveal_type

from acp_runtime import ConnectionBuilder, Transport
from acp_runtime.proxies import Routed, VersionRouter


def takes_routed(routed: Routed) -> None: ...


def takes_int(version: int) -> None: ...


async def use(transport: Transport, v1: ConnectionBuilder, v2: ConnectionBuilder) -> None:
    router = VersionRouter(v1=v1, v2=v2)
    routed = await router.accept(transport)
    takes_routed(await router.accept(transport))  # expect-error: None when the peer left
    if routed is not None:
        reveal_type(routed)  # expect: Routed
        reveal_type(routed.protocol_version)  # expect: int
        async with routed.connect() as cx:
            reveal_type(cx)  # expect: Connection
    async with router.connect(transport) as cx:
        reveal_type(cx)  # expect: Connection
    takes_int(router.select(3))  # expect-error: None when no version fits
    await router.serve(transport)
    VersionRouter(v3=v2)  # expect-error
    VersionRouter(v1)  # expect-error
