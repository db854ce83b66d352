"""The Streamlit script of tests/apps/streamlit: report settings with a text input, a
select box, a multiselect, a number input, a checkbox, a slider, a radio group, a date input, a file
uploader and a button. "Save settings" appends what the script
received to the JSON-lines file at SIGHTLINE_APPS_DB (the backend the tests read)."""
import datetime
import json
import os

import streamlit as st

st.title("Report settings")
title = st.text_input("Report title", value="Weekly report")
region = st.selectbox("Region", ["North", "South", "East", "West"])
columns = st.multiselect("Columns", ["Date", "Visits", "Revenue", "Region"], default=["Date", "Visits"])
rows = st.number_input("Rows per page", min_value=10, max_value=100, value=25, step=5)
archived = st.checkbox("Include archived items")
interval = st.slider("Refresh interval (minutes)", min_value=5, max_value=60, value=15)
layout = st.radio("Layout", ["Compact", "Itemised", "Detailed"])
start = st.date_input("Start date", value=datetime.date(2025, 3, 10))
attachment = st.file_uploader("Attachment", type=["csv", "txt"])

if st.button("Save settings"):
    received = {
        "title": title,
        "region": region,
        "columns": columns,
        "rows": rows,
        "archived": archived,
        "interval": interval,
        "layout": layout,
        "start": start.isoformat() if start else None,
        "attachment": None,
    }
    if attachment is not None:
        received["attachment"] = {"name": attachment.name, "text": attachment.getvalue().decode("utf-8", "replace")}
    with open(os.environ["SIGHTLINE_APPS_DB"], "a") as f:
        f.write(json.dumps(received) + "\n")
    st.success("Settings saved")
