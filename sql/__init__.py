"""SQL shipped with the package: view definitions and dialect-specific search DDL."""
