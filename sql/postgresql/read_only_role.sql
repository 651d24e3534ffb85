-- Grants for a read-only role (BI tools): read every table and view, now and in future;
-- write nothing, create nothing, not even temporary objects. :role, :database, :schema,
-- :owner and :admin are replaced by quoted names (:owner owns the database, :admin runs this).
GRANT CONNECT ON DATABASE :database TO :role;
-- TEMP is PUBLIC's by default: revoked from PUBLIC (a grant to PUBLIC cannot be revoked from
-- one role alone), and given back to the owner and to the role running this (the loader
-- stages rows in temporary tables).
REVOKE TEMPORARY ON DATABASE :database FROM PUBLIC;
REVOKE TEMPORARY, CREATE ON DATABASE :database FROM :role;
GRANT TEMPORARY ON DATABASE :database TO :owner, :admin;
GRANT USAGE ON SCHEMA :schema TO :role;
REVOKE CREATE ON SCHEMA :schema FROM :role;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA :schema FROM :role;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA :schema FROM :role;
GRANT SELECT ON ALL TABLES IN SCHEMA :schema TO :role;
ALTER DEFAULT PRIVILEGES IN SCHEMA :schema GRANT SELECT ON TABLES TO :role;
ALTER ROLE :role SET default_transaction_read_only = on;
