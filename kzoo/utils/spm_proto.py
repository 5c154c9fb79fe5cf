"""The piece table of a SentencePiece model file, read without protobuf.

keras-hub's SentencePieceTokenizer (tensorflow-text underneath) tokenizes
with a model's bytes but does not say which pieces are control or
user-defined symbols; tokenizers need that to split special tokens typed
in text. A `.model` file is a `ModelProto`; its repeated field 1 holds
`SentencePiece {string piece = 1; float score = 2; Type type = 3}`. This
reads just that, with the protobuf wire format (varints and
length-delimited fields), so kzoo needs no protobuf or sentencepiece
package at run time.
"""

import struct

# SentencePiece.Type values (sentencepiece_model.proto).
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def _varint(data, pos):
    value, shift = 0, 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(data):
    """(field number, wire type, value) for each field of a message;
    length-delimited values as bytes."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated field")
        yield number, wire, value


def read_pieces(model_bytes):
    """`[(piece, score, type), ...]` in id order. Raises ValueError when
    the bytes are not a SentencePiece model."""
    pieces = []
    for number, wire, value in _fields(model_bytes):
        if number != 1 or wire != 2:
            continue
        piece, score, kind = None, 0.0, NORMAL
        for inner_number, inner_wire, inner in _fields(value):
            if inner_number == 1 and inner_wire == 2:
                piece = inner.decode("utf-8")
            elif inner_number == 2 and inner_wire == 5:
                score = struct.unpack("<f", inner)[0]
            elif inner_number == 3 and inner_wire == 0:
                kind = inner
        if piece is None:
            raise ValueError("a piece without its text")
        pieces.append((piece, score, kind))
    if not pieces:
        raise ValueError("no pieces: not a SentencePiece model")
    return pieces
