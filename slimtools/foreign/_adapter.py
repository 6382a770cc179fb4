"""The contract of a framework adapter for ``wrap()``, and how the one for a tool is found.

Each framework is one module, ``slimtools/adapters/_wrap_<framework>.py``, satisfying
:class:`WrapAdapter`, plus one row of ``slimtools._frameworks.FRAMEWORKS``. ``wrap()`` asks
the loaded frameworks' modules in table order which one ``accepts`` a tool; the parameter
roles of the slimming core read their ``CONTEXT_CLASSES`` and ``HIDDEN_CLASSES``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from slimtools._frameworks import loaded_adapters

if TYPE_CHECKING:
    from slimtools.foreign._forward import Plan
    from slimtools.foreign._screen import Screen
    from slimtools.toolkit import Toolkit

__all__ = ["WrapAdapter", "adapter_for"]


class WrapAdapter(Protocol):
    """What a framework's wrap module declares (module-level names)."""

    CONTEXT_CLASSES: frozenset[tuple[str, str]]
    """``(top-level module, class name)`` of the parameter types the framework injects per
    call (run contexts, graph state, tool-call ids): hidden from the model and left out of
    the page-1 snapshot key. Matched along an annotation's MRO, so subclasses count."""

    HIDDEN_CLASSES: frozenset[tuple[str, str]]
    """Annotation classes the framework injects that stay in the snapshot key."""

    def accepts(self, tool: Any) -> bool:
        """True when ``tool`` is this framework's tool class."""

    def schema(self, tool: Any) -> dict[str, Any]:
        """The JSON Schema of ``tool``'s arguments, as the model is shown it."""

    def forwarder(self, tool: Any, plan: Plan) -> Callable[..., Any]:
        """A ``**arguments`` callable that runs ``tool`` and returns ``plan.shape(raw)``."""

    def screen_native(self, native: Any, screen: Screen) -> Any:
        """The framework's native result with ``screen`` applied to every block of it."""

    def build(self, kit: Toolkit, name: str) -> Any:
        """The toolkit's tool ``name`` as this framework's tool class."""


def adapter_for(tool: Any) -> WrapAdapter | None:
    """The adapter of ``tool``'s framework (only loaded frameworks are asked), or ``None``."""
    for module in loaded_adapters():
        adapter = cast(WrapAdapter, module)
        if adapter.accepts(tool):
            return adapter
    return None
