"""Facts and reasoning over them: catalogs, the knowledge base, price history, reviewed facts, workspace state.
Packages: `catalog` (reading clouds' files), `kb` (the built SQLite file and its queries), `history`, `facts`,
`state`; the top-level modules (config, paths, clock, names, numbers, lexicon, errors) are shared by all and import
only each other (`paths` also creates GPUBOT_HOME private, with `state.private_files`). Never imports bot/ or
handlers/. Each package's last docstring line says what it may import; tests/test_layers.py enforces it.
Imports: top; paths also state
"""
