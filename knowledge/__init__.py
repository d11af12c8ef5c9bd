"""Facts and reasoning over them: catalogs, the knowledge base, price history, reviewed facts, workspace state.
Packages: `catalog` (reading clouds' files), `kb` (the built SQLite file and its queries), `history`, `facts`,
`state`; the top-level modules (config, paths, clock, names, numbers, lexicon) are shared by all. Never imports
bot/ or handlers/.
"""
