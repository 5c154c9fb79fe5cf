"""`kzoo generate PRESET PROMPT...`: continue prompts (GPT-2) or answer
inputs (T5, BART) with the preset family's generator."""

from kzoo.cli.inputs import add_text_arguments, read_texts

SAMPLERS = ("greedy", "top_k", "top_p", "random", "beam")


def add_arguments(parser):
    parser.add_argument("preset", help="a GPT-2, T5 or BART preset")
    add_text_arguments(parser, "prompts")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--sampler", choices=SAMPLERS, default="greedy")
    parser.add_argument("--seed", type=int, default=None,
                        help="makes random samplers reproducible")


def generator_for(preset):
    """The preset family's generating task (causal or seq2seq LM)."""
    from kzoo.cli.inputs import (CommandError, family_task_class,
                                      preset_task)
    from kzoo.core.family import preset_backbone_class
    from kzoo.models.gpt2.causal_lm import GPT2CausalLM
    from kzoo.tasks.seq2seq_lm import Seq2SeqLM
    backbone_cls = preset_backbone_class(preset)
    for kind in (GPT2CausalLM, Seq2SeqLM):
        if family_task_class(backbone_cls, kind) is not None:
            return preset_task(preset, kind, "generate")
    raise CommandError(f"{preset} cannot generate: generation needs a GPT-2, "
                       "T5 or BART preset.")


def run(args):
    from kzoo.cli.inputs import CommandError
    if args.max_new_tokens < 1:
        raise CommandError("--max-new-tokens must be at least 1; got "
                           f"{args.max_new_tokens}.")
    prompts = read_texts(args)
    model = generator_for(args.preset)
    outputs = model.generate(prompts, max_new_tokens=args.max_new_tokens,
                             sampler=args.sampler, seed=args.seed)
    for prompt, output in zip(prompts, outputs):
        print(f"> {prompt}\n{output}\n")
    return 0
