"""Alembic migrations: the only way the schema comes to exist."""
