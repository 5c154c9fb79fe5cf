"""`kzoo classify PRESET TEXT...`: a saved text classifier (for example one
`kzoo finetune` wrote) labels texts: the likeliest label and its
probability per text."""

from kzoo.cli.inputs import add_text_arguments, read_texts


def add_arguments(parser):
    parser.add_argument("preset", help="a saved classifier preset folder "
                        "(task.json names a text classifier)")
    add_text_arguments(parser)


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
    for text, row in zip(texts, probabilities):
        best = int(np.argmax(row))
        label = names[best] if names else str(best)
        print(f"{label}\t{row[best]:.3f}\t{text}")
    return 0
