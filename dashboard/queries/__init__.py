"""SQL of the dashboard: builders (``sql``) and their cached runners."""
