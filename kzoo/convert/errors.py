"""Errors of the conversion and download machinery."""


class ConversionError(ValueError):
    """A checkpoint that cannot be converted as asked: a missing or
    mis-shaped tensor, a config that disagrees with the weights, an unknown
    model type, a corrupt file. The message names the file or tensor."""


class DownloadError(OSError):
    """A remote file that could not be fetched, or failed verification."""
