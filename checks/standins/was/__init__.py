"""The WebSphere chapter's stand-ins (checks/standins/__init__.py says what each is)."""
