"""
# Serving a model outside Python's kzoo

A trained kzoo task can leave kzoo behind: `task.export(path)` writes a
TensorFlow SavedModel whose `serve` endpoint takes **raw strings**. The
tokenizer and the packing (`[CLS] ... [SEP]`, padding) are TensorFlow
ops inside the graph, the same ops `predict` runs, so the served model
gives what `predict` gives. Loading it needs TensorFlow and tf-text (whose
ops hold the tokenizers): not kzoo, not keras-hub.

This guide:

1. fine-tunes a small classifier (which Austen novel is a passage from?);
2. exports it, from the TensorFlow or JAX backend;
3. serves it from a second Python process that never imports kzoo,
   behind a minimal HTTP endpoint (the standard library's `http.server`,
   on localhost, in a thread);
4. checks the served logits against `predict`, measures latency (p50 and
   p95 over a few hundred requests) and shuts the server down.

    KERAS_BACKEND=jax python guides/serving.py     # a minute or two
    KZOO_GUIDE_SMOKE=1 python guides/serving.py    # the test's run

The smoke run trains a tiny random BERT for one short epoch and sends
fewer requests: it shows that every step runs.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv

import keras  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402

keras.utils.set_random_seed(0)
if keras.backend.backend() == "torch":
    sys.exit("Export runs on TensorFlow or JAX: KERAS_BACKEND=jax python "
             "guides/serving.py")

"""
## 1. A small classifier

Passages of 32 words from two novels, labelled by novel. The model is
`bert_tiny_en_uncased` (2 layers, hidden size 128) from random weights:
it stays offline, and a small model is what one serves on a CPU. Use
`load_weights=True` (downloads BERT-tiny once) for a better one.
"""

NOVELS = ("pride_and_prejudice", "persuasion")
per_novel = 16 if SMOKE else 300
texts, labels = [], []
for label, novel in enumerate(NOVELS):
    passages = datasets.austen_passages(novel, words=32)[:per_novel]
    texts += passages
    labels += [label] * len(passages)

classifier = kzoo.BertTextClassifier.from_preset(
    "bert_tiny_en_uncased", num_classes=len(NOVELS), sequence_length=64,
    load_weights=False)
classifier.fit(texts, labels, epochs=1 if SMOKE else 3, batch_size=16,
               verbose=0)
print(f"trained on {len(texts)} passages "
      f"({keras.backend.backend()} backend)")

"""
## 2. Export

`export` writes two endpoints: `serve` (raw strings; also
`serving_default`, the one TensorFlow Serving calls) and
`serve_token_ids` (the model's input dict, for callers that tokenize
elsewhere). TensorFlow and JAX export (JAX through `jax2tf`); on torch,
`export` raises `kzoo.ExportError`: save the task with
`save_to_preset`, load it on another backend and export there.
"""

workdir = Path(tempfile.mkdtemp(prefix="kzoo_serving_"))
model_dir = workdir / "classifier"
start = time.time()
classifier.export(model_dir, verbose=False)
size = sum(f.stat().st_size for f in model_dir.rglob("*") if f.is_file())
print(f"exported in {time.time() - start:.1f}s: {size / 1e6:.1f} MB")

"""
## 3. A server that knows no kzoo

The server is a separate Python program: TensorFlow, tf-text and the
standard library. `import tensorflow_text` registers the ops the
tokenizer needs (without it, loading fails with "Op type not registered
'NormalizeUTF8'"). It answers `POST /predict` with `{"texts": [...]}`
and shuts down on `POST /shutdown`; the HTTP server runs in a thread, and
prints the port it was given.
"""

SERVER = r'''
import json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

model = tf.saved_model.load(sys.argv[1])
served = model.signatures["serving_default"]
model.serve(tf.constant(["warm up"]))   # the first call builds the graph


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path == "/shutdown":
            self._reply({"ok": True})
            threading.Thread(target=server.shutdown).start()
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        logits = model.serve(tf.constant(body["texts"])).numpy()
        self._reply({"logits": logits.tolist(),
                     "labels": logits.argmax(-1).tolist()})

    def _reply(self, payload):
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
thread = threading.Thread(target=server.serve_forever)
thread.start()
print("PORT", server.server_address[1], flush=True)
print("IMPORTED", sorted(m for m in ("kzoo", "keras_hub")
                         if m in sys.modules), flush=True)
thread.join()
'''

(workdir / "server.py").write_text(SERVER)
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
process = subprocess.Popen([sys.executable, str(workdir / "server.py"),
                            str(model_dir)], cwd=workdir, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
port = imported = None
while port is None or imported is None:
    line = process.stdout.readline()
    if not line:
        raise RuntimeError("the server did not start:\n"
                           + process.stderr.read()[-3000:])
    if line.startswith("PORT "):
        port = int(line.split()[1])
    elif line.startswith("IMPORTED "):
        imported = line[len("IMPORTED "):].strip()
print(f"serving on http://127.0.0.1:{port}; the server imported of kzoo "
      f"and keras-hub: {imported}")


def post(path, payload):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


"""
## 4. The same numbers, and how fast

The served logits are `predict`'s (kzoo's tests hold them to 1e-5 on
TensorFlow and JAX). Latency is measured from this process, one text per
request, as a client sees it: HTTP, JSON, tokenizing and the model.
"""

sample = texts[:4] + texts[-4:]
served = np.asarray(post("/predict", {"texts": sample})["logits"])
local = keras.ops.convert_to_numpy(classifier.predict(sample, verbose=0))
print(f"served vs predict: max abs difference "
      f"{np.max(np.abs(served - local)):.1e}")

requests = 50 if SMOKE else 500
latencies = []
for i in range(requests):
    start = time.perf_counter()
    post("/predict", {"texts": [texts[i % len(texts)]]})
    latencies.append((time.perf_counter() - start) * 1000)
p50, p95 = np.percentile(latencies, [50, 95])
print(f"{requests} requests: p50 {p50:.1f} ms, p95 {p95:.1f} ms")

post("/shutdown", {})
process.wait(timeout=60)
print(f"server stopped (exit code {process.returncode})")
shutil.rmtree(workdir, ignore_errors=True)  # the guide's files, made above
print(f"{keras.backend.backend()} done")
