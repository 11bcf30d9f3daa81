"""Writers that turn results into text: one module per format.

* :mod:`.terminal` -- the table of ``dpverify check``;
* :mod:`.json_report` -- the ``check --json`` document (a public contract);
* :mod:`.site` -- ``dpverify report``: the report directory and its extended ``report.json``
  (written atomically), built from the view model in :mod:`.model`, the per-kind sections in
  :mod:`.sections` (families in :mod:`.sections_privacy` and :mod:`.sections_theorems`, sharing
  :mod:`.section_parts`; made of the blocks in :mod:`.blocks`, with plots from :mod:`.plots`
  and formulas typeset by :mod:`.maths` and :mod:`.statements`), and rendered by
  :mod:`.markdown` and :mod:`.html` through the Jinja2 templates in ``templates/``.
"""
