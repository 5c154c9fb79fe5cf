"""LastTokenPooling, checked by hand: each row's last real token (GPT-2's
classifier), or its last real token equal to `token_id` (BART's last
`</s>`), falling back to the last real token where there is none."""

import keras
import numpy as np

from kzoo.layers import LastTokenPooling


def _states(batch, length, hidden=3):
    # Token t of row b holds [100 b + t] * hidden: each vector names its
    # own position.
    states = 100 * np.arange(batch)[:, None] + np.arange(length)[None]
    return np.repeat(states[..., None], hidden, axis=-1).astype("float32")


def _positions(pooled, batch):
    return keras.ops.convert_to_numpy(pooled)[:, 0] - 100 * np.arange(batch)


def test_last_real_token_and_last_token_id():
    # Rows: one </s> (2) then padding; three (a pair), the last before
    # padding; none; two, the last token of the row; a lone padded row
    # holding a 2 in its padding (never read).
    token_ids = np.array([[0, 5, 2, 1, 1, 1],
                          [0, 5, 2, 2, 6, 2],
                          [0, 5, 7, 8, 1, 1],
                          [2, 5, 5, 5, 9, 2],
                          [0, 4, 1, 1, 2, 1]])
    padding_mask = np.array([[1, 1, 1, 0, 0, 0],
                             [1, 1, 1, 1, 1, 1],
                             [1, 1, 1, 1, 0, 0],
                             [1, 1, 1, 1, 1, 1],
                             [1, 1, 0, 0, 0, 0]])
    states = _states(5, 6)
    last = LastTokenPooling()(states, padding_mask)
    np.testing.assert_array_equal(_positions(last, 5), [2, 5, 3, 5, 1])
    eos = LastTokenPooling(token_id=2)(states, padding_mask,
                                       token_ids=token_ids)
    np.testing.assert_array_equal(_positions(eos, 5), [2, 5, 3, 5, 1])
    token_ids[1, 5] = 9  # the pair's last </s> is now at 3
    token_ids[3] = [2, 5, 2, 5, 9, 9]
    eos = LastTokenPooling(token_id=2)(states, padding_mask,
                                       token_ids=token_ids)
    np.testing.assert_array_equal(_positions(eos, 5), [2, 3, 3, 2, 1])
    assert LastTokenPooling.from_config(
        LastTokenPooling(token_id=2).get_config()).token_id == 2
