"""`train` of the SentencePiece families: a new model laid out as the
family's released ones (the special pieces at their ids), the text
normalised as the tokenizer normalises it, the trainer's options passed
on. Backend-independent (the sentencepiece library and tf string ops)."""

import pytest
import sentencepiece
from sentencepiece import sentencepiece_model_pb2

import kzoo
from kzoo import datasets

TEXTS = datasets.austen_paragraphs("emma")[:100]
SENTENCE = "Emma smiled at Mr. Knightley."

# The ids the released models give their special tokens.
LAYOUTS = {
    kzoo.AlbertTokenizer: {"<pad>": 0, "<unk>": 1, "[CLS]": 2, "[SEP]": 3,
                           "[MASK]": 4},
    kzoo.T5Tokenizer: {"<pad>": 0, "</s>": 1, "<unk>": 2,
                       "<extra_id_0>": 399},  # 300 pieces + 100 sentinels
    kzoo.XLMRobertaTokenizer: {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3,
                               "<mask>": 301},
    kzoo.DebertaV3Tokenizer: {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2,
                              "[UNK]": 3, "[MASK]": 300},
}


@pytest.mark.once
@pytest.mark.parametrize("cls", list(LAYOUTS), ids=lambda c: c.__name__)
def test_trained_model_has_the_family_layout(cls, tmp_path):
    tokenizer = cls.from_texts(TEXTS, tmp_path / "model", vocabulary_size=300)
    assert tokenizer.proto == str(tmp_path / "model")
    ids = {token: tokenizer.token_to_id(token) for token in LAYOUTS[cls]}
    assert ids == LAYOUTS[cls]
    expected = SENTENCE.lower() if cls is kzoo.AlbertTokenizer else SENTENCE
    assert tokenizer.detokenize(tokenizer(SENTENCE)) == expected
    # It loads as any model file of the family does.
    again = cls(str(tmp_path / "model"))
    assert again.get_vocabulary() == tokenizer.get_vocabulary()


@pytest.mark.once
def test_training_text_is_normalised_and_options_pass(tmp_path):
    # ALBERT lowercases before its model: an uncased model has no
    # uppercase piece to waste the vocabulary on.
    albert = kzoo.AlbertTokenizer.from_texts(TEXTS, tmp_path / "a", 300)
    pieces = albert.get_vocabulary()[5:]
    assert not any(any(c.isupper() for c in piece) for piece in pieces)
    cased = kzoo.AlbertTokenizer.from_texts(TEXTS, tmp_path / "b", 300,
                                       lowercase=False)
    assert any(any(c.isupper() for c in piece)
               for piece in cased.get_vocabulary()[5:])
    assert cased.lowercase is False
    bpe = kzoo.T5Tokenizer.from_texts(
        TEXTS, tmp_path / "c", 300, trainer_options={"model_type": "bpe"})
    model = sentencepiece.SentencePieceProcessor(model_file=bpe.proto)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.serialized_model_proto())
    assert proto.trainer_spec.model_type == proto.trainer_spec.BPE
