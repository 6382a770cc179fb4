"""Hooks that put slimtools inside other people's servers (LiteLLM's proxy and SDK).

Each module imports its host package itself; ``import slimtools.integrations`` imports none.
"""
