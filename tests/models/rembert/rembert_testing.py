"""Shared by the RemBERT tests (model and conversion): the stand-in preset
(rembert_multi's config with a 1,003-piece vocabulary and a RemBERT-layout
SentencePiece model built from a real one; see tests/data/README.md), the
random `transformers` checkpoints of RemBERT's structure, and the family's
reference for the tests over every encoder family."""

from bert_testing import BERT_LIKE
from family_references import Reference
from parity_harness import make_hf_model, random_inputs
from text_testing import STAND_IN_PRESETS

REMBERT_PRESET = str(STAND_IN_PRESETS / "rembert_multi")
REMBERT_SPM = f"{REMBERT_PRESET}/sentencepiece.model"
REMBERT_VOCABULARY = 1003  # RemBERT's 6 pieces + Botchan's 997
SPECIAL_IDS = {"<pad>": 0, "<unk>": 2, "[CLS]": 3, "[SEP]": 4, "[MASK]": 5}

# The released structure (google/rembert's config.json: input embeddings
# narrower than the blocks, an output embedding wider than both, exact
# GELU, dropouts 0, two token types), small and with odd sizes.
CONFIGS = {
    # 6 heads of 6, embeddings 10 wide, output embedding 14.
    "released": dict(vocab_size=99, input_embedding_size=10,
                     output_embedding_size=14, hidden_size=36,
                     num_hidden_layers=3, num_attention_heads=6,
                     intermediate_size=50, max_position_embeddings=40,
                     type_vocab_size=2, layer_norm_eps=1e-12,
                     hidden_act="gelu", hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, num_labels=3),
    # Input embeddings as wide as the blocks (still projected), output
    # embedding narrower, 5 heads of 7, tanh GELU, three token types, its
    # own epsilon and classifier dropout.
    "odd": dict(vocab_size=61, input_embedding_size=35,
                output_embedding_size=9, hidden_size=35,
                num_hidden_layers=2, num_attention_heads=5,
                intermediate_size=9, max_position_embeddings=24,
                type_vocab_size=3, layer_norm_eps=1e-5,
                hidden_act="gelu_new", num_labels=5,
                classifier_dropout_prob=0.3, hidden_dropout_prob=0.2,
                attention_probs_dropout_prob=0.05),
}


REFERENCE = Reference(
    tiny_config=lambda dropout: dict(
        BERT_LIKE, input_embedding_size=4, output_embedding_size=6,
        hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["odd"]),
    odd_inputs=random_inputs)
