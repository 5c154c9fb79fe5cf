"""`kzoo fill-mask PRESET TEXT...`: the likeliest tokens behind each mask,
with the preset family's masked-LM head. `[MASK]` is accepted for every
family (written as the family's own mask token, e.g. RoBERTa's `<mask>`).
"""

from kzoo.cli.inputs import CommandError, add_text_arguments, read_texts


def add_arguments(parser):
    parser.add_argument("preset", help="a preset with a masked-LM family "
                        "(BERT, RoBERTa, ALBERT, ...)")
    add_text_arguments(parser, "texts, each with at least one [MASK]")
    parser.add_argument("--top-k", type=int, default=5,
                        help="candidates per mask (default 5)")


def run(args):
    from kzoo.cli.inputs import preset_task
    from kzoo.tasks.task_wiring import MaskedLM
    texts = read_texts(args)
    task = preset_task(args.preset, MaskedLM, "fill-mask")
    tokenizer = task.preprocessor.tokenizer
    mask = tokenizer.id_to_token(tokenizer.mask_token_id)
    texts = [text.replace("[MASK]", mask) for text in texts]
    for text in texts:
        if mask not in text:
            raise CommandError(f"every text needs at least one [MASK] (or "
                               f"{mask}); {text!r} has none.")
    for text, masks in zip(texts, task.fill_mask(texts, top_k=args.top_k)):
        print(text)
        for candidates in masks:
            print("  " + "  ".join(f"{token} {p:.3f}"
                                   for token, p in candidates))
    return 0
