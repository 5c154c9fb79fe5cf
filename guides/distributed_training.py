"""
# Distributed training with kzoo

Every kzoo model trains on many devices and many machines through the
engine its backend already has. kzoo adds no parallelism of its own; it
gives each engine what it needs:

| backend    | one machine, many devices          | many machines               |
|------------|------------------------------------|-----------------------------|
| JAX        | `keras.distribution.DataParallel`, | `keras.distribution.        |
|            | `ModelParallel` + each backbone's  | initialize()`               |
|            | `get_layout_map(mesh)`             |                             |
| TensorFlow | `MirroredStrategy`, `TPUStrategy`  | `MultiWorkerMirroredStrategy`|
|            | (`kzoo.distribution.strategy()`)   | (`TF_CONFIG`)               |
| PyTorch    | `DistributedDataParallel`, one     | `torchrun` on every host    |
|            | process per device (`torchrun`)    |                             |

One training script serves every launch (section 5); `scripts/launch.py`
starts it as one process, several, or one per host.

Run this guide on a laptop: it fakes 8 devices on the CPU (JAX: XLA's host
platform device count; TensorFlow: logical CPU devices; PyTorch: two gloo
processes on 127.0.0.1).

    KERAS_BACKEND=jax        python guides/distributed_training.py
    KERAS_BACKEND=tensorflow python guides/distributed_training.py
    KERAS_BACKEND=torch      python guides/distributed_training.py
    python guides/distributed_training.py --all      # all three, in turn
    ... --smoke                                      # the test's quick run

Virtual devices share the same CPU cores, so they show that the numbers are
right, not that training gets faster.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

BACKEND = os.environ.setdefault("KERAS_BACKEND", "jax")
SMOKE = "--smoke" in sys.argv
# Eight virtual devices; the smoke run gives TensorFlow two (it traces one
# graph per replica, which is slow on shared CPU cores).
VIRTUAL_DEVICES = 2 if SMOKE and BACKEND == "tensorflow" else 8

# Devices are fixed when a backend starts, so set them up before importing
# it. On real accelerators leave these out.
if BACKEND == "jax":
    os.environ.setdefault(
        "XLA_FLAGS",
        f"--xla_force_host_platform_device_count={VIRTUAL_DEVICES}")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

if BACKEND == "tensorflow":
    tf.config.set_logical_device_configuration(
        tf.config.list_physical_devices("CPU")[0],
        [tf.config.LogicalDeviceConfiguration()] * VIRTUAL_DEVICES)

import keras  # noqa: E402

import kzoo  # noqa: E402
from kzoo import distribution as kd  # noqa: E402

"""
## 0. A tiny model and a few sentences

The guide uses a 2-layer BERT with the real `bert_tiny_en_uncased`
WordPiece vocabulary, so it runs in seconds; with a real preset
(`kzoo.BertMaskedLM.from_preset("bert_base_en_uncased")`) nothing else
changes.
"""

TEXTS = [
    "It is a truth universally acknowledged, that a single man in "
    "possession of a good fortune, must be in want of a wife.",
    "The Dashwoods were now settled at Barton with tolerable comfort.",
    "Emma Woodhouse, handsome, clever, and rich, seemed to unite some of "
    "the best blessings of existence.",
    "No one who had ever seen Catherine Morland in her infancy would have "
    "supposed her born to be an heroine.",
] * 4
LABELS = [0, 1, 2, 3] * 4
TINY = dict(num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=64,
            max_sequence_length=32)


def tokenizer():
    return kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")


def masked_lm():
    tok = tokenizer()
    backbone = kzoo.BertBackbone(vocabulary_size=tok.vocabulary_size, **TINY)
    preprocessor = kzoo.BertMaskedLMPreprocessor(tok, sequence_length=32)
    return kzoo.BertMaskedLM(backbone, preprocessor=preprocessor)


def classifier():
    tok = tokenizer()
    backbone = kzoo.BertBackbone(vocabulary_size=tok.vocabulary_size, **TINY)
    preprocessor = kzoo.BertPreprocessor(tok, sequence_length=32)
    return kzoo.BertTextClassifier(backbone, num_classes=4,
                                   preprocessor=preprocessor)


def fit_and_time(task, epochs):
    start = time.perf_counter()
    history = task.fit(TEXTS, LABELS if isinstance(
        task, kzoo.BertTextClassifier) else None, batch_size=8,
        epochs=epochs, verbose=0)
    seconds = time.perf_counter() - start
    print(f"    loss per epoch: "
          f"{[round(v, 4) for v in history.history['loss']]} "
          f"({seconds:.1f}s)")
    return history


"""
## 1. JAX: data parallel and model parallel with `keras.distribution`

**Data parallel** needs no kzoo code at all: build and train inside a
`DataParallel` scope. Variables are replicated on every device, each batch
is split along its first axis, and XLA inserts the gradient all-reduce.
`kd.data_parallel()` is the same thing (and picks the right engine on the
other backends).

**Model parallel** splits the weights themselves. Every kzoo backbone
has `get_layout_map(device_mesh)`, which turns the family's
`layout_rules()` into a `keras.distribution.LayoutMap`, Megatron-style:
query/key/value and the first feed-forward kernel are split by output
columns, the attention-output and second feed-forward kernels by input
rows, the token embedding by hidden columns; LayerNorms and heads stay
whole. On a `(2, 4)` mesh the batch is split 2 ways and each weight 4
ways.
"""


def jax_section(smoke):
    devices = keras.distribution.list_devices()
    print(f"  {len(devices)} devices: {devices[:2]} ...")

    print("  data parallel, masked LM on raw strings:")
    with keras.distribution.DataParallel(devices=devices).scope():
        mlm = masked_lm()
        if smoke:  # tests/distribution/test_distribution_jax.py fits it
            print("    (fit skipped in the smoke run)")
        else:
            fit_and_time(mlm, epochs=3)

    print("  model parallel on a (batch=2, model=4) mesh:")
    mesh = keras.distribution.DeviceMesh(
        shape=(2, 4), axis_names=("batch", "model"), devices=devices)
    layout_map = kzoo.BertBackbone.get_layout_map(
        mesh, model_parallel_dim_name="model", data_parallel_dim_name="batch")
    distribution = keras.distribution.ModelParallel(
        layout_map=layout_map, batch_dim_name="batch")
    with distribution.scope():
        mlm = masked_lm()
        fit_and_time(mlm, epochs=1 if smoke else 3)
    for weight in mlm.backbone.weights:
        if weight.path.startswith(("token_embedding", "transformer_layer_0")) \
                and weight.path.endswith(("kernel", "embeddings")):
            local = weight.value.addressable_shards[0].data.shape
            print(f"    {weight.path:<48} {str(tuple(weight.shape)):<12} "
                  f"-> {str(weight.value.sharding.spec):<22} local {local}")
    # The same in one line: kd.model_parallel(kzoo.BertBackbone, (2, 4)).
    # Every family works the same way, GPT-2 included:
    #     kd.model_parallel(kzoo.GPT2Backbone, (2, 4))

    if not smoke and hasattr(kzoo, "GPT2CausalLM"):
        print("  GPT-2 generation under data parallel:")
        with keras.distribution.DataParallel(devices=devices).scope():
            backbone = kzoo.GPT2Backbone(vocabulary_size=256, **TINY)
            lm = kzoo.GPT2CausalLM(backbone)
            print("   ", lm.generate([[5, 6, 7], [8, 9]], max_length=10))


"""
## 2. TensorFlow: `tf.distribute`

`kzoo.distribution.strategy()` returns the strategy the machine supports:
`TPUStrategy` when a TPU is reachable, `MultiWorkerMirroredStrategy` when
`TF_CONFIG` names several workers, `MirroredStrategy` over several GPUs,
and the default strategy otherwise. Build (or load a preset) inside
`strategy.scope()`; `fit` may be called inside or outside it. Tasks
compile lazily, on the first `fit`, in the strategy they were built in,
so the default optimizer and loss just work (keras-hub users know the
"default compilation won't work for tf.distribute" warning: kzoo has no
such case). `batch_size` is the global batch; each replica gets its share.

Here `devices=` names the logical CPUs; on a GPU machine call
`kd.strategy()` with no arguments.
"""


def tensorflow_section(smoke):
    devices = [d.name for d in tf.config.list_logical_devices("CPU")]
    strategy = kd.strategy(devices=devices)
    print(f"  {type(strategy).__name__} with "
          f"{strategy.num_replicas_in_sync} replicas")
    with tempfile.TemporaryDirectory() as tmp:
        classifier().save_to_preset(f"{tmp}/tiny_classifier")
        with strategy.scope():
            # Any preset: kzoo.BertTextClassifier.from_preset(
            #     "bert_base_en_uncased", num_classes=4)
            model = kzoo.BertTextClassifier.from_preset(
                f"{tmp}/tiny_classifier", num_classes=4)
        print("  preset loaded inside the scope as",
              type(model.backbone.weights[0].value).__name__)
        fit_and_time(model, epochs=1 if smoke else 3)
        with strategy.scope():
            model.save_to_preset(f"{tmp}/tiny_classifier_tuned")


"""
### On a TPU (Colab or Cloud TPU)

The same code runs on a TPU: only the strategy changes, and
`kd.strategy()` finds it.

*Colab*: Runtime > Change runtime type > TPU. Then, in the first cell:

    !pip install kzoo tensorflow-tpu -f https://storage.googleapis.com/libtpu-tf-releases/index.html
    import os; os.environ["KERAS_BACKEND"] = "tensorflow"   # before keras

*Cloud TPU VM*:

    gcloud compute tpus tpu-vm create my-tpu --zone=us-central1-b \\
        --accelerator-type=v3-8 --version=tpu-vm-tf-2.16.1-pjrt
    gcloud compute tpus tpu-vm ssh my-tpu --zone=us-central1-b
    pip install kzoo && export KERAS_BACKEND=tensorflow

Then (`tpu="local"` on a TPU VM; a `grpc://` address or `TPU_NAME` for a
TPU node; `kd.strategy()` reads these itself):

    strategy = kd.strategy()          # TPUStrategy
    with strategy.scope():
        classifier = kzoo.BertTextClassifier.from_preset(
            "bert_base_en_uncased", num_classes=2, sequence_length=128)
    classifier.fit(texts, labels, batch_size=8 * strategy.num_replicas_in_sync)

Behind `kd.strategy()` are the three documented calls
(`TPUClusterResolver`, `experimental_connect_to_cluster`,
`initialize_tpu_system`) and `tf.distribute.TPUStrategy(resolver)`; every
line after that is the code this guide runs with `MirroredStrategy`. Give
the preprocessor a fixed `sequence_length` (XLA on TPU wants static
shapes; kzoo's preprocessors always pad to it). The tokenizers run in
`tf.data` on the TPU VM's host CPU.

On JAX, a TPU is just more devices: section 1 runs unchanged, with
`keras.distribution.list_devices()` returning the TPU cores.
"""

"""
## 3. PyTorch: DistributedDataParallel

PyTorch runs one process per device. Launch the script with `torchrun`
(or `scripts/launch.py --backend torch`, which calls it). In the script,
`kd.initialize()` calls `torch.distributed.init_process_group` (NCCL on
GPUs, gloo on CPU) and `kd.prepare(task)` puts the task's training step
through `torch.nn.parallel.DistributedDataParallel`: DDP broadcasts rank
0's weights, averages gradients in its backward hooks, and the task's own
Keras optimizer applies them. `fit` still takes raw strings through the
preprocessor; every process reads the same data with the global
`batch_size` and trains on its share of each batch.
"""

"""
## 4. Many processes, many machines

The training script below is the one every launch runs; only the launcher
command changes. `kd.initialize()` joins the group the launcher describes:

* JAX: `keras.distribution.initialize()` reads
  `KERAS_DISTRIBUTION_JOB_ADDRESSES` (the coordinator's `host:port`),
  `KERAS_DISTRIBUTION_NUM_PROCESSES` and `KERAS_DISTRIBUTION_PROCESS_ID`;
  `DataParallel` then spans the devices of every process, and each process
  reads its share of every global batch.
* TensorFlow: `MultiWorkerMirroredStrategy` reads `TF_CONFIG`
  (`{"cluster": {"worker": [...]}, "task": {"type": "worker",
  "index": i}}`).
* PyTorch: `torchrun` sets `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, ... .
"""

TRAIN_SCRIPT = '''
"""Data-parallel fine-tuning: the same file for every backend and launch."""
import sys

from kzoo import distribution as kd

index, count = kd.initialize()        # join the process group (if any)

import kzoo

texts = {texts!r}
labels = {labels!r}

with kd.data_parallel():
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    backbone = kzoo.BertBackbone(vocabulary_size=tokenizer.vocabulary_size,
                                 **{tiny!r})
    classifier = kzoo.BertTextClassifier(
        backbone, num_classes=4,
        preprocessor=kzoo.BertPreprocessor(tokenizer, sequence_length=32))
    classifier = kd.prepare(classifier)     # torch: DDP; others: as is
    history = classifier.fit(texts, labels, batch_size=8,   # global batch
                             epochs=int(sys.argv[1]), verbose=0)
print(f"process {{index}} of {{count}}: loss "
      f"{{[round(v, 4) for v in history.history['loss']]}}", flush=True)
'''


def write_train_script(directory):
    path = Path(directory) / "train.py"
    path.write_text(TRAIN_SCRIPT.format(texts=TEXTS, labels=LABELS,
                                        tiny=TINY))
    return path


def launch_section(smoke):
    from kzoo.distribution.launch import Plan, run
    with tempfile.TemporaryDirectory() as tmp:
        script = write_train_script(tmp)
        epochs = "1" if smoke else "2"
        print(f"  two {BACKEND} processes on 127.0.0.1:")
        plan = Plan(BACKEND, [str(script), epochs], processes=2)
        env_backup = os.environ.pop("XLA_FLAGS", None)  # 1 device each
        try:
            status = run(plan, timeout=300)
        finally:
            if env_backup is not None:
                os.environ["XLA_FLAGS"] = env_backup
        if status != 0:
            raise SystemExit(f"the launch failed with status {status}")


def multi_host_section():
    from kzoo.distribution.launch import Plan
    print("  the same script on two hosts with 4 GPUs each "
          "(commands for host 1):")
    hosts = ["10.0.0.1", "10.0.0.2"]
    # JAX and TensorFlow run one process per host, which drives all its
    # devices; PyTorch runs one process per device.
    processes = 4 if BACKEND == "torch" else 1
    plan = Plan(BACKEND, ["train.py", "3"], processes=processes,
                hosts=hosts, host_index=1, port=29500, python="python")
    print(textwrap.indent(plan.describe(), "    "))
    print("    (that is: python scripts/launch.py --backend "
          f"{BACKEND} --hosts {','.join(hosts)} --host-index 1 "
          f"--processes {processes} --port 29500 train.py 3)")


"""
On a cluster, run the `scripts/launch.py` line on every host with its own
`--host-index` (Slurm: `--host-index $SLURM_NODEID`, hosts from
`scontrol show hostnames`). JAX on Cloud TPU pods needs no addresses at
all: `keras.distribution.initialize()` finds the other hosts itself.
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true",
                        help="one epoch each: the test's quick run")
    parser.add_argument("--all", action="store_true",
                        help="run the guide on every backend in turn")
    args = parser.parse_args(argv)
    if args.all:
        for backend in ("jax", "tensorflow", "torch"):
            env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
            env["KERAS_BACKEND"] = backend
            command = [sys.executable, __file__] + (
                ["--smoke"] if args.smoke else [])
            subprocess.run(command, env=env, check=True)
        return
    keras.utils.set_random_seed(0)
    print(f"=== {BACKEND} ===")
    if BACKEND == "jax":
        jax_section(args.smoke)
    elif BACKEND == "tensorflow":
        tensorflow_section(args.smoke)
    # Multi-process data parallelism; on torch this is the DDP section.
    if BACKEND == "torch" or not args.smoke:
        launch_section(args.smoke)
    multi_host_section()
    print("done")


if __name__ == "__main__":
    main()
