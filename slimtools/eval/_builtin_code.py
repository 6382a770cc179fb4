"""Built-in scenarios over a generated repository: reading files, and a multi-file code task.

The repository (Python modules, their tests, YAML configuration and Markdown docs) is drawn
from the seed. ``file_reading`` reads one file per round and asks a file's line count, which
the tool's first line states, so whether a placeholder's head keeps it is the point.
``code_task`` mixes ``list_dir``, ``read_file``, ``grep`` and ``run_tests`` and asks on which
line a function is defined, which sits anywhere in a ``grep`` listing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from slimtools import Toolkit
from slimtools.eval._generated import Candidate, Draft, GeneratedScenario, spread
from slimtools.eval.checks import AnswerCheck

_MODULES = (
    "cart", "pricing", "orders", "payments", "inventory", "invoices", "shipping", "customers",
    "coupons", "taxes", "receipts", "refunds", "addresses", "currency", "notifications",
    "returns",
)  # fmt: skip
_VERBS: tuple[str, ...] = (
    "apply",
    "compute",
    "validate",
    "load",
    "save",
    "format",
    "parse",
    "reserve",
)
_VERBS += ("cancel", "merge", "split", "normalise", "fetch", "notify", "build", "release")
_NOUNS: tuple[str, ...] = (
    "discount",
    "total",
    "tax",
    "line_items",
    "order",
    "invoice",
    "payment",
    "stock",
)
_NOUNS += ("shipment", "customer", "coupon", "address", "receipt", "price", "basket", "refund")
_ARGS = ("order", "cart", "customer", "amount", "currency", "items", "session", "store")
_BODY = (
    '    if {a} is None:\n        raise ValueError("{a} is required")',
    '    total = Decimal("0")\n    for item in {a}.items:\n        total += item.price * item.qty',
    '    log.debug("{f}: %s", {a})',
    '    result = dict({a})\n    result["{n}"] = total if "total" in locals() else None',
    "    for attempt in range(3):\n        if store.try_lock({a}):\n            break",
    '    when = now()\n    audit.record("{f}", {a}, when)',
    '    rate = settings.RATES.get({a}.currency, Decimal("1"))',
    "    if not {a}:\n        return None",
)
_TOPICS = ("deploy", "architecture", "runbook", "onboarding", "testing", "releases")


@dataclass(frozen=True)
class File:
    """A generated file and its lines."""

    path: str
    lines: tuple[str, ...]

    def read(self) -> str:
        """What ``read_file`` returns: a header with the line count, then the text."""
        return f"# {self.path} ({len(self.lines)} lines)\n" + "\n".join(self.lines)


def _module(rng: random.Random, name: str) -> list[str]:
    lines = [
        f'"""{name.title()}: the shop\'s {name} rules."""',
        "",
        "from __future__ import annotations",
    ]
    lines += [
        "",
        "import logging",
        "from decimal import Decimal",
        "",
        "from shop import audit, settings",
    ]
    lines += ["from shop.clock import now", "", "log = logging.getLogger(__name__)"]
    names = rng.sample([f"{v}_{n}" for v in _VERBS for n in _NOUNS], rng.randint(6, 16))
    for fname in names:
        args = rng.sample(_ARGS, rng.randint(1, 3))
        lines += ["", "", f"def {fname}({', '.join(args)}):"]
        lines.append(f'    """{fname.replace("_", " ").capitalize()} for the given {args[0]}."""')
        for template in rng.sample(_BODY, rng.randint(2, 5)):
            lines += template.format(a=args[0], f=fname, n=fname.split("_", 1)[1]).split("\n")
        lines.append(f"    return {args[0]}")
    return lines


def _tests(rng: random.Random, name: str, module: list[str]) -> list[str]:
    lines = [f'"""Tests of shop.{name}."""', "", f"from shop import {name}", ""]
    for line in module:
        if line.startswith("def ") and rng.random() < 0.7:
            fname = line[4 : line.index("(")]
            lines += ["", f"def test_{fname}_handles_empty_input(fixtures):"]
            lines += [f"    assert {name}.{fname}(fixtures.empty) is not None", ""]
    return lines


def _config(rng: random.Random, name: str) -> list[str]:
    lines = [f"# {name} settings", "database:", "  host: db.internal", "  port: 5432"]
    lines += ["  pool_size: 10", "cache:", "  url: redis://cache.internal:6379/0", "features:"]
    lines += [f"  {n}_v2: {rng.choice(('true', 'false'))}" for n in rng.sample(_NOUNS, 12)]
    lines += ["rates:"] + [f"  {c}: 1" for c in ("eur", "usd", "gbp", "jpy", "chf")]
    return lines


def _doc(rng: random.Random, topic: str) -> list[str]:
    lines = [f"# {topic.title()}", ""]
    for section in rng.sample(_NOUNS, rng.randint(4, 9)):
        lines += [f"## {section.replace('_', ' ').title()}", ""]
        for _ in range(rng.randint(2, 6)):
            lines.append(
                f"The {section.replace('_', ' ')} flow is owned by the {rng.choice(_MODULES)} "
                f"team; see src/shop/{rng.choice(_MODULES)}.py before changing it."
            )
        lines.append("")
    return lines


def repository(rng: random.Random) -> dict[str, File]:
    """A small shop repository: modules with tests, configuration and docs."""
    files: dict[str, File] = {}
    for name in rng.sample(_MODULES, len(_MODULES)):
        module = _module(rng, name)
        files[f"src/shop/{name}.py"] = File(f"src/shop/{name}.py", tuple(module))
        path = f"tests/test_{name}.py"
        files[path] = File(path, tuple(_tests(rng, name, module)))
    for env in ("base", "production", "staging", "local"):
        files[f"config/{env}.yaml"] = File(f"config/{env}.yaml", tuple(_config(rng, env)))
    for topic in _TOPICS:
        files[f"docs/{topic}.md"] = File(f"docs/{topic}.md", tuple(_doc(rng, topic)))
    return files


def _code_kit(files: dict[str, File], rng: random.Random) -> Toolkit:
    kit = Toolkit("recall-repo")
    failing = rng.sample([p for p in files if p.startswith("tests/")], 2)

    @kit.tool(category="read")
    def read_file(path: str) -> str:
        """Read a file of the repository (its first line gives the line count)."""
        found = files.get(path.strip().lstrip("./"))
        if found is None:
            raise FileNotFoundError(f"no such file: {path}")
        return found.read()

    @kit.tool(category="search")
    def grep(pattern: str) -> str:
        """Search every file for a literal text, like grep -rn; at most 60 matching lines."""
        hits = [
            f"{f.path}:{n}:{line}"
            for f in files.values()
            for n, line in enumerate(f.lines, 1)
            if pattern in line
        ]
        more = f"\n... {len(hits) - 60} more matches" if len(hits) > 60 else ""
        return "\n".join(hits[:60]) + more if hits else f"no match for {pattern!r}"

    @kit.tool(category="search")
    def list_dir(path: str = ".") -> str:
        """List a directory with file sizes in bytes."""
        prefix = path.strip().strip("/").lstrip("./")
        entries = sorted(p for p in files if p.startswith(prefix))
        rows = [f"{len(files[p].read().encode()):>7}  {p}" for p in entries]
        return "\n".join(rows) if rows else f"no such directory: {path}"

    @kit.tool(category="command")
    def run_tests() -> str:
        """Run the test suite (pytest) and return its output."""
        return _pytest_output(files, failing)

    return kit


def _pytest_output(files: dict[str, File], failing: list[str]) -> str:
    out = ["============================= test session starts =============================="]
    tests = {p: [x for x in f.lines if x.startswith("def test_")] for p, f in files.items()}
    total = sum(len(t) for t in tests.values())
    out.append(f"collected {total} items\n")
    for path, found in tests.items():
        if found:
            marks = "".join("F" if path in failing and i == 0 else "." for i in range(len(found)))
            out.append(f"{path} {marks}")
    out.append("\n=================================== FAILURES ===================================")
    for path in failing:
        name = tests[path][0][4 : tests[path][0].index("(")] if tests[path] else "test_module"
        source = files[path].lines
        start = source.index(tests[path][0]) if tests[path] else 0
        out += [f"_{'_' * 20} {name} {'_' * 20}", "", "fixtures = <Fixtures empty=True>", ""]
        out += [f"    {line}" for line in source[start : start + 3]]
        out += ["E   AssertionError: assert None is not None", f"{path}: AssertionError"]
        out.append("----------------------------- Captured log call -----------------------------")
        out += [f"DEBUG    shop:{name[5:]}: called with <empty>" for _ in range(3)]
    out.append("=========================== short test summary info ============================")
    out += [f"FAILED {p}::{tests[p][0][4 : tests[p][0].index('(')]}" for p in failing if tests[p]]
    passed = total - sum(1 for p in failing if tests[p])
    out.append(f"=========== {total - passed} failed, {passed} passed ===========")
    return "\n".join(out)


def build_file_reading(rng: random.Random, rounds: int, target: int) -> Draft:
    """Read ``rounds`` files; ask how many lines the one read in round ``target`` has."""
    files = repository(rng)
    paths = spread(rng, list(files), rounds)
    draft = Draft(
        task="Before we refactor the shop service, read through its main files and tell me "
        "what each one does.",
        kit=_code_kit(files, rng),
        rounds=[],
        candidates=[],
        hidden=frozenset({"grep", "list_dir", "run_tests"}),
    )
    for i, path in enumerate(paths, 1):
        draft.play("read_file", {"path": path}, f"Reading {path}.")
        if i == target:
            question = f"How many lines does {path} have?"
            count = str(len(files[path].lines))
            draft.candidates.append(Candidate(question, AnswerCheck("integer", count)))
    return draft


def build_code_task(rng: random.Random, rounds: int, target: int) -> Draft:
    """A fix-the-failing-test session; ask on which line a grepped function is defined."""
    files = repository(rng)
    defined = {
        line[4 : line.index("(")]
        for f in files.values()
        if f.path.startswith("src/")
        for line in f.lines
        if line.startswith("def ")
    }
    nouns = [n for n in _NOUNS if any(d.endswith("_" + n) for d in defined)]
    # The target's grep pattern is drawn apart: no other round may grep the same words.
    asked, *rest = [f"_{n}(" for n in rng.sample(nouns, len(nouns))]
    patterns = spread(rng, rest, rounds)
    sources = [p for p in files if p.startswith("src/")]
    others = spread(rng, [p for p in files if not p.startswith("src/")], rounds)
    plan: list[tuple[str, dict[str, str]]] = [("list_dir", {"path": "src/shop"}), ("run_tests", {})]
    for i in range(rounds):
        kind = ("read_file", "grep", "read_file", "list_dir", "run_tests")[i % 5]
        if kind == "read_file":
            plan.append((kind, {"path": rng.choice(sources if i % 2 else others)}))
        elif kind == "grep":
            plan.append((kind, {"pattern": patterns[i]}))
        else:
            plan.append(
                (
                    kind,
                    {"path": rng.choice(("tests", "config", "docs"))} if kind == "list_dir" else {},
                )
            )
    plan = plan[: rounds - 1]
    plan.insert(target - 1, ("grep", {"pattern": asked}))
    draft = Draft(
        task="Two tests are failing on main. Find out why and fix them.",
        kit=_code_kit(files, rng),
        rounds=[],
        candidates=[],
    )
    for i, (tool, args) in enumerate(plan, 1):
        text = draft.play(tool, args, f"Running {tool}.")
        if i == target:
            hits = [h.split(":", 2) for h in text.splitlines() if ":def " in h]
            for path, line, source in rng.sample(hits, len(hits)):
                function = source[4 : source.index("(")]
                question = (
                    f"Earlier you grepped the repository for `{args['pattern']}`. On which line "
                    f"of {path} is `{function}` defined?"
                )
                draft.candidates.append(Candidate(question, AnswerCheck("integer", line)))
    return draft


FILE_READING = GeneratedScenario(
    "file_reading", "reads one file per round; asks a file's line count", build_file_reading
)
CODE_TASK = GeneratedScenario(
    "code_task",
    "list_dir, read_file, grep and run_tests on a repository; asks a function's line",
    build_code_task,
)
