"""
# Pretraining BERT from scratch on raw text

BERT (Devlin et al., 2019) learns the language from unlabelled text with
two objectives trained together: **masked language modelling** (hide 15%
of the word pieces, predict them from both sides) and **next-sentence
prediction** (is the second sentence the one that followed the first, or
one drawn from another document?). `kzoo.BertPretrainer` is that model:
a backbone with both heads, fitted on raw sentence pairs.

This guide:

1. turns raw prose (Persuasion and Northanger Abbey, bundled with kzoo,
   no download) into next-sentence pairs;
2. shows the masking strategies kzoo offers on one sentence: BERT's 15%
   with its 80/10/10 split, whole-word masking, SpanBERT's span masking,
   and that masks are drawn afresh on every pass (dynamic masking);
3. builds a small random BERT with the vocabulary of the
   `bert_tiny_en_uncased` preset's WordPiece tokenizer;
4. pretrains it, reading the loss: a random model's masked-LM loss starts
   near ln(vocabulary size) and falls as it learns which pieces are
   likely;
5. fills masks with the pretrained model.

    KERAS_BACKEND=jax python guides/pretraining_bert.py   # minutes
    KZOO_GUIDE_SMOKE=1 python guides/pretraining_bert.py  # the test's run

The smoke run uses a tinier BERT and a few pairs: it shows that every
step runs, not that the model learns.
"""

import math
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv

import keras  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402
from kzoo.preprocessing import (  # noqa: E402
    next_sentence_pairs, split_sentences)

SIZES = {
    # sentence pairs to train on, held-out pairs, epochs, tokens per pair
    "smoke": dict(pairs=64, held_out=32, epochs=2, sequence_length=48,
                  batch_size=16, learning_rate=1e-3),
    "full": dict(pairs=4096, held_out=256, epochs=4, sequence_length=64,
                 batch_size=32, learning_rate=1e-3),
}["smoke" if SMOKE else "full"]
keras.utils.set_random_seed(0)
start = time.time()

"""
## 1. Raw text to sentence pairs

A document is a paragraph, split into sentences. `next_sentence_pairs`
pairs each sentence with the next one (label 0, IsNext) or, half the
time, with a sentence of another paragraph (label 1, NotNext), the
labels of the original checkpoints. The last pairs are held out to
measure the loss on text the model never trained on.
"""

paragraphs = [p for novel in ("persuasion", "northanger_abbey")
              for p in datasets.austen_paragraphs(novel)]
documents = [p for p in paragraphs if len(split_sentences(p)) >= 2]
first, second, nsp_labels = next_sentence_pairs(documents, seed=0)
total = SIZES["pairs"] + SIZES["held_out"]
train = (first[:SIZES["pairs"]], second[:SIZES["pairs"]])
train_labels = nsp_labels[:SIZES["pairs"]]
held_out = (first[SIZES["pairs"]:total], second[SIZES["pairs"]:total])
held_out_labels = nsp_labels[SIZES["pairs"]:total]
print(f"{len(documents)} paragraphs, {len(first)} sentence pairs; "
      f"training on {len(train[0])}, {len(held_out[0])} held out")
print(f"pair: {first[1]!r} + {second[1]!r} -> label {nsp_labels[1]}")

"""
## 2. Masking strategies

`BertMaskedLMPreprocessor` (and the pretrainer's, which adds the NSP
label) tokenizes, packs `[CLS] a [SEP] b [SEP]` and masks. `masking=`
picks what is masked:

- `"token"` (BERT): 15% of the pieces chosen one by one; of those, 80%
  become `[MASK]`, 10% a random piece, 10% stay as they are (the model
  must predict them too, so it cannot trust unmasked pieces blindly).
- `"whole_word"`: every piece of a chosen word, so a model cannot guess
  `##ship` from the `court` beside it.
- `"span"` (SpanBERT): runs of whole words, their lengths geometric
  (p = 0.2, at most 10 words), until 15% of the pieces are chosen.

Below, each chosen position shows `<what the model sees|the original>`.
"""

SENTENCE = ("The Musgroves of Uppercross were astonished, and Lady Russell "
            "was unaccountably displeased, when Captain Wentworth came back "
            "to Kellynch in the autumn and renewed his acquaintance with "
            "Anne Elliot.")


def show_masks(preprocessor, text):
    x, original, weights = preprocessor([text])
    tokenizer = preprocessor.tokenizer
    ids = keras.ops.convert_to_numpy(x["token_ids"])[0]
    positions = keras.ops.convert_to_numpy(x["mask_positions"])[0]
    original = keras.ops.convert_to_numpy(original)[0]
    weights = keras.ops.convert_to_numpy(weights)[0]
    chosen = {int(p): int(o) for p, o, w in zip(positions, original, weights)
              if w > 0}
    length = int(keras.ops.convert_to_numpy(x["padding_mask"])[0].sum())
    pieces = []
    for i in range(1, length - 1):  # without [CLS] and [SEP]
        piece = tokenizer.id_to_token(int(ids[i]))
        if i in chosen:
            piece = f"<{piece}|{tokenizer.id_to_token(chosen[i])}>"
        pieces.append(piece)
    return " ".join(pieces), len(chosen), length - 2


for masking in ("token", "whole_word", "span"):
    masker = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=64, masking=masking)
    shown, chosen, pieces = show_masks(masker, SENTENCE)
    print(f"{masking} masking ({chosen} of {pieces} pieces): {shown}")

"""
Masking is **dynamic**: every call draws fresh masks, so each epoch of
`fit` masks each text differently (the original BERT masked its data once
and repeated the masks; RoBERTa showed fresh masks help). Twice the same
sentence:
"""

for draw in (1, 2):  # the span masker, the last one above
    shown, _, _ = show_masks(masker, SENTENCE)
    print(f"dynamic masking, draw {draw}: {shown}")

"""
## 3. A small random BERT

The vocabulary is the `bert_tiny_en_uncased` preset's: its WordPiece
tokenizer (30,522 pieces, uncased) comes with the preset; the weights do
not (`load_weights=False`): every weight starts random. The preset's
architecture is BERT-Tiny (2 layers, hidden 128, 2 heads); any argument
of `BertBackbone` overrides it.
"""

shape = dict(num_layers=1, hidden_dim=32, num_heads=2,
             intermediate_dim=64) if SMOKE else {}
backbone = kzoo.BertBackbone.from_preset(
    "bert_tiny_en_uncased", load_weights=False, **shape)
preprocessor = kzoo.BertPretrainerPreprocessor.from_preset(
    "bert_tiny_en_uncased", sequence_length=SIZES["sequence_length"])
pretrainer = kzoo.BertPretrainer(backbone, preprocessor=preprocessor)
vocabulary = preprocessor.tokenizer.vocabulary_size
print(f"random BERT: {backbone.num_layers} layers, hidden "
      f"{backbone.hidden_dim}, {pretrainer.count_params():,} parameters, "
      f"vocabulary {vocabulary:,}")

"""
## 4. Pretraining, and reading the loss

The loss is the sum of the two: cross-entropy over the masked pieces
(averaged over the real masks of the batch) and over the NSP label. A
random model spreads its guess evenly over the vocabulary, so its
masked-LM loss starts near ln(30,522) = 10.3 and its NSP loss near
ln(2) = 0.69. The first thing it learns is which pieces are frequent
("the", ",", "."), the loss of a unigram model (about 7); below that it
uses the context. Masked-LM accuracy counts the masked pieces predicted
exactly.

The default optimizer is AdamW with BERT's schedule: linear warmup over
the first 10% of the steps, then linear decay to 0.
"""


def measure(model):
    return model.evaluate(held_out, held_out_labels,
                          batch_size=SIZES["batch_size"], verbose=0,
                          return_dict=True)


before = measure(pretrainer)
print(f"before training: held-out MLM loss {before['mlm_loss']:.2f} "
      f"(ln {vocabulary:,} = {math.log(vocabulary):.2f}), NSP loss "
      f"{before['nsp_loss']:.2f} (ln 2 = {math.log(2):.2f})")
pretrainer.compile(optimizer=kzoo.training.default_optimizer(
    learning_rate=SIZES["learning_rate"]))
history = pretrainer.fit(train, train_labels,
                         batch_size=SIZES["batch_size"],
                         epochs=SIZES["epochs"], verbose=0).history
for epoch in range(SIZES["epochs"]):
    print(f"epoch {epoch + 1}: MLM loss {history['mlm_loss'][epoch]:.2f}, "
          f"MLM accuracy {history['mlm_mlm_accuracy'][epoch]:.3f}, "
          f"NSP accuracy {history['nsp_nsp_accuracy'][epoch]:.3f}")
after = measure(pretrainer)
print(f"after training: held-out MLM loss {after['mlm_loss']:.2f}, MLM "
      f"accuracy {after['mlm_mlm_accuracy']:.3f}, NSP accuracy "
      f"{after['nsp_nsp_accuracy']:.3f}")

"""
A few minutes of CPU are a tiny fraction of BERT's pretraining (a million
steps of 256 sequences). One full run of this guide (jax, 2 CPU cores,
4 epochs of 4,096 pairs) took the held-out MLM loss from 10.32 to 6.29
and its accuracy to 0.107: the model has learned which pieces are
frequent and a little local context; NSP stayed at chance (0.50), as it
does this early. The same code runs a longer schedule on more text.

## 5. Filling masks

`BertMaskedLM` is the backbone with the masked-LM head alone; it shares
the pretrained backbone, and takes the MLM head's weights (its output
projection is tied to the token embedding). `fill_mask` gives the top
pieces for every `[MASK]`. To keep the model, `backbone.save_to_preset`
writes it as any preset. This early, the top guesses are the most
frequent pieces ("," "the" "."), whatever the context.
"""

mlm = kzoo.BertMaskedLM(
    backbone, preprocessor=kzoo.BertMaskedLMPreprocessor(
        preprocessor.tokenizer,
        sequence_length=SIZES["sequence_length"]))
mlm.mlm_head.set_weights(pretrainer.mlm_head.get_weights())
for prompt in ("She could not [MASK] him.",
               "Anne walked to the [MASK] with her sister."):
    candidates = mlm.fill_mask(prompt, top_k=5)[0][0]
    print(f"{prompt} -> " + ", ".join(
        f"{token} {probability:.2f}" for token, probability in candidates))
print(f"{keras.backend.backend()} done in {time.time() - start:.0f}s")
