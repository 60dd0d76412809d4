"""ADAPTER_MEMORY_BUDGET: the payload bytes this process holds, by caller (ledger.py, sans
I/O), and its trio driver (room.py)."""

from .ledger import CallerKey, caller_key
from .room import MemoryBudget, Reservation, return_freed_payloads

__all__ = ["CallerKey", "MemoryBudget", "Reservation", "caller_key", "return_freed_payloads"]
