"""RemBERT's SentencePiece tokenizer: ALBERT's text preprocessing and
special pieces, with RemBERT's file name, casing and layout."""

from kzoo.core.registry import register
from kzoo.core.sentencepiece_tokenizer import SentencePieceTokenizer
from kzoo.models.albert.tokenizer import CLS, MASK, SEP, AlbertTokenizer


@register
class RemBertTokenizer(AlbertTokenizer):
    """SentencePiece with RemBERT's special pieces, as Hugging Face's
    `RemBertTokenizer` (built, as its docstring says, on ALBERT's).

    The text goes through ALBERT's preprocessing (`kzoo.AlbertTokenizer`)
    with RemBERT's defaults: cased (`lowercase=False`) and accents kept
    (`keep_accents=True`), as the released multilingual model was
    trained. The special pieces are the model's own, found by name:
    `<pad>`, `<unk>`, `[CLS]`, `[SEP]`, `[MASK]`, wherever the model holds
    them (the released `sentencepiece.model` of 250,300 pieces has
    `[CLS]`=312 and `[SEP]`=313, its config's `bos_token_id` and
    `eos_token_id`). Typed in a text, each is its one id, and the space
    before it is no piece of its own (as kzoo's ALBERT tokenizer;
    transformers 5's `RemBertTokenizer` built from the
    `sentencepiece.model` keeps that space as a lone "▁" piece: the only
    difference the tests find).

    Args:
        proto: path to the `sentencepiece.model`. None when the file comes
            later (`keras.saving.load_model`).
        lowercase: lowercase the text (Hugging Face `do_lower_case`).
        keep_accents: keep accents (Hugging Face `keep_accents`).

    `tokenize` adds no special tokens; `RemBertPreprocessor` packs
    `[CLS] A [SEP] (B [SEP])`.

    Example:
    ```python
    from kzoo import datasets
    # rembert's sentencepiece.model comes with its weights (downloaded
    # once). Offline: a small one in RemBERT's layout.
    tokenizer = kzoo.RemBertTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "sentencepiece.model",
        vocabulary_size=300)
    ids = np.asarray(tokenizer("The [MASK] sat.")).tolist()
    assert tokenizer.mask_token_id in ids   # typed, it is its one id
    assert tokenizer.detokenize(tokenizer("Emma smiled")) == "Emma smiled"
    ```
    """

    asset_files = {"proto": "sentencepiece.model"}
    # A new model laid out as transformers' RemBertTokenizer expects one
    # (its Unigram's unknown id is 2): <pad>=0, </s>=1, <unk>=2, then
    # [CLS], [SEP], [MASK].
    trainer_options = {"pad_id": 0, "eos_id": 1, "unk_id": 2, "bos_id": -1,
                       "control_symbols": [CLS, SEP, MASK]}

    def __init__(self, proto=None, lowercase=False, keep_accents=True,
                 **kwargs):
        super().__init__(proto=proto, lowercase=lowercase,
                         keep_accents=keep_accents, **kwargs)

    def word_start_table(self):
        """SentencePiece's word starts (a piece beginning with "▁", and
        every special piece): RemBERT is multilingual, where ALBERT's
        English pretraining-data rule would make every piece of another
        script a word of its own."""
        return SentencePieceTokenizer.word_start_table(self)
