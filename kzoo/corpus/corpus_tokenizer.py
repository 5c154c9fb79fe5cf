"""The tokenizer a corpus' ids come from, read back as the class a model's
family reads it with.

A corpus tokenized with `BertTokenizer` feeds an ELECTRA: the two classes
tokenize alike (`tokenizer_hash.defining_class`), and the model's own
preprocessor insists on its family's class. So the saved tokenizer is
rebuilt as that class, from the same configuration and files.
"""

from kzoo.core.tokenizer import Tokenizer
from kzoo.presets import Preset
from kzoo.corpus.shards import CorpusError
from kzoo.corpus.tokenizer_hash import defining_class


def corpus_tokenizer(corpus, tokenizer_cls=Tokenizer):
    """`corpus`' tokenizer as a `tokenizer_cls` (any class that tokenizes
    as the saved one)."""
    # Read as a preset folder: it holds a tokenizer only (a corpus written
    # by hand or by an older kzoo has no metadata.json to resolve it by).
    saved = Tokenizer.from_preset(Preset(corpus.tokenizer_folder))
    if isinstance(saved, tokenizer_cls):
        return saved
    if defining_class(type(saved)) is not defining_class(tokenizer_cls):
        raise CorpusError(
            f"{corpus.folder} was tokenized with a {type(saved).__name__}; "
            f"a model that reads {tokenizer_cls.__name__} ids cannot use "
            "it. Prepare the corpus again with the model's preset.")
    config = dict(saved.get_config())
    config.pop("name", None)
    config.update({argument: str(path)
                   for argument, path in saved.asset_paths.items()})
    return tokenizer_cls.from_config(config)
