"""What a pretraining run reports and saves while Keras' `fit` runs it.

`fit` sees each checkpoint interval as one "epoch" (`steps_per_epoch` =
the interval's batches), so Keras' epoch end is where checkpoints are
written and the held-out set is scored (`validation_data`,
`validation_freq`), and a resumed run is `fit(initial_epoch=...)`.

Why our own metrics logger and not `keras.callbacks.TensorBoard` (read
on Keras 3.15.1): its batch-level summaries are numbered by a counter it
resets to 0 in `on_train_begin`, so a resumed run's curve would start
over at step 0 on top of the first run's; and Keras' batch logs hold the
loss averaged since the epoch began, not the step's. Here each optimizer
step's own loss is written under its global step (with `tf.summary`, the
same event files TensorBoard reads), and the progress bar counts steps of
the whole run, not batches of an "epoch".
"""

import json
import math
import time

import keras
import numpy as np

# Within this many nats of the corpus' unigram entropy, a held-out loss
# says the model predicts little beyond each token's frequency (the
# plateau a from-scratch run can stay on: docs/pretraining_at_scale.md).
PLATEAU_MARGIN = 0.1
# Tokens counted at a time: the memory of the count stays bounded however
# large the shards are.
_COUNT_CHUNK = 1 << 24


class RunMetrics(keras.callbacks.Callback):
    """Per optimizer step: loss, learning rate, real tokens and tokens/s
    and (with a peak FLOP/s) model FLOPs utilisation, to metrics.jsonl, TensorBoard and a
    progress bar; evaluation results when `fit` scored the held-out set.

    A step's loss is recovered from Keras' running mean: after batch `k`
    (from 1) of an epoch the mean is `m_k`, and batch `k`'s loss is
    `k * m_k - (k - 1) * m_(k-1)` (float64 arithmetic on float32 means:
    a rounding error of about `k * 1e-7` relative; the same in every run
    with the same checkpoint interval, resumed or not).
    """

    def __init__(self, run):
        super().__init__()
        self.run = run
        self.step = run.start_step
        self.interval_losses = []
        self._writer = None
        self._progbar = None

    # --- set-up ------------------------------------------------------------
    def on_train_begin(self, logs=None):
        run = self.run
        self._metrics_file = open(run.metrics_path, "a", encoding="utf-8")
        self._writer = _summary_writer(run.tensorboard_dir)
        if run.options["verbose"]:
            self._progbar = keras.utils.Progbar(
                run.options["max_steps"], stateful_metrics=[
                    "loss", "lr", "tokens/s", "mfu"])
            self._progbar.update(self.step)
        self._last_time = time.perf_counter()

    def on_epoch_begin(self, epoch, logs=None):
        self._previous_mean = 0.0
        self._micro_losses = []

    def on_train_batch_end(self, batch, logs=None):
        run = self.run
        count = batch + 1
        mean = float(logs["loss"])
        self._micro_losses.append(count * mean - batch * self._previous_mean)
        self._previous_mean = mean
        if len(self._micro_losses) < run.accumulation:
            return
        loss = sum(self._micro_losses) / len(self._micro_losses)
        self._micro_losses = []
        now = time.perf_counter()
        seconds, self._last_time = now - self._last_time, now
        # Real (non-padding) tokens; MFU from the FLOPs a token costs
        # (non-embedding parameters and attention: throughput.py).
        tokens = run.real_tokens_of_step(self.step)
        record = {"step": self.step + 1, "loss": loss,
                  "learning_rate": run.learning_rate_at(self.step),
                  "tokens": tokens,
                  "tokens_per_second": tokens / max(seconds, 1e-9)}
        if run.peak_flops:
            record["mfu"] = (run.flops_per_token
                             * record["tokens_per_second"] / run.peak_flops)
        self.step += 1
        self.interval_losses.append(loss)
        run.note_step(record)
        self._write(record)
        if self._progbar is not None:
            values = [("loss", loss), ("lr", record["learning_rate"]),
                      ("tokens/s", record["tokens_per_second"])]
            if "mfu" in record:
                values.append(("mfu", record["mfu"]))
            self._progbar.update(self.step, values)
        if self.step >= run.options["max_steps"]:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        evaluated = {key[4:]: float(value) for key, value in logs.items()
                     if key.startswith("val_")}
        if evaluated:
            self.write_evaluation(evaluated)
        # After the evaluation, the checkpoint (CheckpointSaver runs next).
        self._metrics_file.flush()
        if self._writer is not None:
            self._writer.flush()

    def write_evaluation(self, evaluated):
        record = {"step": self.step, **{f"eval_{key}": value for key, value
                                        in evaluated.items()}}
        language_model_loss = language_model_loss_of(evaluated)
        if language_model_loss is not None:
            record["eval_perplexity"] = math.exp(min(language_model_loss,
                                                     700))
        self.run.note_evaluation(record)
        self._write(record)
        if language_model_loss is not None:
            self._report_plateau(language_model_loss)
        if self._progbar is not None:
            print(" ".join(f"{k}={v:.4g}" for k, v in record.items()
                           if k != "step") + f" (step {self.step})")

    def _report_plateau(self, loss):
        """Print the held-out loss beside the corpus' unigram entropy (the
        loss of predicting every token by its frequency alone), with a
        warning while the model does no better than that."""
        run = self.run
        engine = getattr(run, "engine", None)
        shards = getattr(getattr(run, "corpus", None), "shards", None)
        if not shards or (engine is not None and not engine.chief):
            return
        if getattr(self, "_unigram_entropy", None) is None:
            self._unigram_entropy = unigram_entropy(shards)
        print(plateau_report(loss, self._unigram_entropy, self.step),
              flush=True)

    def _write(self, record):
        self._metrics_file.write(json.dumps(record) + "\n")
        if self._writer is not None:
            import tensorflow as tf
            with self._writer.as_default(step=record["step"]):
                for key, value in record.items():
                    if key != "step":
                        tf.summary.scalar(key, value)

    def flush_metrics(self):
        """metrics.jsonl on disk; returns its size in bytes."""
        import os
        self._metrics_file.flush()
        os.fsync(self._metrics_file.fileno())
        return self._metrics_file.tell()

    def on_train_end(self, logs=None):
        self._metrics_file.close()
        if self._writer is not None:
            self._writer.close()


class CheckpointSaver(keras.callbacks.Callback):
    """At an epoch end that is a checkpoint step (or the last step), save
    a checkpoint (`run.save_checkpoint`)."""

    def __init__(self, run, metrics):
        super().__init__()
        self.run = run
        self.metrics = metrics

    def on_train_batch_begin(self, batch, logs=None):
        # The global generators as the checkpoint left them, just before
        # the first step: Keras' set-up draws from them (on torch, the
        # DataLoader that `fit` reads a generator through draws its base
        # seed from torch's generator when its iterator is made).
        if self.run.global_rngs is not None:
            from kzoo.pretraining.rng import restore_global_states
            restore_global_states(self.run.global_rngs)
            self.run.global_rngs = None

    def on_epoch_end(self, epoch, logs=None):
        step = self.metrics.step
        if step % self.run.options["checkpoint_every"] == 0 or \
                step >= self.run.options["max_steps"]:
            self.run.save_checkpoint(step, self.metrics)


def _summary_writer(folder):
    """A `tf.summary` writer into `folder`, or None without TensorFlow
    and TensorBoard (`tf.summary.scalar` needs the `tensorboard`
    package); metrics.jsonl holds the same numbers."""
    try:
        import tensorboard  # noqa: F401 - tf.summary.scalar needs it
        import tensorflow as tf
    except ImportError:
        return None
    return tf.summary.create_file_writer(str(folder))


def language_model_loss_of(evaluated):
    """The token-prediction loss whose exp is a perplexity: the masked-LM
    head's (`mlm_loss`) of a pretrainer with several heads, else the loss
    of a task with one; None when the total mixes objectives (NSP's,
    ELECTRA's discriminator's), whose exp means nothing."""
    if "mlm_loss" in evaluated:
        return evaluated["mlm_loss"]
    if any(key.endswith("_loss") for key in evaluated):
        return None
    return evaluated.get("loss")


def unigram_entropy(shards):
    """The entropy, in nats, of the token frequencies of `shards` (a
    corpus' `shards`): the held-out loss of a model that predicts every
    token by how often it occurs, ignoring its context."""
    counts = np.zeros((0,), np.int64)
    for shard in shards:
        for start in range(0, shard.tokens.size, _COUNT_CHUNK):
            found = np.bincount(np.asarray(
                shard.tokens[start:start + _COUNT_CHUNK], np.int64))
            if found.size > counts.size:
                counts = np.pad(counts, (0, found.size - counts.size))
            counts[:found.size] += found
    total = counts.sum()
    if total == 0:
        return None
    shares = counts[counts > 0] / total
    return float(-(shares * np.log(shares)).sum())


def plateau_report(loss, entropy, step):
    """One line: the held-out loss at `step` beside the unigram entropy,
    with a warning while the loss is within `PLATEAU_MARGIN` of it (or
    above it)."""
    if entropy is None:
        return f"kzoo pretrain: held-out loss {loss:.3f} (step {step})"
    line = (f"kzoo pretrain: held-out loss {loss:.3f} nats at step {step}; "
            f"the corpus' unigram entropy {entropy:.3f} nats "
            f"({relative_to_entropy(loss, entropy)} it)")
    if loss > entropy - PLATEAU_MARGIN:
        line += ("\nkzoo pretrain: warning: the model predicts no better "
                 "than word frequencies alone (the unigram plateau): it has "
                 "learned nothing of the context yet. Train longer, or with "
                 "the small-model recipe (a higher --learning-rate with "
                 "warmup, --clip-norm, --pretraining-dropout 0, a smaller "
                 "vocabulary): docs/pretraining_at_scale.md")
    return line


def relative_to_entropy(loss, entropy):
    """"1.234 below" or "0.567 above": where `loss` is against the
    unigram entropy."""
    side = "below" if loss <= entropy else "above"
    return f"{abs(entropy - loss):.3f} {side}"
