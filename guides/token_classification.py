"""
# Named entities with kzoo: token classification

A token classifier gives every word a label: here, whether it begins or
continues the name of a person or a place (BIO tags: `B-PER`, `I-PER`,
`B-LOC`, `I-LOC`, `O`), the CoNLL-2003 task BERT was first fine-tuned
on. `kzoo.TokenClassifier` puts a dense layer on every token of any
encoder backbone kzoo has (BERT, RoBERTa, XLM-R, DistilBERT, ALBERT,
ELECTRA, DeBERTa-v3).

This guide:

1. tags Pride and Prejudice by a documented rule (bundled, no download);
2. fine-tunes all-MiniLM-L6-v2 (a 6-layer BERT) on the early chapters;
3. scores entities on later chapters (precision, recall, F1 per type, as
   CoNLL's `conlleval`, through `seqeval`) against a simple baseline;
4. shows how words become word pieces and labels.

    KERAS_BACKEND=jax python guides/token_classification.py   # minutes
    KZOO_GUIDE_SMOKE=1 python guides/token_classification.py  # the test's

The smoke run uses a tiny random BERT and a few sentences: it shows that
every step runs, not that the model learns.
"""

import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv

import keras  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402

"""
## 1. Persons and places in the novel

`datasets.austen_entities` splits Pride and Prejudice into sentences of
words and tags the novel's characters and places from fixed lists (the
rule is in `kzoo/datasets.py`). Neighbouring sentences share their
names, so the held-out sentences come from later chapters, not from a
random draw.
"""

sentences, tags = datasets.austen_entities(max_words=30)
train_words, train_tags = sentences[:1200], tags[:1200]
test_words, test_tags = sentences[2000:2400], tags[2000:2400]
if SMOKE:
    train_words, train_tags = train_words[:32], train_tags[:32]
    test_words, test_tags = test_words[:16], test_tags[:16]
print(f"{len(train_words)} training sentences, {len(test_words)} test "
      "sentences")
print(list(zip(train_words[1], train_tags[1]))[:8])

"""
## 2. The model

`from_preset` puts the tagger on the preset's backbone and gives it a
`TokenClassifierPreprocessor` with the preset's tokenizer; `label_names`
lets `fit` take the tags as names.
"""

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
if SMOKE:
    backbone = kzoo.BertBackbone.from_preset(
        "bert_tiny_en_uncased", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    preprocessor = kzoo.TokenClassifierPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=48)
    tagger = kzoo.TokenClassifier(backbone, preprocessor=preprocessor,
                                  label_names=LABELS)
else:
    tagger = kzoo.TokenClassifier.from_preset(
        "all_minilm_l6_v2", label_names=LABELS, sequence_length=48)

"""
## 3. Word pieces

Each word is tokenized alone; its label goes on its first piece, and the
other pieces carry no loss (weight 0), as `transformers`' examples do
with label -100. `label_all_pieces=True` labels every piece instead, the
later pieces of a `B-PER` word as `I-PER` (the tagger hands its label
names to its preprocessor for that).
"""

x, y, weights = tagger.preprocessor([["Mr.", "Darcy", "walked"]], [[1, 2, 0]])
ids = keras.ops.convert_to_numpy(x["token_ids"])[0]
pieces = [tagger.preprocessor.tokenizer.id_to_token(int(i)) for i in ids[:6]]
print("pieces:", pieces)
print("labels:", keras.ops.convert_to_numpy(y)[0][:6].tolist(),
      "weights:", keras.ops.convert_to_numpy(weights)[0][:6].tolist())

"""
## 4. Baseline, fine-tuning, entity scores

The baseline calls every capitalised word inside a sentence a person (it
cannot tell places from persons). Entity scores count a name as right
only when its type and all its words are right.
"""

baseline = kzoo.metrics.entity_scores(
    test_tags, datasets.capitalised_word_tags(test_words))
start = time.time()
tagger.compile(optimizer=keras.optimizers.Adam(1e-4 if not SMOKE else 1e-3))
tagger.fit(train_words, train_tags, batch_size=16, epochs=1 if SMOKE else 2,
           verbose=0 if SMOKE else 2)
scores = tagger.evaluate_entities(test_words, test_tags)
print(f"fine-tuned in {time.time() - start:.0f}s")
print(f"baseline (capitalised words): F1 {baseline['f1']:.3f}")
print(f"fine-tuned: precision {scores['precision']:.3f} recall "
      f"{scores['recall']:.3f} F1 {scores['f1']:.3f}")
for kind, result in sorted(scores["per_type"].items()):
    print(f"  {kind}: F1 {result['f1']:.3f} ({result['support']} names)")

"""
## 5. Tagging new text

`predict_words` gives a label per word (None for a word past the
sequence length).
"""

words = "Elizabeth and Jane walked from Longbourn to Meryton .".split()
print(list(zip(words, tagger.predict_words([words])[0])))
print(f"{keras.backend.backend()} done")
