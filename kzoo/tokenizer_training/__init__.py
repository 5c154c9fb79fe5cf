"""Train a family's vocabulary on your own text (`kzoo train-tokenizer`):
WordPiece, byte-level BPE or SentencePiece, streamed from text files or a
prepared corpus, written as a preset folder.

It sits beside `kzoo.convert` and `kzoo.recipes`: it reads the families'
tokenizer classes (which declare what they train and where their special
tokens go) and `kzoo.corpus`' text readers.
"""

from kzoo.tokenizer_training.texts import TokenizerTrainingError
from kzoo.tokenizer_training.train import (DEFAULT_MAX_SENTENCES,
                                           train_tokenizer)

__all__ = ["DEFAULT_MAX_SENTENCES", "TokenizerTrainingError",
           "train_tokenizer"]
