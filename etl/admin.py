"""Database administration for BI users: a read-only role on PostgreSQL.

What the role can and cannot do is listed in docs/security.md; each claim is
tested by logging in as the role (tests/read/test_read_safety.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, text

from etl.errors import DatabaseError
from etl.load.database import split_statements, sql_dir

ROLE_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Attributes a reader must not have: each lets a role write, or read beyond the database.
DANGEROUS_ATTRIBUTES = {
    "rolsuper": "SUPERUSER",
    "rolcreatedb": "CREATEDB",
    "rolcreaterole": "CREATEROLE",
    "rolreplication": "REPLICATION",
    "rolbypassrls": "BYPASSRLS",
}
# Built-in roles that only read; membership in any other role is refused, since a member can
# use its rights (through INHERIT, or SET ROLE).
READING_ROLES = frozenset({"pg_read_all_data", "pg_read_all_stats"})
# The loaders' locks (etl.load.locks) are PostgreSQL advisory locks, and every role may take
# advisory locks by default: a reader could hold one and stop every load. The lock functions
# are taken from PUBLIC in this database and given back to the owner and the role running
# this command. (A row lock on a table the reader can only SELECT would also keep it out, but
# would hold a transaction open for the whole load, and needs a table before migrations run.)
ADVISORY_LOCKS = r"^pg_(try_)?advisory_(xact_)?lock(_shared)?$"
# Any role may cancel or end the other sessions of its own role: one BI user could cut off
# the rest. Taken from PUBLIC here, like the lock functions. (Signalling other roles' sessions
# needs pg_signal_backend, which the role does not have; pg_reload_conf, pg_rotate_logfile and
# the like are the superuser's already.)
SIGNALLING = r"^pg_(cancel|terminate)_backend$"


@dataclass(frozen=True)
class RoleResult:
    """What `grant_read_only` did: whether it created the role, and each attribute it changed."""

    created: bool
    changes: list[str] = field(default_factory=list)


def quote_identifier(name: str) -> str:
    """A double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """A single-quoted SQL string literal (role DDL takes no bound parameters)."""
    return "'" + value.replace("'", "''") + "'"


def grant_read_only(
    engine: Engine, role: str, password: str | None = None, *, strip_attributes: bool = False
) -> RoleResult:
    """Create or update a role that can read every table and view and change nothing.

    An existing role with dangerous attributes is refused unless `strip_attributes` (then each
    removal is reported); one that is a member of another role, or owns objects here, is refused.
    """
    if engine.dialect.name != "postgresql":
        raise DatabaseError(
            "read-only roles are a PostgreSQL feature; for SQLite, give BI tools the file "
            "read-only (e.g. `datasette papers.db`, or `sqlite3 -readonly papers.db`)"
        )
    if not ROLE_NAME_RE.match(role):
        raise DatabaseError(f"role names are lowercase letters, digits and _ (got {role[:80]!r})")
    with engine.begin() as connection:
        existing = (
            connection.execute(
                text(
                    f"SELECT rolcanlogin, {', '.join(DANGEROUS_ATTRIBUTES)} FROM pg_roles "
                    "WHERE rolname = :r"
                ),
                {"r": role},
            )
            .mappings()
            .first()
        )
        changes: list[str] = []
        if existing is None:
            connection.exec_driver_sql(
                f"CREATE ROLE {quote_identifier(role)} LOGIN"
                + (f" PASSWORD {quote_literal(password)}" if password else "")
            )
        else:
            _check_existing(connection, role)
            changes = _alter_existing(connection, role, dict(existing), password, strip_attributes)
        _apply_grants(connection, role)
        _keep_lock_from(connection, role)
    return RoleResult(existing is None, changes)


def _check_existing(connection: Connection, role: str) -> None:
    """Refuse a role that can write through another role, or that owns objects here."""
    memberships = connection.scalars(
        text(
            "WITH RECURSIVE up(oid) AS (SELECT roleid FROM pg_auth_members m JOIN pg_roles r "
            "ON r.oid = m.member WHERE r.rolname = :r UNION SELECT m.roleid FROM pg_auth_members "
            "m JOIN up ON m.member = up.oid) SELECT rolname FROM pg_roles JOIN up USING (oid) "
            "ORDER BY rolname"
        ),
        {"r": role},
    ).all()
    others = [name for name in memberships if name not in READING_ROLES]
    if others:
        raise DatabaseError(
            f"role {role} is a member of {', '.join(others)}, and can use its rights (INHERIT, "
            f"or SET ROLE): revoke the membership first (REVOKE {quote_identifier(others[0])} "
            f"FROM {quote_identifier(role)}), or choose a new role name"
        )
    owned = connection.scalar(
        text(
            "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner "
            "WHERE r.rolname = :r AND c.relnamespace = current_schema()::regnamespace"
        ),
        {"r": role},
    )
    if owned or _database_owner(connection) == role or _owns_schema(connection, role):
        raise DatabaseError(
            f"role {role} owns objects in this database (an owner can always write them): "
            "choose a new role name"
        )


def _database_owner(connection: Connection) -> str:
    """The role that owns the current database."""
    return str(
        connection.scalar(
            text(
                "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
            )
        )
    )


def _owns_schema(connection: Connection, role: str) -> bool:
    return bool(
        connection.scalar(
            text(
                "SELECT pg_get_userbyid(nspowner) = :r FROM pg_namespace "
                "WHERE oid = current_schema()::regnamespace"
            ),
            {"r": role},
        )
    )


def _alter_existing(
    connection: Connection,
    role: str,
    attributes: dict[str, bool],
    password: str | None,
    strip_attributes: bool,
) -> list[str]:
    """Remove dangerous attributes (only when allowed), add LOGIN, set the password: reported."""
    dangerous = [name for column, name in DANGEROUS_ATTRIBUTES.items() if attributes[column]]
    if dangerous and not strip_attributes:
        raise DatabaseError(
            f"role {role} already exists with {', '.join(dangerous)}: a read-only role must not "
            "have them; pass --strip-attributes to remove them, or choose a new role name"
        )
    clauses = [f"NO{name}" for name in dangerous]
    changes = [f"removed {name} from {role}" for name in dangerous]
    if not attributes["rolcanlogin"]:
        clauses.append("LOGIN")
        changes.append(f"gave {role} LOGIN")
    if password:
        clauses.append(f"PASSWORD {quote_literal(password)}")
        changes.append(f"set the password of {role}")
    if clauses:
        connection.exec_driver_sql(f"ALTER ROLE {quote_identifier(role)} {' '.join(clauses)}")
    return changes


def _apply_grants(connection: Connection, role: str) -> None:
    """Run sql/postgresql/read_only_role.sql with the names filled in."""
    names = {
        ":database": quote_identifier(str(connection.scalar(text("SELECT current_database()")))),
        ":schema": quote_identifier(str(connection.scalar(text("SELECT current_schema()")))),
        ":owner": quote_identifier(_database_owner(connection)),
        ":admin": quote_identifier(str(connection.scalar(text("SELECT current_user")))),
        ":role": quote_identifier(role),
    }
    template = sql_dir().joinpath("postgresql", "read_only_role.sql").read_text("utf-8")
    for statement in split_statements(template):
        connection.exec_driver_sql(
            re.sub(r":(database|schema|owner|admin|role)\b", lambda m: names[m.group(0)], statement)
        )


def _keep_lock_from(connection: Connection, role: str) -> None:
    """Take the advisory-lock and backend-signalling functions from PUBLIC here; give them to
    the owner and admin."""
    functions = ", ".join(
        connection.scalars(
            text("SELECT oid::regprocedure::text FROM pg_proc WHERE proname ~ :pattern ORDER BY 1"),
            {"pattern": f"{ADVISORY_LOCKS}|{SIGNALLING}"},
        )
    )
    admin = quote_identifier(str(connection.scalar(text("SELECT current_user"))))
    owner = quote_identifier(_database_owner(connection))
    connection.exec_driver_sql(f"REVOKE EXECUTE ON FUNCTION {functions} FROM PUBLIC")
    connection.exec_driver_sql(f"GRANT EXECUTE ON FUNCTION {functions} TO {owner}, {admin}")
    if connection.scalar(
        text(
            "SELECT has_function_privilege(:r, 'pg_try_advisory_lock(bigint)', 'EXECUTE') "
            "OR has_function_privilege(:r, 'pg_terminate_backend(integer, bigint)', 'EXECUTE')"
        ),
        {"r": role},
    ):
        raise DatabaseError(
            "could not take the advisory-lock and signalling functions from PUBLIC (only a "
            "superuser can): "
            f"run `etl grant-readonly {role}` as a superuser"
        )
