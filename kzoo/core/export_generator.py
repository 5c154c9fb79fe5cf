"""Exported generators: a task that generates (GPT-2's causal LM, T5,
BART) as a TensorFlow SavedModel that takes prompts as raw strings and
returns the generated text, decoding as `generate` does with the task's
generation settings. Loading needs TensorFlow and tf-text, not kzoo.

`Task.export(path)` calls `export_generator` here for a task that
generates. The choices, and why:

- **The loop is `generate`'s own** (`kzoo.generation.generate_loop`, the
  keras.ops loop that `generate` compiles), traced into an endpoint on
  token ids through Keras' `ExportArchive`, as `kzoo.core.export` adds
  `serve_token_ids`: on TensorFlow as it is, on JAX through `jax2tf`.
  The raw-text endpoints put the preprocessor's own tf ops around it
  (`generate_preprocess_tf`, `generate_postprocess_tf`: what `generate`
  runs on text), so there is no second tokenizer, loop or detokenizer.
- **Decided once, at export, by `generate`'s own functions**: the
  sampler, the stop tokens and the decoding controls, from the task's
  `generation_config` (or the one given), with the same checks and
  errors. What depends on the prompts (their lengths, where each row
  stops) is computed in the graph.
- **Fixed lengths, free batch**: every row is `max_length` tokens (the
  prompt included; `generate`'s default: the settings' `max_length`, else
  the preprocessor's), and the encoder of T5 and BART reads its
  preprocessor's `sequence_length`. A prompt that leaves no room fails in
  the graph with a message, as `generate` raises.
- **Deterministic decoding only** (greedy, beam search): a sampling
  SavedModel would answer the same prompt differently on every call.
"""

import types

import keras
import tensorflow as tf

from kzoo.core.export import (ExportError, check_backend, check_destination,
                              text_resources, write_folder_whole)
from kzoo.core.sentencepiece_tokenizer import one_model_per_tokenizer
from kzoo.generation import compiled
from kzoo.generation.generate import (generate_loop, prefill_length,
                                      resolve_lengths, resolve_stop_tokens)
from kzoo.generation.settings import (checked_config, requested_lengths,
                                      resolve_controls, resolve_sampler)

GENERATE_ENDPOINT = "generate"
LIMITED_ENDPOINT = "generate_max_new_tokens"
TOKEN_IDS_ENDPOINT = "generate_token_ids"


def can_generate(task):
    """Whether `task` decodes with `kzoo.generation` (it says what the
    loop needs to know of it in `generation_arguments`)."""
    return callable(getattr(task, "generation_arguments", None))


def export_generator(task, filepath, max_length=None, sampler=None,
                     generation_config=None, verbose=None):
    """Write `task` as a generator SavedModel (see this module's
    docstring; `Task.export` documents it)."""
    owner = f"{type(task).__name__}.export"
    if not can_generate(task):
        raise ExportError(
            f"{owner}: {type(task).__name__} does not generate text, so "
            "there is no generator to export; export(path) without "
            "generator=True serves what predict returns.")
    preprocessor = task.preprocessor
    if preprocessor is None:
        raise ExportError(
            f"{owner}: the task has no preprocessor, so there is no "
            "tokenizer to put in the generator's graph. Build it with its "
            "preprocessor (from_preset(...) makes one).")
    plan = _plan(task, max_length, sampler, generation_config, owner)
    check_destination(filepath, owner)
    check_backend(owner)

    archive = keras.export.ExportArchive()
    specs = _token_id_specs(plan)
    if keras.backend.backend() == "tensorflow":
        ids_fn = archive.add_endpoint(TOKEN_IDS_ENDPOINT,
                                      _token_ids_function(task, plan), specs)
    else:
        # JAX: the archive hands the tracked variables to the
        # jax2tf-converted loop; a generator is for inference only.
        archive.track(task)
        ids_fn = archive.add_endpoint(
            TOKEN_IDS_ENDPOINT, _token_ids_function(task, plan), specs,
            jax2tf_kwargs={"with_gradient": False})

    def generate_max_new_tokens(prompts, max_new_tokens):
        return _generate_text(preprocessor, plan, ids_fn, prompts,
                              max_new_tokens)

    prompts = tf.TensorSpec([None], tf.string, name="prompts")
    limit = tf.TensorSpec([], tf.int32, name="max_new_tokens")
    limited_fn = tf.function(generate_max_new_tokens,
                             input_signature=[prompts, limit],
                             autograph=False)
    # Without a limit: the settings' max_new_tokens, else up to
    # max_length (the graph of the prompts and the loop is traced once).
    default_limit = plan.max_new_tokens or plan.max_length
    text_fn = tf.function(
        lambda prompts: limited_fn(prompts, tf.constant(default_limit)),
        input_signature=[prompts], autograph=False)
    with one_model_per_tokenizer():
        archive.add_endpoint(GENERATE_ENDPOINT, text_fn)  # traced
        archive.add_endpoint(LIMITED_ENDPOINT, limited_fn)
        # TensorFlow Serving calls `serving_default`: the prompts alone.
        archive.add_endpoint("serving_default", text_fn)
        # The tokenizer's tables and models, which the archive saves only
        # if it tracks them.
        for resource in text_resources(preprocessor):
            archive.track(resource)
        verbose = True if verbose is None else bool(verbose)
        write_folder_whole(filepath, lambda staging: archive.write_out(
            staging, verbose=verbose))
    return filepath


def _plan(task, max_length, sampler, generation_config, owner):
    """`generate`'s decisions from the task's (or the given) settings,
    checked by `generate`'s own functions before any export work."""
    arguments = task.generation_arguments()
    settings = checked_config(task.generation_config
                              if generation_config is None
                              else generation_config)
    sampler = resolve_sampler(sampler, settings)
    if sampler.needs_noise or (sampler.is_beam and
                               sampler.return_all_beams):
        raise ExportError(
            f"{owner}: an exported generator decodes greedily or with beam "
            f"search (its best beam), not with {type(sampler).__name__}"
            f"{' (return_all_beams)' if sampler.is_beam else ''}: a served "
            "model must give the same text for the same prompt. Pass "
            "sampler='greedy' or 'beam' (or none: the settings decide).")
    if sampler.is_beam and keras.backend.backend() == "jax":
        # Checked with jax 0.10 and TensorFlow 2.21: jax2tf serializes
        # beam search's top_k as a StableHLO composite that TensorFlow's
        # XlaCallModule cannot read, so the SavedModel fails when served.
        raise ExportError(
            f"{owner}: a beam-search generator is exported from the "
            "TensorFlow backend (jax2tf writes JAX's top_k in a form "
            "TensorFlow cannot run). Save the task with "
            "save_to_preset(folder), load it in a process started with "
            "KERAS_BACKEND=tensorflow and export there, or pass "
            "sampler='greedy'.")
    max_length, max_new_tokens = requested_lengths(max_length, None,
                                                   settings)
    if max_length is None:
        max_length = arguments["default_max_length"]
    if max_length is None:
        raise ExportError(
            f"{owner}: pass max_length (the longest output, prompt "
            "included): neither the generation settings nor the "
            "preprocessor give one.")
    max_length, _ = resolve_lengths([1], max_length, None,
                                    arguments["position_limit"])
    if max_new_tokens is not None:
        resolve_lengths([1], max_length, max_new_tokens, None)
    vocabulary_size = arguments["vocabulary_size"]
    stop_token_ids = resolve_stop_tokens(
        "auto", arguments["default_stop_token_ids"], vocabulary_size)
    controls = resolve_controls({}, settings, vocabulary_size, max_length,
                                max_new_tokens, 1)
    encoder_length = None
    if "decoder_start_token_id" in arguments:  # an encoder-decoder
        encoder_length = task.preprocessor.sequence_length
        limit = arguments["encoder_length_limit"]
        if limit is not None and encoder_length > limit:
            raise ExportError(
                f"{owner}: the preprocessor reads {encoder_length} tokens, "
                f"more than the encoder's position table ({limit}); build "
                f"it with sequence_length <= {limit}.")
    # What `generate` decides before its loop, decided at export.
    return types.SimpleNamespace(
        sampler=sampler, max_length=max_length,
        max_new_tokens=max_new_tokens, stop_token_ids=stop_token_ids,
        controls=controls, pad_token_id=arguments["pad_token_id"],
        decoder_start_token_id=arguments.get("decoder_start_token_id"),
        encoder_length=encoder_length)


def _token_id_specs(plan):
    """The token-ids endpoint's inputs: rows, prompt lengths, end
    positions (and the encoder's ids and mask), the batch free."""
    specs = [tf.TensorSpec([None, plan.max_length], tf.int32,
                           name="token_ids"),
             tf.TensorSpec([None], tf.int32, name="prompt_lengths"),
             tf.TensorSpec([None], tf.int32, name="end_positions")]
    if plan.encoder_length is not None:
        specs += [tf.TensorSpec([None, plan.encoder_length], tf.int32,
                                name=name)
                  for name in ("encoder_token_ids", "encoder_padding_mask")]
    return specs


def _token_ids_function(task, plan):
    """`generate`'s loop as a function of the token-ids endpoint's inputs
    -> `{"token_ids": (batch, max_length), "lengths": (batch,)}`."""
    loop = generate_loop(task, plan.sampler, plan.stop_token_ids,
                         plan.pad_token_id, controls=plan.controls)
    # The prefill covers the longest prompt the rows can hold: the prompt
    # lengths are known only when the graph runs (positions past a row's
    # prompt are written again as it decodes).
    prompt_room = 1 if plan.encoder_length is not None else \
        plan.max_length - 1
    prefix_length = prefill_length([prompt_room], plan.max_length)

    def generate_token_ids(token_ids, prompt_lengths, end_positions,
                           *encoder_inputs):
        # Greedy and beam search draw nothing; the loop takes a key all
        # the same.
        outputs = loop(token_ids, token_ids[:, :prefix_length],
                       prompt_lengths, end_positions,
                       compiled.initial_rng(0), *encoder_inputs)
        if plan.sampler.is_beam:
            sequences, _, lengths = outputs
            sequences, lengths = sequences[:, 0], lengths[:, 0]
        else:
            sequences, lengths = outputs
        return {"token_ids": sequences, "lengths": lengths}

    return generate_token_ids


def _generate_text(preprocessor, plan, ids_fn, prompts, max_new_tokens):
    """The raw-text endpoints' graph: prompts and the most new tokens
    (int32 scalars) -> `{"texts", "token_ids", "padding_mask"}`, as
    `generate` returns text (and, given a dict, the rows and their
    mask)."""
    length = plan.max_length
    pad = tf.constant(plan.pad_token_id, tf.int32)
    ids = tf.cast(preprocessor.generate_preprocess_tf(prompts), tf.int32)
    batch = ids.nrows(out_type=tf.int32)
    checks = []
    if plan.encoder_length is None:
        prompt_lengths = tf.cast(ids.row_lengths(), tf.int32)
        checks.append(tf.debugging.assert_less(
            prompt_lengths, length, message=(
                f"a prompt leaves no room to generate within "
                f"max_length={length} (the longest output this generator "
                f"makes, prompt included): send prompts shorter than "
                f"{length} tokens, or export with a larger max_length")))
        inputs = [ids.to_tensor(pad, shape=[None, length])]
        encoder_inputs = []
    else:
        prompt_lengths = tf.ones([batch], tf.int32)
        start = tf.fill([batch, 1], tf.constant(plan.decoder_start_token_id,
                                                tf.int32))
        inputs = [tf.concat([start, tf.fill([batch, length - 1], pad)],
                            axis=1)]
        encoder_inputs = [
            ids.to_tensor(pad, shape=[None, plan.encoder_length]),
            tf.sequence_mask(ids.row_lengths(), plan.encoder_length,
                             tf.int32)]
    checks.append(tf.debugging.assert_positive(
        max_new_tokens, message="max_new_tokens must be >= 1"))
    end_positions = tf.minimum(prompt_lengths + max_new_tokens, length)
    with tf.control_dependencies(checks):
        outputs = ids_fn(inputs[0], prompt_lengths, end_positions,
                         *encoder_inputs)
    lengths = tf.cast(outputs["lengths"], tf.int32)
    padding_mask = tf.sequence_mask(lengths, length)
    token_ids = tf.where(padding_mask, tf.cast(outputs["token_ids"],
                                               tf.int32), pad)
    texts = preprocessor.generate_postprocess_tf(
        tf.RaggedTensor.from_tensor(token_ids, lengths=lengths),
        plan.stop_token_ids)
    return {"texts": texts, "token_ids": token_ids,
            "padding_mask": padding_mask}
