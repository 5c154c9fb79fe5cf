"""Helpers for the conversion tests: random-weight Hugging Face BERTs made
with `transformers` (a test dependency only), and a tiny Hugging Face hub
served from 127.0.0.1."""

import hashlib
import http.server
import json
import shutil
import threading
from pathlib import Path

import numpy as np

ARCHITECTURES = ("BertModel", "BertForMaskedLM", "BertForPreTraining",
                 "BertForSequenceClassification")
KZOO_CLASS = {"BertModel": "BertBackbone", "BertForMaskedLM": "BertMaskedLM",
              "BertForPreTraining": "BertPretrainer",
              "BertForSequenceClassification": "BertTextClassifier"}

# Unusual shapes on purpose: odd widths, head_dim 12 and 5, three segment
# types and one, non-default LayerNorm epsilons and activations, dropout
# values that differ per kind.
CONFIGS = {
    "odd36": dict(vocab_size=99, hidden_size=36, num_hidden_layers=2,
                  num_attention_heads=3, intermediate_size=50,
                  max_position_embeddings=40, type_vocab_size=3,
                  layer_norm_eps=1e-7, hidden_act="gelu_new", num_labels=3),
    "odd20": dict(vocab_size=61, hidden_size=20, num_hidden_layers=3,
                  num_attention_heads=4, intermediate_size=7,
                  max_position_embeddings=17, type_vocab_size=1,
                  layer_norm_eps=1e-5, hidden_act="relu", num_labels=5,
                  classifier_dropout=0.3, hidden_dropout_prob=0.2,
                  attention_probs_dropout_prob=0.05),
}

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def make_hf_bert(architecture, config_name="odd36", seed=0, **overrides):
    """A `transformers` BERT with every parameter randomised (LayerNorm
    scales and biases included, so a swapped gamma/beta cannot pass)."""
    import torch
    import transformers
    config = transformers.BertConfig(**{**CONFIGS[config_name], **overrides})
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, architecture)(config).eval()
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            if name.endswith("LayerNorm.weight"):
                parameter.copy_(1.0 + 0.2 * noise)
            else:
                parameter.copy_(0.2 * noise)
    if hasattr(model, "tie_weights"):
        model.tie_weights()
    return model


def write_vocab(folder, size):
    """A WordPiece vocabulary of `size` tokens with BERT's special ones."""
    words = SPECIAL_TOKENS + [f"w{i}" for i in range(size - len(SPECIAL_TOKENS))]
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / "vocab.txt").write_text("\n".join(words) + "\n",
                                            encoding="utf-8")
    return words


def save_hf(model, folder, vocab=True, **kwargs):
    model.save_pretrained(folder, **kwargs)
    if vocab:
        write_vocab(folder, model.config.vocab_size)
        (Path(folder) / "tokenizer_config.json").write_text(
            json.dumps({"do_lower_case": True,
                        "tokenizer_class": "BertTokenizer"}))
    return Path(folder)


def random_inputs(config, batch=3, seq=None, seed=0):
    rng = np.random.default_rng(seed)
    seq = seq or min(11, config.max_position_embeddings)
    token_ids = rng.integers(0, config.vocab_size, (batch, seq)).astype("int32")
    segment_ids = rng.integers(0, config.type_vocab_size,
                               (batch, seq)).astype("int32")
    padding_mask = np.ones((batch, seq), "int32")
    padding_mask[1, seq - 4:] = 0  # one row with padding
    return {"token_ids": token_ids, "segment_ids": segment_ids,
            "padding_mask": padding_mask}


def hf_outputs(model, inputs):
    """The reference outputs, named as kzoo names them."""
    import torch
    with torch.no_grad():
        out = model(input_ids=torch.tensor(inputs["token_ids"]).long(),
                    token_type_ids=torch.tensor(inputs["segment_ids"]).long(),
                    attention_mask=torch.tensor(inputs["padding_mask"]).long())
    name = type(model).__name__
    if name == "BertModel":
        return {"sequence_output": out.last_hidden_state.numpy(),
                "pooled_output": out.pooler_output.numpy()}
    if name == "BertForMaskedLM":
        return {"mlm_logits": out.logits.numpy()}
    if name == "BertForPreTraining":
        return {"mlm_logits": out.prediction_logits.numpy(),
                "nsp_logits": out.seq_relationship_logits.numpy()}
    return {"logits": out.logits.numpy()}


def kzoo_outputs(model, inputs):
    import keras
    name = type(model).__name__
    if name in ("BertMaskedLM", "BertPretrainer"):
        batch, seq = inputs["token_ids"].shape
        positions = np.tile(np.arange(seq, dtype="int32"), (batch, 1))
        out = model({**inputs, "mask_positions": positions})
        if name == "BertMaskedLM":
            return {"mlm_logits": keras.ops.convert_to_numpy(out)}
        return {"mlm_logits": keras.ops.convert_to_numpy(out["mlm"]),
                "nsp_logits": keras.ops.convert_to_numpy(out["nsp"])}
    out = model(inputs)
    if name == "BertTextClassifier":
        return {"logits": keras.ops.convert_to_numpy(out)}
    return {k: keras.ops.convert_to_numpy(v) for k, v in out.items()}


def max_abs_differences(actual, expected):
    assert sorted(actual) == sorted(expected), (sorted(actual), sorted(expected))
    return {k: float(np.max(np.abs(actual[k] - expected[k]))) for k in expected}


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def files_under(folder):
    """Every file under `folder` (relative paths), hidden ones included."""
    folder = Path(folder)
    if not folder.exists():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file())


# ----------------------------------------------------------------------
# A Hugging Face hub on 127.0.0.1
# ----------------------------------------------------------------------
class FakeHub:
    """Serves `{root}/{org}/{name}/{file}` at
    `/{org}/{name}/resolve/{revision}/{file}`, the hub's URL layout.

    Knobs (per file name): `cut` {name: times} closes the connection
    halfway through the body that many times; `etag` {name: sha256} sends
    the hub's `X-Linked-Etag` header on a redirect to `/cdn/...` (as the
    hub does for large files). `requests` records every path asked for.
    """

    def __init__(self, root):
        self.root = Path(root)
        self.cut = {}
        self.etag = {}
        self.requests = []
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                hub.requests.append(self.path)
                parts = self.path.strip("/").split("/")
                if parts[0] == "cdn":
                    return self._send_file(hub.root.joinpath(*parts[1:]))
                if len(parts) < 5 or parts[2] != "resolve":
                    return self._status(404)
                org, name, _, _revision, *rest = parts
                filename = "/".join(rest)
                path = hub.root / org / name / filename
                if filename in hub.etag and path.is_file():
                    self.send_response(302)
                    self.send_header("Location",
                                     f"/cdn/{org}/{name}/{filename}")
                    self.send_header("X-Linked-Etag",
                                     f'"{hub.etag[filename]}"')
                    self.send_header("X-Repo-Commit", "0" * 40)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self._send_file(path)

            def _status(self, code):
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send_file(self, path):
                if not path.is_file():
                    return self._status(404)
                data = path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-Repo-Commit", "0" * 40)
                self.end_headers()
                left = hub.cut.get(path.name, 0)
                if left:
                    hub.cut[path.name] = left - 1
                    self.wfile.write(data[:len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    @property
    def endpoint(self):
        host, port = self.server.server_address
        return f"http://{host}:{port}"

    def add_repo(self, repo, folder):
        dest = self.root / repo
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(folder, dest)
        return dest

    def fetched(self, filename):
        return sum(1 for p in self.requests
                   if p.endswith("/" + filename) and "/resolve/" in p)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
