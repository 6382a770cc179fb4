"""History formats: one codec per wire format, and the format-neutral view built on them.

Every piece of knowledge about a format (where its tool calls and results are, what a turn
is, how to rewrite a result) lives in its codec module here; the engine, the view, the ledger
and compaction only ever see the neutral records of :mod:`slimtools.clearing.formats.base`.
"""
