"""Build the conformance table (docs/conformance.md) from test reports, so that nobody types it.

Client rows come from a pytest JUnit XML report (`pytest --junitxml=report.xml`): each
test marked `@pytest.mark.client(name, version, mode)` carries those as properties
(tests/interop/conftest.py), plus the runtime its client ran on; an interop test that
drives no client is marked `not_a_client`. The A2A TCK's row
comes from the kit's own `reports/compatibility.json`, when given.

    python -m conformance.table report.xml [--tck reports/compatibility.json \
        --tck-version 1.0-dev@357c4a8] [--page docs/conformance.md] [--if-clients]

With --page the table replaces what stands between that page's
`<!-- conformance table -->` and `<!-- end of conformance table -->` lines. A report
without a client's test is an error (exit 1), unless --if-clients: then there is no
table, and nothing to say (scripts/test, after a run of other tests).
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The TCK's per-requirement statuses, in the order the table names them.
_TCK_STATUSES = {"PASS": "passed", "FAIL": "failed", "SKIPPED": "skipped"}
_TCK_LEVELS = ("MUST", "SHOULD", "MAY")


@dataclass
class Row:
    """One client in one mode: every test that drove it, and how each went."""

    client: str
    version: str
    mode: str
    runtimes: set[str] = field(default_factory=set)
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: Expected to fail (pytest's xfail, which JUnit writes as skipped): pytest's word.
    xfailed: list[str] = field(default_factory=list)

    @property
    def result(self) -> str:
        total = len(self.passed) + len(self.failed) + len(self.skipped) + len(self.xfailed)
        if self.failed:
            return f"**fail** {len(self.failed)} of {total}: {', '.join(sorted(self.failed))}"
        left = "".join(
            f", {len(tests)} {word}"
            for tests, word in ((self.skipped, "skipped"), (self.xfailed, "xfailed"))
            if tests
        )
        if not self.passed:
            return f"not run ({left.removeprefix(', ')})"
        return f"pass ({len(self.passed)} of {total} tests{left})"

    @property
    def version_cell(self) -> str:
        return " ".join([self.version, *(f"on {r}" for r in sorted(self.runtimes))])


def _properties(testcase: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in testcase.iterfind("properties/property")}


def client_rows(reports: list[Path]) -> tuple[list[Row], list[str]]:
    """Rows from JUnit XML reports, and the interop tests that carry neither marker."""
    rows: dict[tuple[str, str, str], Row] = {}
    unmarked: list[str] = []
    for report in reports:
        for testcase in ET.parse(report).getroot().iter("testcase"):
            module = testcase.get("classname", "")
            properties = _properties(testcase)
            if "client" not in properties:
                # An interop test that is neither a client's nor marked not_a_client is
                # a client the table would otherwise miss without a word.
                if ".interop." in f".{module}." and "not_a_client" not in properties:
                    unmarked.append(f"{module}::{testcase.get('name', '')}")
                continue
            key = (properties["client"], properties["client_version"], properties["client_mode"])
            row = rows.setdefault(key, Row(*key))
            if "client_runtime" in properties:
                row.runtimes.add(properties["client_runtime"])
            test = testcase.get("name", "")
            if testcase.find("failure") is not None or testcase.find("error") is not None:
                row.failed.append(test)
            elif (skipped := testcase.find("skipped")) is not None:
                xfail = skipped.get("type") == "pytest.xfail"
                (row.xfailed if xfail else row.skipped).append(test)
            else:
                row.passed.append(test)
    return list(rows.values()), unmarked  # in the order the tests ran


def tck_row(compatibility: Path, version: str, mode: str) -> list[str]:
    """The kit's row: per level, how many requirements passed, failed, were skipped or untested.

    The kit's console counts a requirement it has no test for ("NOT TESTED") as failed;
    here it is named for what it is.
    """
    report: dict[str, Any] = json.loads(compatibility.read_text())
    counts = Counter(
        (requirement["level"], requirement["status"])
        for requirement in report["per_requirement"].values()
    )
    levels = []
    for level in _TCK_LEVELS:
        parts = [
            f"{counts[level, status]} {word}"
            for status, word in _TCK_STATUSES.items()
            if counts[level, status]
        ]
        if counts[level, "NOT TESTED"]:
            parts.append(f"{counts[level, 'NOT TESTED']} without a test in the kit")
        if parts:
            levels.append(f"{level}: {', '.join(parts)}")
    verdict = "**fail**" if counts["MUST", "FAIL"] else "pass"
    return ["a2a-tck", version, mode, f"{verdict}; " + "; ".join(levels)]


def render(rows: list[list[str]]) -> str:
    lines = ["| client or kit | version | mode | result |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", nargs="+", type=Path, help="pytest --junitxml report(s)")
    parser.add_argument("--tck", type=Path, help="the TCK's reports/compatibility.json")
    parser.add_argument("--tck-version", default="1.0-dev", help="the TCK's branch and commit")
    parser.add_argument(
        "--tck-mode", default="JSON-RPC, v1.0", help="what the TCK ran (its --transport)"
    )
    parser.add_argument("--page", type=Path, help="write the table into this page too")
    parser.add_argument(
        "--if-clients",
        action="store_true",
        help="no client's test in the reports (and no --tck): print nothing and exit 0, not 1",
    )
    arguments = parser.parse_args(argv)

    rows, unmarked = client_rows(arguments.junit)
    table = [[r.client, r.version_cell, r.mode, r.result] for r in rows]
    if arguments.tck is not None:
        table.append(tck_row(arguments.tck, arguments.tck_version, arguments.tck_mode))
    for name in unmarked:
        # Not an error: but a client that drives the adapter belongs in the table.
        print(
            f"note: {name} has neither @pytest.mark.client(...) nor not_a_client: no row",
            file=sys.stderr,
        )
    if not table:
        # scripts/test ran some other tests: no table is the right answer, not an error.
        if arguments.if_clients:
            return 0
        print("no test in these reports carries a client marker", file=sys.stderr)
        return 1
    print(render(table))
    if arguments.page is not None:
        arguments.page.write_text(into_page(arguments.page.read_text(), render(table)))
    return 0


_BEGIN, _END = "<!-- conformance table -->", "<!-- end of conformance table -->"


def into_page(page: str, table: str) -> str:
    """The page with the table between its markers, replacing the one there."""
    before, begin, rest = page.partition(_BEGIN)
    _, end, after = rest.partition(_END)
    if not begin or not end:
        raise ValueError(f"the page has no {_BEGIN} ... {_END} block")
    return f"{before}{_BEGIN}\n{table}\n{_END}{after}"


if __name__ == "__main__":
    raise SystemExit(main())
