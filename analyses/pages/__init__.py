"""Page helpers: what a chapter's notebook and its figures use to show results (glue, tables, charts,
links, the ledger's HTML, slider figures). Below the site (build, CLI, export), above the chapters'
computations; a chapter's ``figures.py`` and ``text.py`` sit on top of these helpers."""
