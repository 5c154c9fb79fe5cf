"""Token ids with the character span each token covers in the original
text: what extractive question answering needs to map a predicted token
span back to the context's characters.

keras-hub's tokenizers give ids only, so the spans are recovered by
aligning the tokens with the text, per tokenizer kind:

- byte-level BPE (GPT-2, RoBERTa): the tokens spell the text's UTF-8 bytes
  exactly, so a token's span is its bytes, counted; its leading space is
  left out (as `transformers`' `trim_offsets=True`).
- WordPiece and SentencePiece: the tokenizer normalises the text first
  (lowercasing, accent stripping, NFKC, ...). Each original character is
  normalised on its own (one batched call of the tokenizer's own
  `normalize`), which gives a normalised text whose every character knows
  the original character it came from; each token's surface ("##ing" ->
  "ing", "▁word" -> "word") is then found in it, left to right. A token
  that spells nothing (an unknown token) covers the text up to the next
  token, without surrounding whitespace.

The tokens are the tokenizer's own (`tokenizer.tokenize`): the alignment
never changes the ids a model sees.
"""

import unicodedata

import numpy as np
import tensorflow as tf

from kzoo.preprocessing.byte_pair import byte_symbols

_WORD_START = "\u2581"  # SentencePiece's "▁"


def token_offsets(tokenizer, text):
    """`(ids, offsets)` for one text: `ids` a list of int, `offsets` an
    int array `(len(ids), 2)` of `[start, end)` character positions in
    `text`.

    Example:
    ```python
    ids, offsets = token_offsets(tokenizer, "Emma Woodhouse, handsome")
    [text[s:e] for s, e in offsets]   # ["emma", "wood", "##house", ...]
    ```
    """
    ids = [int(i) for i in np.asarray(tokenizer.tokenize(text)).reshape(-1)]
    if tokenizer.byte_level:
        offsets = _byte_level_offsets(tokenizer, text, ids)
        if offsets is not None:
            return ids, offsets
    return ids, _aligned_offsets(tokenizer, text, ids)


# Byte-level BPE's symbol -> the byte it spells (GPT-2's table).
_BYTE_OF = {symbol: byte for byte, symbol in byte_symbols().items()}


def _byte_level_offsets(tokenizer, text, ids):
    """Spans from counted bytes; None when the tokens do not spell the
    text's bytes (a special token typed in it), for the aligner."""
    special = set(getattr(tokenizer, "special_token_ids", []))
    lengths = []
    for token_id in ids:
        if token_id in special:
            return None
        token = tokenizer.id_to_token(token_id)
        if any(c not in _BYTE_OF for c in token):
            return None
        lengths.append(len(token))
    encoded = text.encode("utf-8")
    if sum(lengths) != len(encoded):
        return None
    # Byte position -> the character it belongs to (continuation bytes of
    # a multi-byte character belong to it too).
    char_of_byte = np.zeros(len(encoded) + 1, "int64")
    position = 0
    for index, char in enumerate(text):
        size = len(char.encode("utf-8"))
        char_of_byte[position:position + size] = index
        position += size
    char_of_byte[len(encoded)] = len(text)
    offsets = np.zeros((len(ids), 2), "int64")
    position = 0
    for row, length in enumerate(lengths):
        start = int(char_of_byte[position])
        end = len(text) if position + length == len(encoded) else int(
            char_of_byte[position + length])
        # A token ending inside a multi-byte character ends after it.
        if position + length < len(encoded) and \
                encoded[position + length] & 0xC0 == 0x80:
            end += 1
        offsets[row] = _trimmed(text, start, end)
        position += length
    return offsets


def _trimmed(text, start, end):
    """`[start, end)` without spaces at either end (as `transformers`'
    `trim_offsets`: spaces only, so a newline token keeps its span; a
    span of only spaces shrinks to empty at its end)."""
    if not text[start:end].strip(" "):
        return end, end
    while end > start and text[end - 1] == " ":
        end -= 1
    while start < end and text[start] == " ":
        start += 1
    return start, end


def _surface(tokenizer, token_id, special):
    """The text a token spells after normalisation; None for tokens that
    spell nothing findable (unknown and special tokens)."""
    if token_id in special:
        return None
    token = tokenizer.id_to_token(token_id)
    if token.startswith("##"):  # WordPiece: continues a word
        token = token[2:]
    return token.replace(_WORD_START, " ").strip()


def _normalised_characters(tokenizer, text):
    """`(normalised text, owner)`: owner[j] is the index in `text` of the
    character normalised character j came from."""
    if not text:
        return "", np.zeros(0, "int64")
    chars = tf.constant([c.encode("utf-8") for c in text])
    normalised = tokenizer.normalize(chars).numpy()
    pieces, owner = [], []
    for index, piece in enumerate(normalised):
        # SentencePiece normalises (NFKC) inside the model, after the
        # family's own normalisation.
        piece = unicodedata.normalize("NFKC", piece.decode("utf-8"))
        pieces.append(piece)
        owner.extend([index] * len(piece))
    return "".join(pieces), np.asarray(owner, "int64")


def _aligned_offsets(tokenizer, text, ids):
    special = set(getattr(tokenizer, "special_token_ids", []))
    unknown = getattr(tokenizer, "unk_token_id", None)
    special.add(unknown)
    normalised, owner = _normalised_characters(tokenizer, text)
    folded = normalised.casefold() if len(normalised.casefold()) == len(
        normalised) else normalised
    spans = []  # [start, end) in the normalised text, or None
    cursor = 0
    for token_id in ids:
        surface = _surface(tokenizer, token_id, special)
        if surface is None:
            spans.append(None)
            continue
        if not surface:
            # A lone "▁" (a word split from its space: "▁" "1"): the
            # first character of the token after it, as in transformers
            # (the "▁" stands where the word begins).
            spans.append("next")
            continue
        start = normalised.find(surface, cursor)
        if start < 0:  # case folded differently by the tokenizer's model
            start = folded.find(surface.casefold(), cursor)
        if start < 0:
            spans.append(None)
            continue
        end = start + len(surface)
        spans.append((start, end))
        cursor = end
    offsets = _to_original(spans, normalised, owner, len(text))
    for row in reversed(range(len(spans))):
        if spans[row] == "next" and row + 1 < len(spans):
            start, end = offsets[row + 1]
            offsets[row] = (start, min(start + 1, end))
    return offsets


def _to_original(spans, normalised, owner, text_length):
    """Normalised spans -> original character spans; a token that was not
    found covers the gap up to the next one found."""
    offsets = np.zeros((len(spans), 2), "int64")
    previous_end = 0
    for row, span in enumerate(spans):
        if span == "next":
            continue
        if span is None:
            following = next((s for s in spans[row + 1:]
                              if s is not None and s != "next"), None)
            start = previous_end
            end = following[0] if following else len(normalised)
            start, end = _trimmed(normalised, start, end)
            # Several unfound tokens in a row share the gap's first word.
            if following is None or spans[row + 1] is None:
                cut = normalised.find(" ", start, end)
                end = end if cut < 0 else cut
        else:
            start, end = span
        previous_end = end
        offsets[row] = _original_span(start, end, owner, text_length)
    return offsets


def _original_span(start, end, owner, text_length):
    if start >= end:
        position = int(owner[start]) if start < len(owner) else text_length
        return position, position
    return int(owner[start]), int(owner[end - 1]) + 1
