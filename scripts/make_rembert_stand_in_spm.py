"""Write the RemBERT-layout SentencePiece model of the test stand-in preset.

    python scripts/make_rembert_stand_in_spm.py

The released `sentencepiece.model` (250,300 pieces over 110 languages)
comes only with the weights. The stand-in is the real model we can ship
(sentencepiece's own test model trained on Botchan,
tests/data/spm/botchan_en_unigram_1000.model) with RemBERT's special
pieces put first, laid out as transformers' `RemBertTokenizer` expects a
RemBERT model to be (its Unigram model's unknown id is 2): `<pad>`=0,
`</s>`=1 (control), `<unk>`=2, `[CLS]`=3, `[SEP]`=4, `[MASK]`=5
(control), then Botchan's 997 pieces with their scores, unchanged (its
`<s>`/`</s>` left out). Segmentation is the Botchan model's; only the ids
move. Deterministic: the same input gives the same bytes. The script
writes it to tests/data/spm/, from where scripts/make_presets.py
--stand-ins copies it into the stand-in preset.
"""

import argparse
from pathlib import Path

from make_albert_stand_in_spm import SOURCE, special_layout

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "tests" / "data" / "spm" / "botchan_en_unigram_1000_rembert.model"
REMBERT_PIECES = ("<pad>", "</s>", "<unk>", "[CLS]", "[SEP]", "[MASK]")


def rembert_layout(source_bytes):
    return special_layout(source_bytes, REMBERT_PIECES, unk_id=2, pad_id=0,
                          eos_id=1, control_symbols=["[CLS]", "[SEP]",
                                                     "[MASK]"])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=DEST)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(rembert_layout(args.source.read_bytes()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
