"""The sequence objectives streamed from a prepared corpus
(kzoo/pretraining/streams/sequence_*.py): T5's span corruption, BART's
denoising, GPT-2's causal LM, ELMo's biLM and the AWD-LSTM LM. Each test
corpus is real text (the Austen excerpt) tokenized with the family's real
tokenizer (the stand-in presets), written as two shards."""

import re
import shutil

import numpy as np
import pytest

import kzoo
import kzoo.pretraining.streams  # noqa: F401  (registers the objectives)
from helpers import austen_paragraphs
from kzoo.corpus import Corpus
from kzoo.corpus.shards import SHARDS_FOLDER, write_manifest, write_shard
from kzoo.pretraining.objectives import OBJECTIVES, find_objective
from kzoo.pretraining.streams.base import CorpusWalk
from kzoo.pretraining.streams.sequence_bptt import window_length
from text_testing import STAND_IN_PRESETS

# objective -> (family, stand-in preset, tokenizer class, small length)
CASES = {
    "span_corruption": ("t5", "t5_small_multi", kzoo.T5Tokenizer, 32),
    "denoising": ("bart", "bart_base_en", kzoo.BartTokenizer, 32),
    "causal_lm": ("gpt2", "gpt2_base_en", kzoo.GPT2Tokenizer, 16),
    "bilm": ("elmo", "elmo_small_en", kzoo.ElmoTokenizer, 8),
    "lm": ("awd_lstm", "awd_lstm_wt103_en", kzoo.AwdLstmTokenizer, 24),
}
# The AWD-LSTM stream's small windows: mean 10, width 24.
SMALL_OPTIONS = {"lm": {"bptt": 10}}
PARAGRAPHS = 50


def _preset_dir(name):
    stand_in = STAND_IN_PRESETS / name
    return stand_in if stand_in.is_dir() else kzoo.presets.resolve(
        name).path


def _sentences(paragraph):
    return [s for s in re.split(r"(?<=[.!?])\s+", paragraph) if s]


def _write_corpus(folder, preset):
    """The excerpt's first paragraphs as documents of sentences, tokenized
    by the preset's tokenizer, in two shards; the tokenizer folder is a
    copy of the preset's."""
    tokenizer_cls = next(c for c in CASES.values() if c[1] == preset)[2]
    tokenizer = tokenizer_cls.from_preset(str(_preset_dir(preset)))
    documents = []
    for paragraph in austen_paragraphs("pride_and_prejudice")[:PARAGRAPHS]:
        sentences = _sentences(paragraph)
        documents.append([np.asarray(ids, np.int64)
                          for ids in tokenizer(sentences)])
    half = len(documents) // 2
    dtype = np.uint16 if tokenizer.vocabulary_size <= 1 << 16 else np.uint32
    shards = [write_shard(folder / SHARDS_FOLDER, name, part, dtype)
              for name, part in (("a", documents[:half]),
                                 ("b", documents[half:]))]
    shutil.copytree(_preset_dir(preset), folder / "tokenizer")
    write_manifest(folder, {"shards": shards, "tokenizer": {"sha256": "x"}})
    return Corpus(folder)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    made = {}

    def corpus(objective):
        if objective not in made:
            made[objective] = _write_corpus(
                tmp_path_factory.mktemp(objective), CASES[objective][1])
        return made[objective]
    return corpus


def _tiny_task(objective, corpus, preprocessor=None):
    """A tiny random task of the objective's family (without a
    preprocessor unless given)."""
    if objective == "span_corruption":
        from t5_testing import make_tiny_t5
        return kzoo.T5Seq2SeqLM(make_tiny_t5(), preprocessor=preprocessor)
    if objective == "denoising":
        from bart_testing import make_tiny_bart
        return kzoo.BartDenoisingLM(make_tiny_bart(),
                                    preprocessor=preprocessor)
    if objective == "causal_lm":
        from gpt2_testing import tiny_backbone
        return kzoo.GPT2CausalLM(tiny_backbone(vocabulary_size=50257),
                                 preprocessor=preprocessor)
    if objective == "bilm":
        from elmo_testing import TINY_ELMO
        vocabulary = kzoo.ElmoTokenizer.from_preset(
            str(corpus.tokenizer_folder)).vocabulary_size
        return kzoo.ElmoLanguageModel(kzoo.ElmoBackbone(**TINY_ELMO),
                                      vocabulary_size=vocabulary,
                                      preprocessor=preprocessor)
    from awd_lstm_testing import TINY
    return kzoo.AwdLstmLanguageModel(kzoo.AwdLstmBackbone(
        **dict(TINY, vocabulary_size=1000)), preprocessor=preprocessor)


def _stream(objective, corpus, task=None, batch_size=4, seed=0, length=None,
            **kwargs):
    family = CASES[objective][0]
    found = find_objective(family)
    assert found.name == objective  # each is its family's default
    options = {**found.options, **SMALL_OPTIONS.get(objective, {})}
    task = task or _tiny_task(objective, corpus)
    return found.make_stream(task, corpus, batch_size, seed=seed,
                             sequence_length=length or CASES[objective][3],
                             **options, **kwargs)


def _batches(stream, steps, start=0):
    return [stream.batch(step) for step in range(start, start + steps)]


def _flat(batch):
    """`(x, y, sample_weight)` -> {name: array}."""
    out = {}

    def add(prefix, value):
        if isinstance(value, dict):
            for key, v in value.items():
                add(f"{prefix}.{key}", v)
        elif value is not None:
            out[prefix] = np.asarray(value)
    for name, part in zip(("x", "y", "sample_weight"), batch):
        add(name, part)
    return out


def _assert_same(got, want):
    got, want = _flat(got), _flat(want)
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def _in_memory(objective, corpus, length):
    """The batch the family's in-memory preprocessor gives for two texts
    of the corpus' tokenizer."""
    folder = str(corpus.tokenizer_folder)
    texts = austen_paragraphs("pride_and_prejudice")[:2]
    if objective == "span_corruption":
        from kzoo.preprocessing.span_corruption import span_corruption_lengths
        preprocessor = kzoo.T5Preprocessor(
            kzoo.T5Tokenizer.from_preset(folder), sequence_length=length,
            target_length=span_corruption_lengths(length)[1])
        return preprocessor((texts, texts))
    if objective == "denoising":
        return kzoo.BartDenoisingPreprocessor(
            kzoo.BartTokenizer.from_preset(folder),
            sequence_length=length, seed=0)(texts)
    if objective == "causal_lm":
        return kzoo.GPT2CausalLMPreprocessor(
            kzoo.GPT2Tokenizer.from_preset(folder),
            sequence_length=length)(texts)
    if objective == "bilm":
        return kzoo.ElmoLanguageModelPreprocessor(
            kzoo.ElmoTokenizer.from_preset(folder),
            sequence_length=length)(texts)
    return kzoo.AwdLstmLanguageModelPreprocessor(
        kzoo.AwdLstmTokenizer.from_preset(folder),
        sequence_length=length)(texts)


# --- (a) the batches are the in-memory objective's; a step trains ---------

@pytest.mark.parametrize("objective", list(CASES))
def test_batches_are_the_preprocessors_and_train(objective, corpora):
    import keras
    corpus = corpora(objective)
    task = _tiny_task(objective, corpus)
    stream = _stream(objective, corpus, task=task)
    batch = stream.batch(0)
    width = stream.sequence_length if objective == "lm" else \
        CASES[objective][3]
    want = _flat(_in_memory(objective, corpus, width))
    got = _flat(batch)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key].shape[1:] == want[key].shape[1:], key
        assert got[key].shape[0] == 4, key
        assert np.issubdtype(got[key].dtype, np.integer) == \
            np.issubdtype(want[key].dtype, np.integer), key
    task.compile(optimizer=keras.optimizers.Adam(1e-3))
    logs = task.train_on_batch(*batch, return_dict=True)
    assert np.isfinite(logs["loss"])


# --- (b) each objective's construction rule --------------------------------

def _walk_stream(corpus, seed, before=(), after=(), documents=None):
    """The corpus' ids in the streams' walk order (seed), each document
    framed by `before` / `after`."""
    walk = CorpusWalk(corpus, seed)
    ids = []
    for _ in range(documents or corpus.num_documents):
        document, _ = walk.next_document()
        ids.extend(before)
        ids.extend(corpus.document_tokens(document).tolist())
        ids.extend(after)
    return ids


def _undo(inputs, targets, sentinels):
    """A span-corrupted chunk back from its input and target."""
    noise, current = {}, None
    for token in targets:
        if token in sentinels:
            current = noise.setdefault(token, [])
        elif current is not None:
            current.append(token)
    text = []
    for token in inputs:
        text.extend(noise[token] if token in sentinels else [token])
    return text


@pytest.mark.once
def test_span_corruption_cuts_568_tokens_into_512_and_114(corpora):
    corpus = corpora("span_corruption")
    stream = _stream("span_corruption", corpus, batch_size=2, seed=5,
                     length=512)
    stream.order_examples = False  # the construction's order
    assert (stream.tokens_length, stream.targets_length) == (568, 114)
    tokenizer = stream.preprocessor.tokenizer
    end = tokenizer.end_token_id
    sentinels = set(stream.sentinel_ids.tolist())
    ids = _walk_stream(corpus, 5, after=[end])
    assert len(ids) > 4 * 568
    for step in range(2):
        x, labels, weights = stream.batch(step)
        assert x["encoder_token_ids"].shape == (2, 512)
        assert labels.shape == (2, 114)
        assert x["encoder_padding_mask"].all()      # exactly 512 inputs
        assert (weights.sum(axis=1) == 114).all()   # and 114 targets
        assert (x["encoder_token_ids"][:, -1] == end).all()
        np.testing.assert_array_equal(x["decoder_token_ids"][:, 1:],
                                      labels[:, :-1])
        for row in range(2):
            chunk = _undo(x["encoder_token_ids"][row, :-1].tolist(),
                          labels[row, :-1].tolist(), sentinels)
            k = 2 * step + row
            assert chunk == ids[k * 568:(k + 1) * 568]


@pytest.mark.once
def test_causal_lm_blocks_tile_the_stream(corpora):
    corpus = corpora("causal_lm")
    stream = _stream("causal_lm", corpus, batch_size=3, seed=2)
    stream.order_examples = False  # the construction's order
    end = kzoo.GPT2Tokenizer.from_preset(
        str(corpus.tokenizer_folder)).end_token_id
    ids = _walk_stream(corpus, 2, after=[end])
    length = stream.sequence_length
    for step in range(3):
        x, y, weights = stream.batch(step)
        np.testing.assert_array_equal(x["token_ids"][:, 1:], y[:, :-1])
        assert x["padding_mask"].all() and weights.all()
        for row in range(3):
            k = 3 * step + row
            block = x["token_ids"][row].tolist() + [int(y[row, -1])]
            assert block == ids[k * length:k * length + length + 1]


@pytest.mark.once
def test_bptt_windows_tile_each_row(corpora):
    corpus = corpora("lm")
    tokenizer = kzoo.AwdLstmTokenizer.from_preset(str(corpus.tokenizer_folder))
    bos = tokenizer.bos_token_id
    stream = _stream("lm", corpus, batch_size=3, seed=4)
    documents = {tuple(corpus.document_tokens(d).tolist())
                 for d in range(corpus.num_documents)}
    rows = [[] for _ in range(3)]
    for step in range(12):
        x, y, weights = stream.batch(step)
        # Drawn by the batch's first example, from its own generator.
        rng = np.random.default_rng([4, 1, 3 * step])
        length = window_length(rng, 10, stream.sequence_length)
        assert (x["padding_mask"].sum(axis=1) == length).all()
        np.testing.assert_array_equal(weights, x["padding_mask"])
        np.testing.assert_array_equal(x["token_ids"][:, 1:length],
                                      y[:, :length - 1])
        for row in range(3):
            window = x["token_ids"][row, :length].tolist()
            if rows[row]:  # starts at the last id of the row's last window
                assert rows[row][-1] == window[0]
                window = window[1:]
            rows[row].extend(window + [int(y[row, length - 1])])
    for row in rows:
        assert row[0] == bos
        # Between two xxbos: a whole document of the corpus.
        starts = [i for i, t in enumerate(row) if t == bos] + [len(row)]
        for a, b in zip(starts[:-2], starts[1:-1]):
            assert tuple(row[a + 1:b]) in documents
    assert len({tuple(r[:20]) for r in rows}) == 3  # three stretches


@pytest.mark.once
def test_denoising_blocks_are_whole_sentences_of_one_document(corpora):
    corpus = corpora("denoising")
    stream = _stream("denoising", corpus, batch_size=4, seed=1, length=48)
    tokenizer = stream.preprocessor.tokenizer
    mask = tokenizer.mask_token_id
    sentences = [[s.tolist() for s in corpus.document(d)]
                 for d in range(corpus.num_documents)]
    room = 48 - 2
    kinds = set()
    for step in range(6):
        x, labels, weights = stream.batch(step)
        for row in range(4):
            target = labels[row][weights[row] == 1].tolist()
            assert target[0] == tokenizer.token_to_id("<s>")
            assert target[-1] == tokenizer.end_token_id
            block = target[1:-1]
            assert x["decoder_token_ids"][row, 0] == 2  # </s> starts
            kind = next(filter(None, (_block_kind(block, doc, room)
                                      for doc in sentences)), None)
            assert kind is not None, block
            kinds.add(kind)
            # The noised input: tokens of the block, and masks.
            encoder = x["encoder_token_ids"][row][
                x["encoder_padding_mask"][row] == 1].tolist()
            assert mask in encoder
            assert set(encoder[1:-1]) - {mask} <= set(block)
    assert kinds == {"one", "several", "cut"}


def _block_kind(block, doc, room):
    """How `block` is cut from `doc` (a list of sentences): "one" or
    "several" whole sentences (the first may be the rest of a sentence
    longer than a block), "cut" a piece of such a sentence; None if it
    is none of these."""
    for i, sentence in enumerate(doc):
        for k in range(0, max(len(sentence), 1), room):
            if len(sentence) - k > room and sentence[k:k + room] == block:
                return "cut"
            run = sentence[k:]
            for j in range(i, len(doc)):
                if j > i:
                    run = run + doc[j]
                if run == block:
                    return "several" if j > i else "one"
                if len(run) > room:
                    break
    return None


@pytest.mark.once
def test_bilm_targets_stay_inside_sentences(corpora):
    corpus = corpora("bilm")
    stream = _stream("bilm", corpus, batch_size=2, seed=3)
    stream.order_examples = False  # the construction's order
    tokenizer = stream.tokenizer
    bos, eos = tokenizer.token_to_id("<S>"), tokenizer.token_to_id("</S>")
    # The framed sentences in the walk's order.
    walk, ids = CorpusWalk(corpus, 3), []
    while len(ids) < 200:
        sentence = walk.next_sentence()[0]
        ids.extend([bos] + sentence.tolist() + [eos])
    length = stream.sequence_length
    for step in range(8):
        x, y, weights = stream.batch(step)
        chars = x["character_ids"]
        assert chars.shape == (2, length, 50)
        for row in range(2):
            k = 2 * step + row
            window = ids[k * length:(k + 1) * length]
            # <S> and </S> are spelled as the original spells them.
            is_bos = np.array(window) == bos
            assert (chars[row][is_bos][:, 1] == 257).all()
            for p in range(length):
                at = k * length + p
                assert weights["forward"][row, p] == (ids[at] != eos)
                assert weights["backward"][row, p] == (ids[at] != bos)
                if ids[at] != eos:
                    assert y["forward"][row, p] == ids[at + 1]
                if ids[at] != bos:
                    assert y["backward"][row, p] == ids[at - 1]


# --- (c) resume, (d) processes ---------------------------------------------

@pytest.mark.once
@pytest.mark.parametrize("objective", list(CASES))
def test_draws_are_fresh_and_a_restored_state_repeats_them(objective,
                                                           corpora):
    corpus = corpora(objective)
    task = _tiny_task(objective, corpus)
    whole = _batches(_stream(objective, corpus, task=task, seed=7), 6)
    first = _stream(objective, corpus, task=task, seed=7)
    _batches(first, 5)
    resumed = _stream(objective, corpus, task=task, seed=7)
    resumed.restore(first.state_before(3))
    for got, want in zip(_batches(resumed, 3, start=3), whole[3:]):
        _assert_same(got, want)
    if objective in ("span_corruption", "denoising"):
        # The same examples noised with two steps' seeds differ.
        stream = _stream(objective, corpus, task=task, seed=7)
        examples = [stream.next_example() for _ in range(4)]
        a = _flat(stream.finish(examples, stream.draw_seed(0, 0)))
        b = _flat(stream.finish(examples, stream.draw_seed(1, 0)))
        assert not np.array_equal(a["x.encoder_token_ids"],
                                  b["x.encoder_token_ids"])
    if objective == "lm":  # window lengths vary between steps
        lengths = {int(b[0]["padding_mask"][0].sum()) for b in whole}
        assert len(lengths) > 1


@pytest.mark.once
@pytest.mark.parametrize("objective", list(CASES))
def test_two_processes_split_the_single_stream(objective, corpora):
    corpus = corpora(objective)
    task = _tiny_task(objective, corpus)
    single = _batches(_stream(objective, corpus, task=task, seed=2,
                              draw_groups=2), 3)
    parts = [_batches(_stream(objective, corpus, task=task, seed=2,
                              process_index=rank, process_count=2), 3)
             for rank in range(2)]
    for step, want in enumerate(single):
        got = [_flat(part[step]) for part in parts]
        for key, value in _flat(want).items():
            np.testing.assert_array_equal(
                np.concatenate([got[0][key], got[1][key]]), value,
                err_msg=key)


@pytest.mark.once
def test_objectives_are_registered_as_family_defaults():
    for objective, (family, *_) in CASES.items():
        assert find_objective(family) is OBJECTIVES[objective]


@pytest.mark.once
# T5's task is found as BART's is (a Seq2SeqLM of the family).
@pytest.mark.parametrize("objective", ["denoising", "causal_lm", "bilm",
                                       "lm"])
def test_make_task_loads_a_preset_without_preprocessor(objective, corpora,
                                                       tmp_path):
    from helpers import assert_weights_identical
    corpus = corpora(objective)
    preprocessor_cls = type(_tiny_task(objective, corpus)).preprocessor_cls
    tiny = _tiny_task(objective, corpus, preprocessor_cls.from_preset(
        str(corpus.tokenizer_folder), sequence_length=CASES[objective][3]))
    tiny.save_to_preset(tmp_path / "preset")
    found = OBJECTIVES[objective]
    task = found.make_task(str(tmp_path / "preset"), load_weights=True,
                           sequence_length=None, **found.options)
    assert type(task) is type(tiny) and task.preprocessor is None
    assert_weights_identical(task, tiny)
    random = found.make_task(str(tmp_path / "preset"), load_weights=False,
                             sequence_length=None, **found.options)
    assert type(random) is type(tiny)
