"""Which variables weight decay spares: by role, not by name.

BERT's recipe (and `transformers`' Trainer after it) decays the weight
matrices and spares the biases and the normalization parameters. Keras
can only exclude variables by a list of name patterns, and a list of names
misses a layer whose parameter is called something else: T5's RMSNorm
weight is `scale`, not `gamma`, and a name list of `bias`/`gamma`/`beta`
decayed it. The role shows in the shape instead: biases, LayerNorm and
RMSNorm scales and offsets, and scalar mixes are vectors or scalars; the
weights a decay is meant for (kernels, embedding tables) are matrices or
more. So the rule here spares every variable of rank < 2, whatever its
layer calls it (the rule nanoGPT and minGPT use too).

One difference from the Trainer, whose rule is a name test: T5's relative
attention bias table is a matrix (buckets x heads) and decays here; the
Trainer spares it because its name contains "bias".
"""

def spared_from_decay(variable):
    """True for a variable weight decay leaves alone: a bias or a
    normalization scale or offset (rank < 2)."""
    return len(variable.shape) < 2


class DecayRuleMixin:
    """An optimizer argument `decay_norms_and_biases`: when False, every
    variable of rank < 2 (see `spared_from_decay`) gets no weight decay,
    on top of what `exclude_from_weight_decay` lists. Mixed in before a
    Keras optimizer class; True keeps Keras' own behaviour."""

    def __init__(self, *args, decay_norms_and_biases=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.decay_norms_and_biases = bool(decay_norms_and_biases)
        # What the user excluded themselves, kept so that `build` can add
        # the rule's variables to it (Keras replaces the exclusions on each
        # call, and knows the variables only at `build`).
        self._listed_exclusions = ([], None)

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        self._listed_exclusions = (list(var_list or ()), var_names)
        super().exclude_from_weight_decay(var_list=var_list,
                                          var_names=var_names)

    def build(self, variables):
        if not self.built and not self.decay_norms_and_biases:
            listed, names = self._listed_exclusions
            spared = [v for v in variables if spared_from_decay(v)]
            super().exclude_from_weight_decay(var_list=listed + spared,
                                              var_names=names)
        super().build(variables)

    def get_config(self):
        config = super().get_config()
        config["decay_norms_and_biases"] = self.decay_norms_and_biases
        return config


__all__ = ["DecayRuleMixin", "spared_from_decay"]
