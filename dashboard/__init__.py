"""UI-side helpers of the colide-dashboard Streamlit app.

Modules: ``state`` (session-state keys and defaults, initialised in one place), ``data``
(the current dataset record and loaders), ``fitting`` (the fit record, cached CoLiDE fits and
their job), ``jobs`` (the one background-job helper of every page), ``manifests`` (run manifests
in and out), ``graph`` (offline pyvis HTML), ``figures`` (plotly figures and reading clicks back),
``exports`` (CSV downloads), ``text`` (escaping of user-supplied names), ``core`` (metric
labels), ``layout`` (page set-up and sidebar), ``trust_state`` (session keys of the Edge
confidence, Explorer and Prior knowledge pages).
"""
