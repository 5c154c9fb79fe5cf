"""The shard format: what is written is read back, and a damaged or
unlisted shard is never taken for part of the corpus."""

import numpy as np
import pytest

from kzoo.corpus import Corpus, CorpusError
from kzoo.corpus.shards import (SHARDS_FOLDER, token_dtype, write_manifest,
                                write_shard)

pytestmark = pytest.mark.once

DOCUMENTS = [[[5, 6, 7], [8]], [[9, 10]], [[11], [12, 13], [70000]]]


def _corpus(tmp_path, shards):
    records = [write_shard(tmp_path / SHARDS_FOLDER, f"s{i}", docs,
                           np.uint32) for i, docs in enumerate(shards)]
    write_manifest(tmp_path, {"shards": records,
                              "tokenizer": {"sha256": "abc"}})
    return Corpus(tmp_path)


def test_documents_and_sentences_read_back_across_shards(tmp_path):
    corpus = _corpus(tmp_path, [DOCUMENTS[:2], DOCUMENTS[2:]])
    assert corpus.num_documents == 3 and corpus.num_tokens == 10
    for index, document in enumerate(DOCUMENTS):
        assert [s.tolist() for s in corpus.document(index)] == document
        assert corpus.document_tokens(index).tolist() == sum(document, [])
    with pytest.raises(IndexError):
        corpus.document(3)


def test_token_dtype_fits_the_vocabulary():
    assert token_dtype(30522) == np.uint16
    assert token_dtype(65536) == np.uint16
    assert token_dtype(250002) == np.uint32


def test_a_shard_changed_after_preparation_is_refused(tmp_path):
    _corpus(tmp_path, [DOCUMENTS])
    np.save(tmp_path / SHARDS_FOLDER / "s0" / "tokens.npy",
            np.arange(3, dtype=np.uint32))
    # Shards open when first read (a corpus of 15,000 shards starts at
    # once): the change is found there.
    with pytest.raises(CorpusError, match="changed after preparation"):
        Corpus(tmp_path).document(0)


def test_verify_finds_damaged_tokens(tmp_path):
    corpus = _corpus(tmp_path, [DOCUMENTS])
    tokens = np.load(tmp_path / SHARDS_FOLDER / "s0" / "tokens.npy")
    tokens[0] += 1
    np.save(tmp_path / SHARDS_FOLDER / "s0" / "tokens.npy", tokens)
    with pytest.raises(CorpusError, match="damaged"):
        Corpus(tmp_path).shards[0].verify()
    assert corpus.shards[0].record["tokens"] == 10


def test_a_folder_without_manifest_says_how_to_make_one(tmp_path):
    with pytest.raises(CorpusError, match="kzoo prepare-corpus"):
        Corpus(tmp_path)


def test_another_tokenizer_is_refused(tmp_path):
    corpus = _corpus(tmp_path, [DOCUMENTS])
    corpus.check_tokenizer("abc", "bert_tiny")
    with pytest.raises(CorpusError, match="another tokenizer"):
        corpus.check_tokenizer("def", "roberta_base")


def test_a_tokenizer_that_only_renames_its_parent_hashes_as_the_parent():
    """ELECTRA's released models use BERT's vocabulary: a corpus tokenized
    with BERT's tokenizer feeds ELECTRA (same ids); GPT-2's does not."""
    import kzoo
    from kzoo.corpus import tokenizer_hash
    bert = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    vocabulary = bert.asset_paths["vocabulary"]
    electra = kzoo.ElectraTokenizer(vocabulary=str(vocabulary))
    assert tokenizer_hash(electra) == tokenizer_hash(bert)
    cased = kzoo.BertTokenizer(vocabulary=str(vocabulary), lowercase=False)
    assert tokenizer_hash(cased) != tokenizer_hash(bert)
    gpt2 = kzoo.GPT2Tokenizer.from_preset("gpt2_base_en")
    assert tokenizer_hash(gpt2) != tokenizer_hash(bert)


def test_the_corpus_tokenizer_reads_back_as_the_model_family_class(tmp_path):
    import kzoo
    from kzoo.corpus.corpus_tokenizer import corpus_tokenizer
    corpus = _corpus(tmp_path, [DOCUMENTS])
    bert = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    bert.save_to_preset(corpus.tokenizer_folder)
    electra = corpus_tokenizer(corpus, kzoo.ElectraTokenizer)
    assert isinstance(electra, kzoo.ElectraTokenizer)
    assert electra.tokenize(["Emma smiled."]) == \
        bert.tokenize(["Emma smiled."])
    with pytest.raises(CorpusError, match="Prepare the corpus again"):
        corpus_tokenizer(corpus, kzoo.GPT2Tokenizer)
