"""Heads every encoder takes (sequence and token classification,
question answering, multiple choice, probing, span boundary
pretraining) and the generic seq2seq LM, with their preprocessors."""
