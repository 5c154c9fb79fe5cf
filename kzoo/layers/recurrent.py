"""An LSTM with a projection (LSTMP; Sak et al., 2014), run as one compiled
loop over time (`keras.ops.scan`: `jax.lax.scan` on JAX, a `tf.while_loop`
on TensorFlow), with exact padding."""

import keras
from keras import ops

from kzoo.utils.weights import is_runtime_state, runtime_state


class ProjectedLSTM(keras.layers.Layer):
    """One LSTM layer whose output (and recurrent state) is projected to a
    smaller width, with optional clipping of the cell and the projection,
    as TensorFlow's `LSTMCell(num_proj=..., cell_clip=..., proj_clip=...)`
    and ELMo's biLM use it:

        i, f, g, o = split(x_t W + h_{t-1} U + b)       (Keras gate order)
        c_t = clip(sigmoid(f) c_{t-1} + sigmoid(i) tanh(g), cell_clip)
        h_t = clip((sigmoid(o) tanh(c_t)) P, projection_clip)

    The input product `x W + b` is one matmul over the whole sequence; only
    the recurrent part runs in the loop.

    Padding is exact: at a padded step (mask 0) the state is carried
    unchanged and the output is 0, so a padded row gets what it gets alone.
    Going backwards (`go_backwards=True`) the loop runs from the end, so a
    row's backward pass starts from its initial state at its *last real*
    token (right padding); outputs are returned in the input's order.

    Args:
        units: cell size.
        projection_dim: output and recurrent-state width; None: no
            projection (a plain LSTM).
        cell_clip, projection_clip: clip the cell / the projected output
            to `[-clip, clip]`; None: no clipping.
        go_backwards: run right to left.
        stateful: carry the final state of each batch row into the next
            call (as Keras' `stateful=True`), which needs `batch_size`;
            `reset_states()` zeroes it. Otherwise every call starts from
            zeros, or from `initial_state`.
        batch_size: the fixed batch size of a stateful layer.
        recurrent_kernel_dropout: DropConnect on the hidden-to-hidden
            weights (Wan et al., 2013; AWD-LSTM's weight drop, fastai's
            `WeightDropout`): in training, each call zeroes this fraction
            of the recurrent kernel's entries (scaling the rest by
            1 / (1 - rate)), one mask for every row and step of the batch;
            off in inference.
        kernel_initializer, recurrent_initializer, projection_initializer:
            how new weights start; the forget-gate bias starts at 1.

    Call: `(inputs, mask=None, initial_state=None, training=None)`; inputs
    `(batch, time, features)`, mask `(batch, time)`, initial state
    `[h, c]` of shapes `(batch, projection_dim)`, `(batch, units)`.
    Returns `(outputs, [h, c])`: outputs `(batch, time, projection_dim)`,
    and the final state (for a forward layer, at each row's last real
    token; for a backward one, at its first).

    Example:
    ```python
    lstm = kzoo.layers.ProjectedLSTM(64, projection_dim=16, cell_clip=3.0)
    outputs, (h, c) = lstm(np.ones((2, 7, 16), "float32"))
    outputs.shape, h.shape, c.shape  # (2, 7, 16) (2, 16) (2, 64)
    ```
    """

    def __init__(self, units, projection_dim=None, cell_clip=None,
                 projection_clip=None, go_backwards=False, stateful=False,
                 batch_size=None, kernel_initializer="glorot_uniform",
                 recurrent_initializer="glorot_uniform",
                 projection_initializer="glorot_uniform",
                 recurrent_kernel_dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if stateful and not batch_size:
            raise ValueError(
                f"{self.name}: a stateful ProjectedLSTM needs batch_size "
                "(the state is kept per batch row); pass batch_size=..., or "
                "stateful=False.")
        self.units = int(units)
        self.projection_dim = None if projection_dim is None else int(
            projection_dim)
        self.cell_clip = None if cell_clip is None else float(cell_clip)
        self.projection_clip = None if projection_clip is None else float(
            projection_clip)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.batch_size = None if batch_size is None else int(batch_size)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer)
        self.projection_initializer = keras.initializers.get(
            projection_initializer)
        self.recurrent_kernel_dropout = float(recurrent_kernel_dropout)
        if not 0.0 <= self.recurrent_kernel_dropout < 1.0:
            raise ValueError(
                f"{self.name}: recurrent_kernel_dropout must be in [0, 1); "
                f"got {recurrent_kernel_dropout!r}.")
        self.seed = seed
        self.seed_generator = None
        if self.recurrent_kernel_dropout > 0:
            self.seed_generator = keras.random.SeedGenerator(seed)
        self.supports_masking = True

    @property
    def output_dim(self):
        return self.projection_dim or self.units

    def build(self, input_shape, *args, **kwargs):
        units = self.units
        self.kernel = self.add_weight(
            name="kernel", shape=(input_shape[-1], 4 * units),
            initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=(self.output_dim, 4 * units),
            initializer=self.recurrent_initializer)
        self.bias = self.add_weight(
            name="bias", shape=(4 * units,), initializer=_forget_bias_one)
        self.projection_kernel = None
        if self.projection_dim is not None:
            self.projection_kernel = self.add_weight(
                name="projection_kernel", shape=(units, self.projection_dim),
                initializer=self.projection_initializer)
        self.states = None
        if self.stateful:
            self.states = [
                runtime_state(self.add_weight(
                    name="state_h", trainable=False,
                    shape=(self.batch_size, self.output_dim),
                    initializer="zeros")),
                runtime_state(self.add_weight(
                    name="state_c", trainable=False,
                    shape=(self.batch_size, units), initializer="zeros"))]
        self.built = True

    # The carried states are not weights: saving leaves them out, so a
    # stateful layer's file loads into a stateless one and the reverse
    # (a loaded stateful layer starts from zero states). The layer has no
    # sub-layers, so `weights` is its own variables, in the order Keras
    # saves them (trainable, then not).
    def _saved_variables(self):
        return [v for v in self.weights if not is_runtime_state(v)]

    def save_own_variables(self, store):
        for i, variable in enumerate(self._saved_variables()):
            store[f"{i}"] = variable

    def load_own_variables(self, store):
        variables = self._saved_variables()
        if len(store.keys()) != len(variables):
            raise ValueError(
                f"Layer {self.name!r} expected {len(variables)} weights, "
                f"but the file holds {len(store.keys())}. Build the layer "
                "with the config it was saved with.")
        for i, variable in enumerate(variables):
            variable.assign(store[f"{i}"])

    def reset_states(self):
        if self.states is not None:
            for state in self.states:
                state.assign(ops.zeros(state.shape, state.dtype))

    def step(self, state, x_t, recurrent_kernel=None):
        """One step from `state = (h, c)` with the input product `x_t`
        (already `x W + b`); returns the new `(h, c)`. `recurrent_kernel`:
        the (weight-dropped) kernel to use; None: the layer's own."""
        h, c = state
        if recurrent_kernel is None:
            recurrent_kernel = self.recurrent_kernel
        z = x_t + ops.matmul(h, recurrent_kernel)  # (batch, 4 units)
        i, f, g, o = ops.split(z, 4, axis=-1)
        c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
        if self.cell_clip is not None:
            c = ops.clip(c, -self.cell_clip, self.cell_clip)
        h = ops.sigmoid(o) * ops.tanh(c)
        if self.projection_kernel is not None:
            h = ops.matmul(h, self.projection_kernel)
            if self.projection_clip is not None:
                h = ops.clip(h, -self.projection_clip, self.projection_clip)
        return h, c

    def dropped_recurrent_kernel(self, training=None):
        """The recurrent kernel this call uses: with DropConnect in
        training, one fresh mask (drawn once per call, not per step)."""
        kernel = ops.convert_to_tensor(self.recurrent_kernel)
        if not training or self.recurrent_kernel_dropout == 0:
            return kernel
        return keras.random.dropout(kernel, self.recurrent_kernel_dropout,
                                    seed=self.seed_generator)

    def call(self, inputs, mask=None, initial_state=None, training=None):
        batch = ops.shape(inputs)[0]
        recurrent_kernel = self.dropped_recurrent_kernel(training)
        if mask is None:
            mask = ops.ones(ops.shape(inputs)[:2], "bool")
        if initial_state is None:
            if self.stateful:
                initial_state = [ops.convert_to_tensor(s) for s in self.states]
            else:
                initial_state = [
                    ops.zeros((batch, self.output_dim), self.compute_dtype),
                    ops.zeros((batch, self.units), self.compute_dtype)]
        # Time-major for the loop: (time, batch, ...).
        products = ops.matmul(inputs, self.kernel) + self.bias
        products = ops.transpose(products, (1, 0, 2))
        steps_mask = ops.expand_dims(
            ops.transpose(ops.cast(mask, "bool"), (1, 0)), -1)
        if self.go_backwards:
            products = ops.flip(products, axis=0)
            steps_mask = ops.flip(steps_mask, axis=0)

        def body(state, step_inputs):
            x_t, real = step_inputs
            h, c = self.step(state, x_t, recurrent_kernel)
            # A padded step keeps the state and outputs zeros.
            h = ops.where(real, h, state[0])
            c = ops.where(real, c, state[1])
            # Keras' TensorFlow scan needs the per-step outputs shaped as
            # the carry: the cells come along (unused; XLA drops them).
            return (h, c), (ops.where(real, h, ops.zeros_like(h)), c)

        (h, c), (outputs, _) = ops.scan(body, tuple(initial_state),
                                        (products, steps_mask))
        if self.go_backwards:
            outputs = ops.flip(outputs, axis=0)
        outputs = ops.transpose(outputs, (1, 0, 2))  # (batch, time, out)
        if self.stateful:
            self.states[0].assign(h)
            self.states[1].assign(c)
        return outputs, [h, c]

    def compute_output_spec(self, inputs, mask=None, initial_state=None,
                            training=None):
        batch, time = inputs.shape[0], inputs.shape[1]
        return (keras.KerasTensor((batch, time, self.output_dim),
                                  self.compute_dtype),
                [keras.KerasTensor((batch, self.output_dim),
                                   self.compute_dtype),
                 keras.KerasTensor((batch, self.units), self.compute_dtype)])

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        config = super().get_config()
        config.update({
            "units": self.units, "projection_dim": self.projection_dim,
            "cell_clip": self.cell_clip,
            "projection_clip": self.projection_clip,
            "go_backwards": self.go_backwards, "stateful": self.stateful,
            "batch_size": self.batch_size,
            "recurrent_kernel_dropout": self.recurrent_kernel_dropout,
            "seed": self.seed,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer),
            "projection_initializer": keras.initializers.serialize(
                self.projection_initializer)})
        return config


@keras.saving.register_keras_serializable(package="kzoo")
def _forget_bias_one(shape, dtype=None):
    """Zeros, except 1 for the forget gate (the second quarter): a new LSTM
    remembers by default (Jozefowicz et al., 2015; TF's forget_bias=1)."""
    units = shape[0] // 4
    return ops.concatenate([ops.zeros((units,), dtype),
                            ops.ones((units,), dtype),
                            ops.zeros((2 * units,), dtype)])
