"""The store: missions, their snapshots, events, candidates, submissions and webhook deliveries in SQLite or
PostgreSQL (SQLModel tables, Alembic migrations), read and written through `repository.Store`."""
