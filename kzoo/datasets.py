"""Real text bundled with kzoo: Jane Austen's six novels (public domain).

Used by `kzoo demo`, the guides and the tests, offline. See
`kzoo/data/austen/README.md` for provenance.
"""

import re
from pathlib import Path

import numpy as np

AUSTEN_DIR = Path(__file__).parent / "data" / "austen"
AUSTEN_NOVELS = (
    "sense_and_sensibility", "pride_and_prejudice", "mansfield_park",
    "emma", "northanger_abbey", "persuasion",
)

_HEADING = re.compile(r"^(CHAPTER|VOLUME|Chapter)\b|^[A-Z .,]+$")


def austen_text(novel):
    """The full text of one novel.

    Example:
    ```python
    from kzoo import datasets
    text = datasets.austen_text("pride_and_prejudice")
    assert "It is a truth universally acknowledged" in text
    ```
    """
    if novel not in AUSTEN_NOVELS:
        raise ValueError(f"Unknown novel {novel!r}; choose from {AUSTEN_NOVELS}.")
    return (AUSTEN_DIR / f"{novel}.txt").read_text(encoding="utf-8")


def austen_paragraphs(novel, min_words=8):
    """Paragraphs of prose (headings and short lines dropped), each on one
    line, Gutenberg `_italics_` markers removed.

    Example:
    ```python
    from kzoo import datasets
    paragraphs = datasets.austen_paragraphs("emma")
    assert all(len(p.split()) >= 8 for p in paragraphs)
    ```
    """
    paragraphs = []
    for block in re.split(r"\n\s*\n", austen_text(novel)):
        text = " ".join(block.split()).replace("_", "")
        if not text or _HEADING.match(text):
            continue
        if len(text.split()) >= min_words:
            paragraphs.append(text)
    return paragraphs


def austen_passages(novel, words=48):
    """The novel's prose cut into consecutive passages of `words` words.

    Example:
    ```python
    from kzoo import datasets
    passages = datasets.austen_passages("persuasion", words=32)
    assert {len(p.split()) for p in passages} == {32}
    ```
    """
    tokens = " ".join(austen_paragraphs(novel)).split()
    return [" ".join(tokens[i:i + words])
            for i in range(0, len(tokens) - words + 1, words)]


def austen_authorship(novels=("pride_and_prejudice", "emma",
                              "sense_and_sensibility"),
                      words=48, per_novel=None, test_fraction=0.2, seed=0):
    """A labelled task: which novel does a passage come from?

    Returns `((train_texts, train_labels), (test_texts, test_labels),
    class_names)`. Passages are shuffled with `seed`; `per_novel` caps how
    many passages each novel contributes (None: all).

    Example:
    ```python
    from kzoo import datasets
    (train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
        per_novel=50)
    assert len(train_x) + len(test_x) == 150 and len(names) == 3
    ```
    """
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for label, novel in enumerate(novels):
        passages = austen_passages(novel, words)
        rng.shuffle(passages)
        passages = passages[:per_novel] if per_novel else passages
        texts += passages
        labels += [label] * len(passages)
    order = rng.permutation(len(texts))
    texts = [texts[i] for i in order]
    labels = np.asarray(labels, "int32")[order]
    split = int(len(texts) * (1 - test_fraction))
    return ((texts[:split], labels[:split]), (texts[split:], labels[split:]),
            list(novels))


def austen_word_order(novels=("northanger_abbey", "persuasion"), words=48,
                       scrambled_words=24, per_novel=None, test_fraction=0.2,
                       seed=0):
    """A labelled task: is a passage as the author wrote it (1), or has a
    stretch of `scrambled_words` consecutive words been shuffled (0)?

    Both classes hold the same words, so no bag of words can tell them
    apart: the task needs word order, what a language model learns from
    raw text (as CoLA's acceptability judgements do in GLUE). Each
    passage appears once, in one form; the shuffled stretch starts at a
    random word and moves at least half of its words. Half of each split
    (rounded down) is shuffled. Passages are drawn as
    `austen_authorship` draws them (the same `seed`, `per_novel` and
    split), so the same texts serve both tasks.

    Returns `((train_texts, train_labels), (test_texts, test_labels))`.

    Example:
    ```python
    from kzoo import datasets
    (train_x, train_y), (test_x, test_y) = datasets.austen_word_order(
        per_novel=50)
    assert len(train_x) + len(test_x) == 100 and train_y.mean() == 0.5
    original = next(x for x, y in zip(train_x, train_y) if y == 0)
    assert sorted(original.split()) != original.split()  # shuffled order
    ```
    """
    if not 2 <= scrambled_words <= words:
        raise ValueError(
            f"austen_word_order: scrambled_words={scrambled_words} must be "
            f"between 2 and words={words} (the passage's length).")
    (train_x, _), (test_x, _), _ = austen_authorship(
        novels, words=words, per_novel=per_novel,
        test_fraction=test_fraction, seed=seed)
    rng = np.random.default_rng([seed, 1])

    def label(texts):
        labels = np.ones(len(texts), "int32")
        labels[rng.permutation(len(texts))[:len(texts) // 2]] = 0
        return [text if keep else _scramble_stretch(text, scrambled_words, rng)
                for text, keep in zip(texts, labels)], labels

    return label(train_x), label(test_x)


def _scramble_stretch(text, length, rng):
    """`text` with `length` consecutive words, from a random start,
    shuffled so that at least half of them move."""
    words = text.split()
    start = int(rng.integers(0, len(words) - length + 1))
    while True:
        order = rng.permutation(length)
        if np.sum(order != np.arange(length)) >= length / 2:
            break
    stretch = words[start:start + length]
    words[start:start + length] = [stretch[i] for i in order]
    return " ".join(words)


def austen_speech(novels=("pride_and_prejudice",), words=16,
                  per_class=None, test_per_class=200, seed=0):
    """A labelled task: is a paragraph's opening speech or narration?

    Each prose paragraph's first `words` words, labelled 1 (speech: they
    hold a quotation mark) or 0 (narration), with the quotation marks
    taken out: a model must tell from the words ("I", "you", "said",
    questions), not from the marks. Each class is shuffled with `seed`;
    the last `test_per_class` of each are held out, and `per_class` caps
    the training examples per class (None: all the rest). Both splits
    alternate speech and narration, so they are balanced (majority
    baseline 0.50).

    Returns `((train_texts, train_labels), (test_texts, test_labels))`.

    Example:
    ```python
    from kzoo import datasets
    (train_x, train_y), (test_x, test_y) = datasets.austen_speech(
        per_class=40)
    assert len(train_x) == 80 and len(test_x) == 400
    assert train_y.mean() == 0.5 and '"' not in "".join(train_x)
    ```
    """
    speech, narration = [], []
    for novel in novels:
        for paragraph in austen_paragraphs(novel):
            text = " ".join(paragraph.split()[:words])
            (speech if '"' in text else narration).append(
                " ".join(text.replace('"', "").split()))
    rng = np.random.default_rng(seed)
    rng.shuffle(speech)
    rng.shuffle(narration)
    held = test_per_class
    count = min(len(speech), len(narration)) - held
    if count <= 0:
        raise ValueError(
            f"austen_speech: {novels} have {len(speech)} speech and "
            f"{len(narration)} narration paragraphs, too few to hold out "
            f"test_per_class={held} of each; ask for fewer.")
    count = min(count, per_class) if per_class else count

    def interleave(a, b):
        return [t for pair in zip(a, b) for t in pair]

    train = interleave(speech[:count], narration[:count])
    test = interleave(speech[-held:], narration[-held:])
    return ((train, np.tile(np.asarray([1, 0], "int32"), count)),
            (test, np.tile(np.asarray([1, 0], "int32"), held)))


# Reported speech with its speaker: "<words>," said Elizabeth. The
# speaker is a name, optionally with a title, one or two capitalised words.
_SPEECH = re.compile(
    r'"(?P<quote>[^"]{12,300}?)[,!?]" (?P<verb>said|replied|cried) '
    r'(?P<speaker>(?:(?:Mr|Mrs|Dr)\. |(?:Miss|Lady|Sir|Colonel|Captain) )?'
    r'[A-Z][a-z]+(?: [A-Z][a-z]+)?)')
# Capitalised words that follow "said X" without being part of a name.
_NOT_NAMES = {"The", "She", "He", "It", "In", "But", "And", "I", "You", "We",
              "They", "This", "That", "There", "Then", "Her", "His"}


def austen_questions(novels=AUSTEN_NOVELS, context_paragraphs=1):
    """Extractive questions with real answers, from the novels' dialogue.

    Every line of reported speech of the form `"<words>," said <Name>`
    (also `replied`, `cried`; `!`/`?` for the comma) gives one question,
    `Who said "<words>"?`, whose answer is the speaker's name as it stands
    in the context, e.g. `Who said "No more have I"?` -> `Mr. Bennet`.
    The context is the paragraph holding the speech with
    `context_paragraphs` paragraphs on either side (other speakers'
    names included), so the answer must be found by where it stands, not
    guessed. A second word of the name is kept only when capitalised and
    not a pronoun or article ("Elizabeth. She" -> "Elizabeth").

    Returns a list of dicts in SQuAD's layout: `novel`, `question`,
    `context`, `answers` (`{"text": [name], "answer_start": [offset]}`).

    Example:
    ```python
    from kzoo import datasets
    row = datasets.austen_questions(novels=["persuasion"])[0]
    start = row["answers"]["answer_start"][0]
    name = row["answers"]["text"][0]
    assert row["context"][start:start + len(name)] == name
    ```
    """
    examples = []
    for novel in novels:
        paragraphs = austen_paragraphs(novel, min_words=1)
        for index, paragraph in enumerate(paragraphs):
            for match in _SPEECH.finditer(paragraph):
                speaker = match.group("speaker")
                words = speaker.split(" ")
                if words[-1] in _NOT_NAMES:
                    speaker = " ".join(words[:-1])
                if speaker in _NOT_NAMES or not speaker:
                    continue
                before = paragraphs[max(0, index - context_paragraphs):index]
                after = paragraphs[index + 1:index + 1 + context_paragraphs]
                prefix = " ".join(before + [""])
                context = prefix + " ".join([paragraph] + after)
                start = len(prefix) + match.start("speaker")
                assert context[start:start + len(speaker)] == speaker
                verb = match.group("verb")
                examples.append({
                    "novel": novel,
                    "question": f'Who {verb} "{match.group("quote")}"?',
                    "context": context,
                    "answers": {"text": [speaker], "answer_start": [start]},
                })
    return examples

# ----------------------------------------------------------------------
# Named entities in Pride and Prejudice (token classification)
# ----------------------------------------------------------------------
# How the set is made (a rule, not hand labels): the novel's paragraphs
# are split into words (runs of letters, digits and apostrophes, or one
# punctuation mark) and into sentences (ending at ".", "!" or "?"). A
# word is a person (PER) or a place (LOC) when it, less a possessive
# "'s", is in the fixed lists below: the novel's characters' given names
# and surnames, and the places the story names. A run of adjacent person
# words is one entity ("William Lucas", "Catherine de Bourgh": B-PER
# I-PER ...); titles (Mr, Mrs, Miss, Lady, Sir, Colonel, ...) are not
# part of it, so "Mr. Darcy" is O B-PER. Multi-word places ("Gracechurch
# Street") are one LOC entity. Known limits of the rule: a listed name
# used as something else (the month of "May" is not listed; "Kent" is
# always the county, which it is in this novel; names that are also
# common words, Long, Hill, King, are left out) and unlisted minor
# characters are tagged O. A title's full stop ("Mrs.") ends no sentence.
_PERSONS = frozenset("""
Elizabeth Lizzy Eliza Jane Lydia Kitty Catherine Mary Bennet Bennets
Darcy Bingley Bingleys Wickham Collins Charlotte Lucas Lucases Maria
Gardiner Gardiners Phillips Fitzwilliam Georgiana Caroline Hurst Louisa
Anne Bourgh Denny Forster Jenkinson Reynolds William Chamberlayne
Pratt Younge Carter Harriet Nicholls
""".split())
_PERSON_PARTICLES = frozenset({"de"})  # "de Bourgh", inside a person run
_PLACES = frozenset("""
Longbourn Netherfield Meryton Pemberley Rosings Hunsford London Brighton
Derbyshire Hertfordshire Kent Lambton Bath Scotland Oxford Ramsgate
Newcastle Cheapside Epsom Barnet Clapham Bromley Hatfield Scarborough
Haggerston Matlock Chatsworth Dovedale Blenheim Warwick Kenilworth
Birmingham Westerham Stoke Ashworth Gretna Lakes Liverpool Cambridge
England Ireland Oakham Purvis
""".split())
_PLACE_SUFFIXES = frozenset({"Street", "Lodge", "Park", "Green", "Mount"})
_WORD = re.compile(r"[A-Za-z0-9']+|[^\sA-Za-z0-9']")


def _entity_tags(words):
    """Tags of one sentence's words by the lists above (see the comment
    there)."""
    tags = []
    for i, word in enumerate(words):
        bare = word[:-2] if word.endswith("'s") else word
        previous = tags[-1] if tags else "O"
        if bare in _PERSONS or (bare in _PERSON_PARTICLES and i + 1 < len(
                words) and words[i + 1].rstrip("'s") in _PERSONS
                and previous != "O" and previous.endswith("PER")):
            tags.append("I-PER" if previous.endswith("PER") else "B-PER")
        elif bare in _PLACES:
            tags.append("B-LOC")
        elif bare in _PLACE_SUFFIXES and previous.endswith("LOC"):
            tags.append("I-LOC")
        elif bare in _PLACE_SUFFIXES and i > 0 and words[i - 1][:1].isupper() \
                and previous == "O" and words[i - 1] not in _TITLES:
            # "Gracechurch Street", "Grosvenor Street": a place.
            tags[-1] = "B-LOC"
            tags.append("I-LOC")
        else:
            tags.append("O")
    return tags


_TITLES = frozenset("Mr Mrs Miss Lady Sir Colonel Captain Dr Lord".split())


def austen_entities(max_words=40, min_words=5):
    """Pride and Prejudice as sentences of words tagged with persons and
    places (BIO: "O", "B-PER", "I-PER", "B-LOC", "I-LOC"), in the
    novel's order, by the documented rule above.

    Returns `(sentences, tags)`: lists of word lists and tag lists. Split
    held-out data by position (later chapters), not at random: a
    sentence's neighbours share its names.

    Example:
    ```python
    words, tags = kzoo.datasets.austen_entities()
    words[0], tags[0]
    ```
    """
    sentences, tags = [], []
    for paragraph in austen_paragraphs("pride_and_prejudice", min_words=1):
        words = _WORD.findall(paragraph.replace("\u2019", "'"))
        current = []
        for word in words:
            current.append(word)
            # "Mrs. Bennet": a title's full stop ends no sentence.
            if word in (".", "!", "?") and not (
                    len(current) > 1 and current[-2] in _TITLES):
                if min_words <= len(current) <= max_words:
                    sentences.append(current)
                    tags.append(_entity_tags(current))
                current = []
        if min_words <= len(current) <= max_words:
            sentences.append(current)
            tags.append(_entity_tags(current))
    return sentences, tags


def capitalised_word_tags(sentences):
    """The baseline tagger: every capitalised word that does not begin its
    sentence and is no title or "I" is a person, adjacent ones one
    person. (It cannot tell places from persons.)

    Example:
    ```python
    from kzoo import datasets
    tags = datasets.capitalised_word_tags([["Then", "Jane", "Bennet",
                                            "smiled"]])
    assert tags == [["O", "B-PER", "I-PER", "O"]]
    ```
    """
    result = []
    for words in sentences:
        tags = []
        for i, word in enumerate(words):
            capital = i > 0 and word[:1].isupper() and word not in _TITLES \
                and word != "I" and words[i - 1] not in (".", "!", "?", '"')
            previous = tags[-1] if tags else "O"
            tags.append(("I-PER" if previous != "O" else "B-PER")
                        if capital else "O")
        result.append(tags)
    return result


# A sentence ends at . ! or ? (and a closing quote after it), unless the
# full stop closes a title ("Mrs. Bennet").
_SENTENCE_END = re.compile(
    r'(?:(?<=[.!?])|(?<=[.!?]["\u201d]))(?<!\bMr\.)(?<!\bMrs\.)(?<!\bDr\.)'
    r'(?<!\bSt\.)\s+(?=["\u201c]?[A-Z])')


def austen_sentences(paragraph):
    """A paragraph's sentences, split after `.`, `!` or `?` (with any
    closing quote) before a capital letter; titles do not end one.

    Example:
    ```python
    from kzoo import datasets
    sentences = datasets.austen_sentences(
        "Mrs. Bennet was silent. Elizabeth smiled! Then she left.")
    assert sentences == ["Mrs. Bennet was silent.", "Elizabeth smiled!",
                         "Then she left."]
    ```
    """
    return [s for s in _SENTENCE_END.split(paragraph) if s.strip()]


def austen_next_sentence_choices(novels=AUSTEN_NOVELS, num_choices=4,
                                 min_words=6, max_words=40, seed=0):
    """A multiple-choice task in SWAG's shape: which sentence comes next?

    Each context is a sentence of a paragraph; its choices are the
    sentence that follows it in the paragraph and `num_choices - 1`
    sentences drawn at random from elsewhere in the same novel (so the
    wrong choices are Austen's too, with the novel's names and style).
    The right choice's place is random. Sentences outside `min_words`..
    `max_words` words are skipped.

    Returns a list of dicts: `novel`, `context`, `choices` (strings) and
    `label` (the index of the sentence that follows).

    Example:
    ```python
    examples = kzoo.datasets.austen_next_sentence_choices(["persuasion"])
    examples[0]["context"], examples[0]["choices"], examples[0]["label"]
    ```
    """
    rng = np.random.default_rng(seed)
    examples = []
    for novel in novels:
        pairs, pool = [], []
        for paragraph in austen_paragraphs(novel, min_words=1):
            sentences = austen_sentences(paragraph)
            kept = [min_words <= len(s.split()) <= max_words
                    for s in sentences]
            pool += [s for s, keep in zip(sentences, kept) if keep]
            pairs += [(a, b) for a, b, keep_a, keep_b in zip(
                sentences, sentences[1:], kept, kept[1:]) if keep_a and keep_b]
        for context, following in pairs:
            wrong = set()
            while len(wrong) < num_choices - 1:
                candidate = pool[rng.integers(len(pool))]
                if candidate not in (context, following):
                    wrong.add(candidate)
            choices = sorted(wrong)
            rng.shuffle(choices)
            label = int(rng.integers(num_choices))
            choices.insert(label, following)
            examples.append({"novel": novel, "context": context,
                             "choices": choices, "label": label})
    return examples


def word_overlap_choice(context, choices):
    """The baseline for `austen_next_sentence_choices`: the choice sharing
    the most lower-cased words with the context (the first on a tie).

    Example:
    ```python
    from kzoo import datasets
    assert datasets.word_overlap_choice(
        "The rain fell all day.",
        ["She sang.", "The rain had not stopped by night."]) == 1
    ```
    """
    words = set(context.lower().split())
    overlaps = [len(words & set(choice.lower().split()))
                for choice in choices]
    return int(np.argmax(overlaps))
