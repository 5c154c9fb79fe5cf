"""The named ELECTRA presets: registered, aliased, the released configs
and parameter counts (transformers' ElectraModel formula), the
bert-base-uncased vocabulary shared with the BERT presets, building
offline."""

import pytest

import kzoo
from helpers import check_preset
from kzoo.utils.files import sha256_of

# name -> (layers, heads, hidden, intermediate, embedding size)
RELEASED = {
    "electra_small_discriminator_en_uncased": (12, 4, 256, 1024, 128),
    "electra_small_generator_en_uncased": (12, 4, 256, 1024, 128),
    "electra_base_discriminator_en_uncased": (12, 12, 768, 3072, 768),
    "electra_base_generator_en_uncased": (12, 4, 256, 1024, 768),
    "electra_large_discriminator_en_uncased": (24, 16, 1024, 4096, 1024),
    "electra_large_generator_en_uncased": (24, 4, 256, 1024, 1024),
}
BERT_VOCAB_SHA256 = \
    "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"


def hf_electra_model_params(layers, h, i, e, v=30522, positions=512,
                            types=2):
    """transformers' ElectraModel parameter count (no pooler)."""
    embeddings = (v + positions + types) * e + 2 * e
    project = e * h + h if e != h else 0
    block = 4 * (h * h + h) + 4 * h + (h * i + i) + (i * h + h)
    return embeddings + project + layers * block


def test_list_has_the_electra_presets():
    rows = {row["name"]: row for row in kzoo.presets.list(family="electra")}
    assert set(rows) == set(RELEASED)
    for name, (layers, _, hidden, intermediate, embedding) in \
            RELEASED.items():
        short = name[len("electra_"):-len("_en_uncased")]
        assert kzoo.presets.resolve(f"electra_{short}").name == name
        assert rows[name]["params"] == hf_electra_model_params(
            layers, hidden, intermediate, embedding)
    # keras-hub's published counts, less their pooler (h * h + h).
    assert rows["electra_base_discriminator_en_uncased"]["params"] == \
        109_482_240 - (768 * 768 + 768)
    assert rows["electra_large_generator_en_uncased"]["params"] == \
        51_065_344 - (256 * 256 + 256)


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_preset_configs_are_the_released_ones(name):
    preset = check_preset(name, kzoo.ElectraBackbone, build=False)
    c = preset.json("config.json")["config"]
    assert (c["num_layers"], c["num_heads"], c["hidden_dim"],
            c["intermediate_dim"], c["embedding_size"]) == RELEASED[name]
    assert (c["vocabulary_size"], c["max_sequence_length"],
            c["num_segments"], c["layer_norm_epsilon"], c["activation"]) \
        == (30522, 512, 2, 1e-12, "gelu")
    role = "discriminator" if "discriminator" in name else "generator"
    assert preset.metadata["heads"] == (
        ["discriminator_predictions"] if role == "discriminator"
        else ["mlm_head"])
    assert preset.metadata["source"]["huggingface"] == \
        f"google/electra-{name.split('_')[1]}-{role}"


def test_vocabulary_is_bert_base_uncased_held_once():
    holder = kzoo.presets.resolve("electra_small_discriminator_en_uncased")
    assert sha256_of(holder.file("vocab.txt")) == BERT_VOCAB_SHA256
    assert holder.metadata["tokenizer"]["vocab.txt"]["sha256"] == \
        BERT_VOCAB_SHA256
    for name in set(RELEASED) - {holder.name}:
        preset = kzoo.presets.resolve(name)
        assert not preset.has("vocab.txt")
        assert preset.json("tokenizer.json")["assets_from"] == holder.name
    tokenizer = kzoo.ElectraTokenizer.from_preset(
        "electra_base_generator_en_uncased")
    assert type(tokenizer) is kzoo.ElectraTokenizer
    assert tokenizer.vocabulary_size == 30522
    assert sha256_of(tokenizer.asset_paths["vocabulary"]) == BERT_VOCAB_SHA256
    assert tokenizer(["Hello world"])[0] == [7592, 2088]


def test_builds_offline_with_tasks():
    backbone = kzoo.ElectraBackbone.from_preset(
        "electra_small_discriminator_en_uncased", load_weights=False,
        num_layers=1, hidden_dim=16, num_heads=2, intermediate_dim=32)
    assert backbone.get_layer("embeddings_project").kernel.shape == (128, 16)
    task = kzoo.ElectraTextClassifier(backbone, num_classes=2)
    assert task.preprocessor is None


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(RELEASED))
def test_large_presets_build(name):
    check_preset(name, kzoo.ElectraBackbone, kzoo.ElectraTokenizer)
