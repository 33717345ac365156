"""UI-side helpers of the colide-dashboard Streamlit app.

Modules: ``state`` (session-state keys and defaults, initialised in one place), ``data``
(the current dataset record and loaders), ``fitting`` (cached CoLiDE fits and the background
job), ``graph`` (offline pyvis HTML), ``figures`` (plotly), ``exports`` (CSV downloads),
``text`` (escaping of user-supplied names), ``core`` (call-time access to ``colide_core``).
"""
