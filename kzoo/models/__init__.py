"""One sub-package per model family; the base classes they build on are
in `kzoo.core`, the heads every encoder takes in `kzoo.tasks`."""
