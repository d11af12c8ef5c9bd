"""The knowledge base: its schema, the build from bundled data and imports, opening (and rebuilding) it, the
read-only queries answers use, the parser's vocabulary and live swapping in long-running processes.
May import `catalog`, `facts` and knowledge's top-level modules; `build` also `history` (the bundled weekly
price history it writes into the file).
Imports: top, catalog, facts; build also history
"""
