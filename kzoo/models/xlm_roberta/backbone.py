"""XLM-RoBERTa (Conneau et al., 2020): RoBERTa's encoder, trained on 100
languages with a SentencePiece vocabulary of 250,002 tokens."""

from kzoo.core.registry import register
from kzoo.models.roberta.backbone import RobertaBackbone


@register
class XLMRobertaBackbone(RobertaBackbone):
    """The XLM-R encoder: RoBERTa's architecture unchanged (post-LayerNorm
    transformer, fairseq's position numbering after the padding index, one
    token type); only the vocabulary differs. Arguments, inputs and
    outputs: see `kzoo.RobertaBackbone`.

    Example:
    ```python
    # from_preset("xlm_roberta_base_multi") loads the released weights
    # (downloaded once); offline, the same architecture, small and random:
    backbone = kzoo.XLMRobertaBackbone.from_preset(
        "xlm_roberta_base_multi", load_weights=False, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32)
    outputs = backbone({"token_ids": np.array([[0, 35378, 8999, 2]]),
                        "padding_mask": np.ones((1, 4), "int32")})
    assert outputs["sequence_output"].shape == (1, 4, 16)
    ```
    """

    family = "xlm_roberta"
