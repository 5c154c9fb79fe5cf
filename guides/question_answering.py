"""
# Extractive question answering with kzoo

A question answerer reads a question and a context and points at the
answer: the first and the last token of a span of the context
(SQuAD; Rajpurkar et al., 2016). `kzoo.QuestionAnswerer` puts that
pointer, a dense layer giving every token a start and an end logit, on
any encoder backbone kzoo has (BERT, RoBERTa, XLM-R, DistilBERT, ALBERT,
ELECTRA, DeBERTa-v3).

This guide:

1. builds a small, real QA set from Jane Austen's dialogue (bundled);
2. fine-tunes all-MiniLM-L6-v2 (a 6-layer BERT) on four novels;
3. answers questions about the other two, and scores them with SQuAD's
   exact match and F1 against simple baselines;
4. shows the windows a long context is cut into.

    KERAS_BACKEND=jax python guides/question_answering.py    # minutes
    KZOO_GUIDE_SMOKE=1 python guides/question_answering.py   # the test's run

The smoke run uses a tiny random BERT and a few examples: it shows that
every step runs, not that the model learns.
"""

import os
import re
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv

import keras  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402

"""
## 1. Questions from the novels

Austen reports speech as `"<words>," said Elizabeth`.
`datasets.austen_questions` turns every such line into a question,
`Who said "<words>"?`, whose answer is the speaker's name where it
stands in the context: the paragraph with one paragraph on each side, so
other speakers' names are there too. We train on four novels and test on
the two others, whose characters the model has never seen.
"""

TRAIN_NOVELS = ("pride_and_prejudice", "sense_and_sensibility",
                "mansfield_park", "emma")
TEST_NOVELS = ("northanger_abbey", "persuasion")
train = datasets.austen_questions(TRAIN_NOVELS)
test = datasets.austen_questions(TEST_NOVELS)
np.random.default_rng(0).shuffle(train)
if SMOKE:
    train, test = train[:16], test[:8]
else:
    train = train[:480]  # minutes on a CPU
print(f"{len(train)} training questions, {len(test)} test questions")
example = test[0]
print(example["question"], "->", example["answers"]["text"][0])


def as_inputs(rows):
    """SQuAD-layout rows -> x = (questions, contexts) and the answers."""
    x = ([r["question"] for r in rows], [r["context"] for r in rows])
    y = [{"text": r["answers"]["text"][0],
          "answer_start": r["answers"]["answer_start"][0]} for r in rows]
    return x, y


train_x, train_y = as_inputs(train)
test_x, _ = as_inputs(test)
golds = [r["answers"]["text"] for r in test]

"""
## 2. The model

`from_preset` puts the QA head on the preset's backbone; its
preprocessor cuts long contexts into windows of `sequence_length` tokens
whose starts are `doc_stride` tokens apart.
"""

if SMOKE:
    backbone = kzoo.BertBackbone.from_preset(
        "bert_tiny_en_uncased", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    preprocessor = kzoo.QuestionAnswererPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=96, doc_stride=32)
    qa = kzoo.QuestionAnswerer(backbone, preprocessor=preprocessor)
else:
    qa = kzoo.QuestionAnswerer.from_preset(
        "all_minilm_l6_v2", sequence_length=192, doc_stride=64)

"""
## 3. Baselines, fine-tuning, scores

Three baselines on the same test questions: the most common answer of
the training set, the name after the first "said"/"replied"/"cried" of the
context, and the model before fine-tuning.
"""


def first_speaker(context):
    match = re.search(r"(?:said|replied|cried) ((?:(?:Mr|Mrs|Dr)\. |"
                      r"(?:Miss|Lady|Sir|Colonel|Captain) )?[A-Z][a-z]+)",
                      context)
    return match.group(1) if match else ""


names = [y["text"] for y in train_y]
majority = max(set(names), key=names.count)
baselines = {
    f"always {majority!r}": kzoo.squad_scores([majority] * len(golds),
                                              golds),
    "first speaker": kzoo.squad_scores(
        [first_speaker(c) for c in test_x[1]], golds),
    "untrained": kzoo.squad_scores(
        [a["text"] for a in qa.answer(*test_x)], golds),
}

start = time.time()
qa.compile(optimizer=keras.optimizers.AdamW(1e-4))
qa.fit(train_x, train_y, batch_size=16, epochs=1 if SMOKE else 2,
       verbose=0 if SMOKE else 2)
answers = qa.answer(*test_x)
scores = kzoo.squad_scores([a["text"] for a in answers], golds)
print(f"fine-tuned in {time.time() - start:.0f}s")
for name, result in baselines.items():
    print(f"baseline {name}: EM {result['exact_match']:.1f} "
          f"F1 {result['f1']:.1f}")
print(f"fine-tuned: EM {scores['exact_match']:.1f} F1 {scores['f1']:.1f}")
for row, answer in list(zip(test, answers))[:3]:
    print(f"  {row['question'][:60]} -> {answer['text']!r} "
          f"(gold {row['answers']['text'][0]!r})")

"""
## 4. Windows

A context longer than a row is cut into windows; each keeps the
character span of every context token, which is how an answer found in
any window comes back as characters of the original context.
"""

features = qa.preprocessor.features([example["question"]],
                                    [example["context"]])
windows = len(features["example_index"])
print(f"the first test context ({len(example['context'])} characters) "
      f"makes {windows} window(s) of {qa.preprocessor.sequence_length} "
      "tokens")
best = qa.answer([example["question"]], [example["context"]])[0]
print(f"best span: characters {best['start']}..{best['end']}: "
      f"{example['context'][best['start']:best['end']]!r}")
print(f"{keras.backend.backend()} done")
