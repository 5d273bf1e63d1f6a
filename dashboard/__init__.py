"""The 跑胡子 analytics dashboard: a Streamlit app, read-only over the store.

Layers (STYLE §14): ``views/`` only render; ``services/`` shape data and never import
streamlit; ``queries/`` hold the parameterised SQL behind ``st.cache_data``; ``db`` owns the
one read-only DuckDB connection. Start it with ``paohuzi dashboard [--data DIR]``.
"""
