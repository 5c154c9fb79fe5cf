"""Errors of the conversion and download machinery."""


class ConversionError(ValueError):
    """A checkpoint that cannot be converted as asked: a missing or
    mis-shaped tensor, a config that disagrees with the weights, an unknown
    model type, a corrupt file. The message names the file or tensor.

    Example:
    ```python
    from kzoo import convert
    try:
        convert.converter_for_model_type("not_a_model")
    except convert.ConversionError as error:
        assert "bert" in str(error)   # lists the model types kzoo converts
    ```
    """


class DownloadError(OSError):
    """A remote file that could not be fetched, or failed verification.

    Example:
    ```python
    from kzoo import convert
    assert issubclass(convert.DownloadError, OSError)
    # Raised when a hub file cannot be fetched or fails its checksum:
    # try: kzoo.BertBackbone.from_preset("hf://org/model")
    # except convert.DownloadError: ...  (work offline from a local folder)
    ```
    """
