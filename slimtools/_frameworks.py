"""The table of agent frameworks ``wrap()`` and the parameter roles know: one row each.

A row names the framework's top-level packages and the module that adapts its tools
(``slimtools/adapters/_wrap_<framework>.py``, which satisfies
``slimtools.foreign.WrapAdapter``). The module is imported only once one of the packages is
loaded, so ``import slimtools`` loads no framework, and the core reads the framework's
injected-context classes from it without naming any framework itself. Adding a framework is
its module plus one row here. A leaf: it imports nothing from slimtools (the adapter modules
are imported by name, lazily).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

__all__ = ["FRAMEWORKS", "loaded_adapters"]

FRAMEWORKS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("langchain_core", "langgraph"), "slimtools.adapters._wrap_langchain"),
    (("agents",), "slimtools.adapters._wrap_openai_agents"),
    (("pydantic_ai",), "slimtools.adapters._wrap_pydantic_ai"),
)
"""``(packages, adapter module)``: a framework is in use when one of its packages is loaded."""


def loaded_adapters(*, skip_broken: bool = False) -> Iterator[ModuleType]:
    """The adapter modules of the frameworks loaded in this process, in table order.

    Raises:
        ImportError: a loaded framework's adapter cannot be imported (an incompatible
            version), unless ``skip_broken`` leaves it out.
    """
    for packages, module in FRAMEWORKS:
        if any(package in sys.modules for package in packages):
            try:
                yield importlib.import_module(module)
            except ImportError:
                if not skip_broken:
                    raise
