"""The knowledge base: its schema, the build from bundled data and imports, opening (and rebuilding) it, the
read-only queries answers use, the parser's vocabulary and live swapping in long-running processes.
May import `catalog`, `facts`, `state` and knowledge's top-level modules; never `history`.
"""
