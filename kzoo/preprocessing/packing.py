"""RoBERTa's FULL-SENTENCES inputs: documents packed into full rows.

RoBERTa (Liu et al., 2019, section 4.2): "Each input is packed with full
sentences sampled contiguously from one or more documents, such that the
total length is at most 512 tokens. Inputs may cross document boundaries.
When we reach the end of one document, we begin sampling sentences from the
next document and add an extra separator token between documents."

So a row is `<s>`, then whole sentences in corpus order, `</s>` between
two documents, and `</s>` at the end; padded to `sequence_length` when the
next sentence does not fit. Sentences are tokenized as the running text
they come from: each one after the first of its document follows a space,
which byte-level BPE spells into the sentence's first token (`ĠWe`, as in
fairseq's RoBERTa data, which is running text encoded whole), never the
bare `We` that running text does not produce. A sentence is never split
between two rows when it fits one; one longer than a whole row fills rows
of its own and its rest begins the next, so no id is lost (fairseq's
"complete" blocks make it an over-long block, which training truncates).
Rows come as `tf.data` elements, `{"token_ids", "padding_mask"}` of shape
`(sequence_length,)`: mask them with a masked-LM preprocessor's `mask` and
fit a masked LM built without a preprocessor.

Example:
```python
preprocessor = kzoo.RobertaMaskedLMPreprocessor.from_preset(
    "roberta_base_en", sequence_length=128)
rows = kzoo.preprocessing.full_sentences(
    documents, preprocessor.tokenizer, sequence_length=128)
masked = rows.batch(16).map(preprocessor.mask)  # (x, y, sample_weight)
mlm = kzoo.RobertaMaskedLM(backbone, preprocessor=None)
mlm.fit(masked.repeat(), steps_per_epoch=100)
```
"""

import numpy as np
import tensorflow as tf

from kzoo.preprocessing.sentence_pairs import split_sentences


def pack_full_sentences(documents, sequence_length, start_token_id,
                        end_token_id, pad_token_id, separator_token_id=None):
    """Yield FULL-SENTENCES rows from tokenized documents.

    Args:
        documents: an iterable of documents, each a list of sentences, each
            a list of token ids (no special tokens).
        sequence_length: length of every row (at least 3).
        start_token_id, end_token_id, pad_token_id: `<s>`, `</s>`,
            `<pad>` (BERT's [CLS], [SEP], [PAD]).
        separator_token_id: between two documents; `end_token_id` by
            default (RoBERTa's `</s>`).

    Yields:
        `(token_ids, padding_mask)`, two int32 arrays of `sequence_length`.

    Example:
    ```python
    from kzoo import preprocessing
    documents = [[[5, 6, 7], [8, 9]],    # two sentences
                 [[10, 11, 12, 13]]]     # one
    rows = list(preprocessing.pack_full_sentences(
        documents, sequence_length=8, start_token_id=0, end_token_id=2,
        pad_token_id=1))
    # The second document does not fit after a separator: a row of its own.
    assert [ids.tolist() for ids, _ in rows] == [
        [0, 5, 6, 7, 8, 9, 2, 1], [0, 10, 11, 12, 13, 2, 1, 1]]
    assert rows[1][1].tolist() == [1, 1, 1, 1, 1, 1, 0, 0]
    ```
    """
    row = FullSentencesRow(sequence_length, start_token_id, end_token_id,
                           pad_token_id, separator_token_id)
    for document in documents:
        starts_document = True
        for sentence in document:
            while len(sentence):
                taken = row.add(sentence, starts_document)
                if taken < len(sentence):  # the rest begins the next row
                    yield row.finish()
                if taken:
                    starts_document = False
                sentence = sentence[taken:]
    if row.content:
        yield row.finish()


class FullSentencesRow:
    """One FULL-SENTENCES row being filled: the rule `pack_full_sentences`
    packs by, one sentence at a time, for packers that keep their own
    position (a stream over a corpus on disk resumes from a document and
    sentence index, not from a generator).

    `add(sentence, starts_document)` puts a sentence in the row, after a
    separator when it begins a document and the row holds text, and
    returns how many of its ids the row took: all of them; none (0,
    the row left as it was) when it does not fit; or, in an empty row,
    the row's `capacity` first ids of a longer sentence, whose rest the
    caller puts in the next row (`starts_document=False`: no separator).
    `finish()` returns `(token_ids, padding_mask)` and empties the row.

    Example:
    ```python
    from kzoo.preprocessing.packing import FullSentencesRow
    row = FullSentencesRow(8, start_token_id=0, end_token_id=2,
                           pad_token_id=1)
    assert row.add([5, 6, 7], starts_document=True) == 3
    assert row.add([10, 11, 12, 13], starts_document=True) == 0
    assert row.finish()[0].tolist() == [0, 5, 6, 7, 2, 1, 1, 1]
    long = list(range(10, 30))
    assert row.add(long, starts_document=True) == 6   # a row's worth
    assert row.finish()[0].tolist() == [0, 10, 11, 12, 13, 14, 15, 2]
    assert row.add(long[6:], starts_document=False) == 6  # the rest goes on
    ```
    """

    def __init__(self, sequence_length, start_token_id, end_token_id,
                 pad_token_id, separator_token_id=None):
        if isinstance(sequence_length, bool) or not isinstance(
                sequence_length, (int, np.integer)) or sequence_length < 3:
            raise ValueError(
                "sequence_length must be an integer >= 3 (<s>, a token, "
                f"</s>); got {sequence_length!r}.")
        self.sequence_length = int(sequence_length)
        self.capacity = self.sequence_length - 2  # between <s> and </s>
        self.start_token_id = start_token_id
        self.end_token_id = end_token_id
        self.pad_token_id = pad_token_id
        # Between two documents: RoBERTa's </s> by default.
        self.separator_token_id = (end_token_id if separator_token_id is None
                                   else separator_token_id)
        self.content = []

    def fits(self, length, starts_document):
        """Whether a sentence of `length` tokens goes in this row."""
        if not self.content:
            return True
        # A new document needs its separator too; a row that the next
        # sentence would overfill ends (its own </s> ends the document).
        return (len(self.content) + bool(starts_document) + length
                <= self.capacity)

    def add(self, sentence, starts_document):
        if not self.fits(len(sentence), starts_document):
            return 0
        if starts_document and self.content:
            self.content.append(self.separator_token_id)
        taken = sentence[:self.capacity]
        self.content.extend(int(t) for t in taken)
        return len(taken)

    def finish(self):
        ids = [self.start_token_id] + self.content + [self.end_token_id]
        padding = self.sequence_length - len(ids)
        self.content = []
        return (np.asarray(ids + [self.pad_token_id] * padding, "int32"),
                np.asarray([1] * len(ids) + [0] * padding, "int32"))


def full_sentences(documents, tokenizer, sequence_length,
                   separator_token_id=None):
    """FULL-SENTENCES rows of raw documents, as a `tf.data.Dataset` of
    `{"token_ids", "padding_mask"}` (each `(sequence_length,)` int32).

    Args:
        documents: an iterable of documents: strings (split into sentences
            by `kzoo.preprocessing.split_sentences`) or lists of sentences.
            Read lazily, once per pass over the dataset. A document is
            tokenized as running text: its sentences, stripped, one space
            between two (see `running_text_sentences`), so a sentence after
            the first has the tokens it has inside the document.
        tokenizer: a kzoo tokenizer with `start_token_id` (or
            `cls_token_id`), `end_token_id` (or `sep_token_id`) and
            `pad_token_id`.
        sequence_length: length of every row.
        separator_token_id: between documents (default: the end token).

    Example:
    ```python
    from kzoo import preprocessing
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    rows = preprocessing.full_sentences(
        ["It rained all day. We stayed in.", "The end came at last."],
        tokenizer, sequence_length=16)
    for row in rows.as_numpy_iterator():
        print(tokenizer.detokenize(row["token_ids"]))
    # [CLS] it rained all day . we stayed in . [SEP] [PAD] ...
    # [CLS] the end came at last . [SEP] [PAD] ...
    assert row["token_ids"][0] == tokenizer.cls_token_id
    ```
    """
    start = _token_id(tokenizer, "start_token_id", "cls_token_id")
    end = _token_id(tokenizer, "end_token_id", "sep_token_id")
    pad = tokenizer.pad_token_id

    def tokenized():
        for document in documents:
            sentences = split_sentences(document, min_words=1) \
                if isinstance(document, str) else list(document)
            sentences = running_text_sentences(sentences)
            if sentences:
                yield [list(ids) for ids in tokenizer.tokenize(sentences)]

    def rows():
        for token_ids, padding_mask in pack_full_sentences(
                tokenized(), sequence_length, start, end, pad,
                separator_token_id):
            yield {"token_ids": token_ids, "padding_mask": padding_mask}

    spec = tf.TensorSpec((sequence_length,), tf.int32)
    return tf.data.Dataset.from_generator(
        rows, output_signature={"token_ids": spec, "padding_mask": spec})


def running_text_sentences(sentences):
    """A document's sentences as pieces of its running text: stripped,
    empty ones dropped, and every one after the first led by the space
    that separates it from the one before, so that tokenizing the pieces
    one by one gives the tokens of the text `" ".join(sentences)`.

    Byte-level BPE (GPT-2's, RoBERTa's) needs the space: it spells it into
    the word that follows (`ĠWe`), and the bare `We` of a sentence
    tokenized alone is a token running text never produces there.
    Tokenizers that drop leading whitespace (WordPiece, SentencePiece's
    dummy prefix) give the same tokens either way.

    Example:
    ```python
    from kzoo.preprocessing.packing import running_text_sentences
    assert running_text_sentences(["It rained. ", "", "We stayed in."]) \
        == ["It rained.", " We stayed in."]
    ```
    """
    pieces = []
    for sentence in sentences:
        if isinstance(sentence, bytes):
            sentence = sentence.decode("utf-8")
        sentence = sentence.strip()
        if sentence:
            pieces.append(" " + sentence if pieces else sentence)
    return pieces


def _token_id(tokenizer, *names):
    for name in names:
        if hasattr(type(tokenizer), name):
            return int(getattr(tokenizer, name))
    raise ValueError(
        f"full_sentences: {type(tokenizer).__name__} has none of "
        f"{', '.join(names)}; pass a tokenizer of an encoder family.")
