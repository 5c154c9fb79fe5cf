"""`kzoo bench PRESET`: how fast the preset's model runs here, on the
current backend (`KERAS_BACKEND`).

Measured on passages of Pride and Prejudice (bundled), packed by the
preset's own preprocessor to `--batch-size` x `--sequence-length` tokens:

- forward: the family's classifier (or, for T5, its seq2seq LM) on one
  batch, `predict_on_batch` (compiled where the backend compiles);
- train step: forward, backward and the default optimizer's update
  (`train_on_batch`), as in fine-tuning;
- generation, for GPT-2, T5 and BART: greedy, `--max-new-tokens` per example
  with the KV cache, no stop token (every example makes them all).

Each figure is the median of `--steps` timed calls after `--warmup`
untimed ones (compilation). The weights are random unless `--weights`:
speed does not depend on their values, and nothing is downloaded. Against
keras-hub and `transformers`: `scripts/benchmark.py`.
"""

from kzoo.cli.inputs import CommandError, add_alias

# dest -> the flag that sets it (the names the other commands use).
POSITIVE = {"batch": "--batch-size", "seq": "--sequence-length",
            "steps": "--steps"}


def add_arguments(parser):
    parser.add_argument("preset", help="a preset name, alias or folder")
    parser.add_argument("--batch-size", dest="batch", type=int, default=8)
    parser.add_argument("--sequence-length", dest="seq", type=int,
                        default=128, help="tokens per example")
    add_alias(parser, "--batch", "--batch-size", "batch", type=int)
    add_alias(parser, "--seq", "--sequence-length", "seq", type=int)
    parser.add_argument("--steps", type=int, default=5,
                        help="timed calls per measurement (median)")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed calls first (compilation)")
    add_alias(parser, "--new-tokens", "--max-new-tokens", "new_tokens",
              type=int)
    parser.add_argument("--max-new-tokens", dest="new_tokens", type=int,
                        default=16,
                        help="tokens generated per example (0: skip "
                             "generation)")
    parser.add_argument("--no-train", action="store_true",
                        help="forward (and generation) only")
    parser.add_argument("--weights", action="store_true",
                        help="load the preset's weights (default: random, "
                             "the same speed)")


def run(args):
    import keras

    from kzoo.core.family import preset_backbone_class
    from kzoo.presets import resolve
    _check(args)
    preset = resolve(args.preset)
    backbone_cls = preset_backbone_class(preset)
    trainer_cls, generator_cls = _task_classes(backbone_cls)
    if trainer_cls is None:
        raise CommandError(
            f"{preset.name}: kzoo bench times a family's classifier or "
            f"language model, and {backbone_cls.__name__}'s family has "
            "neither.")
    keras.utils.set_random_seed(0)
    print(f"{preset.name} on {keras.backend.backend()}: batch {args.batch} "
          f"x {args.seq} tokens, median of {args.steps} calls after "
          f"{args.warmup} warm-up, {'preset' if args.weights else 'random'} "
          "weights", flush=True)
    task = _load(trainer_cls, preset, args)
    print(f"  {type(task).__name__}: {task.count_params():,} parameters",
          flush=True)
    x, y, sample_weight = _batch(task, trainer_cls, args)
    _report("forward", lambda: task.predict_on_batch(x), args, args.seq)
    if not args.no_train:
        task.compile()
        _report("train step",
                lambda: task.train_on_batch(x, y, sample_weight=sample_weight),
                args, args.seq)
    if generator_cls is not None and args.new_tokens > 0:
        generator = task if isinstance(task, generator_cls) else \
            _load(generator_cls, preset, args)
        prompts = _texts(args.batch, words=max(1, args.seq // 4))
        _report("generate",
                lambda: generator.generate(
                    prompts, max_new_tokens=args.new_tokens,
                    stop_token_ids=()),
                args, args.new_tokens, "new tokens/s")
    return 0


def _check(args):
    for name, flag in POSITIVE.items():
        if getattr(args, name) < 1:
            raise CommandError(f"{flag} must be at least 1; got "
                               f"{getattr(args, name)}.")
    for name, flag in (("warmup", "--warmup"),
                       ("new_tokens", "--max-new-tokens")):
        if getattr(args, name) < 0:
            raise CommandError(f"{flag} must be 0 or more; got "
                               f"{getattr(args, name)}.")


def _task_classes(backbone_cls):
    """The family's task to time forward and training with (its
    classifier, else its language model) and its generating task."""
    from kzoo.cli.inputs import family_task_class
    from kzoo.models.gpt2.causal_lm import GPT2CausalLM
    from kzoo.tasks.seq2seq_lm import Seq2SeqLM
    from kzoo.tasks.task_wiring import SequenceClassifier
    generator = next((task for task in (
        family_task_class(backbone_cls, kind)
        for kind in (GPT2CausalLM, Seq2SeqLM)) if task is not None), None)
    classifier = family_task_class(backbone_cls, SequenceClassifier)
    return classifier or generator, generator


def _load(task_cls, preset, args):
    from kzoo.tasks.task_wiring import SequenceClassifier
    kwargs = {"num_classes": 2} if issubclass(
        task_cls, SequenceClassifier) else {}
    return task_cls.from_preset(preset, load_weights=args.weights,
                                sequence_length=args.seq, **kwargs)


def _texts(count, words):
    """`count` passages of the novel, `words` words each."""
    from kzoo import datasets
    passages = datasets.austen_passages("pride_and_prejudice", words=words)
    return [passages[i % len(passages)] for i in range(count)]


def _batch(task, task_cls, args):
    """One packed batch `(x, y, sample_weight)` for the task: more words
    than `--seq` tokens, so every row is full."""
    import keras
    import numpy as np

    from kzoo.tasks.seq2seq_lm import Seq2SeqLM
    from kzoo.tasks.task_wiring import SequenceClassifier
    texts = _texts(args.batch, words=args.seq)
    if issubclass(task_cls, SequenceClassifier):
        packed = task.preprocessor(texts, np.arange(args.batch) % 2)
    elif issubclass(task_cls, Seq2SeqLM):
        packed = task.preprocessor((texts, texts))
    else:
        packed = task.preprocessor(texts)
    return keras.utils.unpack_x_y_sample_weight(packed)


def _report(what, step, args, tokens_per_row, unit="tokens/s"):
    from kzoo.utils.timing import median_seconds
    seconds = median_seconds(step, args.steps, args.warmup)
    rate = args.batch * tokens_per_row / seconds
    print(f"  {what:<11} {seconds * 1000:9.1f} ms per batch  "
          f"{rate:12,.0f} {unit}", flush=True)
