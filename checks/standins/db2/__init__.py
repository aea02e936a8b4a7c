"""The Db2 chapter's stand-ins (checks/standins/__init__.py says what each is)."""
