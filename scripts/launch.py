#!/usr/bin/env python
"""Run one kzoo training script as a multi-process / multi-host job.

    # 2 processes on this machine, data parallel, each backend's own engine:
    python scripts/launch.py --backend jax --processes 2 train.py
    python scripts/launch.py --backend tensorflow --processes 2 train.py
    python scripts/launch.py --backend torch --processes 2 train.py  # torchrun

    # two hosts (run on each, with its index; the first host coordinates):
    python scripts/launch.py --backend jax --hosts 10.0.0.1,10.0.0.2 \
        --host-index 0 --port 29500 train.py

    # print the commands and variables instead of running them:
    python scripts/launch.py --backend tensorflow --processes 2 --dry-run train.py

See kzoo/distribution/launch.py for the variables each backend gets, and
guides/distributed_training.py for the training script's side.
"""

import sys

from kzoo.distribution.launch import main

if __name__ == "__main__":
    sys.exit(main())
