"""The embedded default backend: tasks (tasks.py) and push configs (push_configs.py) in
this process's memory, opened by backend.py."""

from .backend import open_memory_stores
from .push_configs import MemoryPushConfigStore
from .tasks import MemoryTaskStore

__all__ = ["MemoryPushConfigStore", "MemoryTaskStore", "open_memory_stores"]
