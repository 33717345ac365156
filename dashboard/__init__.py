"""UI-side helpers of the colide-dashboard Streamlit app: what adapts the library to Streamlit.

* ``state/``: the session-state keys and their defaults, initialised in one place
  (``state.init``): the common keys, ``state.trust`` (Edge confidence, Explorer, Prior knowledge)
  and ``state.check`` (Check page, Playback);
* ``jobs``: the one background-job helper (slot, progress, Stop) of every page;
* ``data``, ``simulation``, ``lessons``: the current dataset, the Simulate page's settings, lessons;
* ``fitting``, ``live``, ``checks``, ``comparison``, ``playback``, ``manifests``: cached calls of the
  library for the pages (fits, live fits, checks, Compare, Playback, run manifests);
* ``caching``: the one caching policy (``cache_data``, full hashes), importing no other module here;
* ``limits``: how large a dataset this server takes (upload columns, node limit, device);
* ``cached``, ``graphview``, ``settings_form``: drawing and forms (the drawings themselves are in
  ``colide_core.render``);
* ``layout``, ``nav``, ``assets``, ``urlstate``, ``text``: page set-up and sidebar, the page table,
  served static files, shareable links, and text formatting and escaping.
"""
