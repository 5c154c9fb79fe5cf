"""XLMRobertaBackbone: RoBERTa's encoder (a subclass, no copy) under its
own family name. (RoBERTa's tests check the architecture; the registry-wide
contract tests run XLMRobertaBackbone through saving and bad input.)"""

import kzoo


def test_is_robertas_architecture():
    assert issubclass(kzoo.XLMRobertaBackbone, kzoo.RobertaBackbone)
    assert kzoo.XLMRobertaBackbone.family == "xlm_roberta"
    roberta = kzoo.RobertaBackbone(vocabulary_size=50, num_layers=1,
                                   num_heads=2, hidden_dim=8,
                                   intermediate_dim=16)
    xlmr = kzoo.XLMRobertaBackbone(vocabulary_size=50, num_layers=1,
                                   num_heads=2, hidden_dim=8,
                                   intermediate_dim=16)
    assert [w.path.split("/", 1)[1] for w in xlmr.weights] == \
        [w.path.split("/", 1)[1] for w in roberta.weights]
    assert xlmr.count_params() == roberta.count_params()
