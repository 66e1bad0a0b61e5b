"""Dashboard page: latency p50/p95 per model, per model call and per tool, tokens and cost per attempt and per correct attempt, over time."""

from __future__ import annotations

import streamlit as st

from evalcore.dashboard import data, figures, widgets

st.set_page_config(page_title="evalcore — latency and cost", layout="wide")
st.title("Latency and cost")

db = data.db_path()
options = data.filter_options(db)
if not options["models"]:
    widgets.empty_state(db)
    st.stop()

filters = widgets.sidebar_filters(options, no_run_label=widgets.ALL_RUNS)
per_model = data.latency(db, filters)
if per_model.empty:
    st.info("No attempts match these filters.")
    st.stop()
if bool(per_model["simulated"].any()):
    st.warning("Models labelled (simulated) are offline `sim/` models: their latency and cost are not a real provider's.")

left, right = st.columns(2)
left.plotly_chart(figures.latency_chart(per_model), width="stretch", key="latency_per_model")
widgets.cost_chart(right, per_model, key="cost_per_model")
st.subheader("Per model")
st.caption(
    'Latency is the model\'s time per attempt, summed over its turns. Cost reads "no price" for a simulated model or an unknown price: it is never guessed.'
)
widgets.table(per_model, "latency_per_model")

st.subheader("Per model call")
st.caption("Each model call counts once: p50/p95 of a single call, tokens and cost per call, provider retries.")
widgets.table(data.model_call_latency(db, filters), "latency_per_model_call")

st.subheader("Per tool (server time per call)")
per_tool = data.tool_latency(db, filters)
st.plotly_chart(figures.tool_latency_chart(per_tool), width="stretch", key="latency_per_tool")
widgets.table(per_tool, "latency_per_tool")

st.subheader("Over time")
over_time = data.latency_over_time(db, filters)
left, right = st.columns(2)
# keys: two charts can be drawn alike (every model without a price), and Streamlit refuses a second identical element without one
left.plotly_chart(figures.latency_chart(over_time), width="stretch", key="latency_over_time")
widgets.cost_chart(right, over_time, key="cost_over_time")
widgets.table(over_time, "latency_over_time")
