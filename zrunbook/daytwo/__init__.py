"""Day two: renewing certificates (docs/how-to/day-two.md, docs/how-to/renew-automatically.md)."""
