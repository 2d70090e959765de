"""The HTTP client's inbox: FIFO, bounded, closed to EOF, and the eager receiver offered a
message only while the consumer waits on an empty inbox."""

from __future__ import annotations

import anyio
import pytest

from acp_runtime.remote._inbox import Inbox

pytestmark = pytest.mark.anyio


async def test_messages_come_out_in_order_then_eof_after_close() -> None:
    inbox: Inbox[bytes] = Inbox(10)
    for n in range(3):
        inbox.put_nowait(b"%d" % n)
    inbox.close()
    inbox.put_nowait(b"late")  # dropped: closed
    assert [await inbox.get() for _ in range(3)] == [b"0", b"1", b"2"]
    with pytest.raises(anyio.EndOfStream):
        await inbox.get()


async def test_a_producer_waits_at_the_limit_until_the_consumer_takes_one() -> None:
    inbox: Inbox[bytes] = Inbox(2)
    done = anyio.Event()

    async def produce() -> None:
        for n in range(4):
            await inbox.put(b"%d" % n)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        await anyio.wait_all_tasks_blocked()
        assert not done.is_set()  # two queued, the third waits
        got = [await inbox.get() for _ in range(4)]
        with anyio.fail_after(5):
            await done.wait()
    assert got == [b"0", b"1", b"2", b"3"]


async def test_close_releases_a_waiting_producer_and_a_parked_consumer() -> None:
    inbox: Inbox[bytes] = Inbox(1)
    inbox.put_nowait(b"full")
    ended: list[str] = []

    async def produce() -> None:
        await inbox.put(b"never queued")
        ended.append("producer")

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        await anyio.wait_all_tasks_blocked()
        inbox.close()
    assert ended == ["producer"]
    assert await inbox.get() == b"full"
    with pytest.raises(anyio.EndOfStream):
        await inbox.get()


async def test_the_eager_receiver_sees_messages_only_while_the_consumer_is_parked() -> None:
    inbox: Inbox[bytes] = Inbox(10)
    offered: list[bytes] = []

    def eager(message: bytes) -> bool:
        offered.append(message)
        return message.startswith(b"answer")

    inbox.eager = eager
    inbox.put_nowait(b"queued first")  # nobody parked: not offered
    assert await inbox.get() == b"queued first"
    got: list[bytes] = []

    async def consume() -> None:
        got.append(await inbox.get())

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await anyio.wait_all_tasks_blocked()
        inbox.put_nowait(b"answer 1")  # taken eagerly: the consumer stays parked
        inbox.put_nowait(b"call 1")  # declined: queued, the consumer woken
        inbox.put_nowait(b"answer 2")  # behind it: queued, not offered
    assert offered == [b"answer 1", b"call 1"]
    assert got == [b"call 1"]
    assert await inbox.get() == b"answer 2"
