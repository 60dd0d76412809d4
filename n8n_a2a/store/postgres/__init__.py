"""The shared task store: tasks in PostgreSQL, their events across replicas by LISTEN/NOTIFY.

pool.py holds the connections and their worker threads, tasks.py the task rows, leases.py
this replica's leases on them, events.py the events across replicas, push_configs.py the
push configs beside them, schema.py the tables. backend.py puts them together for one
replica.
"""

from .backend import open_postgres, open_postgres_stores
from .events import PostgresTaskEvents
from .pool import Connection, Pool
from .push_configs import PostgresPushConfigStore
from .tasks import PostgresTaskStore

__all__ = [
    "Connection",
    "Pool",
    "PostgresPushConfigStore",
    "PostgresTaskEvents",
    "PostgresTaskStore",
    "open_postgres",
    "open_postgres_stores",
]
