"""`kzoo demo`: a newcomer's tour, start to finish, on real text.

1. Builds a small BERT from the `bert_tiny_en_uncased` preset (real
   bert-base-uncased vocabulary, random weights).
2. Pretrains it with masked LM on three Austen novels (Keras progress bars,
   a falling loss).
3. Fills in masked words.
4. Fine-tunes a classifier on the other three novels: which novel does a
   passage come from? Prints held-out accuracy against the majority-class
   baseline.
"""

import time

PRETRAIN_NOVELS = ("mansfield_park", "northanger_abbey", "persuasion")
CLASSIFY_NOVELS = ("pride_and_prejudice", "emma", "sense_and_sensibility")
FILL_MASK_PROMPTS = (
    "It is a truth universally acknowledged, that a single man in "
    "possession of a good fortune, must be in want of a [MASK].",
    "She was the youngest of the two [MASK] of a most affectionate father.",
    "I do not [MASK] you to think of it.",
)


def add_arguments(parser):
    parser.add_argument("--preset", default="bert_tiny_en_uncased",
                        help="BERT preset whose architecture and vocabulary "
                             "to use (weights are trained here)")
    parser.add_argument("--pretrain-steps", type=int, default=400,
                        help="masked-LM training steps (default 400)")
    parser.add_argument("--finetune-epochs", type=int, default=3)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--quick", action="store_true",
                        help="a few steps of everything (a smoke test)")


def _section(title):
    print(f"\n=== {title} ===", flush=True)


def run(args):
    import keras
    import numpy as np

    import kzoo
    from kzoo import datasets
    from kzoo.training import default_optimizer

    if args.quick:
        args.pretrain_steps, args.finetune_epochs = 8, 1
    keras.utils.set_random_seed(0)
    started = time.time()
    print(f"kzoo {kzoo.__version__} on the {keras.backend.backend()} backend")

    _section("1. A small BERT from a preset")
    mlm = kzoo.BertMaskedLM.from_preset(
        args.preset, load_weights=False,
        sequence_length=args.sequence_length)
    backbone = mlm.backbone
    print(f"{args.preset}: {backbone.num_layers} layers, hidden "
          f"{backbone.hidden_dim}, {backbone.count_params():,} parameters, "
          f"vocabulary {backbone.vocabulary_size:,} (random weights)")

    _section("2. Masked-LM pretraining on " + ", ".join(PRETRAIN_NOVELS))
    passages = [p for novel in PRETRAIN_NOVELS
                for p in datasets.austen_passages(novel, words=40)]
    epochs = 4 if args.pretrain_steps >= 40 else 1
    steps_per_epoch = max(1, args.pretrain_steps // epochs)
    needed = steps_per_epoch * args.batch_size
    passages = (passages * (1 + needed // len(passages)))[:needed]
    print(f"{len(passages):,} passages of 40 words; 15% of tokens masked "
          "(80% [MASK], 10% random, 10% kept), fresh masks every epoch")
    mlm.compile(optimizer=default_optimizer(learning_rate=1e-3))
    history = mlm.fit(passages, batch_size=args.batch_size, epochs=epochs)
    losses = history.history["loss"]
    print(f"masked-LM loss: {losses[0]:.3f} (epoch 1) -> {losses[-1]:.3f} "
          f"(epoch {len(losses)})")

    _section("3. Fill in the [MASK]")
    for prompt, masks in zip(FILL_MASK_PROMPTS, mlm.fill_mask(
            list(FILL_MASK_PROMPTS), top_k=5)):
        print(prompt)
        for candidates in masks:
            print("   -> " + ", ".join(f"{token} ({p:.2f})"
                                       for token, p in candidates))

    _section("4. Which novel is this passage from? " + " / ".join(
        CLASSIFY_NOVELS))
    per_novel = 40 if args.quick else None
    (train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
        CLASSIFY_NOVELS, words=48, per_novel=per_novel)
    preprocessor = kzoo.BertPreprocessor(
        mlm.preprocessor.tokenizer, sequence_length=args.sequence_length)
    classifier = kzoo.BertTextClassifier(
        backbone, num_classes=len(names), preprocessor=preprocessor)
    classifier.compile(optimizer=default_optimizer(learning_rate=3e-4))
    print(f"{len(train_x):,} training passages, {len(test_x):,} held out")
    classifier.fit(train_x, train_y, batch_size=args.batch_size,
                   epochs=args.finetune_epochs)
    predicted = np.argmax(classifier.predict(test_x, verbose=0), axis=-1)
    accuracy = float(np.mean(predicted == test_y))
    majority = float(np.max(np.bincount(test_y)) / len(test_y))
    print(f"held-out accuracy: {accuracy:.1%}  (majority-class baseline "
          f"{majority:.1%})")
    example = test_x[0]
    print(f'e.g. "{example[:90]}..." -> {names[predicted[0]]} '
          f"(truth: {names[test_y[0]]})")
    print(f"\ndone in {time.time() - started:.0f} s")
    return 0
