"""Price history: snapshots recorded in the state, the bundled GCP weekly series, baselines, diffs and the reader
handlers get injected. May import `state`, `catalog`, `facts` and knowledge's top-level modules; `series` also
`kb`, where a series is compared with the built knowledge base.
Imports: top, state, catalog, facts; series also kb
"""
