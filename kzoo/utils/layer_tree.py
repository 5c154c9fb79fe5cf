"""Every layer inside a Keras model, found through public attributes.

Keras' own walk (`Layer._flatten_layers`) is private; a layer's sublayers
are also the `keras.layers.Layer` values of its attributes (alone, or in
a list, tuple or dict), which is how Keras itself finds them to track.
"""

import keras


def nested_layers(model):
    """The layers inside `model` (not `model` itself), each once, parents
    before their sublayers, in attribute order."""
    found, seen = [], {id(model)}

    def visit(value):
        if isinstance(value, keras.layers.Layer):
            if id(value) in seen:
                return
            seen.add(id(value))
            found.append(value)
            for child in vars(value).values():
                visit(child)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    for value in vars(model).values():
        visit(value)
    return found


def leaf_layers_with_weights(model):
    """The layers inside `model` that own weights and hold no layer with
    weights themselves (a Dense, an Embedding, an LSTM)."""
    layers = nested_layers(model)
    return [layer for layer in layers if layer.weights and not any(
        sub.weights for sub in nested_layers(layer))]
