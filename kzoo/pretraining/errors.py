"""The error every pretraining check raises, in a module of its own so
that the option checks (`config.py`) and the modules they call
(`batch_ramp.py`) both import it without importing each other."""


class PretrainingError(ValueError):
    """A pretraining run that cannot start or go on: the message names the
    file or option and what to do."""
