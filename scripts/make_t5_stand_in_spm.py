"""Write the T5-layout SentencePiece model of the T5 test stand-in preset.

    python scripts/make_t5_stand_in_spm.py

A released T5 `spiece.model` holds `<pad>`=0, `</s>`=1, `<unk>`=2 first
(trained with `--pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1`); the 100
`<extra_id_N>` sentinels are not in it (the tokenizer appends them). The
real model we ship (sentencepiece's Botchan test model,
tests/data/spm/botchan_en_unigram_1000.model) has `<unk>`=0, `<s>`=1,
`</s>`=2. The stand-in is that model in T5's layout (as the ALBERT one,
`make_albert_stand_in_spm.py`): T5's three pieces first, then Botchan's
997 pieces with their scores, unchanged. Deterministic.
"""

import argparse
from pathlib import Path

from make_albert_stand_in_spm import SOURCE, special_layout

ROOT = Path(__file__).resolve().parent.parent
DEST = (ROOT / "tests" / "data" / "presets" / "t5_small_multi" /
        "spiece.model")


def t5_layout(source_bytes):
    return special_layout(source_bytes, ("<pad>", "</s>", "<unk>"),
                          unk_id=2, pad_id=0, eos_id=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=DEST)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(t5_layout(args.source.read_bytes()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
