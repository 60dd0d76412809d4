"""docs/operating.md's "Memory": the adapter's worst case as a formula, for the tests that
hold a memory limit or a measured peak against it."""

from __future__ import annotations

from n8n_a2a.config import Settings

MIB = 1024 * 1024
#: RSS per payload byte the budget counts, at most (bench/probes/budget.py: one 20 MiB upload
#: or reply peaks at 3.8 times its body over idle; 16 at once under 64 MiB at 2.4 times).
BUDGET_COPIES = 4
#: The process before any call (tests/container measures about 50 MiB).
IDLE_BYTES = 64 * MIB
#: A task past its payloads (its texts, data and files are payload: the budget counts
#: their UTF-8 bytes, as many as they take in memory or more).
TASK_OVERHEAD_BYTES = 2 * 1024
PUSH_CONFIG_BYTES = 12 * 1024  # a push config with every field at its bound


def payload_bytes(settings: Settings) -> int:
    """What the payloads in flight and kept can take: BUDGET_COPIES x the budget."""
    return BUDGET_COPIES * settings.memory_budget


def fixed_bytes(settings: Settings) -> int:
    """What the other bounds hold: every task's push configs and the rest of it past its
    payloads. A send's JSON values are the budget's (app/admission.py, VALUE_BYTES each)."""
    task = TASK_OVERHEAD_BYTES + settings.push_max_configs * PUSH_CONFIG_BYTES
    return settings.max_tasks * task


def worst_case_bytes(settings: Settings) -> int:
    """idle + BUDGET_COPIES x ADAPTER_MEMORY_BUDGET + what the other bounds hold."""
    return IDLE_BYTES + payload_bytes(settings) + fixed_bytes(settings)
