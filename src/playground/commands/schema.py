"""The results-schema page (``docs/results-schema.md``), generated from the field descriptions of
every results dataclass: the bench's (:mod:`playground.core.results`), the story's
(:mod:`playground.incident.storyresults`, with :mod:`playground.incident.settings` and
:mod:`playground.incident.targetresults`) and the faults' (:mod:`playground.faults.results`). ``python -m playground.commands.schema > docs/results-schema.md``
writes it; a unit test checks it is current.
"""

from __future__ import annotations

from playground.commands import kinds
from playground.core.jsonmodel import schema_table
from playground.core.results import SCHEMA_VERSION

#: The run records the pages cite: not a kind's results file, a compact copy of a run's.
RECORDS_INTRO = [
    "# A run record (`docs/runs/<run-id>.json`)",
    "",
    "What the pages cite of a run, kept in the repository: every kind's record starts with",
    "the same header (`src/playground/core/records.py`: the run's id and `kind`, its command,",
    "date, settings, its environment without the kernel, platform string or host name, and",
    "the machine in words) and holds its own rows, one JSON line each. `playground record",
    "RESULTS --machine TEXT` writes one from a run's results file, whatever its kind (the",
    "registry of kinds names each kind's record); `playground record --show RUN_ID` and",
    "`playground report RUN_ID --record` print one. A story record can also be transcribed",
    "from the pages' tables where the results were not kept (`source`).",
    "",
]


def schema_markdown() -> str:
    """docs/results-schema.md, generated from the dataclasses' field descriptions."""
    lines = [
        "# results.json schema",
        "",
        f"Schema version {SCHEMA_VERSION}. Generated from the field descriptions in",
        "`src/playground/core/results.py` and the story's model by",
        "`python -m playground.commands.schema > docs/results-schema.md`; a unit test checks it is",
        "current. A key missing from an older file reads as null; keys this version does",
        "not know are kept as they are.",
        "",
        "Changes from files written before the typed model (same schema version: every",
        "key they have still means the same, except `steady_rps`):",
        "",
        "- `steady_rps` is null where the run did not reach a steady state (fewer than",
        "  `verdicts.MIN_STEADY_WAVES` response times long, see `waves`) or where more",
        "  than `diagnosis.MAX_ERROR_SHARE` of the answers were errors; earlier files",
        "  hold c / mean response time for every ab run, which overstates short runs",
        "  (the serial dev server at n=10 c=5: 1.4 against 0.98 served). `efficiency`",
        "  follows it. `repeats[].steady_rps` likewise.",
        "- New: `findings` (the diagnosis, structured; `notes` still carries their",
        "  messages after the target's own notes), `waves`, `latency_distribution_ms`,",
        "  `spread.relative`, `skipped` on every entry.",
        "- Gone: `results.REQUIRED_KEYS`; the model is the schema.",
        "",
    ]
    for intro, tables in kinds.schema_parts():
        lines += intro
        for cls, heading in tables:
            lines += schema_table(cls, heading)
    lines += RECORDS_INTRO
    for cls, heading in dict.fromkeys(t for kind in kinds.KINDS for t in kind.record_schema):
        lines += schema_table(cls, heading)
    return "\n".join(lines)


if __name__ == "__main__":
    print(schema_markdown(), end="")
