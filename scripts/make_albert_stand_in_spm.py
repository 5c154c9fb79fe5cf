"""Write the ALBERT-layout SentencePiece model of the test stand-in preset.

    python scripts/make_albert_stand_in_spm.py

A released ALBERT `spiece.model` holds its special pieces itself, first:
`<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4 (the original was
trained with `--pad_id=0 --unk_id=1 --control_symbols=[CLS],[SEP],[MASK]`).
The real model we can ship (sentencepiece's own test model trained on
Botchan, tests/data/spm/botchan_en_unigram_1000.model) has `<unk>`=0,
`<s>`=1, `</s>`=2 and none of ALBERT's pieces. transformers'
AlbertTokenizer cannot even be built from it (it looks [CLS] and [SEP] up
in the model). So the stand-in is that model in ALBERT's layout: the five
ALBERT pieces first (CONTROL, and UNKNOWN for `<unk>`), then Botchan's 997
pieces with their scores, unchanged. Segmentation
is the Botchan model's; only the ids move (by 3: `<unk>` moves to 1 and
Botchan's `<s>`/`</s>` are left out, as ALBERT's model has neither).
Deterministic: the same input gives the same bytes.
"""

import argparse
from pathlib import Path

from sentencepiece import sentencepiece_model_pb2 as model_pb2

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "spm" / "botchan_en_unigram_1000.model"
DEST = (ROOT / "tests" / "data" / "presets" / "albert_base_en_uncased" /
        "spiece.model")
ALBERT_PIECES = ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]")


def special_layout(source_bytes, specials, unk_id, pad_id=-1, bos_id=-1,
                   eos_id=-1, control_symbols=()):
    """A SentencePiece model's bytes with `specials` as its first pieces
    (`<unk>` UNKNOWN, the others CONTROL), then its own pieces with their
    scores (its `<s>`/`</s>` left out), and the trainer spec's ids."""
    model = model_pb2.ModelProto()
    model.ParseFromString(source_bytes)
    Piece = model_pb2.ModelProto.SentencePiece
    old = list(model.pieces)
    assert old[0].piece == "<unk>" and old[0].type == Piece.UNKNOWN
    del model.pieces[:]
    for piece in specials:
        kind = Piece.UNKNOWN if piece == "<unk>" else Piece.CONTROL
        model.pieces.add(piece=piece, score=0.0, type=kind)
    # Botchan's <s> and </s> (CONTROL, never produced from text) go.
    model.pieces.extend(p for p in old[1:] if p.type != Piece.CONTROL)
    spec = model.trainer_spec
    spec.pad_id, spec.unk_id, spec.bos_id, spec.eos_id = (pad_id, unk_id,
                                                          bos_id, eos_id)
    spec.control_symbols[:] = list(control_symbols)
    return model.SerializeToString(deterministic=True)


def albert_layout(source_bytes):
    return special_layout(source_bytes, ALBERT_PIECES, unk_id=1, pad_id=0,
                          control_symbols=["[CLS]", "[SEP]", "[MASK]"])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=DEST)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(albert_layout(args.source.read_bytes()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
