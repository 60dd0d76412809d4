"""The schema: migrated once, however many replicas start together."""

from __future__ import annotations

import threading

import psycopg

from n8n_a2a.store.postgres.schema import LATEST, migrate
from tests.support.postgres_server import PostgresServer


def test_the_schema_migrates_once_when_replicas_start_together(postgres: PostgresServer) -> None:
    url = postgres.create_database()
    versions: list[int] = []

    def start() -> None:
        with psycopg.connect(url, autocommit=True) as connection:
            versions.append(migrate(connection))

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert versions == [LATEST] * 4
    with psycopg.connect(url) as connection:
        applied = connection.execute("SELECT version FROM a2a_schema_version").fetchall()
        assert applied == [(version,) for version in range(1, LATEST + 1)]
        assert migrate(connection) == LATEST  # and again, at the next start
