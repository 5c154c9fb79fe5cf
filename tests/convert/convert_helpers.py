"""Helpers for the conversion tests: random-weight Hugging Face BERTs made
with `transformers` (a test dependency only), and a tiny Hugging Face hub
served from 127.0.0.1."""

import hashlib
import http.server
import json
import re
import shutil
import threading
import time
import urllib.parse
from pathlib import Path


from parity_harness import (  # noqa: F401 (imported from here too)
    check_exported_weights, hf_outputs, kzoo_outputs, make_hf_model,
    max_abs_differences, random_inputs)

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
    """A `transformers` BERT with every parameter randomised
    (parity_harness.make_hf_model)."""
    return make_hf_model(architecture, {**CONFIGS[config_name], **overrides},
                         seed)


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


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def named_style_preset(folder, hf_folder, repo, files, name="tiny_test_preset"):
    """A preset folder like the shipped ones: config + tokenizer +
    metadata declaring a Hugging Face source (`repo`, `files`), and no
    weights: from_preset fetches and converts them on first use."""
    from kzoo.convert import hf_to_preset
    from kzoo.utils.files import write_json
    folder = Path(folder)
    scratch = folder / "scratch"
    hf_to_preset(hf_folder, scratch, task="backbone", verbose=False)
    preset = folder / name
    preset.mkdir()
    for filename in ("config.json", "tokenizer.json", "vocab.txt",
                     "preprocessor.json"):
        (preset / filename).write_bytes((scratch / filename).read_bytes())
    write_json(preset / "metadata.json", {
        "name": name, "family": "bert",
        "source": {"huggingface": repo, "revision": "main", "files": files}})
    return preset


def files_under(folder):
    """Every file under `folder` (relative paths), hidden ones included,
    except the empty lock files of `.locks/` (kzoo's cross-process locks
    stay, as flock-based locks must: deleting one while another process
    waits on it would let a third take a second lock)."""
    folder = Path(folder)
    if not folder.exists():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and p.relative_to(folder).parts[0] != ".locks")


# ----------------------------------------------------------------------
# A Hugging Face hub on 127.0.0.1
# ----------------------------------------------------------------------
LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".msgpack")


def git_blob_sha1(data):
    """The hub's ETag for a small (non-LFS) file: its git blob id."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeHub:
    """A Hugging Face hub on 127.0.0.1 that speaks what huggingface_hub's
    `hf_hub_download` needs, as the real hub does:

    - `HEAD`/`GET /{org}/{name}/resolve/{revision}/{file}`: `X-Repo-Commit`,
      `ETag` (the git blob id), `Content-Length`, `Accept-Ranges`. The
      revision is `main` or the repository's commit (`commit(repo)`);
      anything else is a 404 `RevisionNotFound`, a missing file a 404
      `EntryNotFound`, a missing repository a 404 `RepoNotFound`.
    - large files (`*.safetensors`, `*.bin`, ...) answer with a 302 to a
      second server (the CDN: another origin, so the client does not
      follow it for metadata nor send it the token) carrying
      `X-Linked-Etag` (the sha256), `X-Linked-Size` and `X-Repo-Commit`.
    - both servers honour `Range: bytes=N-` (206, `Content-Range`).
    - `gated[repo] = token`: 401 `GatedRepo` unless the request carries
      `Authorization: Bearer <token>`.

    Knobs, per file name: `cut` {name: times} closes the connection after
    `cut_after` {name: bytes} bytes of the body (half of it by default)
    that many times; `delay` {name: seconds, or a `threading.Event` to
    wait for} pauses halfway through the body; `etag` {name: sha256}
    states that sha256 instead of the real one.

    Records: `log` has one `(server, method, path, headers)` per request
    (header names lower-cased);
    `requests` their paths; `served` one `(name, range header, bytes
    sent)` per body sent.
    """

    def __init__(self, root):
        self.root = Path(root)
        self.cut = {}
        self.cut_after = {}
        self.delay = {}
        self.etag = {}
        self.gated = {}
        self.commits = {}
        self.log = []
        self.served = []
        self._lock = threading.Lock()
        self.hub_server = self._serve("hub")
        self.cdn_server = self._serve("cdn")

    # ------------------------------------------------------------------
    def _serve(self, role):
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                hub._handle(self, role, head=True)

            def do_GET(self):
                hub._handle(self, role, head=False)

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        return server

    @staticmethod
    def _origin(server):
        host, port = server.server_address
        return f"http://{host}:{port}"

    @property
    def endpoint(self):
        return self._origin(self.hub_server)

    @property
    def requests(self):
        return [path for _, _, path, _ in self.log]

    def commit(self, repo):
        """The repository's commit sha (what `main` resolves to)."""
        return self.commits.setdefault(
            repo, hashlib.sha1(f"commit of {repo}".encode()).hexdigest())

    def add_repo(self, repo, folder):
        dest = self.root / repo
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(folder, dest)
        self.commit(repo)
        return dest

    def fetched(self, filename):
        """How many times a body of `filename` was sent (whole or part)."""
        return sum(1 for name, _, _ in self.served if name == filename)

    def ranges(self, filename):
        """The Range headers of the requests that got `filename`'s body."""
        return [r for name, r, _ in self.served if name == filename]

    def bytes_sent(self, filename):
        return sum(n for name, _, n in self.served if name == filename)

    def stop(self):
        for server in (self.hub_server, self.cdn_server):
            server.shutdown()
            server.server_close()

    # ------------------------------------------------------------------
    def _handle(self, handler, role, head):
        with self._lock:
            self.log.append((role, handler.command, handler.path,
                             {k.lower(): v for k, v in handler.headers.items()}))
        parts = [urllib.parse.unquote(p)
                 for p in handler.path.split("?")[0].strip("/").split("/")]
        if role == "cdn":
            # /{org}/{name}/{commit}/{file...}
            if len(parts) < 4:
                return self._status(handler, 404)
            org, name, _commit, *rest = parts
            path = self.root / org / name / "/".join(rest)
            if not path.is_file():
                return self._status(handler, 404)
            return self._send_body(handler, path, "/".join(rest), head, {})
        if len(parts) < 5 or parts[2] != "resolve":
            return self._status(handler, 404)
        org, name, _, revision, *rest = parts
        repo, filename = f"{org}/{name}", "/".join(rest)
        if not (self.root / repo).is_dir():
            return self._status(handler, 404, {"X-Error-Code": "RepoNotFound"})
        token = self.gated.get(repo)
        if token is not None and handler.headers.get("Authorization") != \
                f"Bearer {token}":
            return self._status(handler, 401, {
                "X-Error-Code": "GatedRepo",
                "X-Error-Message": "Access to this model is restricted."})
        commit = self.commit(repo)
        if revision not in ("main", commit):
            return self._status(handler, 404,
                                {"X-Error-Code": "RevisionNotFound"})
        path = self.root / repo / filename
        headers = {"X-Repo-Commit": commit}
        if not path.is_file():
            return self._status(handler, 404,
                                {**headers, "X-Error-Code": "EntryNotFound"})
        if filename.endswith(LFS_SUFFIXES):
            data = path.read_bytes()
            sha256 = self.etag.get(filename) or hashlib.sha256(data).hexdigest()
            location = (f"{self._origin(self.cdn_server)}/{repo}/{commit}/"
                        f"{urllib.parse.quote(filename)}")
            return self._status(handler, 302, {
                **headers, "Location": location,
                "ETag": f'"{git_blob_sha1(sha256.encode())}"',
                "X-Linked-Etag": f'"{sha256}"',
                "X-Linked-Size": str(len(data))})
        headers["ETag"] = f'"{git_blob_sha1(path.read_bytes())}"'
        return self._send_body(handler, path, filename, head, headers)

    @staticmethod
    def _status(handler, code, headers=None):
        handler.send_response(code)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def _send_body(self, handler, path, filename, head, headers):
        data = path.read_bytes()
        start, end = 0, len(data)
        wanted = handler.headers.get("Range")
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted or "")
        if match:
            start = int(match.group(1))
            end = int(match.group(2)) + 1 if match.group(2) else len(data)
            end = min(end, len(data))
            handler.send_response(206)
            handler.send_header("Content-Range",
                                f"bytes {start}-{end - 1}/{len(data)}")
        else:
            handler.send_response(200)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Accept-Ranges", "bytes")
        handler.send_header("Content-Length", str(end - start))
        handler.end_headers()
        if head:
            return
        body = data[start:end]
        with self._lock:
            cut = self.cut.get(filename, 0)
            if cut:
                self.cut[filename] = cut - 1
        if cut:
            sent = min(self.cut_after.get(filename, len(body) // 2), len(body))
            handler.wfile.write(body[:sent])
            handler.wfile.flush()
            handler.close_connection = True
            self.served.append((filename, wanted, sent))
            return
        half = len(body) // 2
        handler.wfile.write(body[:half])
        handler.wfile.flush()
        pause = self.delay.get(filename)
        if isinstance(pause, threading.Event):
            pause.wait(timeout=120)
        elif pause:
            time.sleep(pause)
        handler.wfile.write(body[half:])
        handler.wfile.flush()
        self.served.append((filename, wanted, len(body)))
