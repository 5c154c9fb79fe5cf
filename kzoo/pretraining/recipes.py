"""Each family's own pretraining recipe: what `kzoo pretrain` trains with
unless a flag or the config file says otherwise.

A recipe is the optimizer and its numbers as the family's original was
pretrained: the optimizer, beta_1/beta_2, epsilon, the peak learning rate
for the model's size, the warmup over the original's number of steps, the
schedule's shape, global-norm gradient clipping, weight decay, and the
share the objective masks (`mask_rate`: the tokens a masked LM selects,
T5's noise density, the words BART infills). Every value below names
where it comes from; where the original's pretraining code or numbers
are not public, the entry says so and says what stands in for them.

Warmup. The originals warmed up over W of their T steps (BERT: 10,000 of
1,000,000). A run of `max_steps` < T warms up over the same share,
`round(W * max_steps / T)` steps (at least 1 where W > 0); a run of T
steps or more over W. T5's `inverse_sqrt` holds the peak for its
"warmup" steps instead of rising (`kzoo.pretraining.schedule`).

Keras' optimizers stand in for the originals' (the same rule, in
places a different detail): BERT's and ELECTRA's `AdamWeightDecay` is
Adam without bias correction, Keras' `AdamW` corrects it (the two agree
after the first few thousand steps at beta_2 0.999); ALBERT's LAMB adds
the weight decay inside the trust ratio and skips the ratio for norms and
biases, Keras' `Lamb` decays as AdamW does and applies the ratio to every
variable; Mesh TensorFlow's Adafactor (T5) factors only matrices whose
both sides are >= 128, Keras' factors every matrix. Biases and
normalization parameters get no weight decay, as every original here
excludes them (`kzoo.training.weight_decay`).
"""

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class Size:
    """One published size: models whose hidden width is at most
    `max_hidden` take its `learning_rate` (and its warmup of
    `warmup_steps` over `total_steps`, and its `masking_rate`, where the
    sizes differ)."""
    name: str
    max_hidden: float
    learning_rate: float
    warmup_steps: int = None
    total_steps: int = None
    masking_rate: float = None


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A family's pretraining recipe (see the module docstring)."""
    family: str
    optimizer: str
    sizes: tuple
    warmup_steps: int
    total_steps: int
    schedule: str
    weight_decay: float
    clip_norm: float = None
    beta_1: float = None
    beta_2: float = None
    epsilon: float = None
    floor: float = 0.0  # the cosine schedule's end, as a share of the peak
    # Warmup given as a share of every run (DistilBERT's warmup_prop)
    # rather than as W of T steps.
    warmup_fraction: float = None
    masking_rate: float = None
    optimizer_arguments: tuple = ()  # other (name, value) pairs
    source: str = ""

    def size_for(self, hidden):
        """The published size a model of width `hidden` is taken as: the
        smallest whose width is at least `hidden` (the largest beyond)."""
        for size in self.sizes:
            if hidden is None or hidden <= size.max_hidden:
                return size
        return self.sizes[-1]


INF = math.inf

# The encoder recipes of Google's BERT code (BERT, ALBERT, ELECTRA) share
# `AdamWeightDecayOptimizer`'s numbers: beta 0.9/0.999, epsilon 1e-6,
# weight decay 0.01 (norms and biases excluded), the global norm clipped at
# 1.0 ("This is how the model was pre-trained"), linear warmup then linear
# decay to 0 (google-research/bert optimization.py, create_optimizer).
RECIPES = {recipe.family: recipe for recipe in [
    Recipe(
        "bert", "adamw", (Size("all", INF, 1e-4),),
        warmup_steps=10_000, total_steps=1_000_000, schedule="linear",
        weight_decay=0.01, clip_norm=1.0, beta_1=0.9, beta_2=0.999,
        epsilon=1e-6, masking_rate=0.15,
        source="google-research/bert: optimization.py (AdamWeightDecay "
               "beta 0.9/0.999, eps 1e-6, decay 0.01, clip 1.0, linear "
               "warmup and decay); README/run_pretraining (lr 1e-4, 10,000 "
               "warmup steps); paper A.2 (1,000,000 steps, 15% masked)"),
    Recipe(
        "roberta", "adamw",
        (Size("base", 768, 6e-4, 24_000), Size("large", INF, 4e-4, 30_000)),
        warmup_steps=24_000, total_steps=500_000, schedule="linear",
        weight_decay=0.01, clip_norm=None, beta_1=0.9, beta_2=0.98,
        epsilon=1e-6, masking_rate=0.15,
        source="RoBERTa paper, Table 9 (base lr 6e-4 / 24k warmup, large "
               "4e-4 / 30k; 500k steps; beta 0.9/0.98, eps 1e-6, decay "
               "0.01, gradient clipping 0.0 = none, linear decay); fairseq "
               "examples/roberta/README.pretraining.md (--adam-betas "
               "'(0.9,0.98)' --adam-eps 1e-6 --clip-norm 0.0)"),
    Recipe(
        "xlm_roberta", "adamw",
        (Size("base", 768, 6e-4, 24_000), Size("large", INF, 4e-4, 30_000)),
        warmup_steps=24_000, total_steps=500_000, schedule="linear",
        weight_decay=0.01, clip_norm=None, beta_1=0.9, beta_2=0.98,
        epsilon=1e-6, masking_rate=0.15,
        source="XLM-R's paper publishes no optimizer numbers (it trained "
               "with fairseq's RoBERTa code); RoBERTa's recipe (paper "
               "Table 9) stands in"),
    Recipe(
        "distil_bert", "adamw", (Size("all", INF, 5e-4),),
        warmup_steps=0, total_steps=1, warmup_fraction=0.05,
        schedule="linear", weight_decay=0.0, clip_norm=5.0, beta_1=0.9, beta_2=0.98,
        epsilon=1e-6, masking_rate=0.15,
        source="transformers examples/research_projects/distillation: "
               "train.py (lr 5e-4, adam_epsilon 1e-6, warmup_prop 0.05, "
               "weight_decay 0.0, max_grad_norm 5.0, "
               "mlm_mask_prop 0.15), distiller.py (AdamW betas "
               "(0.9, 0.98), linear schedule); that recipe distilled, "
               "here it trains the masked LM"),
    Recipe(
        "albert", "lamb", (Size("all", INF, 0.00176),),
        warmup_steps=3125, total_steps=125_000, schedule="linear",
        weight_decay=0.01, clip_norm=1.0, beta_1=0.9, beta_2=0.999,
        epsilon=1e-6, masking_rate=0.15,
        source="google-research/albert: optimization.py (LAMB beta "
               "0.9/0.999, eps 1e-6, decay 0.01, clip 1.0, linear warmup "
               "and decay), README (--optimizer='lamb' --learning_rate="
               ".00176 --num_train_steps=125000 --num_warmup_steps=3125); "
               "paper 4.1 (LAMB, lr 0.00176, n-gram masking)"),
    Recipe(
        "electra", "adamw",
        (Size("small", 256, 5e-4), Size("base", 768, 2e-4),
         Size("large", INF, 2e-4, masking_rate=0.25)),
        warmup_steps=10_000, total_steps=1_000_000, schedule="linear",
        weight_decay=0.01, clip_norm=1.0, beta_1=0.9, beta_2=0.999,
        epsilon=1e-6, masking_rate=0.15,
        source="google-research/electra: configure_pretraining.py "
               "(learning_rate 5e-4 for small, 2e-4 for base and large; "
               "num_warmup_steps 10000 of num_train_steps 1000000; "
               "weight_decay_rate 0.01; lr_decay_power 1.0 = linear; "
               "mask_prob 0.15, large 0.25), model/optimization.py (BERT's "
               "AdamWeightDecay: beta 0.9/0.999, eps 1e-6, clip 1.0)"),
    Recipe(
        "deberta_v3", "adamw",
        (Size("xsmall", 384, 3e-4), Size("base", INF, 1e-4)),
        warmup_steps=10_000, total_steps=1_000_000, schedule="linear",
        weight_decay=0.01, clip_norm=1.0, beta_1=0.9, beta_2=0.999,
        epsilon=1e-6, masking_rate=0.15,
        source="microsoft/DeBERTa experiments/language_model/rtd.sh "
               "(DeBERTa-v3's RTD: --warmup 10000, --num_training_steps "
               "1000000, --learning_rate 3e-4 xsmall, 1e-4 base and large) "
               "with DeBERTa/optims/args.py's defaults (Adam beta "
               "0.9/0.999, epsilon 1e-6, weight decay 0.01, "
               "max_grad_norm 1, warmup_linear)"),
    Recipe(
        "gpt2", "adamw",
        (Size("small", 768, 6e-4), Size("medium", 1024, 3e-4),
         Size("large", 1536, 2.5e-4), Size("xl", INF, 2e-4)),
        warmup_steps=750, total_steps=600_000, schedule="cosine",
        floor=0.1, weight_decay=0.1, clip_norm=1.0, beta_1=0.9,
        beta_2=0.95, epsilon=1e-8,
        source="GPT-2's optimizer is not published (its paper: 'the "
               "learning rate of each model was manually tuned'); the "
               "recipe OpenAI published for GPT-2-shaped models stands in: "
               "GPT-3 paper, Table 2.1 (lr 6e-4 / 3e-4 / 2.5e-4 / 2e-4 for "
               "125M / 350M / 760M / 1.3B) and appendix B (Adam beta "
               "0.9/0.95, eps 1e-8, clip 1.0, weight decay 0.1, warmup "
               "375M tokens = 750 steps of 0.5M; cosine down to 10% over "
               "260B of its 300B tokens, here over the whole run of 600k "
               "steps), the numbers nanoGPT's GPT-2 config uses too"),
    Recipe(
        "t5", "adafactor", (Size("all", INF, 0.01),),
        warmup_steps=10_000, total_steps=524_288, schedule="inverse_sqrt",
        weight_decay=0.0, clip_norm=None, masking_rate=0.15,
        source="T5 paper 3.1.2 (AdaFactor; 'inverse square root' "
               "1/sqrt(max(n, k)), k = 10^4: 0.01 for 10^4 steps; 2^19 "
               "steps) and 3.1.4 (15% of tokens in spans of mean length "
               "3); Adafactor's own update clipping (1.0) and decay "
               "exponent 0.8 are Keras' defaults; no weight decay"),
    Recipe(
        "bart", "adamw",
        (Size("base", 768, 6e-4, 24_000), Size("large", INF, 4e-4, 30_000)),
        warmup_steps=24_000, total_steps=500_000, schedule="linear",
        weight_decay=0.01, clip_norm=None, beta_1=0.9, beta_2=0.98,
        epsilon=1e-6, masking_rate=0.3,
        source="BART's paper gives no optimizer numbers and fairseq has no "
               "BART pretraining script; the paper trains 'similar to "
               "RoBERTa', whose recipe (Table 9) stands in; 30% of tokens "
               "masked (paper 5.1)"),
    Recipe(
        "elmo", "adagrad", (Size("all", INF, 0.2),),
        warmup_steps=0, total_steps=1, schedule="constant",
        weight_decay=0.0, clip_norm=10.0,
        optimizer_arguments=(("initial_accumulator_value", 1.0),),
        source="allenai/bilm-tf: training.py (tf.train.AdagradOptimizer, "
               "learning_rate 0.2, initial_accumulator_value 1.0, constant), "
               "bin/train_elmo.py (all_clip_norm_val 10.0). bilm-tf scales "
               "the loss by its 20 unroll steps before the gradients; the "
               "mean loss here does not. Keras' Adagrad adds eps 1e-7, "
               "TF1's had none"),
    Recipe(
        "awd_lstm", "sgd", (Size("all", INF, 30.0),),
        warmup_steps=0, total_steps=1, schedule="constant",
        weight_decay=1.2e-6, clip_norm=0.25,
        source="salesforce/awd-lstm-lm main.py (--optimizer sgd, --lr 30, "
               "--clip 0.25, --wdecay 1.2e-6); its switch to averaged SGD "
               "(NT-ASGD) has no Keras optimizer and is not reproduced. "
               "SGD's decoupled decay equals its L2 penalty"),
]}


def recipe_for(family):
    """The family's recipe; a clear error for one without."""
    if family not in RECIPES:
        raise ValueError(
            f"No pretraining recipe is known for the {family} family; give "
            "--optimizer, --learning-rate and --schedule yourself.")
    return RECIPES[family]


def scaled_warmup(warmup, total, max_steps):
    """The original's warmup `warmup` of `total` steps, for a run of
    `max_steps` (see the module docstring)."""
    if not warmup or max_steps >= total:
        return int(warmup)
    return max(1, round(warmup * max_steps / total))


def resolve_recipe(family, hidden, options):
    """The run's recipe: `options` (those given: not None) over the
    family's defaults for a model of width `hidden`. Returns a dict of
    every recipe option, with "size" (the published size taken) and
    "recipe_source"."""
    recipe = recipe_for(family)
    size = recipe.size_for(hidden)
    warmup, total = (size.warmup_steps or recipe.warmup_steps,
                     size.total_steps or recipe.total_steps)
    defaults = {
        "optimizer": recipe.optimizer, "learning_rate": size.learning_rate,
        "schedule": recipe.schedule, "weight_decay": recipe.weight_decay,
        "clip_norm": recipe.clip_norm, "beta_1": recipe.beta_1,
        "beta_2": recipe.beta_2, "epsilon": recipe.epsilon,
        "warmup_steps": (
            round(recipe.warmup_fraction * options["max_steps"])
            if recipe.warmup_fraction is not None
            else scaled_warmup(warmup, total, options["max_steps"])),
    }
    resolved = {}
    for name, default in defaults.items():
        given = options.get(name)
        resolved[name] = default if given is None else given
    if resolved["optimizer"] != recipe.optimizer:
        # Another optimizer: the family's own numbers for it do not apply.
        for name in ("beta_1", "beta_2", "epsilon"):
            if options.get(name) is None:
                resolved[name] = None
    if resolved["schedule"] == "one_cycle" and \
            options.get("warmup_steps") is None:
        resolved["warmup_steps"] = 0  # its rise is half the run
    resolved["schedule_floor"] = recipe.floor \
        if resolved["schedule"] == recipe.schedule else 0.0
    resolved["optimizer_arguments"] = dict(recipe.optimizer_arguments) \
        if resolved["optimizer"] == recipe.optimizer else {}
    masking = size.masking_rate or recipe.masking_rate
    given = options.get("mask_rate")
    resolved["mask_rate"] = masking if given is None else given
    resolved["masking_rate"] = resolved["mask_rate"]
    resolved["size"] = size.name
    resolved["recipe_source"] = recipe.source
    return resolved


def describe(family):
    """One line of the family's defaults, for `kzoo pretrain --help`."""
    recipe = RECIPES[family]
    rates = ", ".join(f"{s.learning_rate:g}" + (
        f" ({s.name})" if s.name != "all" else "") for s in recipe.sizes)
    if recipe.warmup_fraction is not None:
        warmup = f"warmup {recipe.warmup_fraction:.0%} of the steps"
    elif recipe.warmup_steps:
        warmup = f"warmup {recipe.warmup_steps:,}/{recipe.total_steps:,}"
    else:
        warmup = "no warmup"
    parts = [recipe.optimizer, f"lr {rates}", recipe.schedule, warmup,
             *_optimizer_parts(vars(recipe))]
    if recipe.masking_rate is not None:
        parts.append(f"mask {recipe.masking_rate:g}" + "".join(
            f" ({s.name} {s.masking_rate:g})" for s in recipe.sizes
            if s.masking_rate is not None))
    return f"{family}: " + ", ".join(parts)


def _optimizer_parts(values):
    """The betas, epsilon, clipping and decay of a recipe, in words."""
    parts = []
    if values.get("beta_1") is not None:
        parts.append(f"beta {values['beta_1']:g}/{values['beta_2']:g}")
    if values.get("epsilon") is not None:
        parts.append(f"eps {values['epsilon']:g}")
    parts.append(f"clip {values['clip_norm']:g}" if values.get("clip_norm")
                 else "no clipping")
    parts.append(f"wd {values['weight_decay']:g}")
    return parts


def size_recipe(family, hidden):
    """The recipe `kzoo pretrain` trains a model of `family` and width
    `hidden` with by default, as the original ran it (its warmup of W of
    T steps; a run of N < T steps warms up over the same share): a dict
    for `kzoo info`, or None for a family without a recipe. Reads no
    Keras (`kzoo info` runs without a backend)."""
    recipe = RECIPES.get(family)
    if recipe is None:
        return None
    size = recipe.size_for(hidden)
    total = size.total_steps or recipe.total_steps
    values = resolve_recipe(family, hidden, {"max_steps": total})
    values["warmup_fraction"] = recipe.warmup_fraction
    values["total_steps"] = None if recipe.warmup_fraction is not None \
        else total
    if recipe.warmup_fraction is not None:
        values["warmup_steps"] = None
    return values


def recipe_line(values):
    """`size_recipe`'s dict in one line."""
    if values["warmup_fraction"] is not None:
        warmup = f"warmup {values['warmup_fraction']:.0%} of the steps"
    elif values["warmup_steps"]:
        warmup = (f"warmup {values['warmup_steps']:,} of "
                  f"{values['total_steps']:,} steps")
    else:
        warmup = "no warmup"
    parts = [values["optimizer"], f"lr {values['learning_rate']:g}",
             values["schedule"], warmup, *_optimizer_parts(values)]
    if values["mask_rate"] is not None:
        parts.append(f"mask {values['mask_rate']:g}")
    return ", ".join(parts)
