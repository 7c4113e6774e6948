"""One module per driver: what its connections and pools mean to the guard."""
