"""Presentation layer: the Streamlit dashboard's data functions, figures and widgets.

The only package in evalcore that may import streamlit (`data`, `widgets`);
`figures` is pure plotly, `matrix_grid` pure HTML. Pages under `pages/` and `app.py` stay thin:
widgets -> a cached data function -> a chart builder -> render.
"""
