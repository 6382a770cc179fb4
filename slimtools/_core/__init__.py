"""The slimming engine behind the public decorators and ``Toolkit`` (private).

``pipeline`` (one slimmed call) and ``lookup`` (one ``get_record``) are sans-I/O generators
driven by the same two drivers; ``wrapper`` is the wrapt shell that makes a decorated tool;
the rest are the small rules they share (keys, paging, schemas, projections' shape checks,
JSON encoding). Nothing here is public API.
"""
