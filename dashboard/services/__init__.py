"""Data shaping for the dashboard pages: pure functions, no streamlit."""
