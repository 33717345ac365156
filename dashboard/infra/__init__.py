"""The dashboard's infrastructure: what every page stands on, none of it about one page.

Session state declared once (:mod:`~dashboard.infra.state`), background jobs and compute slots
(:mod:`~dashboard.infra.jobs`), the URL of a view (:mod:`~dashboard.infra.urlstate`), page set-up
and the sidebar (:mod:`~dashboard.infra.layout`, :mod:`~dashboard.infra.nav`), the server's limits
and memory budget (:mod:`~dashboard.infra.limits`, :mod:`~dashboard.infra.memory`), the assets it
serves (:mod:`~dashboard.infra.assets`), its exceptions (:mod:`~dashboard.infra.errors`) and the
escaping of user strings (:mod:`~dashboard.infra.text`). docs/architecture.md says why the
dashboard is split so.
"""
