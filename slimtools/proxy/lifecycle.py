"""Keep the upstream alive while the proxy serves: restart a crashed one, with bounded backoff.

``Supervisor.run`` is one task that owns the upstream's connection (anyio scopes must be
left by the task that entered them): it connects, waits until a call finds the connection
lost, and connects again after a pause that doubles from ``backoff[0]`` up to
``backoff[-1]`` seconds. Calls made while the upstream is down are not queued: they get an
error result naming the restart and when it is due, so the model can call again.

A call the upstream leaves unanswered for ``timeout`` seconds (it never replies, or replies
with a line the SDK cannot read, or with another request's id: the SDK drops those, and the
call would wait forever) is abandoned with an error result naming the tool and the timeout;
an answer that is no tool result gets an error naming only its exception type. Neither
quotes the upstream's content, and the connection serves the next call as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from anyio.abc import TaskStatus

try:
    from mcp.shared.exceptions import MCPError
    from mcp.types import CallToolResult, ServerCapabilities, TextContent, Tool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.proxy needs the MCP SDK (mcp>=2): pip install 'slimtools[proxy]'"
    ) from exc

from slimtools.proxy.upstream import Upstream, UpstreamError, UpstreamSpec, connect, innermost

__all__ = ["Supervisor"]

log = logging.getLogger("slimtools.proxy")

_CONNECTION_CLOSED = -32000
_LOST = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
_STABLE = 60.0  # seconds up after which a crash starts the backoff again from the shortest


def is_lost(exc: BaseException) -> bool:
    """True when ``exc`` says the connection to the upstream is gone (not a tool's failure)."""
    exc = innermost(exc)
    if isinstance(exc, MCPError):
        return exc.error.code == _CONNECTION_CLOSED
    return isinstance(exc, _LOST)


class Supervisor:
    """The upstream as the proxy uses it: its tools, its instructions, and supervised calls.

    Args:
        spec: where the upstream is.
        backoff: the first and the longest pause before a restart, in seconds.
        timeout: the seconds one call may wait for the upstream's answer (None: unbounded).
    """

    def __init__(
        self,
        spec: UpstreamSpec,
        *,
        callbacks: Mapping[str, Any] | None = None,
        progress: Callable[[], Any] | None = None,
        backoff: tuple[float, float] = (0.5, 30.0),
        timeout: float | None = None,
    ) -> None:
        self.spec = spec
        self.timeout = timeout
        self.callbacks = dict(callbacks or {})
        self.progress = progress
        self.backoff = backoff
        self.current: Upstream | None = None
        self.restarts = 0
        self.next_attempt = 0.0
        self._pause: float | None = None  # the pause before the last restart (None: none yet)
        self._began = time.monotonic()  # when the current connection was made
        self._planned = False  # the next restart's time is set (once per loss)
        self._lost = anyio.Event()
        self._first: Upstream | None = None

    @property
    def instructions(self) -> str | None:
        """The upstream's instructions, as it gave them when first connected."""
        return self._first.instructions if self._first else None

    @property
    def capabilities(self) -> ServerCapabilities:
        """The upstream's capabilities, as it gave them when first connected."""
        return self._first.capabilities if self._first else ServerCapabilities()

    def client(self) -> Any:
        """The live upstream ``mcp.Client``.

        Raises:
            MCPError: the upstream is down and being restarted.
        """
        if self.current is None:
            raise MCPError(code=_CONNECTION_CLOSED, message=self._down_text("the request"))
        return self.current.client

    async def tools(self) -> list[Tool]:
        """The upstream's tools, as listed when first connected."""
        if self._first is None:
            raise UpstreamError(f"the upstream {self.spec.describe()!r} is not connected")
        return await self._first.tools()

    async def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call ``name`` on the live upstream; an error result when it is down or restarting,
        does not answer within the timeout, or answers with what is no tool result.

        Raises:
            MCPError: the upstream answered with a JSON-RPC error (its own message).
        """
        upstream = self.current
        if upstream is None:
            return self._down(name)
        try:
            progress = self.progress() if self.progress is not None else None
            with anyio.fail_after(self.timeout):
                return await upstream.call(name, arguments, progress=progress)
        except TimeoutError:
            log.warning("slimtools proxy: %s: no answer within %g s", name, self.timeout)
            return _error(
                f"{name} failed: the upstream {self.spec.describe()!r} gave no answer the "
                f"proxy could read within {self.timeout:g} s (its call_timeout), so the call "
                "was abandoned; call again, or try another way"
            )
        except Exception as exc:
            if is_lost(exc):
                self._mark_lost(upstream)
                return self._down(name)
            if isinstance(exc, MCPError):
                raise
            # The SDK could not read the answer as a tool result (pydantic's message quotes
            # the answer, which may hold what the config denies): only the exception's type.
            kind = type(innermost(exc)).__name__
            log.warning("slimtools proxy: %s: unreadable answer (%s)", name, kind)
            return _error(
                f"{name} failed: the upstream {self.spec.describe()!r} answered with what is "
                f"not a valid tool result ({kind}); its content is withheld"
            )

    def _mark_lost(self, upstream: Upstream) -> None:
        if self.current is upstream:
            self.current = None
            self._plan_restart()
            log.warning("slimtools proxy: the upstream %r exited", self.spec.describe())
            self._lost.set()

    def _plan_restart(self) -> None:
        """Set when the next restart is due, once per loss: the first call to find the
        upstream gone already says the real wait (the backoff doubles, from ``backoff[0]``
        again after a connection that stayed up ``_STABLE`` seconds)."""
        if self._planned:
            return
        now = time.monotonic()
        if self._pause is None or now - self._began > _STABLE:
            self._pause = self.backoff[0]
        else:
            self._pause = min(self._pause * 2, self.backoff[1])
        self.next_attempt = now + self._pause
        self._planned = True

    def _down(self, name: str) -> CallToolResult:
        return _error(self._down_text(name))

    def _down_text(self, what: str) -> str:
        wait = self.next_attempt - time.monotonic()
        when = f"due in {wait:.1f} s" if wait >= 0.05 else "under way"
        return (
            f"{what} failed: the upstream {self.spec.describe()!r} exited and is being "
            f"restarted (restart {self.restarts + 1}, {when}); call again shortly"
        )

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Own the connection until cancelled; the first failure to connect is raised."""
        started = False
        try:
            async with connect(self.spec, self.callbacks) as upstream:
                self._first = upstream
                self._began = time.monotonic()
                started = True
                task_status.started()
                await self._hold(upstream)
        except Exception as exc:
            if not started:
                raise
            log.warning("slimtools proxy: the upstream's connection ended: %s", _one_line(exc))
        while True:
            self._plan_restart()
            await anyio.sleep(max(0.0, self.next_attempt - time.monotonic()))
            self._planned = False
            self.restarts += 1
            self._began = time.monotonic()
            try:
                async with connect(self.spec, self.callbacks) as upstream:
                    log.warning("slimtools proxy: restarted the upstream %r", self.spec.describe())
                    await self._hold(upstream)
            except Exception as exc:  # UpstreamError, or the connection ending badly
                log.warning("slimtools proxy: restart failed: %s", _one_line(exc))

    async def _hold(self, upstream: Upstream) -> None:
        """Serve calls on ``upstream`` until one finds it lost."""
        self._lost = anyio.Event()
        self.current = upstream
        await self._lost.wait()


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _one_line(exc: BaseException) -> str:
    exc = innermost(exc)
    return " ".join(str(exc).split())[:300] or type(exc).__name__
