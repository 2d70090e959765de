"""Count what a test could leak: event-loop tasks and file descriptors."""

from __future__ import annotations

import asyncio
import os

import trio


def live_tasks() -> int:
    """Tasks alive on the running event loop (asyncio or trio)."""
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:  # no asyncio loop: trio
        return _trio_tree_size(trio.lowlevel.current_root_task())


def _trio_tree_size(task: trio.lowlevel.Task | None) -> int:
    if task is None:
        return 0
    children = (child for nursery in task.child_nurseries for child in nursery.child_tasks)
    return 1 + sum(_trio_tree_size(child) for child in children)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))
