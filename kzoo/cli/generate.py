"""`kzoo generate PRESET PROMPT...`: continue prompts (GPT-2) or answer
inputs (T5, BART) with the preset family's generator.

Decoding: the preset's own generation settings (its `generation.json`:
bart_large_cnn_en summarises with 4 beams, 56 to 142 tokens, no repeated
trigram), greedy for a preset without any, unless a knob asks otherwise. `--temperature` alone
samples from the whole vocabulary; `--top-k K` among the K likeliest;
`--top-p P` from the nucleus (with `--top-k`, among at most K);
`--num-beams N` is beam search. `--sampler NAME` names the method outright;
a knob the method does not take is refused, as is `--seed` for the
deterministic ones (greedy, beam)."""

from kzoo.cli.inputs import (add_json_argument, add_text_arguments,
                             emit_json, read_texts)

SAMPLERS = ("greedy", "top_k", "top_p", "random", "beam")
# The knobs each sampler takes: flag -> its argument in kzoo.generation.
KNOBS = {"temperature": "temperature", "top_k": "k", "top_p": "p",
         "num_beams": "num_beams"}
TAKES = {"greedy": (), "random": ("temperature",),
         "top_k": ("temperature", "top_k"),
         "top_p": ("temperature", "top_p", "top_k"),
         "beam": ("num_beams",)}
RANDOM = ("random", "top_k", "top_p")
# New tokens for a preset whose settings give no length.
DEFAULT_NEW_TOKENS = 32


def add_arguments(parser):
    parser.add_argument("preset", help="a GPT-2, T5 or BART preset")
    add_text_arguments(parser, "prompts")
    parser.add_argument("--max-new-tokens", type=int, default=None,
                        help="stop after this many new tokens (default: "
                        "the preset's max_length, else "
                        f"{DEFAULT_NEW_TOKENS})")
    parser.add_argument("--sampler", choices=SAMPLERS, default=None,
                        help="the decoding method (default: from the knobs "
                        "below; without any, the preset's settings, else "
                        "greedy)")
    parser.add_argument("--temperature", type=float, default=None,
                        help="divide the logits by this before sampling")
    parser.add_argument("--top-k", type=int, default=None,
                        help="sample among the K likeliest tokens")
    parser.add_argument("--top-p", type=float, default=None,
                        help="nucleus sampling: the smallest set of tokens "
                        "whose probability reaches P, in (0, 1]")
    parser.add_argument("--num-beams", type=int, default=None,
                        help="beam search with this many beams")
    parser.add_argument("--seed", type=int, default=None,
                        help="makes the random samplers reproducible")
    add_json_argument(parser)


def sampler_from_args(args):
    """`kzoo.generation` sampler config (`{"name": ..., **arguments}`) the
    flags ask for (None for none: the preset's settings decide); a
    CommandError, in one line, for a combination that does not go
    together. Values are checked by the sampler itself."""
    from kzoo.cli.inputs import CommandError
    given = [knob for knob in KNOBS if getattr(args, knob) is not None]
    name = args.sampler
    if name is None and not given and args.seed is None:
        return None
    if name is None:
        name = ("beam" if "num_beams" in given else
                "top_p" if "top_p" in given else
                "top_k" if "top_k" in given else
                "random" if "temperature" in given else "greedy")
    for knob in given:
        if knob not in TAKES[name]:
            flag = "--" + knob.replace("_", "-")
            why = ("" if args.sampler else " (--num-beams asks for beam "
                   "search)" if name == "beam" else "")
            raise CommandError(f"{flag} does not apply to the {name} "
                               f"sampler{why}; it goes with "
                               f"{_users(knob)}.")
    if args.seed is not None and name not in RANDOM:
        raise CommandError(f"--seed makes sampling reproducible; the {name} "
                           "sampler draws nothing at random (add "
                           "--temperature, --top-k or --top-p to sample).")
    config = {"name": name}
    config.update({KNOBS[knob]: getattr(args, knob) for knob in given})
    from kzoo.generation import get_sampler
    try:
        get_sampler(dict(config))  # checks the values, in one line
    except (ValueError, TypeError) as e:
        raise CommandError(str(e).splitlines()[0]) from None
    return config


def _users(knob):
    names = [name for name, knobs in TAKES.items() if knob in knobs]
    return " or ".join(f"--sampler {name}" for name in names)


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


def new_tokens(args, model):
    """--max-new-tokens; without it, None where the preset's settings
    give a length (bart_large_cnn_en: up to 141 after the start token),
    else DEFAULT_NEW_TOKENS."""
    if args.max_new_tokens is not None:
        return args.max_new_tokens
    settings = model.generation_config
    if "max_length" in settings or "max_new_tokens" in settings:
        return None
    return DEFAULT_NEW_TOKENS


def run(args):
    from kzoo.cli.inputs import CommandError
    if args.max_new_tokens is not None and args.max_new_tokens < 1:
        raise CommandError("--max-new-tokens must be at least 1; got "
                           f"{args.max_new_tokens}.")
    sampler = sampler_from_args(args)
    prompts = read_texts(args)
    model = generator_for(args.preset)
    outputs = model.generate(prompts, sampler=sampler, seed=args.seed,
                             max_new_tokens=new_tokens(args, model))
    if args.json:
        emit_json(args, [{"prompt": prompt, "output": output}
                         for prompt, output in zip(prompts, outputs)])
        return 0
    for prompt, output in zip(prompts, outputs):
        print(f"> {prompt}\n{output}\n")
    return 0
