"""Sub-commands of the `kzoo` command (one module each)."""
