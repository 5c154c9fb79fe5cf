"""The same training script for every launch: one data-parallel `fit` step
on raw strings (global batch of 8) through the task's preprocessor.

    python train_step.py OUT_DIR                 # one process
    python scripts/launch.py --backend B --processes 2 train_step.py OUT_DIR

Each process writes OUT_DIR/process_<index>.npz (weights after the step,
the logged loss, and how many processes/replicas took part).
"""

import os
import sys

from kzoo import distribution as kd

# Join the process group before anything touches a device.
INDEX, COUNT = kd.initialize()

import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from common import LABELS, TEXTS, build_task, time_steps  # noqa: E402


def main(out_dir):
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    with kd.data_parallel():
        preprocessor = kzoo.BertPreprocessor(tokenizer, sequence_length=16)
        task = build_task("classifier", preprocessor,
                          config={"vocabulary_size": tokenizer.vocabulary_size})
        task = kd.prepare(task)
        history = task.fit(TEXTS, LABELS, batch_size=len(TEXTS), epochs=1,
                           shuffle=False, verbose=0)
        weights = task.get_weights()
        # A sanity figure for the closing notes, not a test.
        step_s = time_steps(task, TEXTS, LABELS) if "--time" in sys.argv \
            else -1.0
    np.savez(os.path.join(out_dir, f"process_{INDEX}.npz"),
             loss=history.history["loss"][0], processes=COUNT, step_s=step_s,
             **{f"w{i}": w for i, w in enumerate(weights)})


if __name__ == "__main__":
    main(sys.argv[1])
