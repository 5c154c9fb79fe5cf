"""kzoo.QuestionAnswerer: windows over long contexts with the character
span of every token, labels, the n-best span search, SQuAD's EM/F1, fit
on raw examples, presets; a real-data fine-tune (large)."""

import os

import numpy as np
import pytest

import kzoo
from kzoo.datasets import austen_questions
from kzoo.tasks.answer_spans import best_answers
from kzoo.core.arguments import ArgumentError
from kzoo.tasks.squad_metric import exact_match, f1, normalize_answer
from kzoo.core.token_offsets import token_offsets
from helpers import austen_text, check_task_preset, to_numpy
from text_testing import STAND_IN_PRESETS, tiny_backbone

BERT_PRESET = "bert_base_en_uncased"
CONTEXT = ("It is a truth universally acknowledged, that a single man in "
           "possession of a good fortune, must be in want of a wife. However "
           "little known the feelings or views of such a man may be on his "
           "first entering a neighbourhood, this truth is so well fixed in "
           "the minds of the surrounding families, that he is considered as "
           "the rightful property of some one or other of their daughters.")


def qa_preprocessor(preset=BERT_PRESET, **kwargs):
    kwargs = {"sequence_length": 32, "doc_stride": 8, **kwargs}
    return kzoo.QuestionAnswererPreprocessor.from_preset(preset, **kwargs)


def answer_at(context, text, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(text, start + 1)
    return {"text": text, "answer_start": start}


# ----------------------------------------------------------------------
# Character offsets, against transformers' fast tokenizers
# ----------------------------------------------------------------------
def _hf_fast(name, tmp_path):
    import shutil
    transformers = pytest.importorskip("transformers")
    stand_in = STAND_IN_PRESETS
    if name == "bert":
        from kzoo import presets
        folder = presets.resolve(BERT_PRESET).path
        return transformers.BertTokenizerFast(
            str(folder / "vocab.txt"), do_lower_case=True)
    if name == "roberta":
        folder = stand_in / "distil_roberta_base_en"
        return transformers.RobertaTokenizerFast(
            str(folder / "vocab.json"), str(folder / "merges.txt"))
    # SentencePiece families: transformers builds its fast tokenizer from
    # the model file alone (kzoo's tokenizer.json there is not theirs).
    files = {"xlm_roberta": ("xlm_roberta_base_multi",
                             "sentencepiece.bpe.model", "XLMRobertaTokenizer"),
             "albert": ("albert_base_en_uncased", "spiece.model",
                        "AlbertTokenizer")}
    folder, filename, cls = files[name]
    shutil.copy(stand_in / folder / filename, tmp_path)
    return getattr(transformers, cls).from_pretrained(str(tmp_path))


OFFSET_TOKENIZERS = {
    "bert": lambda: kzoo.BertTokenizer.from_preset(BERT_PRESET),
    "roberta": lambda: kzoo.RobertaTokenizer.from_preset(
        str(STAND_IN_PRESETS / "distil_roberta_base_en")),
    "xlm_roberta": lambda: kzoo.XLMRobertaTokenizer.from_preset(
        str(STAND_IN_PRESETS / "xlm_roberta_base_multi")),
    "albert": lambda: kzoo.AlbertTokenizer.from_preset(
        str(STAND_IN_PRESETS / "albert_base_en_uncased")),
}


@pytest.mark.once
@pytest.mark.parametrize("name", sorted(OFFSET_TOKENIZERS))
def test_offsets_match_transformers_fast_tokenizers(name, tmp_path):
    """Every token's character span equals transformers' offset_mapping on
    real text (newlines, accents, curly quotes, runs of spaces, CJK,
    emoji), and the ids are the same."""
    text = austen_text("pride_and_prejudice")[:2500] + (
        " Café naïve—“quoted”  double  spaces\tand a tab, 1,000.5 ½ 東京 "
        "emoji 😀 ok.")
    ids, offsets = token_offsets(OFFSET_TOKENIZERS[name](), text)
    encoded = _hf_fast(name, tmp_path)(text, add_special_tokens=False,
                                       return_offsets_mapping=True)
    assert ids == encoded["input_ids"]
    expected = np.asarray(encoded["offset_mapping"])
    wrong = np.flatnonzero((offsets != expected).any(axis=1))
    assert wrong.size == 0, [(int(i), offsets[i].tolist(),
                              expected[i].tolist()) for i in wrong[:5]]


# ----------------------------------------------------------------------
# Windows and labels
# ----------------------------------------------------------------------
@pytest.mark.once
def test_windows_cover_the_context_with_the_stride():
    preprocessor = qa_preprocessor()
    features = preprocessor.features(["Who is in want of a wife?"],
                                     [CONTEXT])
    offsets = features["offsets"]
    assert features["x"]["token_ids"].shape[1] == 32
    assert len(features["example_index"]) > 3  # several windows
    # Each window's context tokens, in order; consecutive windows start
    # doc_stride tokens apart and overlap; together they cover every token.
    _, all_offsets = token_offsets(preprocessor.tokenizer, CONTEXT)
    seen = []
    for row in offsets:
        spans = [tuple(s) for s in row if s[0] >= 0]
        first = next(i for i, s in enumerate(map(tuple, all_offsets))
                     if s == spans[0])
        seen.append(first)
        assert [tuple(s) for s in all_offsets[first:first + len(spans)]] \
            == spans
    assert np.all(np.diff(seen) == 8)
    assert seen[-1] + len([s for s in offsets[-1] if s[0] >= 0]) == \
        len(all_offsets)
    # [CLS] question [SEP] context [SEP] with segment ids 0 / 1.
    row = features["x"]
    tokenizer = preprocessor.tokenizer
    assert row["token_ids"][0, 0] == tokenizer.cls_token_id
    context_rows = offsets[0, :, 0] >= 0
    assert np.all(row["segment_ids"][0][context_rows] == 1)
    assert row["segment_ids"][0, 0] == 0


@pytest.mark.once
@pytest.mark.parametrize("preset", [
    BERT_PRESET, str(STAND_IN_PRESETS / "distil_roberta_base_en"),
    str(STAND_IN_PRESETS / "xlm_roberta_base_multi")])
def test_answer_near_a_window_edge_is_labelled_in_the_window_that_holds_it(
        preset):
    """Each window labels the answer only when it holds all of it; the
    label's tokens spell the answer's characters."""
    preprocessor = qa_preprocessor(preset, sequence_length=28,
                                   doc_stride=5)
    _, all_offsets = token_offsets(preprocessor.tokenizer, CONTEXT)
    for text in ("a good fortune", "surrounding families", "daughters"):
        answer = answer_at(CONTEXT, text)
        features = preprocessor.features(["Where?"], [CONTEXT], [answer])
        starts = features["y"]["start_logits"]
        ends = features["y"]["end_logits"]
        holding = []
        for row, (start, end) in enumerate(zip(starts, ends)):
            spans = features["offsets"][row]
            context = spans[spans[:, 0] >= 0]
            holds = context[0, 0] <= answer["answer_start"] and \
                context[-1, 1] >= answer["answer_start"] + len(text)
            if not holds:
                assert start == end == 0, (text, row)
                continue
            holding.append(row)
            assert 0 < start <= end
            assert CONTEXT[spans[start, 0]:spans[end, 1]] == text
        assert holding, text
    # An answer a window cuts in two is labelled only where it is whole.
    answer = answer_at(CONTEXT, "a good fortune")
    features = preprocessor.features(["?"], [CONTEXT], [answer])
    cut = [r for r, row in enumerate(features["offsets"])
           if 0 < np.sum((row[:, 0] >= answer["answer_start"]) &
                         (row[:, 1] <= answer["answer_start"] + 14) &
                         (row[:, 0] >= 0)) < 3]
    for row in cut:
        assert features["y"]["start_logits"][row] == 0


def test_layer_call_packs_the_first_window_in_tf_data():
    """Called as a layer (and mapped in tf.data) the preprocessor packs
    each example's first window: the rows `features` starts with."""
    import tensorflow as tf
    preprocessor = qa_preprocessor()
    questions = ["Who is in want of a wife?", "What is universally "
                 "acknowledged by everyone who lives in the neighbourhood?"]
    contexts = [CONTEXT, "A short context."]
    features = preprocessor.features(questions, contexts)
    firsts = [int(np.flatnonzero(features["example_index"] == i)[0])
              for i in range(2)]
    packed = to_numpy(preprocessor((questions, contexts)))
    dataset = tf.data.Dataset.from_tensor_slices(((questions, contexts),))
    in_graph = to_numpy(next(iter(dataset.batch(2).map(preprocessor))))
    for name in ("token_ids", "segment_ids", "padding_mask"):
        np.testing.assert_array_equal(packed[name],
                                      features["x"][name][firsts], name)
        np.testing.assert_array_equal(in_graph[name], packed[name], name)


@pytest.mark.once
def test_no_answer_and_bad_answers():
    preprocessor = qa_preprocessor()
    features = preprocessor.features(["Who?"], [CONTEXT], [None])
    assert not features["y"]["start_logits"].any()
    features = preprocessor.features(["Who?"], [CONTEXT],
                                     [{"text": [], "answer_start": []}])
    assert not features["y"]["end_logits"].any()
    with pytest.raises(ValueError, match="not at answer_start=3"):
        preprocessor.features(["Who?"], [CONTEXT],
                              [{"text": "truth", "answer_start": 3}])
    with pytest.raises(ValueError, match="equal numbers"):
        preprocessor.features(["Who?", "What?"], [CONTEXT])
    with pytest.raises(ValueError, match="too short.*sequence_length >= 3"):
        qa_preprocessor(sequence_length=2)
    with pytest.raises(ValueError, match="no room for context.*>= 4"):
        qa_preprocessor(sequence_length=3).features(["Who?"], [CONTEXT])
    # A long question is cut so that every window holds context.
    features = qa_preprocessor(sequence_length=6).features(
        ["Who is the single man in possession of a good fortune?"],
        [CONTEXT])
    assert (features["offsets"][:, :, 0] >= 0).any(axis=1).all()
    with pytest.raises(ValueError, match="doc_stride must be a positive"):
        qa_preprocessor(doc_stride=0)


# ----------------------------------------------------------------------
# Span search
# ----------------------------------------------------------------------
@pytest.mark.once
def test_best_answer_spans_across_windows_and_no_answer():
    preprocessor = qa_preprocessor(sequence_length=28, doc_stride=5)
    features = preprocessor.features(["Where?"], [CONTEXT])
    rows, length = features["x"]["token_ids"].shape
    starts = np.full((rows, length), -5.0)
    ends = np.full((rows, length), -5.0)
    # Aim at "surrounding families" in the last window that holds it.
    target = CONTEXT.index("surrounding families")
    row = max(r for r in range(rows)
              if (features["offsets"][r, :, 0] == target).any() and
              (features["offsets"][r, :, 1] == target + 20).any())
    s = int(np.flatnonzero(features["offsets"][row, :, 0] == target)[0])
    e = int(np.flatnonzero(features["offsets"][row, :, 1] == target + 20)[0])
    starts[row, s], ends[row, e] = 4.0, 3.0
    # A higher-scoring span that is too long, and one that ends before it
    # starts: neither may win.
    starts[0, 1] = ends[0, 1] = -9.0
    answers = best_answers(starts, ends, features, max_answer_length=4)
    assert answers[0]["text"] == "surrounding families"
    assert (answers[0]["start"], answers[0]["end"]) == (target, target + 20)
    assert answers[0]["score"] == pytest.approx(7.0)
    texts = [c["text"] for c in answers[0]["candidates"]]
    assert len(texts) == len(set(texts)) <= 20
    # [CLS] scores beat the span by 1.0 in every window: no answer with a
    # threshold below 1.0, the span above it.
    starts[:, 0], ends[:, 0] = 4.0, 4.0
    assert best_answers(starts, ends, features,
                        null_threshold=0.5)[0]["text"] == ""
    assert best_answers(starts, ends, features,
                        null_threshold=1.5)[0]["text"] == \
        "surrounding families"
    # A too-long span is never proposed.
    starts[:] = ends[:] = -5.0
    starts[row, s] = 5.0
    ends[row, s + 6] = 5.0
    short = best_answers(starts, ends, features, max_answer_length=3)[0]
    assert short["end"] - short["start"] < len(CONTEXT)
    tokens = sum(1 for span in features["offsets"][row]
                 if short["start"] <= span[0] and span[1] <= short["end"]
                 and span[1] > span[0])
    assert tokens <= 3


# ----------------------------------------------------------------------
# SQuAD EM/F1: the official script's rules, worked by hand
# ----------------------------------------------------------------------
@pytest.mark.once
def test_squad_normalisation_and_scores_hand_worked():
    # lower, drop punctuation, drop articles, collapse whitespace
    assert normalize_answer("The  Bennet family!") == "bennet family"
    assert normalize_answer("an Apple, a pear") == "apple pear"
    # punctuation goes before articles: "the-end" -> "theend" stays.
    assert normalize_answer("the-end") == "theend"
    assert normalize_answer("A") == ""
    assert exact_match("the Netherfield Park.", "Netherfield park") == 1.0
    assert exact_match("Netherfield", "Netherfield Park") == 0.0
    # F1 on token bags: pred "mr darcy of pemberley" (4) vs gold
    # "darcy" (1): precision 1/4, recall 1 -> 2*(.25*1)/(1.25) = 0.4.
    assert f1("Mr. Darcy of Pemberley", "Darcy") == pytest.approx(0.4)
    # Repeated tokens count once each: pred "a a b" -> ["b"] ("a" is an
    # article); gold "b b" -> overlap 1, P=1, R=1/2 -> 2/3.
    assert f1("a a b", "b b") == pytest.approx(2 / 3)
    # v2.0: an unanswerable question (gold "") scores 1 only for "".
    assert f1("", "") == 1.0 and exact_match("", "") == 1.0
    assert f1("Elizabeth", "") == 0.0
    assert f1("", "Elizabeth") == 0.0
    # Best over several gold answers; percentages.
    scores = kzoo.squad_scores(
        ["Mr. Darcy", "Jane", ""],
        [["Darcy", "Mr. Darcy"], ["Elizabeth"], []])
    assert scores["exact_match"] == pytest.approx(200 / 3)
    assert scores["f1"] == pytest.approx(200 / 3)
    with pytest.raises(ValueError, match="2 predictions for 1 questions"):
        kzoo.squad_scores(["a", "b"], [["a"]])


# ----------------------------------------------------------------------
# The task
# ----------------------------------------------------------------------
def tiny_qa(sequence_length=32, doc_stride=8):
    backbone = tiny_backbone(kzoo.BertBackbone)
    return kzoo.QuestionAnswerer(
        backbone, preprocessor=qa_preprocessor(
            sequence_length=sequence_length, doc_stride=doc_stride))


def small_dataset():
    questions, contexts, answers = [], [], []
    for text, question in (("a good fortune", "What does he possess?"),
                           ("a wife", "What is he in want of?"),
                           ("daughters", "Whose property is he?"),
                           ("neighbourhood", "What does he enter?")):
        questions.append(question)
        contexts.append(CONTEXT)
        answers.append(answer_at(CONTEXT, text))
    return (questions, contexts), answers


@pytest.mark.convergence
def test_fit_on_raw_examples_lowers_the_loss_and_answers():
    qa = tiny_qa()
    x, y = small_dataset()
    qa.compile(optimizer=__import__("keras").optimizers.Adam(3e-3))
    history = qa.fit(x, y, batch_size=8, epochs=12, verbose=0)
    losses = history.history["loss"]
    # Measured with scripts/measure_spread.py, torch, seeds 1-5:
    # last/first 0.236 +- 0.008 (0.5: > 30 sd).
    assert losses[-1] < 0.5 * losses[0], losses
    predictions = to_numpy(qa.predict(x, batch_size=8, verbose=0))
    windows = len(qa.preprocessor.features(*x)["example_index"])
    assert predictions["start_logits"].shape == (windows, 32)
    # Answers are spans of their contexts, as characters and as text.
    answers = qa.answer(*x, max_answer_length=5)
    assert len(answers) == 4
    for answer, context in zip(answers, x[1]):
        assert answer["text"] == context[answer["start"]:answer["end"]]
        assert answer["text"]


def test_preset_round_trip(tmp_path):
    qa = tiny_qa()
    loaded = check_task_preset(qa, tmp_path)
    assert loaded.preprocessor.doc_stride == 8
    assert loaded.preprocessor.sequence_length == 32
    x, _ = small_dataset()
    np.testing.assert_array_equal(
        to_numpy(loaded.predict(x, verbose=0))["start_logits"],
        to_numpy(qa.predict(x, verbose=0))["start_logits"])


# Other families than BERT: one backend's pass (docs/design.md, "Time
# budget").
@pytest.mark.once
@pytest.mark.parametrize("family", ["RobertaBackbone", "DistilBertBackbone",
                                    "DebertaV3Backbone"])
def test_other_families_fit_from_raw_examples(family):
    backbone_cls = getattr(kzoo, family)
    backbone = tiny_backbone(backbone_cls)
    from text_testing import preset_for
    qa = kzoo.QuestionAnswerer(
        backbone, preprocessor=qa_preprocessor(preset_for(backbone_cls)))
    x, y = small_dataset()
    history = qa.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert len(qa.answer(*x)) == 4


def test_bad_backbone_and_preprocessor():
    from gpt2_testing import tiny_backbone as tiny_gpt2
    # The families named are read off the registry: every encoder that
    # packs pairs, the newest included, and no decoder.
    with pytest.raises(ArgumentError, match="packs text as BERT does") as \
            refused:
        kzoo.QuestionAnswerer(tiny_gpt2(), preprocessor=None)
    named = str(refused.value).split("BERT does (")[1].split(")")[0]
    assert {"BertBackbone", "MobileBertBackbone", "RemBertBackbone",
            "DebertaV3Backbone"} <= set(named.split(", "))
    assert "GPT2Backbone" not in named and "BartBackbone" not in named
    roberta = tiny_backbone(kzoo.RobertaBackbone)
    with pytest.raises(ArgumentError, match="RobertaTokenizer"):
        kzoo.QuestionAnswerer(roberta, preprocessor=qa_preprocessor())
    qa = tiny_qa()
    with pytest.raises(ValueError, match=r"x = \(questions, contexts\)"):
        qa.fit(["only questions"], [None], verbose=0)


# ----------------------------------------------------------------------
# Real data: questions from the novels' dialogue (kzoo.datasets)
# ----------------------------------------------------------------------
TRAIN_NOVELS = ("pride_and_prejudice", "sense_and_sensibility",
                "mansfield_park", "emma")
TEST_NOVELS = ("northanger_abbey", "persuasion")


def _split(examples):
    def arrays(rows):
        return ((([r["question"] for r in rows], [r["context"] for r in rows])),
                [{"text": r["answers"]["text"][0],
                  "answer_start": r["answers"]["answer_start"][0]}
                 for r in rows])
    return arrays(examples)


@pytest.mark.once
def test_austen_questions_are_real_spans():
    examples = austen_questions()
    assert len(examples) > 800
    for example in examples:
        start = example["answers"]["answer_start"][0]
        text = example["answers"]["text"][0]
        assert example["context"][start:start + len(text)] == text
        assert example["question"].startswith(("Who said", "Who replied",
                                               "Who cried"))


def first_speaker_baseline(contexts):
    """The name after the context's first said/replied/cried."""
    import re
    found = []
    for context in contexts:
        match = re.search(r"(?:said|replied|cried) ((?:(?:Mr|Mrs|Dr)\. |"
                          r"(?:Miss|Lady|Sir|Colonel|Captain) )?[A-Z][a-z]+)",
                          context)
        found.append(match.group(1) if match else "")
    return found


@pytest.mark.large
def test_minilm_fine_tuned_on_austen_questions_beats_the_baselines():
    """all-MiniLM-L6-v2 (real weights) fine-tuned on the dialogue
    questions of four novels, scored on two other novels (other
    characters: names cannot be memorised). Baselines, on the same test
    questions: the training set's most common answer and the same model
    untrained (the fine-tuned model must beat both by 20 points), and a
    rule written for this template, the name after the context's first
    said/replied/cried (EM 73.1, F1 81.1 here; it must be beaten).

    KZOO_QA_TRAIN_EXAMPLES (480), KZOO_QA_SEQUENCE_LENGTH (192) and
    KZOO_QA_EPOCHS (2) shrink the run for a slow machine."""
    import keras
    train = austen_questions(TRAIN_NOVELS)
    np.random.default_rng(0).shuffle(train)
    # A sample keeps the CPU run to minutes; every test question is used.
    train = train[:int(os.environ.get("KZOO_QA_TRAIN_EXAMPLES", 480))]
    test = austen_questions(TEST_NOVELS)
    (train_x, train_y), (test_x, _) = _split(train), _split(test)
    golds = [e["answers"]["text"] for e in test]
    length = int(os.environ.get("KZOO_QA_SEQUENCE_LENGTH", 192))
    qa = kzoo.QuestionAnswerer.from_preset(
        "all_minilm_l6_v2", sequence_length=length, doc_stride=length // 3)
    untrained = kzoo.squad_scores(
        [a["text"] for a in qa.answer(*test_x)], golds)
    names = [y["text"] for y in train_y]
    majority = max(set(names), key=names.count)
    baselines = {
        "majority": kzoo.squad_scores([majority] * len(golds), golds),
        "untrained": untrained,
        "first speaker": kzoo.squad_scores(
            first_speaker_baseline(test_x[1]), golds),
    }
    margins = {"majority": 20, "untrained": 20, "first speaker": 0}
    qa.compile(optimizer=keras.optimizers.AdamW(1e-4))
    qa.fit(train_x, train_y, batch_size=16, verbose=2,
           epochs=int(os.environ.get("KZOO_QA_EPOCHS", 2)))
    scores = kzoo.squad_scores(
        [a["text"] for a in qa.answer(*test_x)], golds)
    print(f"fine-tuned {scores}; baselines {baselines}")
    for name, baseline in baselines.items():
        for metric in ("exact_match", "f1"):
            assert scores[metric] > baseline[metric] + margins[name], \
                (name, metric, scores, baseline)
