-- Grants for a read-only role (BI tools): read every table and view, now and in future;
-- write nothing, create nothing. :role is replaced by the quoted role name.
GRANT CONNECT ON DATABASE :database TO :role;
GRANT USAGE ON SCHEMA :schema TO :role;
REVOKE CREATE ON SCHEMA :schema FROM :role;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA :schema FROM :role;
GRANT SELECT ON ALL TABLES IN SCHEMA :schema TO :role;
ALTER DEFAULT PRIVILEGES IN SCHEMA :schema GRANT SELECT ON TABLES TO :role;
ALTER ROLE :role SET default_transaction_read_only = on;
