"""`kzoo classify PRESET TEXT...`: a saved text classifier (for example one
`kzoo finetune` wrote) labels texts: the likeliest label and its
probability per text."""

from kzoo.cli.inputs import (add_json_argument, add_text_arguments,
                             emit_json, read_texts)


def add_arguments(parser):
    parser.add_argument("preset", help="a saved classifier preset folder "
                        "(task.json names a text classifier)")
    add_text_arguments(parser)
    add_json_argument(parser)


def load_classifier(preset):
    from kzoo import presets
    from kzoo.cli.inputs import CommandError
    from kzoo.core.registry import get_class
    from kzoo.core.task import Task
    from kzoo.tasks.task_wiring import SequenceClassifier
    resolved = presets.resolve(preset)
    if not resolved.has("task.json"):
        raise CommandError(
            f"{preset} holds no saved task (no task.json); classify needs a "
            "fine-tuned classifier, e.g. from `kzoo finetune`.")
    task_cls = get_class(resolved.json("task.json")["class_name"], Task)
    if not issubclass(task_cls, SequenceClassifier):
        raise CommandError(f"{preset} holds a {task_cls.__name__}, not a text "
                           "classifier.")
    return task_cls.from_preset(resolved.path), resolved.metadata.get(
        "labels")


def run(args):
    import keras
    import numpy as np
    texts = read_texts(args)
    classifier, names = load_classifier(args.preset)
    if classifier.problem_type != "single_label_classification":
        from kzoo.cli.inputs import CommandError
        raise CommandError(f"{args.preset} is a {classifier.problem_type} "
                           "model; classify prints single labels only.")
    logits = classifier.predict(texts, verbose=0)
    probabilities = keras.ops.convert_to_numpy(
        keras.ops.softmax(logits, axis=-1))
    labels = [_label(names, i) for i in range(probabilities.shape[-1])]
    if args.json:
        emit_json(args, [
            {"text": text, "label": labels[int(np.argmax(row))],
             "probability": float(np.max(row)),
             "probabilities": dict(zip(labels, map(float, row)))}
            for text, row in zip(texts, probabilities)])
        return 0
    for text, row in zip(texts, probabilities):
        best = int(np.argmax(row))
        print(f"{labels[best]}\t{row[best]:.3f}\t{text}")
    return 0


def _label(names, index):
    """The name of class `index`: from a list, or a dict keyed by the
    index (as Hugging Face's id2label); the index itself otherwise."""
    if isinstance(names, dict):
        return str(names.get(str(index), index))
    if names and index < len(names):
        return str(names[index])
    return str(index)
