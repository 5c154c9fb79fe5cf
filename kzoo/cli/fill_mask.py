"""`kzoo fill-mask PRESET TEXT...`: the likeliest tokens behind each mask,
with the preset family's masked-LM head. `[MASK]` is accepted for every
family (written as the family's own mask token, e.g. RoBERTa's `<mask>`).
A preset without a pretrained masked-LM head (an encoder alone, or
DeBERTa-v3, pretrained with replaced-token detection) is refused: a random
head's guesses would print as if they were predictions.
"""

import warnings

from kzoo.cli.inputs import (CommandError, add_alias, add_json_argument,
                             add_text_arguments, emit_json, read_texts)


def add_arguments(parser):
    parser.add_argument("preset", help="a preset with a masked-LM family "
                        "(BERT, RoBERTa, ALBERT, ...)")
    add_text_arguments(parser, "texts, each with at least one [MASK]")
    parser.add_argument("--top", type=int, default=5,
                        help="candidates per mask (default 5)")
    add_alias(parser, "--top-k", "--top", "top", type=int)
    add_json_argument(parser)


def run(args):
    from kzoo.cli.inputs import preset_task
    from kzoo.presets import RandomHeadWarning
    from kzoo.tasks.task_wiring import MaskedLM
    if args.top < 1:
        raise CommandError(f"--top must be at least 1; got {args.top}.")
    texts = read_texts(args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RandomHeadWarning)
        try:
            task = preset_task(args.preset, MaskedLM, "fill-mask")
        except RandomHeadWarning as e:
            raise CommandError(
                f"fill-mask needs a pretrained masked-LM head, and {e} "
                "Train one first (`kzoo pretrain`), or pick a preset whose "
                "`kzoo info` lists mlm_head among its heads.") from None
    tokenizer = task.preprocessor.tokenizer
    mask = tokenizer.id_to_token(tokenizer.mask_token_id)
    texts = [text.replace("[MASK]", mask) for text in texts]
    for text in texts:
        if mask not in text:
            raise CommandError(f"every text needs at least one [MASK] (or "
                               f"{mask}); {text!r} has none.")
    results = task.fill_mask(texts, top_k=args.top)
    if args.json:
        emit_json(args, [
            {"text": text, "masks": [
                [{"token": token, "probability": float(p)}
                 for token, p in candidates] for candidates in masks]}
            for text, masks in zip(texts, results)])
        return 0
    for text, masks in zip(texts, results):
        print(text)
        for candidates in masks:
            print("  " + "  ".join(f"{token} {p:.3f}"
                                   for token, p in candidates))
    return 0
