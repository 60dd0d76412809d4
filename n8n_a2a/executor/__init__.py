"""The executor: what the routes and the server ask of tasks (service.py), over the rooms
that do it."""

from .calls import Drained
from .config import ExecutorConfig
from .service import Executor

__all__ = ["Drained", "Executor", "ExecutorConfig"]
